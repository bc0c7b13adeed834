//! The connection, the collections and their indexes, and the plumbing every
//! store shares: error mapping and transactions with retries.

use mongodb::bson::{doc, Document};
use mongodb::error::{
    Error as DbError, ErrorKind as DbErrorKind, WriteFailure, TRANSIENT_TRANSACTION_ERROR,
    UNKNOWN_TRANSACTION_COMMIT_RESULT,
};
use mongodb::options::IndexOptions;
use mongodb::{Client, ClientSession, Collection, Database, IndexModel};
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
pub const REPOSTS: &str = "reposts";
pub const NOTICES: &str = "notices";
pub const NOTICE_GROUPS: &str = "notice_groups";

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
    pub reposts: Collection<Document>,
    pub notices: Collection<Document>,
    pub notice_groups: Collection<Document>,
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
            reposts: database.collection(REPOSTS),
            notices: database.collection(NOTICES),
            notice_groups: database.collection(NOTICE_GROUPS),
            client,
            database,
        };
        db.create_indexes().await?;
        Ok(db)
    }

    async fn create_indexes(&self) -> Result<()> {
        // Follow lists newest first: `at` is when the follow was made (ms);
        // edges stored before it was kept get 0, once, and come last.
        for edges in [&self.followers, &self.following] {
            edges
                .update_many(
                    doc! { "at": { "$exists": false } },
                    doc! { "$set": { "at": 0_i64 } },
                )
                .await
                .map_err(db_err("giving old edges a follow time"))?;
        }
        for (collection, model, what) in self.indexes() {
            collection
                .create_index(model)
                .await
                .map_err(db_err(&format!("creating {what}")))?;
        }
        Ok(())
    }

    /// Every index the store's queries need, with what each serves.
    fn indexes(&self) -> Vec<(&Collection<Document>, IndexModel, &'static str)> {
        vec![
            // Edges: one per pair; followers and following lists are
            // covered queries on these indexes, in id order.
            (
                &self.followers,
                index(doc! { "user": 1, "follower": 1 }, "user_follower", true),
                "the followers index",
            ),
            (
                &self.following,
                index(doc! { "user": 1, "followee": 1 }, "user_followee", true),
                "the following index",
            ),
            // Follow lists newest first.
            (
                &self.followers,
                index(
                    doc! { "user": 1, "at": -1, "follower": 1 },
                    "user_at_follower",
                    false,
                ),
                "the follow time index",
            ),
            (
                &self.following,
                index(
                    doc! { "user": 1, "at": -1, "followee": 1 },
                    "user_at_followee",
                    false,
                ),
                "the follow time index",
            ),
            // The suspended accounts, read by every process once a second.
            (
                &self.accounts,
                index(doc! { "suspended": 1 }, "suspended", false),
                "the accounts index",
            ),
            // A group's members in id order, and a user's groups.
            (
                &self.group_members,
                index(doc! { "group": 1, "user": 1 }, "group_user", true),
                "the group members index",
            ),
            (
                &self.group_members,
                index(doc! { "user": 1, "group": 1 }, "user_group", true),
                "the user groups index",
            ),
            // A list's members in id order: the edges of a user filed under
            // a list (`_g` holds the edge's lists, so the index is multikey).
            (
                &self.following,
                index(
                    doc! { "user": 1, "_g": 1, "followee": 1 },
                    "user_g_followee",
                    false,
                ),
                "the list index",
            ),
            // Mutes and blocks: a user's in id order, and who keeps one to a user.
            (
                &self.relations,
                index(doc! { "u": 1, "k": 1, "t": 1 }, "u_k_t", true),
                "the relations index",
            ),
            (
                &self.relations,
                index(doc! { "t": 1, "k": 1, "u": 1 }, "t_k_u", false),
                "the related index",
            ),
            // An author's posts newest first, for read-time merges and backfills.
            (
                &self.content,
                index(doc! { "author": 1, "_id": -1 }, "author_id", false),
                "the content index",
            ),
            // The replies to a post, oldest first (threads).
            (
                &self.content,
                index(doc! { "reply_to.id": 1, "_id": 1 }, "reply_to_id", false),
                "the replies index",
            ),
            // The posts that mention a user, newest first (multikey).
            (
                &self.content,
                index(doc! { "mentions": 1, "_id": -1 }, "mentions_id", false),
                "the mentions index",
            ),
        ]
        .into_iter()
        .chain(self.count_indexes())
        .chain(self.like_and_marker_indexes())
        .chain(self.repost_indexes())
        .chain(self.notice_indexes())
        .collect()
    }

    /// The most followed accounts, which a fanout worker loads when it
    /// starts (`most_followed`): the count's shards by size, and the users
    /// documents' own counts.
    fn count_indexes(&self) -> [(&Collection<Document>, IndexModel, &'static str); 2] {
        [
            (
                &self.counts,
                index(doc! { "n": -1 }, "n", false),
                "the follower count index",
            ),
            (
                &self.users,
                index(doc! { "followers": -1 }, "followers", false),
                "the follower count index",
            ),
        ]
    }

    /// A like per post and user; a post's likers newest first; a user's
    /// likes; a page of posts' counts; a user's markers.
    fn like_and_marker_indexes(&self) -> [(&Collection<Document>, IndexModel, &'static str); 5] {
        [
            (
                &self.markers,
                index(doc! { "u": 1, "t": 1 }, "u_t", false),
                "the markers index",
            ),
            (
                &self.likes,
                index(doc! { "p": 1, "u": 1 }, "p_u", true),
                "the likes index",
            ),
            (
                &self.likes,
                index(doc! { "p": 1, "at": -1, "u": 1 }, "p_at_u", false),
                "the likers index",
            ),
            (
                &self.likes,
                index(doc! { "u": 1, "p": 1 }, "u_p", false),
                "the user likes index",
            ),
            (
                &self.tallies,
                index(doc! { "p": 1 }, "p", false),
                "the tallies index",
            ),
        ]
    }

    /// A repost per post and user; a post's reposters newest first; a
    /// user's reposts.
    fn repost_indexes(&self) -> [(&Collection<Document>, IndexModel, &'static str); 3] {
        [
            (
                &self.reposts,
                index(doc! { "p": 1, "u": 1 }, "p_u", true),
                "the reposts index",
            ),
            (
                &self.reposts,
                index(doc! { "p": 1, "i": -1 }, "p_i", false),
                "the reposters index",
            ),
            (
                &self.reposts,
                index(doc! { "u": 1, "p": 1 }, "u_p", false),
                "the user reposts index",
            ),
        ]
    }

    /// An entry's notices newest first; a user's caused notices; a user's
    /// entries newest first.
    fn notice_indexes(&self) -> [(&Collection<Document>, IndexModel, &'static str); 3] {
        [
            (
                &self.notices,
                index(
                    doc! { "r": 1, "k": 1, "p": 1, "w": 1, "i": -1 },
                    "r_k_p_w_i",
                    false,
                ),
                "the entry notices index",
            ),
            (
                &self.notices,
                index(doc! { "a": 1 }, "a", false),
                "the caused notices index",
            ),
            (
                &self.notice_groups,
                index(
                    doc! { "r": 1, "l": -1, "k": -1, "p": -1, "w": -1 },
                    "r_l",
                    false,
                ),
                "the notifications index",
            ),
        ]
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

/// An index named `name` on `keys`.
fn index(keys: Document, name: &str, unique: bool) -> IndexModel {
    let options = IndexOptions::builder().name(name.to_owned());
    let options = match unique {
        true => options.unique(true).build(),
        false => options.build(),
    };
    IndexModel::builder().keys(keys).options(options).build()
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
