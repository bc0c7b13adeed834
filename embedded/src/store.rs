//! The embedded store's handle: one redb file (`content.redb`) holding users,
//! the follow graph, posts and the outbox, written through the group-commit
//! [`Writer`]. The port implementations are beside it (`content`, `graph`,
//! `outbox`); this module holds what they share inside a write transaction:
//! queuing events, existence checks, counts and edge scans.

use crate::post_cache::PostCache;
use crate::recent::RecentPosts;
use crate::recovery::RecoverableDb;
use crate::reposts::Reposted;
use crate::tables::*;
use crate::writer::{WriteCtx, Writer};
use redb::{Database, ReadTransaction, ReadableDatabase, ReadableTable, WriteTransaction};
use socialite_core::error::{Error, Result};
use socialite_core::event::Event;
use socialite_core::fault::{FaultReason, StoreFault};
use socialite_core::ids::UserId;
use socialite_domain::deletion::cascade::present;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::Notify;

pub struct EmbeddedStore {
    db: Arc<RecoverableDb>,
    pub(crate) writer: Writer<State>,
    pub(crate) outbox_ready: Arc<Notify>,
    pub(crate) posts: PostCache,
    pub(crate) recent: RecentPosts,
    /// The posts with reposts (`reposts`).
    pub(crate) reposted: Arc<Reposted>,
    /// Bounds the larger reads running at once: each runs on a thread of its
    /// own, and every such thread keeps its own allocator heap, so a burst of
    /// 64 merges on two cores cost 1.2 GiB resident without making anything
    /// faster.
    readers: tokio::sync::Semaphore,
}

/// redb's own page cache for `content.redb`. Its default (1 GiB) fills as
/// activations read follower lists and posts, and counts as resident memory;
/// the operating system's page cache keeps the file's hot pages anyway, so a
/// small cache costs a copy per page read, not a disk read.
const CONTENT_CACHE_BYTES: usize = 16 << 20;
/// The same cache for a command that moves data (import, export, backup
/// and restore, migrate): an import's B-trees outgrow the small one, and each insert walks them
/// from the root (an import of 4.7 M records took 8% less time with it;
/// `load` took no less, so it keeps the small one; BENCHMARKS.md "Imports
/// in larger transactions").
const BULK_CACHE_BYTES: usize = 64 << 20;

/// Recent posts kept in memory for hydrating timelines.
const POST_CACHE: usize = 200_000;

/// Owned by the writer thread.
pub(crate) struct State {
    next_outbox_seq: u64,
    /// Shared with the store's readers; a repost's step adds its post.
    pub(crate) reposted: Arc<Reposted>,
}

pub(crate) type Ctx<'t> = WriteCtx<'t, State>;

impl EmbeddedStore {
    /// The store at `path`, as a serving process opens it.
    pub fn open(path: &Path) -> Result<EmbeddedStore> {
        EmbeddedStore::open_with(path, false)
    }

    /// The store at `path`; `bulk` for a process that writes in bulk (a
    /// larger page cache).
    pub fn open_with(path: &Path, bulk: bool) -> Result<EmbeddedStore> {
        let cache = match bulk {
            true => BULK_CACHE_BYTES,
            false => CONTENT_CACHE_BYTES,
        };
        let db = Arc::new(RecoverableDb::open(
            "content store",
            "content_store",
            path,
            cache,
        )?);
        let txn = db.db()?.begin_write().store()?;
        let next_outbox_seq = {
            // Create every table up front so that reads never meet a missing one.
            txn.open_table(USERS).store()?;
            txn.open_table(COUNTS).store()?;
            txn.open_table(FOLLOWING).store()?;
            txn.open_table(FOLLOWERS).store()?;
            txn.open_table(POSTS).store()?;
            txn.open_table(AUTHOR_POSTS).store()?;
            txn.open_table(EDGE_LISTS).store()?;
            txn.open_table(LISTED).store()?;
            txn.open_table(LIST_MEMBERS).store()?;
            txn.open_table(USER_LISTS).store()?;
            txn.open_table(MENTIONS).store()?;
            txn.open_table(GROUP_MEMBERS).store()?;
            txn.open_table(USER_GROUPS).store()?;
            txn.open_table(GROUP_SIZES).store()?;
            txn.open_table(FOLLOWING_BY_TIME).store()?;
            txn.open_table(FOLLOWERS_BY_TIME).store()?;
            txn.open_table(DELETING).store()?;
            txn.open_table(RELATIONS).store()?;
            txn.open_table(RELATED).store()?;
            txn.open_table(MUTE_ENDS).store()?;
            txn.open_table(MUTES_DUE).store()?;
            txn.open_table(HYBRID).store()?;
            txn.open_table(ACCOUNTS).store()?;
            txn.open_table(LIKES).store()?;
            txn.open_table(LIKES_BY_TIME).store()?;
            txn.open_table(USER_LIKES).store()?;
            txn.open_table(TALLIES).store()?;
            txn.open_table(MARKERS).store()?;
            txn.open_table(FILTERS).store()?;
            txn.open_table(THREAD_MUTES).store()?;
            txn.open_table(EXCLUSIVE_LISTS).store()?;
            txn.open_table(KEPT).store()?;
            txn.open_table(KEPT_ORDER).store()?;
            txn.open_table(KEPT_BY_POST).store()?;
            txn.open_table(REPOSTS).store()?;
            txn.open_table(REPLIES).store()?;
            txn.open_table(NOTICES).store()?;
            txn.open_table(NOTICES_BY_ACTOR).store()?;
            txn.open_table(ENTRY_NOTICES).store()?;
            txn.open_table(NOTICE_GROUPS).store()?;
            txn.open_table(NOTICE_ORDER).store()?;
            txn.open_table(WEBHOOKS).store()?;
            txn.open_table(WEBHOOK_ATTEMPTS).store()?;
            crate::edge_times::backfill_untimed(&txn)?;
            crate::notify_since::backfill(&txn, socialite_core::ids::now_ms())?;
            last_u64_key(&txn.open_table(OUTBOX).store()?)? + 1
        };
        let reposted = Arc::new(Reposted::load(&txn)?);
        txn.commit().store()?;
        let outbox_ready = Arc::new(Notify::new());
        let state = State {
            next_outbox_seq,
            reposted: reposted.clone(),
        };
        let writer = Writer::spawn("content", db.clone(), state, |_, _| {});
        Ok(EmbeddedStore {
            db,
            writer,
            outbox_ready,
            posts: PostCache::new(POST_CACHE),
            recent: RecentPosts::default(),
            reposted,
            readers: tokio::sync::Semaphore::new(reader_threads()),
        })
    }

    /// The database to read from (see [`RecoverableDb::db`]); a read's
    /// I/O failure is passed to [`RecoverableDb::check`].
    pub(crate) fn db(&self) -> Result<Arc<Database>> {
        self.db.db()
    }

    pub(crate) fn read<R>(&self, f: impl FnOnce(&ReadTransaction) -> Result<R>) -> Result<R> {
        let read = || f(&self.db.db()?.begin_read().store()?);
        self.db.check(read())
    }

    /// A fault the store knows of: an I/O failure it has not recovered
    /// from yet, or a writer thread that stopped.
    pub fn known_fault(&self) -> Option<StoreFault> {
        self.db.fault().or_else(|| {
            self.writer.stopped().then(|| StoreFault {
                reason: FaultReason::Failing,
                message: "the content store's writer stopped; restart the process".into(),
                recovers: false,
            })
        })
    }

    /// Runs a larger read off the async runtime.
    pub(crate) async fn read_blocking<R: Send + 'static>(
        &self,
        f: impl FnOnce(&ReadTransaction) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        let _permit = self
            .readers
            .acquire()
            .await
            .map_err(|e| Error::internal(format!("store readers closed: {e}")))?;
        let db = self.db.clone();
        let read = tokio::task::spawn_blocking(move || {
            let result = f(&db.db()?.begin_read().store()?);
            db.check(result)
        });
        read.await
            .map_err(|e| Error::internal(format!("store read task failed: {e}")))?
    }
}

/// Four reads per core: enough to overlap the odd disk read, few enough that
/// the threads' heaps stay small.
fn reader_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get()) * 4
}

pub(crate) fn emit(ctx: &mut Ctx<'_>, event: &Event) -> Result<()> {
    let seq = ctx.state.next_outbox_seq;
    ctx.txn
        .open_table(OUTBOX)
        .store()?
        .insert(seq, event.encode().as_slice())
        .store()?;
    ctx.state.next_outbox_seq += 1;
    Ok(())
}

/// Whether the user exists and is not being deleted ([`present`]).
pub(crate) fn user_exists(txn: &WriteTransaction, id: &str) -> Result<bool> {
    let stored = txn.open_table(USERS).store()?.get(id).store()?.is_some();
    Ok(present(stored, being_deleted(txn, id)?))
}

pub(crate) fn being_deleted(txn: &WriteTransaction, id: &str) -> Result<bool> {
    Ok(txn.open_table(DELETING).store()?.get(id).store()?.is_some())
}

pub(crate) fn add_counts(
    txn: &WriteTransaction,
    id: &str,
    followers: i64,
    following: i64,
) -> Result<()> {
    let mut counts = txn.open_table(COUNTS).store()?;
    let (a, b) = counts.get(id).store()?.map(|g| g.value()).unwrap_or((0, 0));
    let (a, b) = (
        a.saturating_add_signed(followers),
        b.saturating_add_signed(following),
    );
    counts.insert(id, (a, b)).store()?;
    Ok(())
}

/// The second members of the tuple keys that start with `first`.
pub(crate) fn edges_of<T: ReadableTable<(&'static str, &'static str), ()>>(
    table: &T,
    first: &str,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<String>> {
    let start = (first, after.unwrap_or(""));
    let mut out = Vec::new();
    for item in table.range(start..).store()? {
        let (k, _) = item.store()?;
        let (a, b) = k.value();
        if a != first || out.len() >= limit {
            break;
        }
        if Some(b) == after {
            continue;
        }
        out.push(b.to_owned());
    }
    Ok(out)
}

/// Ids read back from the store, validated when they were written.
pub(crate) fn stored_ids(ids: Vec<String>) -> Vec<UserId> {
    ids.into_iter().map(UserId::from_stored).collect()
}

pub(crate) fn to_user_ids(ids: Vec<String>) -> Result<Vec<UserId>> {
    ids.iter()
        .map(|s| UserId::parse(s).map_err(|e| Error::internal(format!("stored id: {e}"))))
        .collect()
}
