//! Dense numbers for timelines, and the target lists of fanout that carry
//! them. Fanout writes one entry into each of millions of timelines a
//! second; finding a timeline by its text key costs a hash of the text and
//! a comparison with the stored key, each a cache miss on a string of its
//! own. A number, given once per timeline for the life of the process,
//! finds it with an integer: the fanout worker's lists carry the numbers
//! beside the ids, and a store that keeps its timelines by number (the
//! embedded default) never touches the text on delivery.

use crate::ids::TimelineId;
use rustc_hash::{FxHashMap, FxHasher};
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{OnceLock, RwLock};

/// A timeline's number in this process: dense from 0, never given to
/// another timeline, never taken back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TimelineNo(pub u32);

const SHARDS: usize = 16;

/// The process's numbering of timelines. It grows with the timelines that
/// fanout reaches or a reader activates (every user's home, their lists and
/// the groups: bounded by the graph) and keeps each number for the life of
/// the process, so a number held anywhere always means the same timeline.
pub struct TimelineNumbers {
    shards: Vec<RwLock<FxHashMap<TimelineId, TimelineNo>>>,
    next: AtomicU32,
}

/// The process's numbering.
pub fn timeline_numbers() -> &'static TimelineNumbers {
    static NUMBERS: OnceLock<TimelineNumbers> = OnceLock::new();
    NUMBERS.get_or_init(TimelineNumbers::new)
}

impl TimelineNumbers {
    fn new() -> TimelineNumbers {
        TimelineNumbers {
            shards: (0..SHARDS).map(|_| RwLock::default()).collect(),
            next: AtomicU32::new(0),
        }
    }

    fn shard(&self, id: &TimelineId) -> &RwLock<FxHashMap<TimelineId, TimelineNo>> {
        let mut h = FxHasher::default();
        id.hash(&mut h);
        &self.shards[(h.finish() >> 60) as usize % SHARDS]
    }

    /// The timeline's number, given now if it has none.
    pub fn number(&self, id: &TimelineId) -> TimelineNo {
        if let Some(n) = self.get(id) {
            return n;
        }
        let mut shard = self.shard(id).write().unwrap_or_else(|p| p.into_inner());
        *shard.entry(id.clone()).or_insert_with(|| {
            // 4 billion timelines in one process is beyond any memory here.
            TimelineNo(self.next.fetch_add(1, Ordering::Relaxed))
        })
    }

    /// The timeline's id as the numbering keeps it, and its number (given
    /// now if it has none). Lists that keep the kept id share its text
    /// instead of holding a copy each: a follower list loaded from a store
    /// decodes every id anew.
    pub fn shared(&self, id: TimelineId) -> (TimelineId, TimelineNo) {
        {
            let shard = self.shard(&id).read().unwrap_or_else(|p| p.into_inner());
            if let Some((kept, n)) = shard.get_key_value(&id) {
                return (kept.clone(), *n);
            }
        }
        let n = self.number(&id);
        (id, n)
    }

    /// The timeline's number, if it was given one.
    pub fn get(&self, id: &TimelineId) -> Option<TimelineNo> {
        let shard = self.shard(id).read().unwrap_or_else(|p| p.into_inner());
        shard.get(id).copied()
    }

    /// Bytes the numbering holds: its map slots and each key's text.
    pub fn allocated_bytes(&self) -> u64 {
        let slot = std::mem::size_of::<(TimelineId, TimelineNo)>() + 1;
        self.shards
            .iter()
            .map(|s| {
                let map = s.read().unwrap_or_else(|p| p.into_inner());
                let keys: usize = map.keys().map(|k| 16 + k.as_str().len()).sum();
                (map.capacity() * slot + keys) as u64
            })
            .sum()
    }
}

/// The timelines one post goes to: their ids, and in the same order their
/// numbers. Reads as a slice of ids; changed only through its methods, which
/// keep the two in step.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Targets {
    ids: Vec<TimelineId>,
    numbers: Vec<TimelineNo>,
}

impl Targets {
    pub fn numbers(&self) -> &[TimelineNo] {
        &self.numbers
    }

    pub fn insert(&mut self, at: usize, id: TimelineId) {
        let (id, n) = timeline_numbers().shared(id);
        self.numbers.insert(at, n);
        self.ids.insert(at, id);
    }

    pub fn remove(&mut self, at: usize) -> TimelineId {
        self.numbers.remove(at);
        self.ids.remove(at)
    }
}

impl From<Vec<TimelineId>> for Targets {
    fn from(ids: Vec<TimelineId>) -> Targets {
        let numbers = timeline_numbers();
        let (ids, numbers) = ids.into_iter().map(|id| numbers.shared(id)).unzip();
        Targets { ids, numbers }
    }
}

impl FromIterator<TimelineId> for Targets {
    fn from_iter<I: IntoIterator<Item = TimelineId>>(iter: I) -> Targets {
        Targets::from(iter.into_iter().collect::<Vec<_>>())
    }
}

impl Deref for Targets {
    type Target = [TimelineId];

    fn deref(&self) -> &[TimelineId] {
        &self.ids
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::UserId;

    fn home(u: &str) -> TimelineId {
        TimelineId::home(&UserId::parse(u).unwrap())
    }

    #[test]
    fn a_timeline_keeps_its_number_and_no_two_share_one() {
        let n = timeline_numbers();
        let (a, b) = (home("numbers-a"), home("numbers-b"));
        let na = n.number(&a);
        assert_eq!(n.number(&TimelineId::from_stored("numbers-a")), na);
        assert_eq!(n.get(&a), Some(na));
        assert_ne!(n.number(&b), na);
        assert_eq!(n.get(&home("numbers-never")), None);
    }

    #[test]
    fn targets_keep_ids_and_numbers_in_step() {
        let mut t: Targets = ["t-a", "t-c"].iter().map(|u| home(u)).collect();
        t.insert(1, home("t-b"));
        assert_eq!(t.remove(0), home("t-a"));
        let n = timeline_numbers();
        let expected: Vec<TimelineNo> = t.iter().map(|id| n.number(id)).collect();
        assert_eq!(t.numbers(), expected.as_slice());
        assert_eq!(t.len(), 2);
    }
}
