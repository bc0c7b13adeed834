//! One user's stored timeline, whatever its layout, with the rules that keep
//! it exact: deduplicated entries, a coverage floor that only rises (the
//! timeline is held completely from the floor up; below it a read-time merge
//! serves), and a warming state that remembers purges and retractions until
//! the activating merge's entries arrive.

use super::layout::{Layout, LayoutSpec};
use crate::ids::{PostId, UserId};
use crate::model::Entry;
use crate::ports::Coverage;
use std::collections::HashSet;

#[derive(Debug, Clone)]
pub struct StoredTimeline {
    layout: Layout,
    coverage: Coverage,
    /// Present while the timeline waits for its filling merge.
    warming: Option<Box<Warming>>,
}

#[derive(Debug, Clone, Default)]
struct Warming {
    purged: HashSet<UserId>,
    retracted: HashSet<PostId>,
}

impl StoredTimeline {
    /// A new timeline waiting for its merge. It covers everything until then,
    /// so deliveries that arrive meanwhile are kept.
    pub fn warming(spec: LayoutSpec) -> StoredTimeline {
        StoredTimeline {
            layout: Layout::new(spec),
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

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Narrows what the timeline claims to hold exactly, dropping what falls below.
    fn raise_floor(&mut self, coverage: Coverage) {
        if coverage > self.coverage {
            self.coverage = coverage;
            self.layout.retain(|e| coverage.covers(e.post));
        }
    }

    /// Stores an entry; false for a duplicate or an entry below the coverage
    /// floor (a read-time merge serves those).
    pub fn insert(&mut self, entry: Entry) -> bool {
        if !self.coverage.covers(entry.post) || !self.layout.insert(entry) {
            return false;
        }
        if let Some(floor) = self.layout.enforce_retention() {
            self.raise_floor(Coverage::From(floor));
        }
        true
    }

    /// Completes a warming timeline with a merge that is exact over
    /// `coverage`, leaving out what was purged or retracted while it ran.
    pub fn fill(&mut self, merged: Vec<Entry>, coverage: Coverage) {
        let Some(warming) = self.warming.take() else {
            return;
        };
        self.raise_floor(coverage);
        for e in merged {
            if !warming.purged.contains(&e.author) && !warming.retracted.contains(&e.post) {
                self.insert(e);
            }
        }
    }

    /// Inserts an author's posts that are exact over `coverage`.
    pub fn backfill(&mut self, author: &UserId, entries: Vec<Entry>, coverage: Coverage) {
        if let Some(w) = self.warming.as_mut() {
            w.purged.remove(author);
        }
        self.raise_floor(coverage);
        for e in entries {
            self.insert(e);
        }
    }

    pub fn purge_author(&mut self, author: &UserId) {
        if let Some(w) = self.warming.as_mut() {
            w.purged.insert(author.clone());
        }
        self.layout.retain(|e| &e.author != author);
    }

    pub fn retract(&mut self, post: PostId) {
        if let Some(w) = self.warming.as_mut() {
            w.retracted.insert(post);
        }
        self.layout.retain(|e| e.post != post);
    }

    /// Up to `limit` entries older than `before`, newest first.
    pub fn page(&self, before: Option<PostId>, limit: usize) -> Vec<Entry> {
        self.layout.page(before, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAP: LayoutSpec = LayoutSpec::Capped { cap: 3 };

    fn e(post: u64, author: &str) -> Entry {
        Entry::linked(PostId(post), UserId::parse(author).unwrap())
    }

    fn ids(c: &StoredTimeline) -> Vec<u64> {
        c.page(None, usize::MAX).iter().map(|e| e.post.0).collect()
    }

    #[test]
    fn keeps_order_dedupes_and_caps() {
        let mut c = StoredTimeline::warming(CAP);
        c.fill(vec![], Coverage::All);
        for p in [5, 1, 9, 5, 7] {
            c.insert(e(p, "a"));
        }
        assert_eq!(ids(&c), vec![9, 7, 5]);
        assert_eq!(c.coverage(), Coverage::From(PostId(5)));
        assert!(
            !c.insert(e(4, "a")),
            "below the floor is the merge's business"
        );
        assert!(c.insert(e(6, "a")));
        assert_eq!(ids(&c), vec![9, 7, 6]);
        assert_eq!(c.coverage(), Coverage::From(PostId(6)));
        assert_eq!(c.page(Some(PostId(7)), 5).len(), 1);
    }

    #[test]
    fn fill_leaves_out_what_was_purged_while_warming() {
        let mut c = StoredTimeline::warming(LayoutSpec::Capped { cap: 5 });
        c.insert(e(10, "b"));
        c.purge_author(&UserId::parse("a").unwrap());
        c.retract(PostId(3));
        c.fill(
            vec![e(8, "a"), e(4, "c"), e(3, "c"), e(10, "b")],
            Coverage::All,
        );
        assert_eq!(ids(&c), vec![10, 4]);
        assert!(c.is_ready());
        c.fill(vec![e(8, "a")], Coverage::All);
        assert_eq!(ids(&c), vec![10, 4], "a second fill changes nothing");
    }

    #[test]
    fn backfill_after_a_purge_restores_the_author() {
        let mut c = StoredTimeline::warming(LayoutSpec::Capped { cap: 5 });
        let a = UserId::parse("a").unwrap();
        c.purge_author(&a);
        c.backfill(&a, vec![e(2, "a")], Coverage::All);
        c.fill(vec![e(2, "a"), e(1, "a")], Coverage::All);
        assert_eq!(ids(&c), vec![2, 1]);
    }

    #[test]
    fn a_partial_backfill_raises_the_floor() {
        let mut c = StoredTimeline::warming(LayoutSpec::Capped { cap: 5 });
        c.fill(vec![e(3, "x")], Coverage::All);
        // The author has more posts than the two copied: below 8 is unknown.
        c.backfill(
            &UserId::parse("a").unwrap(),
            vec![e(9, "a"), e(8, "a")],
            Coverage::From(PostId(8)),
        );
        assert_eq!(ids(&c), vec![9, 8]);
        assert_eq!(c.coverage(), Coverage::From(PostId(8)));
    }

    #[test]
    fn fill_raises_the_floor_and_drops_what_is_below() {
        let mut c = StoredTimeline::warming(LayoutSpec::Capped { cap: 5 });
        c.insert(e(1, "x"));
        c.insert(e(20, "x"));
        c.fill(vec![e(9, "a"), e(7, "a")], Coverage::From(PostId(7)));
        assert_eq!(ids(&c), vec![20, 9, 7]);
        assert_eq!(c.coverage(), Coverage::From(PostId(7)));
    }

    #[test]
    fn sized_bucket_retention_drops_entries_below_the_new_floor() {
        let mut c = StoredTimeline::warming(LayoutSpec::SizedBuckets { size: 2, keep: 1 });
        c.fill(vec![], Coverage::All);
        // Arrivals 9, 2 fill a bucket; 5 opens a second, dropping the first.
        for p in [9, 2, 5] {
            c.insert(e(p, "a"));
        }
        assert_eq!(c.coverage(), Coverage::From(PostId(10)));
        assert!(
            ids(&c).is_empty(),
            "5 is below the floor and must not be served twice"
        );
    }
}
