//! How a stored feed model lays out one user's entries, after the reference
//! design: one capped array (cache), one document per time bucket, or one
//! document per N entries (sized buckets). A layout only stores; the rules
//! that keep a timeline exact (coverage floor, warming) are in
//! [`super::stored`], the same for every layout.

use crate::ids::PostId;
use crate::model::Entry;
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

#[derive(Debug, Clone)]
pub enum Layout {
    Capped {
        cap: usize,
        /// Oldest first, so that the usual delivery (the newest post) appends
        /// and the cap drops from the front, both without moving entries.
        entries: VecDeque<Entry>,
    },
    TimeBuckets {
        span_ms: u64,
        keep: usize,
        /// Bucket start (ms) → entries, oldest first.
        buckets: BTreeMap<u64, VecDeque<Entry>>,
    },
    SizedBuckets {
        size: usize,
        keep: usize,
        /// Oldest bucket first; entries in arrival order, as appends leave them.
        buckets: VecDeque<Vec<Entry>>,
        /// The ids held, so that a redelivery is recognised in any bucket.
        ids: HashSet<PostId>,
    },
}

/// Inserts into a newest-first vector; false if the id is there.
/// Inserts into an oldest-first deque; false if the id is there.
fn insert_sorted(v: &mut VecDeque<Entry>, e: Entry) -> bool {
    if v.back().is_none_or(|last| last.post < e.post) {
        v.push_back(e);
        return true;
    }
    match v.binary_search_by(|x| x.post.cmp(&e.post)) {
        Ok(_) => false,
        Err(at) => {
            v.insert(at, e);
            true
        }
    }
}

/// Up to `limit` entries of an oldest-first deque older than `before`, newest first.
fn newest_below(
    v: &VecDeque<Entry>,
    before: Option<PostId>,
    limit: usize,
) -> impl Iterator<Item = &Entry> {
    let end = before.map_or(v.len(), |b| v.partition_point(|e| e.post < b));
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
                buckets: VecDeque::new(),
                ids: HashSet::new(),
            },
        }
    }

    /// Stores the entry; false if it is already held.
    pub fn insert(&mut self, e: Entry) -> bool {
        match self {
            Layout::Capped { entries, .. } => insert_sorted(entries, e),
            Layout::TimeBuckets {
                span_ms, buckets, ..
            } => {
                let key = e.post.unix_ms() / *span_ms * *span_ms;
                insert_sorted(buckets.entry(key).or_default(), e)
            }
            Layout::SizedBuckets {
                size, buckets, ids, ..
            } => {
                if !ids.insert(e.post) {
                    return false;
                }
                match buckets.back_mut() {
                    Some(b) if b.len() < *size => b.push(e),
                    _ => {
                        let mut b = Vec::with_capacity(*size);
                        b.push(e);
                        buckets.push_back(b);
                    }
                }
                true
            }
        }
    }

    /// Drops what exceeds the retention. Returns the floor from which every
    /// entry is still held, if anything was dropped.
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
                        ids.remove(&e.post);
                        highest_dropped = highest_dropped.max(Some(e.post));
                    }
                }
                // Arrival order is not id order: only above the highest
                // dropped id is everything still here.
                highest_dropped.map(|p| PostId(p.0 + 1))
            }
        }
    }

    pub fn retain(&mut self, mut keep: impl FnMut(&Entry) -> bool) {
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
                            ids.remove(&e.post);
                        }
                        k
                    });
                }
                buckets.retain(|b| !b.is_empty());
            }
        }
    }

    /// Up to `limit` entries older than `before`, newest first.
    pub fn page(&self, before: Option<PostId>, limit: usize) -> Vec<Entry> {
        match self {
            Layout::Capped { entries, .. } => {
                newest_below(entries, before, limit).cloned().collect()
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
                    .cloned()
                    .collect()
            }
            Layout::SizedBuckets { buckets, .. } => {
                // Every bucket may hold any id: gather, then order.
                let below = |e: &&Entry| before.is_none_or(|b| e.post < b);
                let all: Vec<Entry> = buckets.iter().flatten().filter(below).cloned().collect();
                super::merge::newest(all, limit)
            }
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Layout::Capped { entries, .. } => entries.len(),
            Layout::TimeBuckets { buckets, .. } => buckets.values().map(VecDeque::len).sum(),
            Layout::SizedBuckets { ids, .. } => ids.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries serialized as a document store keeps them: id, author and
    /// any embedded content per entry, and a key per document.
    pub fn serialized_bytes(&self) -> usize {
        let entry = |e: &Entry| {
            let body = e.body.as_ref().map_or(0, |b| {
                b.message.len()
                    + b.data
                        .as_ref()
                        .map_or(0, |d| serde_json::to_string(d).map_or(0, |s| s.len()))
            });
            8 + e.author.as_str().len() + body
        };
        let entries: usize = match self {
            Layout::Capped { entries, .. } => entries.iter().map(entry).sum(),
            Layout::TimeBuckets { buckets, .. } => buckets.values().flatten().map(entry).sum(),
            Layout::SizedBuckets { buckets, .. } => buckets.iter().flatten().map(entry).sum(),
        };
        // A document's key: user id and bucket key, about 24 bytes.
        entries + 24 * self.documents()
    }

    /// Bytes allocated for entries and buckets (not the layout value itself).
    pub fn allocated_bytes(&self) -> usize {
        let entry = std::mem::size_of::<Entry>();
        match self {
            Layout::Capped { entries, .. } => entries.capacity() * entry,
            Layout::TimeBuckets { buckets, .. } => {
                // A B-tree node per few buckets; count each bucket's key and deque.
                buckets
                    .values()
                    .map(|b| b.capacity() * entry + 8 + std::mem::size_of::<VecDeque<Entry>>())
                    .sum()
            }
            Layout::SizedBuckets { buckets, ids, .. } => {
                buckets.iter().map(|b| b.capacity() * entry).sum::<usize>()
                    + buckets.capacity() * std::mem::size_of::<Vec<Entry>>()
                    + ids.capacity() * (std::mem::size_of::<PostId>() + 1)
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
    use crate::ids::UserId;

    fn e(ms_since_2024: u64, seq: u64) -> Entry {
        Entry::linked(
            PostId((ms_since_2024 << 22) | (seq << 10)),
            UserId::parse("a").unwrap(),
        )
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
}
