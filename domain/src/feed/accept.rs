//! Which entries a stored timeline accepts and keeps, for every feed model
//! and backend. A stored timeline holds each post at most once, newest first,
//! and claims to hold the timeline *exactly* over its [`Coverage`]: every
//! post of a followed author from the floor up. Below the floor only a
//! read-time merge knows the timeline, so nothing below it is stored or
//! served from the store.
//!
//! A timeline is created *warming*, before the read-time merge that fills
//! it; purges and retractions that reach it meanwhile are remembered
//! ([`WarmingMemory`]) and kept out of the merge's entries when they arrive.
//! The embedded store applies these rules to in-memory layouts; MongoDB
//! derives its update filters from them.

use crate::ids::{PostId, UserId};
use crate::model::Entry;
use std::collections::HashSet;

/// Which part of a timeline a store holds exactly: all of it, or every entry
/// from a post id up. Below that a read continues with a read-time merge.
/// Ordered by narrowness: `All` is the widest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Coverage {
    All,
    From(PostId),
}

impl Coverage {
    pub fn covers(self, id: PostId) -> bool {
        match self {
            Coverage::All => true,
            Coverage::From(floor) => id >= floor,
        }
    }

    /// The lowest post id covered, if there is one.
    pub fn floor(self) -> Option<PostId> {
        match self {
            Coverage::All => None,
            Coverage::From(f) => Some(f),
        }
    }

    /// Coverage only narrows: what was dropped below a floor is gone.
    pub fn narrowed_to(self, other: Coverage) -> Coverage {
        self.max(other)
    }
}

/// Whether a timeline with `coverage` takes a delivery of `post` (one it
/// does not hold yet: every store keeps a post once, whatever the replays).
pub fn takes(coverage: Coverage, post: PostId) -> bool {
    coverage.covers(post)
}

/// The coverage of a capped array: its sealed floor, raised to its oldest
/// entry once it is full, because a full array has dropped only entries
/// older than the ones it holds. `held` entries, `oldest` the last of them.
pub fn capped_coverage(
    sealed: Coverage,
    held: usize,
    oldest: Option<PostId>,
    cap: usize,
) -> Coverage {
    match oldest {
        Some(oldest) if held >= cap => sealed.narrowed_to(Coverage::From(oldest)),
        _ => sealed,
    }
}

/// The purges and retractions that reached a warming timeline: the merge
/// that fills it may have read those entries before they went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WarmingMemory {
    purged: HashSet<UserId>,
    retracted: HashSet<PostId>,
}

impl WarmingMemory {
    pub fn new(
        purged: impl IntoIterator<Item = UserId>,
        retracted: impl IntoIterator<Item = PostId>,
    ) -> WarmingMemory {
        WarmingMemory {
            purged: purged.into_iter().collect(),
            retracted: retracted.into_iter().collect(),
        }
    }

    /// An unfollow (or the author's deletion) reached the timeline.
    pub fn purge(&mut self, author: &UserId) {
        self.purged.insert(author.clone());
    }

    /// A follow's backfill reached it: the author is followed again, and
    /// the merge's entries of theirs are welcome.
    pub fn restore(&mut self, author: &UserId) {
        self.purged.remove(author);
    }

    pub fn retract(&mut self, post: PostId) {
        self.retracted.insert(post);
    }

    /// Whether a merged entry may go into the timeline.
    pub fn admits(&self, e: &Entry) -> bool {
        !self.purged.contains(&e.author) && !self.retracted.contains(&e.post)
    }
}

/// The entries of an activating merge that a warming timeline takes: those
/// its memory admits and that it does not hold already (fanout may have
/// delivered them while the merge ran). Order is kept.
pub fn fill_entries(
    merged: Vec<Entry>,
    memory: &WarmingMemory,
    held: impl Fn(PostId) -> bool,
) -> Vec<Entry> {
    merged
        .into_iter()
        .filter(|e| memory.admits(e) && !held(e.post))
        .collect()
}

/// The entries of a backfill that a timeline lacks: a replayed follow adds
/// nothing twice.
pub fn lacking(entries: Vec<Entry>, held: impl Fn(PostId) -> bool) -> Vec<Entry> {
    entries.into_iter().filter(|e| !held(e.post)).collect()
}

/// Which stored entries a page serves, fed newest first: those the coverage
/// covers, below the cursor, each post once (racing writers may leave a
/// repeat side by side), at most `limit`.
#[derive(Debug, Clone)]
pub struct PageWindow {
    coverage: Coverage,
    before: Option<PostId>,
    limit: usize,
    taken: usize,
    last: Option<PostId>,
}

impl PageWindow {
    pub fn new(coverage: Coverage, before: Option<PostId>, limit: usize) -> PageWindow {
        PageWindow {
            coverage,
            before,
            limit,
            taken: 0,
            last: None,
        }
    }

    /// Whether the page takes the next stored entry.
    pub fn admit(&mut self, post: PostId) -> bool {
        if self.is_full()
            || !self.coverage.covers(post)
            || self.last == Some(post)
            || self.before.is_some_and(|b| post >= b)
        {
            return false;
        }
        self.last = Some(post);
        self.taken += 1;
        true
    }

    pub fn is_full(&self) -> bool {
        self.taken >= self.limit
    }
}

/// Stored timelines of readers who stopped reading expire: a timeline not
/// read for `ttl` is dropped (its owner is dormant again, and the next read
/// builds it anew by a read-time merge). Reads record when they happened, but
/// at most every [`REFRESH_EVERY_MS`] (a day, or a quarter of a shorter
/// ttl), so a store that persists the time writes it rarely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    ttl_ms: u64,
}

/// How often a read rewrites its timeline's read time, at most.
pub const REFRESH_EVERY_MS: u64 = 86_400_000;

impl Freshness {
    pub fn new(ttl_ms: u64) -> Freshness {
        Freshness { ttl_ms }
    }

    pub fn ttl_ms(self) -> u64 {
        self.ttl_ms
    }

    /// Whether a timeline last read at `read_at` has expired at `now` (ms).
    pub fn expired(self, read_at: u64, now: u64) -> bool {
        now.saturating_sub(read_at) > self.ttl_ms
    }

    /// Whether a read at `now` rewrites the read time `read_at`.
    pub fn refreshes(self, read_at: u64, now: u64) -> bool {
        now.saturating_sub(read_at) >= self.refresh_every_ms()
    }

    pub fn refresh_every_ms(self) -> u64 {
        REFRESH_EVERY_MS.min(self.ttl_ms / 4)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(post: u64, author: &str) -> Entry {
        Entry::linked(PostId(post), UserId::parse(author).unwrap())
    }

    #[test]
    fn timelines_expire_when_not_read_and_reads_refresh_rarely() {
        let day = 86_400_000;
        let f = Freshness::new(30 * day);
        assert!(!f.expired(0, 30 * day));
        assert!(f.expired(0, 30 * day + 1));
        assert!(!f.refreshes(0, day - 1) && f.refreshes(0, day));
        let short = Freshness::new(4_000);
        assert!(
            short.refreshes(0, 1_000),
            "a short ttl refreshes more often"
        );
    }

    #[test]
    fn nothing_below_the_floor_is_taken() {
        assert!(takes(Coverage::All, PostId(1)));
        assert!(takes(Coverage::From(PostId(5)), PostId(5)));
        assert!(!takes(Coverage::From(PostId(5)), PostId(4)));
        assert_eq!(
            Coverage::From(PostId(5)).narrowed_to(Coverage::All),
            Coverage::From(PostId(5)),
            "coverage never widens"
        );
    }

    #[test]
    fn a_full_array_covers_from_its_oldest_entry() {
        let sealed = Coverage::From(PostId(3));
        assert_eq!(capped_coverage(sealed, 2, Some(PostId(9)), 3), sealed);
        assert_eq!(
            capped_coverage(sealed, 3, Some(PostId(9)), 3),
            Coverage::From(PostId(9))
        );
        assert_eq!(
            capped_coverage(Coverage::From(PostId(12)), 3, Some(PostId(9)), 3),
            Coverage::From(PostId(12)),
            "a sealed floor above the oldest entry stands"
        );
        assert_eq!(capped_coverage(Coverage::All, 0, None, 3), Coverage::All);
    }

    #[test]
    fn a_fill_leaves_out_what_was_purged_retracted_or_held() {
        let mut m = WarmingMemory::default();
        m.purge(&UserId::parse("gone").unwrap());
        m.retract(PostId(8));
        let held = |p: PostId| p == PostId(10);
        let kept = fill_entries(
            vec![e(10, "a"), e(9, "a"), e(8, "a"), e(7, "gone"), e(6, "b")],
            &m,
            held,
        );
        let ids: Vec<u64> = kept.iter().map(|e| e.post.0).collect();
        assert_eq!(ids, vec![9, 6]);
        m.restore(&UserId::parse("gone").unwrap());
        assert!(m.admits(&e(7, "gone")), "a backfill restores the author");
        assert_eq!(lacking(vec![e(10, "a"), e(4, "a")], held).len(), 1);
    }

    #[test]
    fn a_page_skips_repeats_the_uncovered_and_the_cursor() {
        let mut w = PageWindow::new(Coverage::From(PostId(3)), Some(PostId(9)), 2);
        let taken: Vec<u64> = [10u64, 9, 8, 8, 5, 4, 2]
            .into_iter()
            .filter(|&p| w.admit(PostId(p)))
            .collect();
        assert_eq!(taken, vec![8, 5]);
        assert!(w.is_full());
    }
}
