//! The toy's timeline store: one [`Cache`] per active timeline in a map
//! behind a lock. Every stored feed model keeps its timelines this way:
//! the port promises a capped list per timeline, and time or sized buckets
//! are storage shapes of the other stores, not rules, so the
//! timelines a reader sees are the same (the differential test checks it).

use super::cache::Cache;
use async_trait::async_trait;
use socialite_core::error::Result;
use socialite_core::ids::{now_ms, PostId, TimelineId, UserId};
use socialite_core::model::Entry;
use socialite_core::ports::{CacheRead, Coverage, Delivery, Footprint, TimelineStore};
use socialite_domain::feed::accept::Freshness;
use std::collections::BTreeMap;
use std::sync::Mutex;

pub struct ToyTimelines {
    /// Entries kept per cache.
    cap: usize,
    freshness: Freshness,
    shelf: Mutex<Shelf>,
}

#[derive(Default)]
struct Shelf {
    caches: BTreeMap<TimelineId, Cache>,
    /// Goes up at every change, so a version is never given twice, not
    /// even to a cache dropped and made again.
    clock: u64,
}

impl Shelf {
    /// The timeline's cache, stamped with a new version: the caller changes it.
    fn changing(&mut self, timeline: &TimelineId) -> Option<&mut Cache> {
        self.clock += 1;
        let clock = self.clock;
        let cache = self.caches.get_mut(timeline)?;
        cache.version = clock;
        Some(cache)
    }

    /// The cache as a read finds it: one not read for the ttl is gone, and
    /// a read renews the others as often as [`Freshness`] says.
    fn reading(&mut self, timeline: &TimelineId, f: Freshness) -> Option<&Cache> {
        let now = now_ms();
        if f.expired(self.caches.get(timeline)?.read_at, now) {
            self.caches.remove(timeline);
            return None;
        }
        let cache = self.caches.get_mut(timeline)?;
        if f.refreshes(cache.read_at, now) {
            cache.read_at = now;
        }
        Some(cache)
    }
}

impl ToyTimelines {
    pub fn new(cap: usize, freshness: Freshness) -> ToyTimelines {
        ToyTimelines {
            cap,
            freshness,
            shelf: Mutex::default(),
        }
    }

    fn shelf(&self) -> std::sync::MutexGuard<'_, Shelf> {
        self.shelf.lock().unwrap()
    }

    /// Runs `f` on the timeline's cache, if it has one, as a change.
    fn change(&self, timeline: &TimelineId, f: impl FnOnce(&mut Cache, usize)) {
        if let Some(cache) = self.shelf().changing(timeline) {
            f(cache, self.cap);
        }
    }
}

#[async_trait]
impl TimelineStore for ToyTimelines {
    fn capacity(&self) -> usize {
        self.cap
    }

    async fn read(
        &self,
        timeline: &TimelineId,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<CacheRead> {
        let mut shelf = self.shelf();
        Ok(match shelf.reading(timeline, self.freshness) {
            None => CacheRead::Absent,
            Some(c) if !c.is_ready() => CacheRead::Warming,
            Some(c) => CacheRead::Ready {
                entries: c.page(before, limit, self.cap),
                coverage: c.coverage(self.cap),
            },
        })
    }

    async fn version(&self, timeline: &TimelineId) -> Result<Option<u64>> {
        let mut shelf = self.shelf();
        let cache = shelf.reading(timeline, self.freshness);
        Ok(cache.filter(|c| c.is_ready()).map(|c| c.version))
    }

    async fn create(&self, timeline: &TimelineId) -> Result<()> {
        let mut shelf = self.shelf();
        if !shelf.caches.contains_key(timeline) {
            shelf
                .caches
                .insert(timeline.clone(), Cache::warming(now_ms()));
            shelf.changing(timeline);
        }
        Ok(())
    }

    async fn fill(
        &self,
        timeline: &TimelineId,
        entries: Vec<Entry>,
        coverage: Coverage,
    ) -> Result<()> {
        self.change(timeline, |c, cap| c.fill(entries, coverage, cap));
        Ok(())
    }

    async fn deliver(&self, deliveries: &[Delivery]) -> Result<usize> {
        let mut shelf = self.shelf();
        let mut landed = 0;
        for (entry, targets) in deliveries {
            // Dormant timelines have no cache, and fanout never makes one.
            for t in targets.iter() {
                if let Some(cache) = shelf.changing(t) {
                    cache.insert(entry.clone(), self.cap);
                    landed += 1;
                }
            }
        }
        Ok(landed)
    }

    async fn coverage(&self, timeline: &TimelineId) -> Result<Option<Coverage>> {
        let shelf = self.shelf();
        Ok(shelf.caches.get(timeline).map(|c| c.coverage(self.cap)))
    }

    async fn backfill(
        &self,
        timeline: &TimelineId,
        author: &UserId,
        entries: Vec<Entry>,
        coverage: Coverage,
    ) -> Result<()> {
        self.change(timeline, |c, cap| {
            c.backfill(author, entries, coverage, cap)
        });
        Ok(())
    }

    async fn purge_author(&self, timeline: &TimelineId, author: &UserId) -> Result<()> {
        self.change(timeline, |c, cap| c.purge(author, cap));
        Ok(())
    }

    async fn retract_post(&self, timelines: &[TimelineId], post: PostId) -> Result<()> {
        for t in timelines {
            self.change(t, |c, cap| c.retract(post, cap));
        }
        Ok(())
    }

    async fn drop_timeline(&self, timeline: &TimelineId) -> Result<()> {
        self.shelf().caches.remove(timeline);
        Ok(())
    }

    async fn expire(&self) -> Result<u64> {
        let now = now_ms();
        let mut shelf = self.shelf();
        let before = shelf.caches.len();
        shelf
            .caches
            .retain(|_, c| !self.freshness.expired(c.read_at, now));
        Ok((before - shelf.caches.len()) as u64)
    }

    async fn footprint(&self) -> Result<Footprint> {
        let shelf = self.shelf();
        let mut f = Footprint {
            users: shelf.caches.len() as u64,
            // One map per timeline: the cache model's one array.
            documents: shelf.caches.len() as u64,
            ..Footprint::default()
        };
        for (id, cache) in &shelf.caches {
            f.entries += cache.len() as u64;
            // As a document store would keep them: an id and an author per
            // entry, the message an entry carries, and the document's key.
            f.serialized_bytes += id.as_str().len() as u64;
            for e in cache.entries() {
                let body = e.body.as_ref().map_or(0, |b| b.message.len());
                f.serialized_bytes += (8 + e.author.as_str().len() + body) as u64;
            }
        }
        // About: the map's slots, not the bodies shared with other timelines.
        let slot = std::mem::size_of::<(PostId, Entry)>() as u64;
        let per_cache = std::mem::size_of::<(TimelineId, Cache)>() as u64;
        f.memory_bytes = f.entries * slot + f.users * per_cache;
        Ok(f)
    }
}
