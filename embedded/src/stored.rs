//! One user's stored timeline, whatever its layout, kept by the rules of
//! `socialite_domain::feed::accept`: deduplicated entries, a coverage floor
//! that only rises (the timeline is held completely from the floor up; below
//! it a read-time merge serves), and a warming state whose memory of purges
//! and retractions filters the activating merge's entries. Entries are stored
//! as compact slots (see [`crate::slot::Slot`]); embedded content sits
//! beside them.

use crate::authors::Authors;
use crate::layout::{Layout, LayoutSpec, Retention};
use crate::slot::Slot;
use rustc_hash::FxHashMap;
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::{Body, Entry};
use socialite_domain::feed::accept::{fill_entries, Coverage, WarmingMemory};
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct StoredTimeline {
    layout: Layout,
    /// The coverage sealed so far: the layout raises it by what it holds
    /// ([`Layout::coverage`]); sealed again before entries are removed.
    sealed: Coverage,
    /// Present while the timeline waits for its filling merge.
    warming: Option<Box<WarmingMemory>>,
    /// Embedded content by post, when entries embed.
    bodies: Option<Box<FxHashMap<u64, Arc<Body>>>>,
    /// When the timeline was last read (ms since the epoch), as
    /// `Freshness` records it: it expires when not read for the ttl.
    pub read_at: u64,
    /// The shard's clock at the last change ([`crate::timelines`]).
    pub version: u64,
}

impl StoredTimeline {
    /// A new timeline waiting for its merge. It covers everything until then,
    /// so deliveries that arrive meanwhile are kept.
    pub fn warming(spec: LayoutSpec, now_ms: u64) -> StoredTimeline {
        StoredTimeline {
            layout: Layout::new(spec),
            sealed: Coverage::All,
            warming: Some(Box::default()),
            bodies: None,
            read_at: now_ms,
            version: 0,
        }
    }

    pub fn is_ready(&self) -> bool {
        self.warming.is_none()
    }

    pub fn coverage(&self) -> Coverage {
        self.layout.coverage(self.sealed)
    }

    /// Seals the coverage before a removal: a full capped array covers
    /// from its oldest entry, which the removal makes it not full.
    fn seal(&mut self) {
        self.sealed = self.coverage();
    }

    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Narrows what the timeline claims to hold exactly, dropping what falls below.
    fn raise_floor(&mut self, coverage: Coverage) {
        self.seal();
        if coverage > self.sealed {
            self.sealed = self.sealed.narrowed_to(coverage);
            self.layout.retain(|e| coverage.covers(e.post));
            self.forget_dropped_bodies();
        }
    }

    fn forget_dropped_bodies(&mut self) {
        if let Some(bodies) = self.bodies.as_mut() {
            if bodies.len() > self.layout.len() {
                let layout = &self.layout;
                bodies.retain(|p, _| layout.contains(PostId(*p)));
            }
        }
    }

    /// Stores an entry whose author is already interned as `slot.author`;
    /// false for a duplicate or an entry below the coverage floor (a
    /// read-time merge serves those).
    pub fn insert_slot(&mut self, slot: Slot, body: Option<&Arc<Body>>) -> bool {
        // The layout refuses a post it holds: each is stored once.
        if !self.layout.takes(self.sealed, slot.post) || !self.layout.insert(slot) {
            return false;
        }
        if let Some(b) = body {
            self.bodies
                .get_or_insert_with(Box::default)
                .insert(slot.post.0, b.clone());
        }
        match self.layout.enforce_retention() {
            Retention::Kept => {}
            // The usual case: a full cache dropped its oldest.
            Retention::Dropped => self.forget_dropped_bodies(),
            Retention::Floor(floor) if self.layout.keeps_below_floor() => {
                self.raise_floor(Coverage::From(floor));
            }
            Retention::Floor(floor) => {
                // Nothing is left below the new floor to look for.
                self.sealed = self.sealed.narrowed_to(Coverage::From(floor));
                self.forget_dropped_bodies();
            }
        }
        true
    }

    pub fn insert(&mut self, entry: &Entry, authors: &Authors) -> bool {
        let slot = Slot {
            post: entry.post,
            author: authors.intern(&entry.author),
        };
        self.insert_slot(slot, entry.body.as_ref())
    }

    /// Completes a warming timeline with a merge that is exact over
    /// `coverage`, leaving out what was purged or retracted while it ran.
    pub fn fill(&mut self, merged: Vec<Entry>, coverage: Coverage, authors: &Authors) {
        let Some(warming) = self.warming.take() else {
            return;
        };
        self.raise_floor(coverage);
        // What fanout delivered meanwhile is held already; insert skips it too.
        let entries = fill_entries(merged, &warming, |_| false);
        self.layout.reserve(entries.len());
        for e in entries {
            self.insert(&e, authors);
        }
        self.layout.fit();
    }

    /// Inserts an author's posts that are exact over `coverage`.
    pub fn backfill(
        &mut self,
        author: &UserId,
        entries: Vec<Entry>,
        coverage: Coverage,
        authors: &Authors,
    ) {
        if let Some(w) = self.warming.as_mut() {
            w.restore(author);
        }
        self.raise_floor(coverage);
        for e in entries {
            self.insert(&e, authors);
        }
    }

    pub fn purge_author(&mut self, author: &UserId, authors: &Authors) {
        if let Some(w) = self.warming.as_mut() {
            w.purge(author);
        }
        if let Some(n) = authors.lookup(author) {
            self.seal();
            self.layout.retain(|e| e.author != n);
            self.forget_dropped_bodies();
        }
    }

    pub fn retract(&mut self, post: PostId) {
        if let Some(w) = self.warming.as_mut() {
            w.retract(post);
        }
        self.seal();
        self.layout.retain(|e| { e.post } != post);
        if let Some(bodies) = self.bodies.as_mut() {
            bodies.remove(&post.0);
        }
    }

    /// Up to `limit` entries older than `before`, newest first.
    pub fn page(&self, before: Option<PostId>, limit: usize, authors: &Authors) -> Vec<Entry> {
        let slots = self.layout.page(before, limit);
        let names = authors.names(slots.iter().map(|s| s.author));
        slots
            .into_iter()
            .zip(names)
            .map(|(s, author)| Entry {
                post: s.post,
                author,
                body: self
                    .bodies
                    .as_ref()
                    .and_then(|b| b.get(&{ s.post }.0).cloned()),
            })
            .collect()
    }

    /// The entries serialized as a document store keeps them: id, author and
    /// any embedded content per entry, and a key per document.
    pub fn serialized_bytes(&self, authors: &Authors) -> usize {
        let body = |p: PostId| {
            self.bodies
                .as_ref()
                .and_then(|b| b.get(&p.0))
                .map_or(0, |b| {
                    b.message.len()
                        + b.data
                            .as_ref()
                            .map_or(0, |d| serde_json::to_string(d).map_or(0, |s| s.len()))
                })
        };
        let entries: usize = self
            .layout
            .slots()
            .map(|s| 8 + authors.name(s.author).as_str().len() + body(s.post))
            .sum();
        // A document's key: user id and bucket key, about 24 bytes.
        entries + 24 * self.layout.documents()
    }

    /// Memory this timeline allocates beyond its own value: slots, buckets and
    /// the embedded-content map (the content itself is shared).
    pub fn allocated_bytes(&self) -> usize {
        let bodies = self
            .bodies
            .as_ref()
            .map_or(0, |b| b.capacity() * (8 + 8 + 1) + 32);
        self.layout.allocated_bytes() + bodies
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::LazyLock;

    static A: LazyLock<Authors> = LazyLock::new(Authors::new);

    const CAP: LayoutSpec = LayoutSpec::Capped { cap: 3 };

    fn e(post: u64, author: &str) -> Entry {
        Entry::linked(PostId(post), UserId::parse(author).unwrap())
    }

    fn ids(c: &StoredTimeline) -> Vec<u64> {
        c.page(None, usize::MAX, &A)
            .iter()
            .map(|e| e.post.0)
            .collect()
    }

    #[test]
    fn keeps_order_dedupes_and_caps() {
        let mut c = StoredTimeline::warming(CAP, 0);
        c.fill(vec![], Coverage::All, &A);
        for p in [5, 1, 9, 5, 7] {
            c.insert(&e(p, "a"), &A);
        }
        assert_eq!(ids(&c), vec![9, 7, 5]);
        assert_eq!(c.coverage(), Coverage::From(PostId(5)));
        assert!(
            !c.insert(&e(4, "a"), &A),
            "below the floor is the merge's business"
        );
        assert!(c.insert(&e(6, "a"), &A));
        assert_eq!(ids(&c), vec![9, 7, 6]);
        assert_eq!(c.coverage(), Coverage::From(PostId(6)));
        assert_eq!(c.page(Some(PostId(7)), 5, &A).len(), 1);
    }

    #[test]
    fn fill_leaves_out_what_was_purged_while_warming() {
        let mut c = StoredTimeline::warming(LayoutSpec::Capped { cap: 5 }, 0);
        c.insert(&e(10, "b"), &A);
        c.purge_author(&UserId::parse("a").unwrap(), &A);
        c.retract(PostId(3));
        c.fill(
            vec![e(8, "a"), e(4, "c"), e(3, "c"), e(10, "b")],
            Coverage::All,
            &A,
        );
        assert_eq!(ids(&c), vec![10, 4]);
        assert!(c.is_ready());
        c.fill(vec![e(8, "a")], Coverage::All, &A);
        assert_eq!(ids(&c), vec![10, 4], "a second fill changes nothing");
    }

    #[test]
    fn backfill_after_a_purge_restores_the_author() {
        let mut c = StoredTimeline::warming(LayoutSpec::Capped { cap: 5 }, 0);
        let a = UserId::parse("a").unwrap();
        c.purge_author(&a, &A);
        c.backfill(&a, vec![e(2, "a")], Coverage::All, &A);
        c.fill(vec![e(2, "a"), e(1, "a")], Coverage::All, &A);
        assert_eq!(ids(&c), vec![2, 1]);
    }

    #[test]
    fn a_partial_backfill_raises_the_floor() {
        let mut c = StoredTimeline::warming(LayoutSpec::Capped { cap: 5 }, 0);
        c.fill(vec![e(3, "x")], Coverage::All, &A);
        // The author has more posts than the two copied: below 8 is unknown.
        c.backfill(
            &UserId::parse("a").unwrap(),
            vec![e(9, "a"), e(8, "a")],
            Coverage::From(PostId(8)),
            &A,
        );
        assert_eq!(ids(&c), vec![9, 8]);
        assert_eq!(c.coverage(), Coverage::From(PostId(8)));
    }

    #[test]
    fn fill_raises_the_floor_and_drops_what_is_below() {
        let mut c = StoredTimeline::warming(LayoutSpec::Capped { cap: 5 }, 0);
        c.insert(&e(1, "x"), &A);
        c.insert(&e(20, "x"), &A);
        c.fill(vec![e(9, "a"), e(7, "a")], Coverage::From(PostId(7)), &A);
        assert_eq!(ids(&c), vec![20, 9, 7]);
        assert_eq!(c.coverage(), Coverage::From(PostId(7)));
    }

    #[test]
    fn sized_bucket_retention_drops_entries_below_the_new_floor() {
        let mut c = StoredTimeline::warming(LayoutSpec::SizedBuckets { size: 2, keep: 1 }, 0);
        c.fill(vec![], Coverage::All, &A);
        // Arrivals 9, 2 fill a bucket; 5 opens a second, dropping the first.
        for p in [9, 2, 5] {
            c.insert(&e(p, "a"), &A);
        }
        assert_eq!(c.coverage(), Coverage::From(PostId(10)));
        assert!(
            ids(&c).is_empty(),
            "5 is below the floor and must not be served twice"
        );
    }
}
