//! How a stored feed model lays out one user's entries, after the reference
//! design: one capped array (cache), one document per time bucket, or one
//! document per N entries (sized buckets). A layout only stores slots; the
//! rules that keep a timeline exact (coverage floor, warming) and the
//! conversion to entries are in [`super::stored`], the same for every layout.

use socialite_core::ids::PostId;
use std::collections::{BTreeMap, HashSet, VecDeque};

/// A stored entry: the post and its author's interned number (see
/// [`super::authors`]). Packed to 12 bytes (aligned, it would be 16): a
/// full 50-entry cache takes 612 bytes. Read its fields by value (`{s.post}`);
/// references into a packed struct are not allowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C, packed(4))]
pub struct Slot {
    pub post: PostId,
    pub author: u32,
}

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
        cap: usize,
        /// Oldest first, so that the usual delivery (the newest post) appends
        /// and the cap drops from the front, both without moving entries.
        entries: VecDeque<Slot>,
    },
    TimeBuckets {
        span_ms: u64,
        keep: usize,
        /// Bucket start (ms) → entries, oldest first.
        buckets: BTreeMap<u64, VecDeque<Slot>>,
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
                cap,
                entries: VecDeque::new(),
            },
            LayoutSpec::TimeBuckets { span_ms, keep } => Layout::TimeBuckets {
                span_ms,
                keep,
                buckets: BTreeMap::new(),
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
            // The cap plus the one that is inserted before the cap drops one.
            Layout::Capped { cap, entries } => insert_sorted(entries, s, *cap + 1),
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
            Layout::Capped { entries, .. } => {
                entries.binary_search_by(|x| { x.post }.cmp(&post)).is_ok()
            }
            Layout::TimeBuckets { buckets, .. } => buckets
                .values()
                .any(|b| b.binary_search_by(|x| { x.post }.cmp(&post)).is_ok()),
            Layout::SizedBuckets { ids, .. } => ids.contains(&post),
        }
    }

    /// Drops what exceeds the retention. Returns the floor from which every
    /// entry is still held, if anything was dropped.
    /// Whether an entry older than `floor` may be held. Exact for the
    /// layouts ordered by id; sized buckets (arrival order) always answer yes.
    pub fn holds_below(&self, floor: PostId) -> bool {
        match self {
            Layout::Capped { entries, .. } => entries.front().is_some_and(|e| { e.post } < floor),
            Layout::TimeBuckets { buckets, .. } => buckets
                .values()
                .next()
                .and_then(|b| b.front())
                .is_some_and(|e| { e.post } < floor),
            Layout::SizedBuckets { .. } => true,
        }
    }

    pub fn enforce_retention(&mut self) -> Option<PostId> {
        match self {
            Layout::Capped { cap, entries } => {
                if entries.len() <= *cap {
                    return None;
                }
                let excess = entries.len() - *cap;
                entries.drain(..excess);
                entries.front().map(|e| e.post)
            }
            Layout::TimeBuckets { keep, buckets, .. } => {
                if buckets.len() <= *keep {
                    return None;
                }
                while buckets.len() > *keep {
                    buckets.pop_first();
                }
                // Older buckets hold only older posts: from the oldest kept
                // entry up, everything is here.
                buckets
                    .values()
                    .next()
                    .and_then(|b| b.front())
                    .map(|e| e.post)
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
                highest_dropped.map(|p| PostId(p.0 + 1))
            }
        }
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&Slot) -> bool) {
        match self {
            Layout::Capped { entries, .. } => entries.retain(keep),
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
            Layout::Capped { entries, .. } => {
                newest_below(entries, before, limit).copied().collect()
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

    pub fn slots(&self) -> Box<dyn Iterator<Item = &Slot> + '_> {
        match self {
            Layout::Capped { entries, .. } => Box::new(entries.iter()),
            Layout::TimeBuckets { buckets, .. } => Box::new(buckets.values().flatten()),
            Layout::SizedBuckets { buckets, .. } => Box::new(buckets.iter().flatten()),
        }
    }

    /// The newest slot of a capped array, where a delivery usually writes;
    /// `None` for the bucketed layouts, whose writes land in many places.
    pub fn newest(&self) -> Option<&Slot> {
        match self {
            Layout::Capped { entries, .. } => entries.back(),
            _ => None,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Layout::Capped { entries, .. } => entries.len(),
            Layout::TimeBuckets { buckets, .. } => buckets.values().map(VecDeque::len).sum(),
            Layout::SizedBuckets { ids, .. } => ids.len(),
        }
    }

    /// Bytes allocated for slots and buckets (not the layout value itself).
    pub fn allocated_bytes(&self) -> usize {
        let slot = std::mem::size_of::<Slot>();
        match self {
            Layout::Capped { entries, .. } => entries.capacity() * slot,
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
        assert_eq!(capped.enforce_retention(), Some(e(25, 0).post));
        assert_eq!(timed.enforce_retention(), Some(e(15, 0).post));
        assert_eq!(timed.documents(), 2);
        // Sized buckets [1,15] [25,27]: dropping the first leaves all above 15.
        assert_eq!(sized.enforce_retention(), Some(PostId(e(15, 0).post.0 + 1)));
        assert_eq!(ids(&sized).len(), 2);
    }

    #[test]
    fn a_full_cache_of_fifty_takes_no_more_than_fifty_one_slots() {
        let mut l = Layout::new(LayoutSpec::Capped { cap: 50 });
        for t in 1..=500 {
            l.insert(e(t, 0));
            l.enforce_retention();
        }
        assert_eq!(l.len(), 50);
        assert!(
            l.allocated_bytes() <= 51 * 16,
            "{} bytes",
            l.allocated_bytes()
        );
    }
}
