//! How a stored feed model lays out one user's entries, after the reference
//! design: one capped array (cache), one document per time bucket, or one
//! document per N entries (sized buckets). A layout only stores slots; the
//! rules that keep a timeline exact (coverage floor, warming) and the
//! conversion to entries are in [`super::stored`], the same for every layout.

use crate::packed::Packed;
use crate::slot::Slot;
use socialite_core::ids::PostId;
use socialite_domain::feed::accept::{capped_coverage, takes, Coverage};
use std::collections::{BTreeMap, HashSet, VecDeque};

/// Which layout, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayoutSpec {
    /// One array of at most `cap` entries.
    Capped { cap: usize },
    /// One bucket per `span_ms` of post time; at most `keep` buckets.
    TimeBuckets { span_ms: u64, keep: usize },
    /// Buckets of `size` entries in arrival order; at most `keep` buckets.
    SizedBuckets { size: usize, keep: usize },
}

// The boxed collections of `SizedBuckets` are the point: see there.
#[allow(clippy::box_collection)]
#[derive(Debug, Clone)]
pub enum Layout {
    Capped {
        /// Oldest first, so that the usual delivery (the newest post) appends
        /// and the cap drops from the front, both without moving entries.
        entries: Packed,
    },
    TimeBuckets {
        span_ms: u64,
        keep: usize,
        /// Bucket start (ms) → entries, oldest first.
        buckets: Box<BTreeMap<u64, VecDeque<Slot>>>,
    },
    SizedBuckets {
        size: usize,
        keep: usize,
        /// Oldest bucket first; entries in arrival order, as appends leave them.
        /// Boxed, as `ids`: every stored timeline's layout is as large as
        /// the largest one, and the usual one (`Capped`) is small.
        buckets: Box<VecDeque<Vec<Slot>>>,
        /// The ids held, so that a redelivery is recognised in any bucket.
        ids: Box<HashSet<PostId>>,
    },
}

/// What enforcing the retention did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retention {
    /// Nothing was dropped.
    Kept,
    /// Entries were dropped, and the coverage follows from what is held
    /// ([`Layout::coverage`]).
    Dropped,
    /// Entries were dropped; from this floor up every entry is still held.
    Floor(PostId),
}

impl From<Option<PostId>> for Retention {
    fn from(floor: Option<PostId>) -> Retention {
        floor.map_or(Retention::Kept, Retention::Floor)
    }
}

/// Inserts into an oldest-first deque that holds at most `bound` slots at a
/// time (growing exactly up to it); false if the id is there.
fn insert_sorted(v: &mut VecDeque<Slot>, s: Slot, bound: usize) -> bool {
    let at = if v.back().is_none_or(|last| { last.post } < { s.post }) {
        v.len()
    } else {
        match v.binary_search_by(|x| { x.post }.cmp(&{ s.post })) {
            Ok(_) => return false,
            Err(at) => at,
        }
    };
    if v.len() == v.capacity() {
        let want = (v.len() * 2).max(4).min(bound.max(v.len() + 1));
        v.reserve_exact(want - v.len());
    }
    v.insert(at, s);
    true
}

/// Up to `limit` slots of an oldest-first deque older than `before`, newest first.
fn newest_below(
    v: &VecDeque<Slot>,
    before: Option<PostId>,
    limit: usize,
) -> impl Iterator<Item = &Slot> {
    let end = before.map_or(v.len(), |b| v.partition_point(|e| { e.post } < b));
    v.range(..end).rev().take(limit)
}

impl Layout {
    pub fn new(spec: LayoutSpec) -> Layout {
        match spec {
            LayoutSpec::Capped { cap } => Layout::Capped {
                entries: Packed::new(cap),
            },
            LayoutSpec::TimeBuckets { span_ms, keep } => Layout::TimeBuckets {
                span_ms,
                keep,
                buckets: Box::default(),
            },
            LayoutSpec::SizedBuckets { size, keep } => Layout::SizedBuckets {
                size,
                keep,
                buckets: Box::default(),
                ids: Box::default(),
            },
        }
    }

    /// Stores the slot; false if its post is already held.
    pub fn insert(&mut self, s: Slot) -> bool {
        match self {
            Layout::Capped { entries } => entries.insert(s),
            Layout::TimeBuckets {
                span_ms, buckets, ..
            } => {
                let key = s.post.unix_ms() / *span_ms * *span_ms;
                insert_sorted(buckets.entry(key).or_default(), s, usize::MAX)
            }
            Layout::SizedBuckets {
                size, buckets, ids, ..
            } => {
                if !ids.insert(s.post) {
                    return false;
                }
                match buckets.back_mut() {
                    Some(b) if b.len() < *size => b.push(s),
                    _ => {
                        let mut b = Vec::with_capacity(*size);
                        b.push(s);
                        buckets.push_back(b);
                    }
                }
                true
            }
        }
    }

    pub fn contains(&self, post: PostId) -> bool {
        match self {
            Layout::Capped { entries } => entries
                .iter()
                .take_while(|x| { x.post } <= post)
                .any(|x| { x.post } == post),
            Layout::TimeBuckets { buckets, .. } => buckets
                .values()
                .any(|b| b.binary_search_by(|x| { x.post }.cmp(&post)).is_ok()),
            Layout::SizedBuckets { ids, .. } => ids.contains(&post),
        }
    }

    /// Whether retention may leave entries below the floor it reports:
    /// only sized buckets, which keep arrival order, do; the layouts
    /// ordered by id drop everything below it.
    pub fn keeps_below_floor(&self) -> bool {
        matches!(self, Layout::SizedBuckets { .. })
    }

    /// The coverage of the entries held under the `sealed` one the timeline
    /// keeps: a capped array's is the rule's
    /// ([`capped_coverage`]: raised to its oldest entry while it is full),
    /// so that its cap drops the oldest entry without reading the next;
    /// the buckets' floors are sealed as retention drops them.
    pub fn coverage(&self, sealed: Coverage) -> Coverage {
        match self {
            Layout::Capped { entries } => capped_coverage(
                sealed,
                entries.len(),
                entries.oldest().map(|e| e.post),
                entries.cap(),
            ),
            _ => sealed,
        }
    }

    /// Whether the rule takes `post` into these entries ([`takes`]). The
    /// usual delivery, newer than a capped array's newest entry, is above
    /// its oldest, so only the sealed floor can refuse it.
    pub fn takes(&self, sealed: Coverage, post: PostId) -> bool {
        match self {
            Layout::Capped { entries } if entries.newest().is_some_and(|n| post > n) => {
                takes(sealed, post)
            }
            _ => takes(self.coverage(sealed), post),
        }
    }

    /// Prepares for a fill of `entries` (a capped array allocates once for
    /// them, then [`Layout::fit`]s).
    pub fn reserve(&mut self, entries: usize) {
        if let Layout::Capped { entries: held } = self {
            held.reserve_front(entries.min(held.cap()));
        }
    }

    /// Gives back what [`Layout::reserve`] left unused.
    pub fn fit(&mut self) {
        if let Layout::Capped { entries } = self {
            entries.fit();
        }
    }

    /// Drops what exceeds the retention (see [`Retention`]).
    pub fn enforce_retention(&mut self) -> Retention {
        match self {
            Layout::Capped { entries } => {
                if entries.len() <= entries.cap() {
                    return Retention::Kept;
                }
                while entries.len() > entries.cap() {
                    entries.drop_oldest();
                }
                Retention::Dropped
            }
            Layout::TimeBuckets { keep, buckets, .. } => {
                if buckets.len() <= *keep {
                    return Retention::Kept;
                }
                while buckets.len() > *keep {
                    buckets.pop_first();
                }
                // Older buckets hold only older posts: from the oldest kept
                // entry up, everything is here.
                Retention::from(
                    buckets
                        .values()
                        .next()
                        .and_then(|b| b.front())
                        .map(|e| e.post),
                )
            }
            Layout::SizedBuckets {
                keep, buckets, ids, ..
            } => {
                let mut highest_dropped: Option<PostId> = None;
                while buckets.len() > *keep {
                    for e in buckets.pop_front().unwrap_or_default() {
                        ids.remove(&{ e.post });
                        highest_dropped = highest_dropped.max(Some(e.post));
                    }
                }
                // Arrival order is not id order: only above the highest
                // dropped id is everything still here.
                Retention::from(highest_dropped.map(|p| PostId(p.0 + 1)))
            }
        }
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&Slot) -> bool) {
        match self {
            Layout::Capped { entries } => entries.retain(keep),
            Layout::TimeBuckets { buckets, .. } => {
                buckets.values_mut().for_each(|b| b.retain(&mut keep));
                buckets.retain(|_, b| !b.is_empty());
            }
            Layout::SizedBuckets { buckets, ids, .. } => {
                for b in buckets.iter_mut() {
                    b.retain(|e| {
                        let k = keep(e);
                        if !k {
                            ids.remove(&{ e.post });
                        }
                        k
                    });
                }
                buckets.retain(|b| !b.is_empty());
            }
        }
    }

    /// Up to `limit` slots older than `before`, newest first.
    pub fn page(&self, before: Option<PostId>, limit: usize) -> Vec<Slot> {
        match self {
            Layout::Capped { entries } => {
                let all: Vec<Slot> = entries.iter().collect();
                let end = before.map_or(all.len(), |b| all.partition_point(|e| { e.post } < b));
                all[..end].iter().rev().take(limit).copied().collect()
            }
            Layout::TimeBuckets {
                span_ms, buckets, ..
            } => {
                let last_key = before.map_or(u64::MAX, |b| b.unix_ms() / *span_ms * *span_ms);
                buckets
                    .range(..=last_key)
                    .rev()
                    .flat_map(|(_, b)| newest_below(b, before, usize::MAX))
                    .take(limit)
                    .copied()
                    .collect()
            }
            Layout::SizedBuckets { buckets, .. } => {
                // Every bucket may hold any id: gather, then order.
                let mut all: Vec<Slot> = buckets
                    .iter()
                    .flatten()
                    .filter(|e| before.is_none_or(|b| { e.post } < b))
                    .copied()
                    .collect();
                all.sort_unstable_by_key(|s| std::cmp::Reverse(s.post));
                all.truncate(limit);
                all
            }
        }
    }

    pub fn slots(&self) -> Box<dyn Iterator<Item = Slot> + '_> {
        match self {
            Layout::Capped { entries } => Box::new(entries.iter()),
            Layout::TimeBuckets { buckets, .. } => Box::new(buckets.values().flatten().copied()),
            Layout::SizedBuckets { buckets, .. } => Box::new(buckets.iter().flatten().copied()),
        }
    }

    /// Where a delivery to a capped array usually reads and writes (its
    /// oldest and newest entries); `None` for the bucketed layouts, whose
    /// writes land in many places.
    pub fn ends(&self) -> Option<(&u8, &u8)> {
        match self {
            Layout::Capped { entries } => entries.ends(),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Layout::Capped { entries } => entries.len(),
            Layout::TimeBuckets { buckets, .. } => buckets.values().map(VecDeque::len).sum(),
            Layout::SizedBuckets { ids, .. } => ids.len(),
        }
    }

    /// Bytes allocated for slots and buckets (not the layout value itself).
    pub fn allocated_bytes(&self) -> usize {
        let slot = std::mem::size_of::<Slot>();
        match self {
            Layout::Capped { entries } => entries.allocated_bytes(),
            Layout::TimeBuckets { buckets, .. } => buckets
                .values()
                .map(|b| b.capacity() * slot + 8 + std::mem::size_of::<VecDeque<Slot>>())
                .sum(),
            Layout::SizedBuckets { buckets, ids, .. } => {
                buckets.iter().map(|b| b.capacity() * slot).sum::<usize>()
                    + buckets.capacity() * std::mem::size_of::<Vec<Slot>>()
                    + ids.capacity() * (std::mem::size_of::<PostId>() + 1)
                    + std::mem::size_of::<VecDeque<Vec<Slot>>>()
                    + std::mem::size_of::<HashSet<PostId>>()
            }
        }
    }

    /// How many documents (arrays, buckets) the layout uses.
    pub fn documents(&self) -> usize {
        match self {
            Layout::Capped { .. } => 1,
            Layout::TimeBuckets { buckets, .. } => buckets.len(),
            Layout::SizedBuckets { buckets, .. } => buckets.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(ms_since_2024: u64, seq: u64) -> Slot {
        Slot {
            post: PostId((ms_since_2024 << 22) | (seq << 10)),
            author: 0,
        }
    }

    fn ids(l: &Layout) -> Vec<u64> {
        l.page(None, usize::MAX).iter().map(|x| x.post.0).collect()
    }

    #[test]
    fn every_layout_pages_newest_first_and_dedupes() {
        for spec in [
            LayoutSpec::Capped { cap: 100 },
            LayoutSpec::TimeBuckets {
                span_ms: 10,
                keep: 100,
            },
            LayoutSpec::SizedBuckets { size: 3, keep: 100 },
        ] {
            let mut l = Layout::new(spec);
            for (t, s) in [(5, 0), (31, 1), (12, 0), (5, 0), (40, 2), (1, 0), (31, 1)] {
                l.insert(e(t, s));
            }
            let all = ids(&l);
            assert_eq!(all.len(), 5, "{spec:?}");
            assert!(all.windows(2).all(|w| w[0] > w[1]), "{spec:?}");
            let below = l.page(Some(e(31, 1).post), 2);
            assert_eq!(
                below.iter().map(|x| x.post).collect::<Vec<_>>(),
                vec![e(12, 0).post, e(5, 0).post],
                "{spec:?}"
            );
            assert!(
                l.contains(e(40, 2).post) && !l.contains(e(41, 0).post),
                "{spec:?}"
            );
        }
    }

    #[test]
    fn retention_reports_the_floor_it_leaves() {
        let mut capped = Layout::new(LayoutSpec::Capped { cap: 2 });
        let mut timed = Layout::new(LayoutSpec::TimeBuckets {
            span_ms: 10,
            keep: 2,
        });
        let mut sized = Layout::new(LayoutSpec::SizedBuckets { size: 2, keep: 1 });
        for (t, s) in [(1, 0), (15, 0), (25, 0), (27, 0)] {
            for l in [&mut capped, &mut timed, &mut sized] {
                l.insert(e(t, s));
            }
        }
        assert_eq!(capped.enforce_retention(), Retention::Dropped);
        assert_eq!(
            capped.coverage(Coverage::All),
            Coverage::From(e(25, 0).post)
        );
        assert_eq!(timed.enforce_retention(), Retention::Floor(e(15, 0).post));
        assert_eq!(timed.documents(), 2);
        // Sized buckets [1,15] [25,27]: dropping the first leaves all above 15.
        assert_eq!(
            sized.enforce_retention(),
            Retention::Floor(PostId(e(15, 0).post.0 + 1))
        );
        assert_eq!(ids(&sized).len(), 2);
    }

    #[test]
    fn a_full_cache_of_fifty_takes_fewer_bytes_than_fifty_slots() {
        let mut l = Layout::new(LayoutSpec::Capped { cap: 50 });
        for t in 1..=500 {
            l.insert(e(t * 1_000, 0));
            l.enforce_retention();
        }
        assert_eq!(l.len(), 50);
        assert!(
            l.allocated_bytes() <= 50 * 6,
            "{} bytes",
            l.allocated_bytes()
        );
    }
}
