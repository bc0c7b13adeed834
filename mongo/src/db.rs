//! The connection and the collections, and the plumbing every store
//! shares: error mapping and transactions with retries (the indexes are in
//! `indexes`).

use mongodb::bson::{doc, Document};
use mongodb::error::{
    Error as DbError, ErrorKind as DbErrorKind, WriteFailure, TRANSIENT_TRANSACTION_ERROR,
    UNKNOWN_TRANSACTION_COMMIT_RESULT,
};
use mongodb::{Client, ClientSession, Collection, Database};
use socialite_core::error::{Error, ErrorKind, Result};
use socialite_core::ids::now_ms;
use socialite_core::sim::Rng;
use std::future::Future;
use std::time::{Duration, Instant};

/// Collection names, after the reference design.
pub const USERS: &str = "users";
pub const FOLLOWERS: &str = "followers";
pub const FOLLOWING: &str = "following";
pub const CONTENT: &str = "content";
pub const OUTBOX: &str = "outbox";
pub const LEASES: &str = "leases";
pub const TIMELINE_CACHE: &str = "timeline_cache";
pub const GROUP_MEMBERS: &str = "group_members";
pub const GROUPS: &str = "groups";
pub const COUNTS: &str = "counts";
pub const RELATIONS: &str = "relations";
pub const HYBRID: &str = "hybrid";
pub const ACCOUNTS: &str = "accounts";
pub const LIKES: &str = "likes";
pub const TALLIES: &str = "tallies";
pub const MARKERS: &str = "markers";
pub const FILTERS: &str = "filters";
pub const THREAD_MUTES: &str = "thread_mutes";
pub const EXCLUSIVE_LISTS: &str = "exclusive_lists";
pub const KEPT: &str = "kept";
pub const REPOSTS: &str = "reposts";
pub const NOTICES: &str = "notices";
pub const NOTICE_GROUPS: &str = "notice_groups";
pub const WEBHOOKS: &str = "webhooks";
pub const WEBHOOK_ATTEMPTS: &str = "webhook_attempts";
pub const RANK_SNAPSHOTS: &str = "rank_snapshots";

/// How long a transaction keeps being retried on transient errors (write
/// conflicts between concurrent writers of the same documents, such as the
/// follower count of a popular account), with jittered exponential backoff.
const TXN_RETRY_FOR: Duration = Duration::from_secs(30);
const TXN_BACKOFF_MAX: Duration = Duration::from_millis(200);

/// A bounded retry with full-jitter exponential backoff: writers that
/// conflict spread out instead of colliding again in step, and a loop that
/// keeps losing ends, after [`TXN_RETRY_FOR`], in a clear `Unavailable`
/// error instead of spinning.
pub(crate) struct Retry {
    what: &'static str,
    started: Instant,
    budget: Duration,
    attempt: u32,
    jitter: Rng,
}

impl Retry {
    pub(crate) fn new(what: &'static str) -> Retry {
        Retry::within(what, TXN_RETRY_FOR)
    }

    fn within(what: &'static str, budget: Duration) -> Retry {
        Retry {
            what,
            started: Instant::now(),
            budget,
            attempt: 0,
            jitter: Rng::new(u64::from(std::process::id()) ^ now_ms()),
        }
    }

    /// Waits before the next attempt; an error once the time is spent.
    pub(crate) async fn again(&mut self) -> Result<()> {
        self.attempt += 1;
        if self.started.elapsed() > self.budget {
            return Err(Error::unavailable(format!(
                "{}: still conflicting with other writers after {} attempts in {} ms",
                self.what,
                self.attempt,
                self.budget.as_millis()
            )));
        }
        let cap = (Duration::from_millis(2) * 2u32.pow(self.attempt.min(7))).min(TXN_BACKOFF_MAX);
        let wait = cap.mul_f64(self.jitter.below(1000) as f64 / 1000.0);
        tokio::time::sleep(wait).await;
        Ok(())
    }
}

#[derive(Clone)]
pub struct Db {
    pub client: Client,
    pub database: Database,
    pub users: Collection<Document>,
    pub followers: Collection<Document>,
    pub following: Collection<Document>,
    pub content: Collection<Document>,
    pub outbox: Collection<Document>,
    pub leases: Collection<Document>,
    pub timelines: Collection<Document>,
    pub group_members: Collection<Document>,
    pub groups: Collection<Document>,
    pub counts: Collection<Document>,
    pub relations: Collection<Document>,
    pub hybrid: Collection<Document>,
    pub accounts: Collection<Document>,
    pub likes: Collection<Document>,
    pub tallies: Collection<Document>,
    pub markers: Collection<Document>,
    pub filters: Collection<Document>,
    pub thread_mutes: Collection<Document>,
    pub exclusive_lists: Collection<Document>,
    pub kept: Collection<Document>,
    pub reposts: Collection<Document>,
    pub notices: Collection<Document>,
    pub notice_groups: Collection<Document>,
    pub webhooks: Collection<Document>,
    pub webhook_attempts: Collection<Document>,
    pub rank_snapshots: Collection<Document>,
}

pub fn db_err(what: &str) -> impl Fn(DbError) -> Error + '_ {
    move |e| Error::backend(ErrorKind::Unavailable, what, e)
}

impl Db {
    /// Connects to `uri` (a `mongodb://` URI; the database is its path, by
    /// default `socialite`) and creates the indexes.
    pub async fn connect(uri: &str) -> Result<Db> {
        let client = crate::connect::client(uri).await?;
        let name = client
            .default_database()
            .map(|d| d.name().to_owned())
            .unwrap_or_else(|| "socialite".to_owned());
        let database = client.database(&name);
        let db = Db {
            users: database.collection(USERS),
            followers: database.collection(FOLLOWERS),
            following: database.collection(FOLLOWING),
            content: database.collection(CONTENT),
            outbox: database.collection(OUTBOX),
            leases: database.collection(LEASES),
            timelines: database.collection(TIMELINE_CACHE),
            group_members: database.collection(GROUP_MEMBERS),
            groups: database.collection(GROUPS),
            counts: database.collection(COUNTS),
            relations: database.collection(RELATIONS),
            hybrid: database.collection(HYBRID),
            accounts: database.collection(ACCOUNTS),
            likes: database.collection(LIKES),
            tallies: database.collection(TALLIES),
            markers: database.collection(MARKERS),
            filters: database.collection(FILTERS),
            thread_mutes: database.collection(THREAD_MUTES),
            exclusive_lists: database.collection(EXCLUSIVE_LISTS),
            kept: database.collection(KEPT),
            reposts: database.collection(REPOSTS),
            notices: database.collection(NOTICES),
            notice_groups: database.collection(NOTICE_GROUPS),
            webhooks: database.collection(WEBHOOKS),
            webhook_attempts: database.collection(WEBHOOK_ATTEMPTS),
            rank_snapshots: database.collection(RANK_SNAPSHOTS),
            client,
            database,
        };
        db.create_indexes().await?;
        Ok(db)
    }

    pub async fn ping(&self) -> Result<()> {
        self.database
            .run_command(doc! { "ping": 1 })
            .await
            .map(|_| ())
            .map_err(db_err("pinging MongoDB"))
    }

    /// Runs `body` in a transaction, retrying the whole of it on transient
    /// errors and the commit on an unknown commit result, as the driver
    /// specification prescribes.
    pub async fn transaction<T, F, Fut>(&self, what: &str, mut body: F) -> Result<T>
    where
        F: FnMut(ClientSession) -> Fut,
        Fut: Future<Output = (ClientSession, Result<T, TxnError>)>,
    {
        let mut last = None;
        let mut retry = Retry::new("a transaction");
        for attempt in 0u32.. {
            if attempt > 0 && retry.again().await.is_err() {
                break;
            }
            let mut session = self.client.start_session().await.map_err(db_err(what))?;
            session.start_transaction().await.map_err(db_err(what))?;
            let (mut session, result) = body(session).await;
            let value = match result {
                Ok(v) => v,
                Err(TxnError::Domain(e)) => {
                    let _ = session.abort_transaction().await;
                    return Err(e);
                }
                Err(TxnError::Db(e)) => {
                    let _ = session.abort_transaction().await;
                    if e.contains_label(TRANSIENT_TRANSACTION_ERROR) {
                        last = Some(e);
                        continue;
                    }
                    return Err(db_err(what)(e));
                }
            };
            loop {
                match session.commit_transaction().await {
                    Ok(()) => return Ok(value),
                    // Committing again is safe; but not for ever.
                    Err(e) if e.contains_label(UNKNOWN_TRANSACTION_COMMIT_RESULT) => {
                        if retry.again().await.is_err() {
                            return Err(db_err(what)(e));
                        }
                    }
                    Err(e) if e.contains_label(TRANSIENT_TRANSACTION_ERROR) => {
                        last = Some(e);
                        break;
                    }
                    Err(e) => return Err(db_err(what)(e)),
                }
            }
        }
        Err(match last {
            Some(e) => db_err(what)(e),
            None => Error::unavailable(format!("{what}: too many transaction conflicts")),
        })
    }
}

/// What a transaction body fails with: a store error (maybe worth a retry)
/// or a domain answer such as "no such user" (ends the transaction).
pub enum TxnError {
    Db(DbError),
    Domain(Error),
}

impl TxnError {
    /// The store error of a read made outside a transaction.
    pub fn into_error(self, what: &str) -> Error {
        match self {
            TxnError::Db(e) => db_err(what)(e),
            TxnError::Domain(e) => e,
        }
    }
}

impl From<DbError> for TxnError {
    fn from(e: DbError) -> Self {
        TxnError::Db(e)
    }
}

impl From<Error> for TxnError {
    fn from(e: Error) -> Self {
        TxnError::Domain(e)
    }
}

/// Whether a write failed on a unique index.
pub fn is_duplicate_key(e: &DbError) -> bool {
    const DUPLICATE_KEY: i32 = 11000;
    match &*e.kind {
        DbErrorKind::Write(WriteFailure::WriteError(w)) => w.code == DUPLICATE_KEY,
        DbErrorKind::Command(c) => c.code == DUPLICATE_KEY,
        DbErrorKind::InsertMany(m) => m
            .write_errors
            .iter()
            .flatten()
            .any(|w| w.code == DUPLICATE_KEY),
        _ => false,
    }
}

/// Lists longer than this are split across `$in` queries and writes, so no
/// command document approaches MongoDB's 16 MiB limit.
pub const IN_CHUNK: usize = 10_000;

impl Db {
    /// Runs the write statements `statements` (`updates` of an `update`
    /// command, ...) on `collection` in the session's transaction, at most
    /// [`IN_CHUNK`] a command, in order: a run of writes in one round trip
    /// each. A statement the server refuses fails the whole.
    pub(crate) async fn write_run(
        &self,
        s: &mut ClientSession,
        (command, field): (&str, &str),
        collection: &str,
        statements: Vec<Document>,
    ) -> std::result::Result<(), TxnError> {
        for part in statements.chunks(IN_CHUNK) {
            let run = doc! { command: collection, field: part, "ordered": true };
            let reply = self.database.run_command(run).session(&mut *s).await?;
            if let Ok(errors) = reply.get_array("writeErrors") {
                let what = format!("{command} on {collection}: {errors:?}");
                return Err(Error::internal(what).into());
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_retry_loop_that_keeps_losing_ends_in_a_clear_error() {
        let mut retry = Retry::within("updating a cache", Duration::from_millis(30));
        let started = Instant::now();
        let mut attempts = 0;
        let err = loop {
            match retry.again().await {
                Ok(()) => attempts += 1,
                Err(e) => break e,
            }
        };
        assert!(attempts >= 1 && started.elapsed() >= Duration::from_millis(30));
        assert_eq!(err.kind(), ErrorKind::Unavailable);
        assert!(
            err.message()
                .starts_with("updating a cache: still conflicting"),
            "{}",
            err.message()
        );
    }
}
