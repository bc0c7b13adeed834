//! A ranked order kept between its pages: what a snapshot holds and when it
//! serves a page. Kept in the process that ranked it, and, where several
//! processes serve the same readers (MongoDB), in the store as well, so a
//! later page may be asked of any of them.

use super::rank::{Parts, Reason};
use crate::ids::{PostId, TimelineId, UserId};

/// Snapshots one reader holds at once, over their home and lists together.
pub const PER_READER: usize = 8;

/// One entry of a ranked order: the post, and the item of the timeline's
/// stream that placed it (the post itself, or the newest repost of it by
/// the timeline's accounts) with that item's author, which is what a
/// page's read pass is given to show the post as the timeline does.
#[derive(Debug, Clone, PartialEq)]
pub struct SnapshotEntry {
    pub post: PostId,
    pub item: PostId,
    pub author: UserId,
    pub reason: Reason,
    pub parts: Parts,
    /// In catch-up: the author's further posts since the marker.
    pub more: u64,
}

/// A ranked order as a store keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// Random: unguessable, and distinct across processes.
    pub id: u64,
    /// Whose it is: only its reader's pages read it.
    pub reader: UserId,
    /// The timeline ranked (the reader's home or one of their lists).
    pub timeline: TimelineId,
    /// When it ends, in ms since the epoch.
    pub expires_ms: u64,
    pub entries: Vec<SnapshotEntry>,
}

impl Snapshot {
    /// The entries of `timeline` from `offset`, at most `limit`, and whether
    /// more follow; `None` if it is another timeline's or expired at `now_ms`.
    pub fn page(
        &self,
        timeline: &TimelineId,
        now_ms: u64,
        offset: usize,
        limit: usize,
    ) -> Option<(Vec<SnapshotEntry>, bool)> {
        if &self.timeline != timeline || now_ms >= self.expires_ms {
            return None;
        }
        let from = offset.min(self.entries.len());
        let to = from.saturating_add(limit).min(self.entries.len());
        Some((self.entries[from..to].to_vec(), to < self.entries.len()))
    }
}

impl Reason {
    /// Every reason, for reading one back by its name.
    pub const ALL: [Reason; 6] = [
        Reason::Priority,
        Reason::RepostedBy,
        Reason::Popular,
        Reason::Affinity,
        Reason::RarelyPosts,
        Reason::Followed,
    ];

    /// The reason named `s` ([`Reason::as_str`]).
    pub fn named(s: &str) -> Option<Reason> {
        Reason::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

impl Parts {
    /// The parts in a fixed order, for a store that keeps them as a list.
    pub fn to_array(&self) -> [f64; 7] {
        [
            self.recency,
            self.engagement,
            self.affinity,
            self.rarity,
            self.priority,
            self.diversity,
            self.score,
        ]
    }

    pub fn from_array(a: [f64; 7]) -> Parts {
        let [recency, engagement, affinity, rarity, priority, diversity, score] = a;
        Parts {
            recency,
            engagement,
            affinity,
            rarity,
            priority,
            diversity,
            score,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(n: u64) -> SnapshotEntry {
        SnapshotEntry {
            post: PostId(n),
            item: PostId(n),
            author: UserId::parse("a").unwrap(),
            reason: Reason::Followed,
            parts: Parts::unranked(),
            more: 0,
        }
    }

    #[test]
    fn a_snapshot_pages_its_own_timeline_until_it_expires() {
        let home = TimelineId::home(&UserId::parse("alice").unwrap());
        let s = Snapshot {
            id: 7,
            reader: UserId::parse("alice").unwrap(),
            timeline: home.clone(),
            expires_ms: 1_000,
            entries: (0..5).map(entry).collect(),
        };
        let (page, more) = s.page(&home, 999, 3, 3).unwrap();
        assert_eq!((page[0].post, page.len(), more), (PostId(3), 2, false));
        assert!(s.page(&home, 0, 0, 2).unwrap().1);
        assert_eq!(s.page(&home, 0, 9, 2).unwrap().0.len(), 0, "past the end");
        assert!(s.page(&home, 1_000, 0, 2).is_none(), "expired");
        let other = TimelineId::home(&UserId::parse("bob").unwrap());
        assert!(s.page(&other, 0, 0, 2).is_none(), "another timeline");
    }

    #[test]
    fn reasons_and_parts_read_back_as_stored() {
        // A reason added to the rule fails to compile here until it is in
        // `Reason::ALL` (a stored snapshot naming it would not read back).
        let place = |r: Reason| match r {
            Reason::Priority => 0,
            Reason::RepostedBy => 1,
            Reason::Popular => 2,
            Reason::Affinity => 3,
            Reason::RarelyPosts => 4,
            Reason::Followed => 5,
        };
        for (i, r) in Reason::ALL.into_iter().enumerate() {
            assert_eq!(place(r), i);
        }
        for r in Reason::ALL {
            assert_eq!(Reason::named(r.as_str()), Some(r));
        }
        assert_eq!(Reason::named("nosuch"), None);
        let p = Parts {
            recency: 0.5,
            engagement: 1.5,
            affinity: 2.0,
            rarity: 0.25,
            priority: 4.0,
            diversity: 0.5,
            score: 3.0,
        };
        assert_eq!(Parts::from_array(p.to_array()), p);
    }
}
