//! A shard of the embedded timeline store: its timelines packed in one
//! vector and found by key, and how a batch's deliveries to it are grouped
//! by timeline.

use crate::stored::StoredTimeline;
use socialite_domain::feed::accept::Freshness;

/// A timeline's key in its shard: its number (`TimelineNo`) over the
/// count of shards. Numbers are dense, so shards take them in turn and
/// keys within a shard are dense too.
pub(super) type Key = u32;

/// A shard's timelines, and the clock their versions are read from: it
/// only goes up, and a timeline always lives in the same shard, so a
/// version is never given twice, even across a drop and a new cache.
///
/// The timelines with a cache are packed in one vector, found through a
/// table of positions indexed by key (4 bytes a numbered timeline, so the
/// table of a shard stays in the processor's caches). A batch finds where
/// each timeline it reaches sits without touching it, groups its
/// deliveries by that position ([`Grouped`]), and asks for the timelines a
/// few ahead while it writes the current one.
#[derive(Default)]
pub(super) struct Shard {
    pub(super) at: Vec<u32>,
    pub(super) timelines: Vec<(Key, StoredTimeline)>,
    pub(super) clock: u64,
}

/// A key without a cache in `Shard::at`.
const ABSENT: u32 = u32::MAX;

impl Shard {
    pub(super) fn position(&self, key: Key) -> Option<usize> {
        let p = *self.at.get(key as usize)?;
        (p != ABSENT).then_some(p as usize)
    }

    pub(super) fn get(&self, key: Key) -> Option<&StoredTimeline> {
        Some(&self.timelines[self.position(key)?].1)
    }

    pub(super) fn get_mut(&mut self, key: Key) -> Option<&mut StoredTimeline> {
        let p = self.position(key)?;
        Some(&mut self.timelines[p].1)
    }

    /// Adds a cache for `key` unless it has one.
    pub(super) fn add(&mut self, key: Key, t: impl FnOnce() -> StoredTimeline) {
        if self.position(key).is_some() {
            return;
        }
        if self.at.len() <= key as usize {
            self.at.resize(key as usize + 1, ABSENT);
        }
        self.at[key as usize] = self.timelines.len() as u32;
        self.timelines.push((key, t()));
    }

    pub(super) fn remove(&mut self, key: Key) -> Option<StoredTimeline> {
        let p = self.position(key)?;
        self.at[key as usize] = ABSENT;
        let (_, t) = self.timelines.swap_remove(p);
        if let Some((moved, _)) = self.timelines.get(p) {
            self.at[*moved as usize] = p as u32;
        }
        Some(t)
    }

    /// Drops the caches `keep` refuses; how many it dropped.
    pub(super) fn retain(&mut self, keep: impl Fn(&StoredTimeline) -> bool) -> usize {
        let gone: Vec<Key> = self
            .timelines
            .iter()
            .filter(|(_, t)| !keep(t))
            .map(|(k, _)| *k)
            .collect();
        gone.iter().filter(|k| self.remove(**k).is_some()).count()
    }

    /// Asks the processor for the state of the timeline at `position`,
    /// which a delivery soon reads.
    pub(super) fn prefetch(&self, position: u32) {
        prefetch(&self.timelines[position as usize]);
    }

    /// Asks for both ends of the entries of the timeline at `position`,
    /// where a delivery reads and writes; its state must be at hand already
    /// (see `prefetch`).
    pub(super) fn prefetch_ends(&self, position: u32) {
        if let Some((oldest, newest)) = self.timelines[position as usize].1.layout().ends() {
            prefetch(oldest);
            prefetch(newest);
        }
    }

    /// Groups a batch's deliveries to this shard by timeline (see
    /// [`Grouped`]), leaving out the timelines without a cache.
    pub(super) fn group(&self, work: &[(Key, u32)], g: &mut Grouped) {
        let n = self.timelines.len();
        g.starts.clear();
        g.starts.resize(n + 1, 0);
        for &(key, _) in work {
            if let Some(p) = self.position(key) {
                g.starts[p + 1] += 1;
            }
        }
        for p in 0..n {
            g.starts[p + 1] += g.starts[p];
        }
        g.next.clear();
        g.next.extend_from_slice(&g.starts[..n]);
        g.order.clear();
        g.order.resize(g.starts[n] as usize, 0);
        for &(key, at) in work {
            if let Some(p) = self.position(key) {
                g.order[g.next[p] as usize] = at;
                g.next[p] += 1;
            }
        }
        g.visit.clear();
        g.visit
            .extend((0..n as u32).filter(|&p| g.starts[p as usize] != g.starts[p as usize + 1]));
    }

    /// The timeline's cache, marked as changed: the caller changes it.
    pub(super) fn changing(&mut self, key: Key) -> Option<&mut StoredTimeline> {
        self.clock += 1;
        let clock = self.clock;
        let t = self.get_mut(key)?;
        t.version = clock;
        Some(t)
    }

    /// The timeline's cache as a read finds it: one not read for the
    /// freshness ttl is gone (its reader is dormant again); a read renews
    /// the others.
    pub(super) fn reading(
        &mut self,
        key: Key,
        freshness: Freshness,
        now: u64,
    ) -> Option<&mut StoredTimeline> {
        let c = self.get(key)?;
        if freshness.expired(c.read_at, now) {
            self.remove(key);
            return None;
        }
        let c = self.get_mut(key)?;
        if freshness.refreshes(c.read_at, now) {
            c.read_at = now;
        }
        Some(c)
    }
}

/// A hint to the processor to load the cache lines of `value`: no effect
/// on what the program computes, only on when the memory arrives.
fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let start = std::ptr::from_ref(value).cast::<i8>();
        for offset in (0..std::mem::size_of::<T>()).step_by(64) {
            // SAFETY: a prefetch reads nothing into the program and cannot
            // fault; the addresses are within a live reference's value.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(offset)) }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

/// One shard's part of a batch grouped by timeline, so that a timeline the
/// batch reaches many times (a batch of 100 posts by popular authors
/// reaches an active timeline about 17 times) is found, and its state and
/// newest entries fetched from memory, once. Grouped by counting, as keys
/// index positions densely: two passes over the work, no sort. The
/// vectors are kept from shard to shard.
#[derive(Default)]
pub(super) struct Grouped {
    /// By position: where its deliveries start in `order` (one more entry
    /// marks the end).
    starts: Vec<u32>,
    /// Scratch: where the next delivery of each position goes.
    next: Vec<u32>,
    /// The places in the batch, by timeline, in batch order within each.
    order: Vec<u32>,
    /// The positions with deliveries, ascending.
    pub(super) visit: Vec<u32>,
}

impl Grouped {
    /// Orders each timeline's deliveries by `key` (stably: equal keys keep
    /// batch order).
    pub(super) fn sort_each_by_key<K: Ord>(&mut self, key: impl Fn(u32) -> K) {
        for w in self.starts.windows(2) {
            self.order[w[0] as usize..w[1] as usize].sort_by_key(|&at| key(at));
        }
    }

    pub(super) fn deliveries_to(&self, position: u32) -> &[u32] {
        let p = position as usize;
        &self.order[self.starts[p] as usize..self.starts[p + 1] as usize]
    }
}
