//! The embedded timeline store: every active user's stored timeline in
//! memory, in sharded maps, in the layout of the configured feed model. It is
//! a cache in the strict sense: after a restart all users are dormant again
//! and their first read rebuilds it by a read-time merge from the persistent
//! content store, so nothing is lost with it.

use crate::authors::Authors;
use crate::layout::LayoutSpec;
use crate::slot::Slot;
use crate::stored::StoredTimeline;
use async_trait::async_trait;
use socialite_core::error::Result;
use socialite_core::ids::{now_ms, PostId, TimelineId, UserId};
use socialite_core::model::Entry;
use socialite_core::numbers::{timeline_numbers, TimelineNo};
use socialite_core::ports::{CacheRead, Coverage, Delivery, Footprint, TimelineStore};
use socialite_domain::feed::accept::Freshness;
use std::sync::{Mutex, MutexGuard, TryLockError};

mod shard;

use shard::{Grouped, Key, Shard};

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

/// Where a numbered timeline lives: its shard and its key there.
fn place(no: TimelineNo) -> (usize, Key) {
    (no.0 as usize % SHARDS, no.0 / SHARDS as u32)
}

/// How many timelines ahead the delivery loop asks for a timeline's
/// state, and then, half as far ahead, for both ends of its entries.
const AHEAD: usize = 8;

/// A batch's deliveries: each one's slot, and by shard, each delivery to
/// that shard as its timeline's key and its place in the batch.
struct Plan {
    slots: Vec<Slot>,
    work: Vec<Vec<(Key, u32)>>,
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

    fn lock(&self, shard: usize) -> MutexGuard<'_, Shard> {
        self.shards[shard].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The batch sorted by shard (in batch order within each), so that
    /// each shard is locked once and a timeline is found by its number
    /// alone.
    fn plan(&self, deliveries: &[Delivery]) -> Plan {
        let slots: Vec<Slot> = deliveries
            .iter()
            .map(|(entry, _)| Slot {
                post: entry.post,
                author: self.authors.intern(&entry.author),
            })
            .collect();
        // Numbers fall evenly over the shards: room for a share and a
        // margin spares most of the growing.
        let total: usize = deliveries.iter().map(|(_, t)| t.len()).sum();
        let share = total / SHARDS + total / SHARDS / 4 + 16;
        let mut work: Vec<Vec<(Key, u32)>> =
            (0..SHARDS).map(|_| Vec::with_capacity(share)).collect();
        for (at, (_, targets)) in deliveries.iter().enumerate() {
            for &no in targets.numbers() {
                let (shard, key) = place(no);
                work[shard].push((key, at as u32));
            }
        }
        Plan { slots, work }
    }

    /// Delivers the planned work of the shards that fall in part `part` of
    /// `parts`, a timeline at a time. Each timeline takes its deliveries
    /// in batch order (a capped array's in id order, which ends the same),
    /// so it ends as if the batch were delivered one by one; it gets one
    /// new version for them all.
    fn deliver_part(
        &self,
        deliveries: &[Delivery],
        plan: &Plan,
        part: usize,
        parts: usize,
    ) -> usize {
        let mut delivered = 0;
        let mut g = Grouped::default();
        // A packed array takes the newest post with an append, but an
        // older one only after decoding the entries before it: deliveries
        // come in log order, which is not quite id order (producers, and
        // concurrent requests within one, number posts before the log
        // orders them). Sorted by id, a timeline's deliveries in a batch
        // are appends; the entries it ends with are the same (the newest
        // of those held and delivered, up to the cap, in any order).
        let by_id = matches!(self.layout, LayoutSpec::Capped { .. });
        let mine = plan.work.iter().enumerate().skip(part).step_by(parts);
        for (shard, work) in mine.filter(|(_, w)| !w.is_empty()) {
            let mut shard = self.lock(shard);
            shard.group(work, &mut g);
            if by_id {
                g.sort_each_by_key(|at| plan.slots[at as usize].post);
            }
            shard.clock += 1;
            let clock = shard.clock;
            for (i, &p) in g.visit.iter().enumerate() {
                if let Some(&ahead) = g.visit.get(i + AHEAD) {
                    shard.prefetch(ahead);
                }
                if let Some(&ahead) = g.visit.get(i + AHEAD / 2) {
                    shard.prefetch_ends(ahead);
                }
                let t = &mut shard.timelines[p as usize].1;
                t.version = clock;
                let places = g.deliveries_to(p);
                for &at in places {
                    let body = deliveries[at as usize].0.body.as_ref();
                    t.insert_slot(plan.slots[at as usize], body);
                }
                delivered += places.len();
            }
        }
        delivered
    }

    /// The shard's lock for a read: while fanout holds it (a delivery holds
    /// a shard for its whole share of a batch, at a lower priority than
    /// reads, so the kernel may keep it off the processor meanwhile), the
    /// read yields instead of blocking its thread, and the other requests
    /// that thread serves go on.
    async fn lock_to_read(&self, shard: usize) -> MutexGuard<'_, Shard> {
        loop {
            match self.shards[shard].try_lock() {
                Ok(guard) => return guard,
                Err(TryLockError::Poisoned(p)) => return p.into_inner(),
                Err(TryLockError::WouldBlock) => {}
            }
            tokio::task::yield_now().await;
        }
    }

    /// Runs `f` on the timeline's shard and key for a read (see
    /// [`Self::lock_to_read`]); `None` for a timeline that never had a
    /// number, and so never a cache.
    async fn read_with<R>(
        &self,
        user: &TimelineId,
        f: impl FnOnce(&mut Shard, Key) -> R,
    ) -> Option<R> {
        let (shard, key) = place(timeline_numbers().get(user)?);
        let mut guard = self.lock_to_read(shard).await;
        Some(f(&mut guard, key))
    }

    /// Runs `f` on the timeline's shard and key; `None` for a timeline that
    /// never had a number, and so never a cache.
    fn with<R>(&self, user: &TimelineId, f: impl FnOnce(&mut Shard, Key) -> R) -> Option<R> {
        let (shard, key) = place(timeline_numbers().get(user)?);
        Some(f(&mut self.lock(shard), key))
    }

    /// Changes the timeline's cache, if it has one.
    fn with_cache(&self, user: &TimelineId, f: impl FnOnce(&mut StoredTimeline)) {
        self.with(user, |s, key| s.changing(key).map(f));
    }

    /// How many users have a cache.
    pub fn active_users(&self) -> usize {
        (0..SHARDS).map(|s| self.lock(s).timelines.len()).sum()
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
        let read = self
            .read_with(user, |s, key| {
                let c = s.reading(key, self.freshness, now)?;
                if !c.is_ready() {
                    return Some(CacheRead::Warming);
                }
                Some(CacheRead::Ready {
                    entries: c.page(before, limit, &self.authors),
                    coverage: c.coverage(),
                })
            })
            .await;
        Ok(read.flatten().unwrap_or(CacheRead::Absent))
    }

    async fn version(&self, user: &TimelineId) -> Result<Option<u64>> {
        let now = now_ms();
        let version = self
            .read_with(user, |s, key| {
                let c = s.reading(key, self.freshness, now)?;
                c.is_ready().then_some(c.version)
            })
            .await;
        Ok(version.flatten())
    }

    async fn create(&self, user: &TimelineId) -> Result<()> {
        let (shard, key) = place(timeline_numbers().number(user));
        let mut s = self.lock(shard);
        s.add(key, || StoredTimeline::warming(self.layout, now_ms()));
        s.changing(key);
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
            return Ok(self.deliver_part(deliveries, &self.plan(deliveries), 0, 1));
        }
        // A large batch uses every core: each thread takes its share of the
        // shards, so the threads never wait on each other's locks.
        let parts = std::thread::available_parallelism()
            .map_or(2, |n| n.get())
            .min(8);
        Ok(tokio::task::block_in_place(|| {
            let plan = self.plan(deliveries);
            let plan = &plan;
            std::thread::scope(|scope| {
                let helpers: Vec<_> = (1..parts)
                    .map(|p| scope.spawn(move || self.deliver_part(deliveries, plan, p, parts)))
                    .collect();
                let mine = self.deliver_part(deliveries, plan, 0, parts);
                mine + helpers
                    .into_iter()
                    .map(|h| h.join().unwrap_or(0))
                    .sum::<usize>()
            })
        }))
    }

    async fn coverage(&self, user: &TimelineId) -> Result<Option<Coverage>> {
        let coverage = self.with(user, |s, key| s.get(key).map(StoredTimeline::coverage));
        Ok(coverage.flatten())
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
        // The numbering is the store's index of timelines by id.
        let mut f = Footprint {
            memory_bytes: timeline_numbers().allocated_bytes(),
            ..Footprint::default()
        };
        for shard in 0..SHARDS {
            let shard = self.lock(shard);
            // The packed timelines with their keys, and the positions.
            let slot = std::mem::size_of::<(Key, StoredTimeline)>();
            f.memory_bytes += (shard.timelines.capacity() * slot) as u64;
            f.memory_bytes += (shard.at.capacity() * std::mem::size_of::<u32>()) as u64;
            for (_, t) in &shard.timelines {
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
        self.with(user, |s, key| s.remove(key));
        Ok(())
    }

    async fn expire(&self) -> Result<u64> {
        let now = now_ms();
        let mut dropped = 0;
        for shard in 0..SHARDS {
            let mut shard = self.lock(shard);
            dropped += shard.retain(|t| !self.freshness.expired(t.read_at, now)) as u64;
        }
        Ok(dropped)
    }
}

#[cfg(test)]
mod tests;
