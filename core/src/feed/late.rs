//! What fanout has not delivered yet, merged at read time: while the
//! fanout group is behind, a page of a stored timeline is the cache joined
//! with a read-time merge of the timeline's accounts' posts from where the
//! undelivered writes may begin ([`Late::from`]). A reader so sees every
//! acknowledged post of the accounts it follows within a moment, however
//! far behind fanout is; fanout's deliveries catch the cache up later.
//!
//! Where the undelivered writes begin is found from cuts: each reading of
//! the group's place ([`crate::load::Load::watch`]) notes the time, how many
//! events waited in the outbox, then each partition's end. Every write
//! acknowledged before that time is then on the log below the end, or in
//! the outbox, and the relay (one at a time, in order) appends those after
//! it: once the group has committed, in every partition, past the end plus
//! what waited, everything acknowledged before the cut is delivered. The
//! newest cut so passed is the floor; the merge starts [`STAMP_MARGIN`]
//! below it, for a post stamped before the cut but acknowledged after it.

use super::{Feed, Stores};
use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::metrics::metrics;
use crate::model::Entry;
use crate::ports::{IdRange, LogPosition};
use socialite_domain::graph::relations::Hidden;
use std::collections::{HashSet, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

/// How long a post may take from its id being stamped to its write being
/// acknowledged (a store write, and the clocks of the producers, apart).
pub const STAMP_MARGIN: Duration = Duration::from_secs(2);
/// At most so many cuts are kept (five minutes of readings); past that,
/// the second oldest goes, so the floor only ever errs older.
const MAX_CUTS: usize = 1200;
/// Nothing is late sooner than this: a delivery takes a moment, and a
/// merge on every read for it would cost more than the moment.
pub const MIN_LATE: Duration = Duration::from_secs(1);

/// Where reads merge from, as the watch last found it.
pub struct Late {
    /// The lowest post id a read merges; [`NOTHING`] while fanout keeps up.
    from: AtomicU64,
}

const NOTHING: u64 = u64::MAX;

impl Default for Late {
    fn default() -> Late {
        Late {
            from: AtomicU64::new(NOTHING),
        }
    }
}

impl Late {
    /// The lowest post id fanout may not have delivered, while it is
    /// behind; `None` while it keeps up.
    pub fn from(&self) -> Option<PostId> {
        match self.from.load(Relaxed) {
            NOTHING => None,
            id => Some(PostId(id)),
        }
    }

    /// Reads merge from `from` on (`None`: none do). Set by the watch, or
    /// by a test that holds fanout back.
    pub fn set(&self, from: Option<PostId>) {
        self.from.store(from.map_or(NOTHING, |p| p.0), Relaxed);
    }
}

/// What a read of a stored timeline joins to it while fanout is behind.
pub(crate) struct Undelivered {
    /// The timeline's accounts now ([`Stores::authors`]).
    authors: Vec<UserId>,
    of: HashSet<UserId>,
    from: PostId,
}

impl Undelivered {
    /// `None` while fanout keeps up.
    pub(crate) async fn of(stores: &Stores, feed: &Feed) -> Result<Option<Undelivered>> {
        let Some(from) = stores.late.from() else {
            return Ok(None);
        };
        let authors = stores.authors(feed).await?;
        let of = authors.iter().cloned().collect();
        Ok(Some(Undelivered { authors, of, from }))
    }

    /// Whether a stored entry is still the timeline's: fanout may not have
    /// applied an unfollow, a mute or a member leaving yet.
    pub(crate) fn keeps(&self, entry: &Entry) -> bool {
        self.of.contains(&entry.author)
    }

    /// The newest `want` posts below `before` that fanout may not have
    /// delivered, of the accounts `hidden` does not hide.
    pub(crate) async fn merge(
        &self,
        stores: &Stores,
        hidden: &Hidden,
        before: Option<PostId>,
        want: usize,
    ) -> Result<Vec<Entry>> {
        let authors: Vec<UserId> = (self.authors.iter())
            .filter(|a| !hidden.hides(a))
            .cloned()
            .collect();
        if authors.is_empty() || before.is_some_and(|b| b <= self.from) {
            return Ok(Vec::new());
        }
        let range = IdRange {
            below: before,
            from: Some(self.from),
        };
        stores.content.newest_by(&authors, range, want).await
    }
}

/// A reading of the group's place: when it began, and what each
/// partition's committed count must reach for every write acknowledged
/// before then to be delivered.
struct Cut {
    at_ms: u64,
    needs: Vec<u64>,
}

impl Cut {
    fn passed_by(&self, now: &LogPosition) -> bool {
        self.needs.len() == now.partitions.len()
            && (self.needs.iter())
                .zip(&now.partitions)
                .all(|(need, p)| p.committed >= *need)
    }
}

/// The cuts not yet known to be passed, and the newest one that is.
#[derive(Default)]
pub(crate) struct Cuts {
    /// Oldest first; the first is the newest passed cut once one is.
    kept: VecDeque<Cut>,
}

impl Cuts {
    /// Takes the reading begun at `at_ms`, when `pending` events waited in
    /// the outbox, of the group's place `now`; returns how far behind
    /// fanout is: how long ago the newest passed cut was made (every write
    /// acknowledged before it is delivered), or, when none is, how long
    /// the oldest kept cut has waited, with no floor known.
    pub(crate) fn next(&mut self, at_ms: u64, pending: u64, now: &LogPosition) -> Behind {
        let needs = now.partitions.iter().map(|p| p.end + pending).collect();
        self.kept.push_back(Cut { at_ms, needs });
        if let Some(newest) = self.kept.iter().rposition(|c| c.passed_by(now)) {
            self.kept.drain(..newest);
        }
        if self.kept.len() > MAX_CUTS {
            self.kept.remove(1);
        }
        let oldest = &self.kept[0];
        let age = Duration::from_millis(at_ms.saturating_sub(oldest.at_ms));
        match oldest.passed_by(now) {
            true => Behind::Since(oldest.at_ms, age),
            false => Behind::Unknown(age),
        }
    }
}

/// How far behind fanout is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Behind {
    /// Every write acknowledged before this time (ms since the epoch) is
    /// delivered; so long ago.
    Since(u64, Duration),
    /// Not known since so long: no cut kept has been passed (the process
    /// started behind, or the group was rewound).
    Unknown(Duration),
}

impl Behind {
    /// Where reads merge from: nothing while fanout is less than
    /// `late_after` behind; below the floor by [`STAMP_MARGIN`]; every
    /// post when no floor is known.
    pub(crate) fn merge_from(self, late_after: Duration) -> Option<PostId> {
        let late_after = late_after.max(MIN_LATE);
        match self {
            Behind::Since(_, age) | Behind::Unknown(age) if age <= late_after => None,
            Behind::Since(at_ms, _) => {
                let margin = STAMP_MARGIN.as_millis() as u64;
                Some(PostId::first_at(at_ms.saturating_sub(margin)))
            }
            Behind::Unknown(_) => Some(PostId(0)),
        }
    }

    /// Notes it in the metrics.
    pub(crate) fn report(self) {
        let (Behind::Since(_, age) | Behind::Unknown(age)) = self;
        metrics().fanout_behind.set(age.as_secs_f64());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ports::PartitionPosition;

    fn at(parts: &[(u64, u64)]) -> LogPosition {
        LogPosition {
            partitions: parts
                .iter()
                .map(|&(committed, end)| PartitionPosition { committed, end })
                .collect(),
        }
    }

    fn secs(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    #[test]
    fn the_floor_is_the_newest_cut_every_partition_has_committed_past() {
        let mut cuts = Cuts::default();
        // Keeping up: the cut just made is passed.
        assert_eq!(
            cuts.next(1_000, 0, &at(&[(5, 5), (3, 3)])),
            Behind::Since(1_000, secs(0))
        );
        // Writes arrive faster than fanout: ends run ahead.
        assert_eq!(
            cuts.next(2_000, 0, &at(&[(6, 20), (3, 30)])),
            Behind::Since(1_000, secs(1))
        );
        // 4 events wait in the outbox: they land after each end.
        assert_eq!(
            cuts.next(3_000, 4, &at(&[(10, 40), (10, 40)])),
            Behind::Since(1_000, secs(2))
        );
        // One partition passed the 2 s cut, the other not yet.
        assert_eq!(
            cuts.next(4_000, 0, &at(&[(25, 50), (29, 50)])),
            Behind::Since(1_000, secs(3))
        );
        // Both passed it, not yet the 3 s cut's end plus what waited.
        assert_eq!(
            cuts.next(5_000, 0, &at(&[(43, 50), (30, 50)])),
            Behind::Since(2_000, secs(3))
        );
        assert_eq!(
            cuts.next(6_000, 0, &at(&[(44, 50), (44, 50)])),
            Behind::Since(3_000, secs(3))
        );
        // Caught up.
        assert_eq!(
            cuts.next(7_000, 0, &at(&[(50, 50), (50, 50)])),
            Behind::Since(7_000, secs(0))
        );
        // A rewind: no cut kept is passed any more.
        assert_eq!(
            cuts.next(8_000, 0, &at(&[(0, 50), (0, 50)])),
            Behind::Unknown(secs(1))
        );
    }

    #[test]
    fn reads_merge_from_below_the_floor_once_fanout_is_late() {
        let late_after = secs(1);
        assert_eq!(Behind::Since(9_000, secs(1)).merge_from(late_after), None);
        assert_eq!(
            Behind::Since(9_000, secs(3)).merge_from(late_after),
            Some(PostId::first_at(7_000))
        );
        assert_eq!(Behind::Unknown(secs(1)).merge_from(late_after), None);
        assert_eq!(
            Behind::Unknown(secs(2)).merge_from(late_after),
            Some(PostId(0))
        );
        // Never sooner than a moment, whatever the target.
        assert_eq!(
            Behind::Since(0, Duration::from_millis(900)).merge_from(Duration::ZERO),
            None
        );
    }

    #[test]
    fn the_cuts_kept_are_bounded_and_the_floor_only_errs_older() {
        let mut cuts = Cuts::default();
        cuts.next(0, 0, &at(&[(0, 0)]));
        for n in 1..=(MAX_CUTS as u64 * 2) {
            let behind = cuts.next(n * 250, 0, &at(&[(0, n)]));
            assert_eq!(behind, Behind::Since(0, Duration::from_millis(n * 250)));
        }
        assert!(cuts.kept.len() <= MAX_CUTS);
        // The cuts of the readings before the newest 1,199 are gone (but
        // the first): a group past one of them finds the first as its
        // floor, older than the true one, never newer.
        let n = 2 * MAX_CUTS as u64 + 1;
        let behind = cuts.next(n * 250, 0, &at(&[(250, n)]));
        assert!(matches!(behind, Behind::Since(0, _)), "{behind:?}");
        // A group past a cut still kept finds it.
        let behind = cuts.next((n + 1) * 250, 0, &at(&[(2_000, n)]));
        assert!(matches!(behind, Behind::Since(500_000, _)), "{behind:?}");
    }
}
