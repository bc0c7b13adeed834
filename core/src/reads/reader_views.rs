//! What a reader's timelines hide, kept from one read to the next where
//! one process takes every write (the embedded default).
//!
//! A timeline read whose page is not kept whole checks that its reader
//! exists and reads what they hide: their record, their mutes and blocks
//! both ways, their exclusive lists, their keyword filters. Those are a
//! handful of store reads that change only when a write that concerns the
//! reader ends, and every such write moves the reader's clock
//! ([`crate::feed::stamp::WriteEpoch::of_reader`]): their own follows,
//! mutes, lists, filters and profile, a block of them, and any write that
//! may concern every reader (a deletion, a suspension, a filter that
//! expired). So what a read found is kept with the clock as it stood
//! before the read, and serves the reader's next reads while the clock
//! still stands there. Where several processes take writes, another's
//! write does not move this clock, and nothing is kept.

use crate::ids::UserId;
use crate::model::filter::FilterContext;
use rustc_hash::{FxHashMap, FxHasher};
use socialite_domain::graph::relations::Hidden;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, Mutex};

const SHARDS: usize = 16;
/// Readers a shard's young generation holds before it turns old: at most
/// 2 × 16 × 4,096 = 131,072 kept views, each an id, a clock and a shared
/// set (most readers hide nothing but the suspended accounts, a set
/// shared by all).
const PER_GENERATION: usize = 4_096;

type Key = (UserId, FilterContext);

struct Kept {
    /// The reader's clock before the read that found `hidden`.
    at: u64,
    hidden: Arc<Hidden>,
}

/// A shard in two generations: a full young generation turns old (the
/// old one is dropped), and a view found in the old one comes back young,
/// so the readers who read often stay.
#[derive(Default)]
struct Shard {
    young: FxHashMap<Key, Kept>,
    old: FxHashMap<Key, Kept>,
}

impl Shard {
    fn keep(&mut self, key: Key, kept: Kept) {
        if self.young.len() >= PER_GENERATION && !self.young.contains_key(&key) {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(key, kept);
    }
}

pub(crate) struct ReaderViews {
    shards: Vec<Mutex<Shard>>,
    /// The view of the readers who hide nothing but the suspended
    /// accounts, shared by all of them: a reader's view then costs its
    /// entry only (about 100 bytes with its id), not a set of its own.
    plain: Mutex<Option<Arc<Hidden>>>,
}

impl Default for ReaderViews {
    fn default() -> ReaderViews {
        ReaderViews {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            plain: Mutex::default(),
        }
    }
}

impl ReaderViews {
    fn shard(&self, key: &Key) -> std::sync::MutexGuard<'_, Shard> {
        let mut h = FxHasher::default();
        key.hash(&mut h);
        let at = (h.finish() >> 32) as usize % SHARDS;
        self.shards[at].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What the reader's timelines in `context` hide, if it was read while
    /// their clock stood at `at`, as it still does.
    pub(crate) fn get(
        &self,
        reader: &UserId,
        context: FilterContext,
        at: u64,
    ) -> Option<Arc<Hidden>> {
        let key = (reader.clone(), context);
        let mut shard = self.shard(&key);
        if let Some(k) = shard.young.get(&key) {
            return (k.at == at).then(|| k.hidden.clone());
        }
        let k = shard.old.remove(&key)?;
        let found = (k.at == at).then(|| k.hidden.clone());
        if found.is_some() {
            shard.keep(key, k);
        }
        found
    }

    /// Keeps what a read found, with the reader's clock taken before it.
    pub(crate) fn put(
        &self,
        reader: &UserId,
        context: FilterContext,
        at: u64,
        hidden: Arc<Hidden>,
    ) {
        let hidden = self.shared(hidden);
        let key = (reader.clone(), context);
        self.shard(&key).keep(key, Kept { at, hidden });
    }

    /// The shared plain view in place of an equal one.
    fn shared(&self, hidden: Arc<Hidden>) -> Arc<Hidden> {
        if !hidden.is_plain() {
            return hidden;
        }
        let mut plain = self.plain.lock().unwrap_or_else(|p| p.into_inner());
        match &*plain {
            Some(p) if p.same_suspended(&hidden) => p.clone(),
            _ => {
                *plain = Some(hidden.clone());
                hidden
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    #[test]
    fn a_view_serves_while_its_readers_clock_stands() {
        let views = ReaderViews::default();
        let (ann, home) = (id("ann"), FilterContext::Home);
        views.put(&ann, home, 7, Arc::new(Hidden::default()));
        assert!(views.get(&ann, home, 7).is_some());
        assert!(views.get(&ann, home, 8).is_none(), "the clock moved");
        assert!(
            views.get(&ann, FilterContext::Lists, 7).is_none(),
            "another context"
        );
        assert!(views.get(&id("bob"), home, 7).is_none());
    }

    #[test]
    fn readers_who_hide_nothing_share_one_view() {
        let views = ReaderViews::default();
        let home = FilterContext::Home;
        views.put(&id("ann"), home, 1, Arc::new(Hidden::default()));
        views.put(&id("bob"), home, 1, Arc::new(Hidden::default()));
        let muting = Hidden::default().and_authors(vec![id("cat")]);
        views.put(&id("dan"), home, 1, Arc::new(muting));
        let (ann, bob) = (
            views.get(&id("ann"), home, 1),
            views.get(&id("bob"), home, 1),
        );
        assert!(Arc::ptr_eq(&ann.unwrap(), &bob.unwrap()));
        let dan = views.get(&id("dan"), home, 1).unwrap();
        assert!(
            dan.hides(&id("cat")),
            "a reader who hides someone keeps their own"
        );
    }

    #[test]
    fn views_are_bounded_and_the_recent_stay() {
        let views = ReaderViews::default();
        let home = FilterContext::Home;
        let all = 2 * SHARDS * PER_GENERATION + 1_000;
        for i in 0..all {
            views.put(&id(&format!("u{i}")), home, 1, Arc::new(Hidden::default()));
        }
        let held: usize = views
            .shards
            .iter()
            .map(|s| {
                let s = s.lock().unwrap();
                s.young.len() + s.old.len()
            })
            .sum();
        assert!(held <= 2 * SHARDS * PER_GENERATION, "{held} held");
        let last = id(&format!("u{}", all - 1));
        assert!(views.get(&last, home, 1).is_some(), "the newest is kept");
    }
}
