//! The newest post ids of recently read authors, in memory, in front of the
//! `author_posts` index. A read-time merge over 1,000 followees, and hybrid
//! fanout's merge of the big authors into every page, then read in-memory
//! lists instead of descending the B-tree once per author.
//!
//! It is exact: this store is the only writer of its file, and every post
//! write passes here after its commit. A list loaded from the file is kept
//! only if no write to its shard came between the load's start and its
//! insertion (the shard's epoch), so a load never hides a newer post.
//! Bounded, in two generations per shard (as the post cache): a full young
//! generation turns old, and an author read from the old moves back.

use rustc_hash::{FxHashMap, FxHasher};
use socialite_core::ids::UserId;
use std::hash::{Hash, Hasher};
use std::sync::{Mutex, MutexGuard};

/// Ids kept per author: a page of 50 and some.
pub const PER_AUTHOR: usize = 64;
const SHARDS: usize = 64;
/// Authors held at most (a Zipf network's active readers follow tens of
/// thousands between them): about 600 bytes each at most.
const AUTHORS: usize = 32_768;

/// One author's newest ids, oldest first. Every post of the author from the
/// oldest held id up is held; with `complete`, every post of the author.
struct Newest {
    ids: Vec<u64>,
    complete: bool,
}

impl Newest {
    fn answer(&self, lo: u64, hi: u64, limit: usize) -> Option<Vec<u64>> {
        let newest_first = self.ids.iter().rev().copied();
        pick(
            newest_first,
            self.ids.first().copied(),
            self.complete,
            lo,
            hi,
            limit,
        )
    }
}

/// An author's ids in `lo..=hi`, newest first, at most `limit`, from their
/// newest ids (`oldest` the oldest of them; `complete` when they are all the
/// author's posts); `None` if posts in that range may exist below them.
pub fn pick(
    newest_first: impl Iterator<Item = u64>,
    oldest: Option<u64>,
    complete: bool,
    lo: u64,
    hi: u64,
    limit: usize,
) -> Option<Vec<u64>> {
    let out: Vec<u64> = newest_first
        .filter(|&id| id <= hi)
        .take_while(|&id| id >= lo)
        .take(limit)
        .collect();
    let covered = complete || oldest.is_some_and(|o| o <= lo);
    (out.len() == limit || covered).then_some(out)
}

#[derive(Default)]
struct Shard {
    young: FxHashMap<UserId, Newest>,
    old: FxHashMap<UserId, Newest>,
    /// Bumped by every write to an author of the shard.
    epoch: u64,
}

impl Shard {
    /// The author's entry, moved to the young generation if it was old.
    fn find(&mut self, author: &UserId) -> Option<&mut Newest> {
        if !self.young.contains_key(author) {
            let n = self.old.remove(author)?;
            self.insert(author.clone(), n);
        }
        self.young.get_mut(author)
    }

    fn insert(&mut self, author: UserId, n: Newest) {
        if self.young.len() >= AUTHORS / SHARDS / 2 {
            self.old = std::mem::take(&mut self.young);
        }
        self.young.insert(author, n);
    }

    fn remove(&mut self, author: &UserId) {
        self.young.remove(author);
        self.old.remove(author);
    }
}

pub struct RecentPosts {
    shards: Vec<Mutex<Shard>>,
}

impl Default for RecentPosts {
    fn default() -> Self {
        RecentPosts {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl RecentPosts {
    fn shard(&self, author: &UserId) -> MutexGuard<'_, Shard> {
        let mut h = FxHasher::default();
        author.hash(&mut h);
        let i = (h.finish().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58) as usize % SHARDS;
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Taken before a load from the file begins; see [`RecentPosts::loaded`].
    pub fn epoch(&self, author: &UserId) -> u64 {
        self.shard(author).epoch
    }

    /// The author's ids in `lo..=hi`, newest first, at most `limit`, if held.
    pub fn newest(&self, author: &UserId, lo: u64, hi: u64, limit: usize) -> Option<Vec<u64>> {
        self.shard(author).find(author)?.answer(lo, hi, limit)
    }

    /// Keeps what a load read (newest first; `complete` when it read every
    /// post of the author), unless a write came since `epoch`.
    pub fn loaded(&self, author: &UserId, epoch: u64, newest_first: &[u64], complete: bool) {
        let mut shard = self.shard(author);
        if shard.epoch != epoch || (newest_first.is_empty() && !complete) {
            return;
        }
        let ids = newest_first.iter().rev().copied().collect();
        shard.remove(author);
        shard.insert(author.clone(), Newest { ids, complete });
    }

    /// A post was committed.
    pub fn posted(&self, author: &UserId, id: u64) {
        let mut shard = self.shard(author);
        shard.epoch += 1;
        let Some(n) = shard.find(author) else {
            return;
        };
        match n.ids.binary_search(&id) {
            Ok(_) => {}
            Err(at) if at == 0 && !n.complete => {} // below what is held
            Err(at) => n.ids.insert(at, id),
        }
        if n.ids.len() > PER_AUTHOR {
            n.ids.remove(0);
            n.complete = false;
        }
    }

    /// A post was deleted.
    pub fn removed(&self, author: &UserId, id: u64) {
        let mut shard = self.shard(author);
        shard.epoch += 1;
        let Some(n) = shard.find(author) else {
            return;
        };
        if let Ok(at) = n.ids.binary_search(&id) {
            n.ids.remove(at);
        }
        if n.ids.is_empty() && !n.complete {
            shard.remove(author);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> UserId {
        UserId::parse("alice").unwrap()
    }

    #[test]
    fn answers_only_what_it_holds_exactly() {
        let r = RecentPosts::default();
        let a = alice();
        assert_eq!(r.newest(&a, 0, u64::MAX, 10), None);
        // The newest 3 of more posts: exact for 3 or fewer, or above the oldest held.
        r.loaded(&a, r.epoch(&a), &[30, 20, 10], false);
        assert_eq!(r.newest(&a, 0, u64::MAX, 2), Some(vec![30, 20]));
        assert_eq!(r.newest(&a, 0, u64::MAX, 3), Some(vec![30, 20, 10]));
        assert_eq!(r.newest(&a, 0, u64::MAX, 4), None);
        assert_eq!(r.newest(&a, 15, u64::MAX, 4), Some(vec![30, 20]));
        assert_eq!(r.newest(&a, 0, 25, 1), Some(vec![20]));
        assert_eq!(r.newest(&a, 0, 25, 3), None);
        r.posted(&a, 40);
        r.removed(&a, 30);
        assert_eq!(r.newest(&a, 0, u64::MAX, 3), Some(vec![40, 20, 10]));
        // Every post of the author: exact for any range.
        r.loaded(&a, r.epoch(&a), &[40, 20, 10], true);
        assert_eq!(r.newest(&a, 0, 15, 5), Some(vec![10]));
        for id in [40, 20, 10] {
            r.removed(&a, id);
        }
        assert_eq!(r.newest(&a, 0, u64::MAX, 1), Some(vec![]));
    }

    #[test]
    fn a_load_overtaken_by_a_write_is_not_kept() {
        let r = RecentPosts::default();
        let a = alice();
        let before = r.epoch(&a);
        r.posted(&a, 50); // committed while the load read the file
        r.loaded(&a, before, &[30], true);
        assert_eq!(r.newest(&a, 0, u64::MAX, 1), None);
    }

    #[test]
    fn keeps_at_most_per_author_ids() {
        let r = RecentPosts::default();
        let a = alice();
        r.loaded(&a, r.epoch(&a), &[1], true);
        for id in 2..=(PER_AUTHOR as u64 + 10) {
            r.posted(&a, id);
        }
        let all = r.newest(&a, 0, u64::MAX, PER_AUTHOR).unwrap();
        assert_eq!(all.len(), PER_AUTHOR);
        assert_eq!(all[0], PER_AUTHOR as u64 + 10);
        assert_eq!(r.newest(&a, 0, u64::MAX, PER_AUTHOR + 1), None);
    }

    #[test]
    fn an_author_read_often_stays_while_others_pass_through() {
        let r = RecentPosts::default();
        let a = alice();
        r.loaded(&a, r.epoch(&a), &[7], true);
        for n in 0..3 * AUTHORS {
            let other = UserId::parse(&format!("u{n}")).unwrap();
            r.loaded(&other, r.epoch(&other), &[n as u64], true);
            assert_eq!(r.newest(&a, 0, u64::MAX, 1), Some(vec![7]), "after {n}");
        }
        let held = (0..3 * AUTHORS)
            .filter(|n| {
                let other = UserId::parse(&format!("u{n}")).unwrap();
                r.newest(&other, 0, u64::MAX, 1).is_some()
            })
            .count();
        assert!(held <= AUTHORS, "{held} held");
    }
}
