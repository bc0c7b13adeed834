//! The embedded timeline store: every active user's stored timeline in
//! memory, in sharded maps, in the layout of the configured feed model. It is
//! a cache in the strict sense: after a restart all users are dormant again
//! and their first read rebuilds it by a read-time merge from the persistent
//! content store, so nothing is lost with it.

use crate::authors::Authors;
use crate::layout::{LayoutSpec, Slot};
use crate::stored::StoredTimeline;
use async_trait::async_trait;
use rustc_hash::{FxHashMap, FxHasher};
use socialite_core::error::Result;
use socialite_core::ids::{now_ms, PostId, TimelineId, UserId};
use socialite_core::model::Entry;
use socialite_core::ports::{CacheRead, Coverage, Delivery, Footprint, TimelineStore};
use socialite_core::rules::accept::Freshness;
use std::collections::hash_map::Entry as MapEntry;
use std::hash::{Hash, Hasher};
use std::sync::Mutex;

const SHARDS: usize = 64;
/// Batches with more deliveries than this are spread over the cores.
const PARALLEL_DELIVERIES: usize = 20_000;

pub struct MemoryTimelines {
    layout: LayoutSpec,
    freshness: Freshness,
    authors: Authors,
    /// Entries a fill or a backfill copies in.
    fill: usize,
    shards: Vec<Mutex<Shard>>,
}

/// A shard's timelines, and the clock their versions are read from: it
/// only goes up, and a timeline always lives in the same shard, so a
/// version is never given twice, even across a drop and a new cache.
#[derive(Default)]
struct Shard {
    timelines: FxHashMap<TimelineId, StoredTimeline>,
    clock: u64,
}

impl Shard {
    /// The timeline's cache, marked as changed: the caller changes it.
    fn changing(&mut self, user: &TimelineId) -> Option<&mut StoredTimeline> {
        self.clock += 1;
        let t = self.timelines.get_mut(user)?;
        t.version = self.clock;
        Some(t)
    }

    /// The timeline's cache as a read finds it: one not read for the
    /// freshness ttl is gone (its reader is dormant again); a read renews
    /// the others.
    fn reading(
        &mut self,
        user: &TimelineId,
        freshness: Freshness,
        now: u64,
    ) -> Option<&mut StoredTimeline> {
        let c = self.timelines.get(user)?;
        if freshness.expired(c.read_at, now) {
            self.timelines.remove(user);
            return None;
        }
        let c = self.timelines.get_mut(user)?;
        if freshness.refreshes(c.read_at, now) {
            c.read_at = now;
        }
        Some(c)
    }
}

impl MemoryTimelines {
    pub fn new(layout: LayoutSpec, fill: usize, freshness: Freshness) -> MemoryTimelines {
        MemoryTimelines {
            layout,
            freshness,
            authors: Authors::new(),
            fill,
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }

    fn shard_of(&self, user: &TimelineId) -> usize {
        let mut h = FxHasher::default();
        user.hash(&mut h);
        // Re-mixed top bits: the maps use the low ones for their buckets.
        (h.finish().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % SHARDS
    }

    /// Delivers to the followers whose shard falls in part `part` of `parts`.
    fn deliver_part(&self, deliveries: &[Delivery], part: usize, parts: usize) -> usize {
        let mut delivered = 0;
        for (entry, followers) in deliveries {
            let slot = Slot {
                post: entry.post,
                author: self.authors.intern(&entry.author),
            };
            for f in followers.iter() {
                let shard = self.shard_of(f);
                if shard % parts != part {
                    continue;
                }
                let mut shard = self.shards[shard].lock().unwrap_or_else(|p| p.into_inner());
                if let Some(t) = shard.changing(f) {
                    t.insert_slot(slot, entry.body.as_ref());
                    delivered += 1;
                }
            }
        }
        delivered
    }

    fn with<R>(&self, user: &TimelineId, f: impl FnOnce(&mut Shard) -> R) -> R {
        let mut shard = self.shards[self.shard_of(user)]
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        f(&mut shard)
    }

    /// Changes the timeline's cache, if it has one.
    fn with_cache(&self, user: &TimelineId, f: impl FnOnce(&mut StoredTimeline)) {
        self.with(user, |s| {
            if let Some(c) = s.changing(user) {
                f(c)
            }
        })
    }

    /// How many users have a cache.
    pub fn active_users(&self) -> usize {
        self.shards
            .iter()
            .map(|s| s.lock().unwrap_or_else(|p| p.into_inner()).timelines.len())
            .sum()
    }
}

#[async_trait]
impl TimelineStore for MemoryTimelines {
    fn capacity(&self) -> usize {
        self.fill
    }

    async fn read(
        &self,
        user: &TimelineId,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<CacheRead> {
        let now = now_ms();
        Ok(self.with(user, |s| {
            let Some(c) = s.reading(user, self.freshness, now) else {
                return CacheRead::Absent;
            };
            if !c.is_ready() {
                return CacheRead::Warming;
            }
            CacheRead::Ready {
                entries: c.page(before, limit, &self.authors),
                coverage: c.coverage(),
            }
        }))
    }

    async fn version(&self, user: &TimelineId) -> Result<Option<u64>> {
        let now = now_ms();
        Ok(self.with(user, |s| {
            let c = s.reading(user, self.freshness, now)?;
            c.is_ready().then_some(c.version)
        }))
    }

    async fn create(&self, user: &TimelineId) -> Result<()> {
        self.with(user, |s| {
            if let MapEntry::Vacant(v) = s.timelines.entry(user.clone()) {
                v.insert(StoredTimeline::warming(self.layout, now_ms()));
            }
            s.changing(user);
        });
        Ok(())
    }

    async fn fill(&self, user: &TimelineId, entries: Vec<Entry>, coverage: Coverage) -> Result<()> {
        self.with_cache(user, |c| c.fill(entries, coverage, &self.authors));
        Ok(())
    }

    async fn deliver(&self, deliveries: &[Delivery]) -> Result<usize> {
        let total: usize = deliveries.iter().map(|(_, f)| f.len()).sum();
        let multi_thread = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if total < PARALLEL_DELIVERIES || !multi_thread {
            return Ok(self.deliver_part(deliveries, 0, 1));
        }
        // A large batch uses every core: each thread takes its share of the
        // shards, so the threads never wait on each other's locks.
        let parts = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .min(8);
        Ok(tokio::task::block_in_place(|| {
            std::thread::scope(|scope| {
                let helpers: Vec<_> = (1..parts)
                    .map(|p| scope.spawn(move || self.deliver_part(deliveries, p, parts)))
                    .collect();
                let mine = self.deliver_part(deliveries, 0, parts);
                mine + helpers
                    .into_iter()
                    .map(|h| h.join().unwrap_or(0))
                    .sum::<usize>()
            })
        }))
    }

    async fn coverage(&self, user: &TimelineId) -> Result<Option<Coverage>> {
        Ok(self.with(user, |s| {
            s.timelines.get(user).map(StoredTimeline::coverage)
        }))
    }

    async fn backfill(
        &self,
        user: &TimelineId,
        author: &UserId,
        entries: Vec<Entry>,
        coverage: Coverage,
    ) -> Result<()> {
        self.with_cache(user, |c| {
            c.backfill(author, entries, coverage, &self.authors)
        });
        Ok(())
    }

    async fn purge_author(&self, user: &TimelineId, author: &UserId) -> Result<()> {
        self.with_cache(user, |c| c.purge_author(author, &self.authors));
        Ok(())
    }

    async fn retract_post(&self, users: &[TimelineId], post: PostId) -> Result<()> {
        for u in users {
            self.with_cache(u, |c| c.retract(post));
        }
        Ok(())
    }

    async fn footprint(&self) -> Result<Footprint> {
        let mut f = Footprint::default();
        for shard in &self.shards {
            let shard = shard.lock().unwrap_or_else(|p| p.into_inner());
            let map = &shard.timelines;
            // Map slots (key, timeline and a control byte) and each key's text.
            let slot = std::mem::size_of::<(TimelineId, StoredTimeline)>() + 1;
            f.memory_bytes += (map.capacity() * slot) as u64;
            f.memory_bytes += map
                .keys()
                .map(|k| 16 + k.as_str().len() as u64)
                .sum::<u64>();
            for t in map.values() {
                f.users += 1;
                f.entries += t.layout().len() as u64;
                f.documents += t.layout().documents() as u64;
                f.serialized_bytes += t.serialized_bytes(&self.authors) as u64;
                f.memory_bytes += t.allocated_bytes() as u64;
            }
        }
        Ok(f)
    }

    async fn drop_timeline(&self, user: &TimelineId) -> Result<()> {
        self.with(user, |s| s.timelines.remove(user));
        Ok(())
    }

    async fn expire(&self) -> Result<u64> {
        let now = now_ms();
        let mut dropped = 0;
        for shard in &self.shards {
            let mut shard = shard.lock().unwrap_or_else(|p| p.into_inner());
            let before = shard.timelines.len();
            shard
                .timelines
                .retain(|_, t| !self.freshness.expired(t.read_at, now));
            dropped += (before - shard.timelines.len()) as u64;
        }
        Ok(dropped)
    }
}
