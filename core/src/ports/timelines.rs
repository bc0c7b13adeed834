//! The port of stored timelines.

use super::metered::{port, Metered, Port};
use crate::error::Result;
use crate::ids::{PostId, TimelineId, UserId};
use crate::model::Entry;
use crate::numbers::Targets;
pub use socialite_domain::feed::accept::Coverage;
use std::sync::Arc;

/// One post's entry and the timelines it goes to.
pub type Delivery = (Entry, Arc<Targets>);

/// What a cache read found.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheRead {
    /// No cache: the user is dormant.
    Absent,
    /// Being built by a read-time merge; not yet complete.
    Warming,
    /// Entries below the cursor, newest first, and what the cache covers.
    Ready {
        entries: Vec<Entry>,
        coverage: Coverage,
    },
}

port! {
    /// Stored timelines: a capped list of entries for each *active* timeline
    /// (one that a reader reads), keyed by [`TimelineId`].
    /// Every write is idempotent (an entry is held once whatever the deliveries),
    /// and entries stay ordered by post id, newest first.
    ///
    /// A cache is created *warming*, before the read-time merge that fills it, so
    /// that fanout delivers to it while the merge runs; purges and retractions that
    /// reach a warming cache are remembered and applied to the merge's entries
    /// when they arrive with [`TimelineStore::fill`]. That closes the races between
    /// activation and concurrent posts, follows, unfollows and deletions.
    pub trait TimelineStore: Port as "timelines" for Metered<dyn TimelineStore> {
        /// Entries kept per cache.
        fn capacity(&self) -> usize;
        async fn read(
            &self,
            timeline: &TimelineId,
            before: Option<PostId>,
            limit: usize,
        ) -> Result<CacheRead>;
        /// A number that differs after every change of what the timeline's
        /// cache holds, also after it is dropped and made again; `None` when
        /// the timeline has no ready cache, or the store cannot tell changes
        /// made by other processes without a round trip (then whole pages are
        /// not kept, [`crate::feed::stamp`]). It counts as a read of the
        /// timeline ([`socialite_domain::feed::accept::Freshness`]).
        async fn version(&self, _timeline: &TimelineId) -> Result<Option<u64>> {
            Ok(None)
        }
        /// Creates a warming cache unless the timeline has one.
        async fn create(&self, timeline: &TimelineId) -> Result<()>;
        /// Completes a warming cache with a merge's entries, exact over `coverage`.
        /// Does nothing to a cache that is ready or gone.
        async fn fill(
            &self,
            timeline: &TimelineId,
            entries: Vec<Entry>,
            coverage: Coverage,
        ) -> Result<()>;
        /// Delivers each entry to its timelines where they exist; returns how
        /// many landed in a timeline (dormant ones are skipped).
        async fn deliver(&self, deliveries: &[Delivery]) -> Result<usize>;
        /// The coverage of the timeline's cache, or `None` if there is none.
        async fn coverage(&self, timeline: &TimelineId) -> Result<Option<Coverage>>;
        /// Inserts a newly followed author's recent posts, which are exact over
        /// `coverage` (the author may have older ones): the cache's floor rises to
        /// it if needed.
        async fn backfill(
            &self,
            timeline: &TimelineId,
            author: &UserId,
            entries: Vec<Entry>,
            coverage: Coverage,
        ) -> Result<()>;
        /// Removes every entry by `author` from the timeline's cache.
        async fn purge_author(&self, timeline: &TimelineId, author: &UserId) -> Result<()>;
        /// Removes the post from these timelines' caches.
        async fn retract_post(&self, timelines: &[TimelineId], post: PostId) -> Result<()>;
        async fn drop_timeline(&self, timeline: &TimelineId) -> Result<()>;
        /// Drops the stored timelines that expired ([`socialite_domain::feed::accept::Freshness`]);
        /// returns how many. A store that expires them by itself (a TTL index)
        /// does nothing here; reads treat an expired timeline as absent either way.
        async fn expire(&self) -> Result<u64> {
            Ok(0)
        }
        /// What the store holds, for capacity planning and the benchmark.
        async fn footprint(&self) -> Result<Footprint>;
    }
}

/// Size of a timeline store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Stored timelines: active users' home timelines, and the lists and
    /// groups that were read.
    pub users: u64,
    pub entries: u64,
    /// Arrays or buckets: what a document store holds as documents.
    pub documents: u64,
    /// The entries serialized as a document store keeps them (ids, author,
    /// and with embedding the message and data), plus per-document keys.
    pub serialized_bytes: u64,
    /// Memory the timelines take in this process (zero for remote stores):
    /// allocated entry slots, per-timeline state and map slots, not counting
    /// post content shared with other timelines.
    pub memory_bytes: u64,
}
