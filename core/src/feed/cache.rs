//! One user's capped timeline cache as a plain data structure, with the rules
//! that keep it exact: ordered and deduplicated entries, a coverage floor that
//! only rises, and a warming state that remembers purges until the filling
//! merge arrives.

use crate::ids::{PostId, UserId};
use crate::model::Entry;
use crate::ports::Coverage;
use std::collections::HashSet;

#[derive(Debug, Clone)]
pub struct Cache {
    /// Newest first, unique post ids.
    entries: Vec<Entry>,
    coverage: Coverage,
    /// Present while the cache waits for its filling merge.
    warming: Option<Box<Warming>>,
}

#[derive(Debug, Clone, Default)]
struct Warming {
    purged: HashSet<UserId>,
    retracted: HashSet<PostId>,
}

impl Cache {
    /// A new cache waiting for its merge. It covers everything until then, so
    /// deliveries that arrive meanwhile are kept.
    pub fn warming() -> Cache {
        Cache {
            entries: Vec::new(),
            coverage: Coverage::All,
            warming: Some(Box::default()),
        }
    }

    pub fn is_ready(&self) -> bool {
        self.warming.is_none()
    }

    pub fn coverage(&self) -> Coverage {
        self.coverage
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Narrows what the cache claims to hold exactly, dropping what falls below.
    fn raise_floor(&mut self, coverage: Coverage) {
        if coverage > self.coverage {
            self.coverage = coverage;
            self.entries.retain(|e| coverage.covers(e.post));
        }
    }

    /// Inserts in order; returns false for a duplicate or an entry below the
    /// coverage floor (a read-time merge serves those).
    pub fn insert(&mut self, entry: Entry, cap: usize) -> bool {
        if !self.coverage.covers(entry.post) {
            return false;
        }
        match self.entries.binary_search_by(|e| entry.post.cmp(&e.post)) {
            Ok(_) => false,
            Err(at) => {
                self.entries.insert(at, entry);
                self.truncate(cap);
                true
            }
        }
    }

    fn truncate(&mut self, cap: usize) {
        if self.entries.len() > cap {
            self.entries.truncate(cap);
            if let Some(last) = self.entries.last() {
                self.coverage = self.coverage.max(Coverage::From(last.post));
            }
        }
    }

    /// Completes a warming cache with a merge that is exact over `coverage`,
    /// leaving out what was purged or retracted while the merge ran.
    pub fn fill(&mut self, merged: Vec<Entry>, coverage: Coverage, cap: usize) {
        let Some(warming) = self.warming.take() else {
            return;
        };
        self.raise_floor(coverage);
        for e in merged {
            if !warming.purged.contains(&e.author) && !warming.retracted.contains(&e.post) {
                self.insert(e, cap);
            }
        }
    }

    /// Inserts an author's posts that are exact over `coverage`.
    pub fn backfill(
        &mut self,
        author: &UserId,
        entries: Vec<Entry>,
        coverage: Coverage,
        cap: usize,
    ) {
        if let Some(w) = self.warming.as_mut() {
            w.purged.remove(author);
        }
        self.raise_floor(coverage);
        for e in entries {
            self.insert(e, cap);
        }
    }

    pub fn purge_author(&mut self, author: &UserId) {
        if let Some(w) = self.warming.as_mut() {
            w.purged.insert(author.clone());
        }
        self.entries.retain(|e| &e.author != author);
    }

    pub fn retract(&mut self, post: PostId) {
        if let Some(w) = self.warming.as_mut() {
            w.retracted.insert(post);
        }
        if let Ok(at) = self.entries.binary_search_by(|e| post.cmp(&e.post)) {
            self.entries.remove(at);
        }
    }

    /// Up to `limit` entries older than `before`, newest first.
    pub fn page(&self, before: Option<PostId>, limit: usize) -> Vec<Entry> {
        let start = match before {
            None => 0,
            Some(b) => self.entries.partition_point(|e| e.post >= b),
        };
        self.entries[start..].iter().take(limit).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(post: u64, author: &str) -> Entry {
        Entry {
            post: PostId(post),
            author: UserId::parse(author).unwrap(),
        }
    }

    fn ids(c: &Cache) -> Vec<u64> {
        c.page(None, usize::MAX).iter().map(|e| e.post.0).collect()
    }

    #[test]
    fn keeps_order_dedupes_and_caps() {
        let mut c = Cache::warming();
        c.fill(vec![], Coverage::All, 3);
        for p in [5, 1, 9, 5, 7] {
            c.insert(e(p, "a"), 3);
        }
        assert_eq!(ids(&c), vec![9, 7, 5]);
        assert_eq!(c.coverage(), Coverage::From(PostId(5)));
        assert!(
            !c.insert(e(4, "a"), 3),
            "below the floor is the merge's business"
        );
        assert!(c.insert(e(6, "a"), 3));
        assert_eq!(ids(&c), vec![9, 7, 6]);
        assert_eq!(c.coverage(), Coverage::From(PostId(6)));
        assert_eq!(c.page(Some(PostId(7)), 5).len(), 1);
    }

    #[test]
    fn fill_leaves_out_what_was_purged_while_warming() {
        let mut c = Cache::warming();
        c.insert(e(10, "b"), 5);
        c.purge_author(&UserId::parse("a").unwrap());
        c.retract(PostId(3));
        c.fill(
            vec![e(8, "a"), e(4, "c"), e(3, "c"), e(10, "b")],
            Coverage::All,
            5,
        );
        assert_eq!(ids(&c), vec![10, 4]);
        assert!(c.is_ready());
        c.fill(vec![e(8, "a")], Coverage::All, 5);
        assert_eq!(ids(&c), vec![10, 4], "a second fill changes nothing");
    }

    #[test]
    fn backfill_after_a_purge_restores_the_author() {
        let mut c = Cache::warming();
        let a = UserId::parse("a").unwrap();
        c.purge_author(&a);
        c.backfill(&a, vec![e(2, "a")], Coverage::All, 5);
        c.fill(vec![e(2, "a"), e(1, "a")], Coverage::All, 5);
        assert_eq!(ids(&c), vec![2, 1]);
    }

    #[test]
    fn a_partial_backfill_raises_the_floor() {
        let mut c = Cache::warming();
        c.fill(vec![e(3, "x")], Coverage::All, 5);
        // The author has more posts than the two copied: below 8 is unknown.
        c.backfill(
            &UserId::parse("a").unwrap(),
            vec![e(9, "a"), e(8, "a")],
            Coverage::From(PostId(8)),
            5,
        );
        assert_eq!(ids(&c), vec![9, 8]);
        assert_eq!(c.coverage(), Coverage::From(PostId(8)));
    }

    #[test]
    fn fill_raises_the_floor_and_drops_what_is_below() {
        let mut c = Cache::warming();
        c.insert(e(1, "x"), 5);
        c.insert(e(20, "x"), 5);
        c.fill(vec![e(9, "a"), e(7, "a")], Coverage::From(PostId(7)), 5);
        assert_eq!(ids(&c), vec![20, 9, 7]);
        assert_eq!(c.coverage(), Coverage::From(PostId(7)));
    }
}
