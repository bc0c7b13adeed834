//! The two bucket models' documents, after the reference design:
//! - time buckets, `timed_buckets`: `{_id: {_t: bucket, _u: timeline}, g, _k, _c: [entries]}`,
//!   bucket number `_t` = post time / span, so a post has one bucket and a
//!   replay finds it there;
//! - sized buckets, `sized_buckets`: `{_id: {_u: timeline, _n: seq}, g, _s, _k, _c: [entries]}`,
//!   where `_s` counts the entries ever pushed (a bucket takes at most N)
//!   and `_n` numbers a timeline's buckets: opening bucket `_n + 1` is an
//!   upsert on a unique `_id`, so two workers can never both open it.
//!
//! Every bucket carries `g`, the generation of the timeline's head (see
//! `head`), and `_k`, its live entries; entries `_c` are kept newest first.

use mongodb::bson::{doc, Bson, Document};
use socialite_core::feed::config::{FeedConfig, FeedModel};
use socialite_core::ids::PostId;
use std::collections::HashMap;

/// Which bucket model, with its parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    Timed { span_ms: u64, keep: usize },
    Sized { size: usize, keep: usize },
}

/// The unique index that holds a post once per sized-bucket timeline.
pub(crate) const HELD_ONCE: &str = "u_c_p";

impl Shape {
    pub(crate) fn of(feed: &FeedConfig) -> Option<Shape> {
        match feed.model {
            FeedModel::TimeBuckets => Some(Shape::Timed {
                span_ms: feed.time_bucket_ms,
                keep: feed.bucket_retention,
            }),
            FeedModel::SizedBuckets => Some(Shape::Sized {
                size: feed.bucket_size,
                keep: feed.bucket_retention,
            }),
            _ => None,
        }
    }

    pub(crate) fn collection(self) -> &'static str {
        match self {
            Shape::Timed { .. } => "timed_buckets",
            Shape::Sized { .. } => "sized_buckets",
        }
    }

    /// The field of `_id` that orders a timeline's buckets.
    pub(crate) fn key(self) -> &'static str {
        match self {
            Shape::Timed { .. } => "_t",
            Shape::Sized { .. } => "_n",
        }
    }

    pub(crate) fn keep(self) -> usize {
        match self {
            Shape::Timed { keep, .. } | Shape::Sized { keep, .. } => keep,
        }
    }

    /// The dotted path of the ordering key, for filters and sorts.
    pub(crate) fn key_path(self) -> String {
        format!("_id.{}", self.key())
    }

    /// A bucket's `_id`.
    pub(crate) fn bucket_id(self, timeline: &str, key: i64) -> Document {
        match self {
            Shape::Timed { .. } => doc! { "_t": key, "_u": timeline },
            Shape::Sized { .. } => doc! { "_u": timeline, "_n": key },
        }
    }

    /// The time bucket of a post.
    pub(crate) fn time_bucket(span_ms: u64, post: PostId) -> i64 {
        (post.unix_ms() / span_ms) as i64
    }

    /// The bucket a delivery of `post` goes to first: its time bucket, or
    /// the timeline's open bucket as its head last knew it.
    pub(crate) fn first_target(self, post: PostId, open: i64) -> i64 {
        match self {
            Shape::Timed { span_ms, .. } => Shape::time_bucket(span_ms, post),
            Shape::Sized { .. } => open,
        }
    }

    /// One delivery's update statement: push into the bucket unless it holds
    /// the post (or, sized, is full), creating the bucket if it is missing.
    /// On a conflict (the upsert meets an existing `_id`) see [`Shape::on_conflict`].
    pub(crate) fn push(
        self,
        timeline: &str,
        generation: i64,
        key: i64,
        post: i64,
        entry: Document,
    ) -> Document {
        let mut q =
            doc! { "_id": self.bucket_id(timeline, key), "g": generation, "_c.p": { "$ne": post } };
        let mut inc = doc! { "_k": 1_i64 };
        if let Shape::Sized { size, .. } = self {
            q.insert("_s", doc! { "$lt": size as i64 });
            inc.insert("_s", 1_i64);
        }
        doc! {
            "q": q,
            "u": {
                "$push": { "_c": { "$each": [entry], "$sort": { "p": -1 } } },
                "$inc": inc,
            },
            "upsert": true,
        }
    }

    /// Where deliveries go after their upserts met existing buckets with
    /// the same `_id` that did not take them. `conflicts` are (timeline, key
    /// tried, attempt counting from 1), in batch order; the answer is the
    /// next key of each, or `None` when the bucket holds the post.
    ///
    /// A sized bucket was full (or holds the post, which the next bucket's
    /// unique index then says): a timeline's conflicting entries go on to
    /// the buckets after the highest tried, N to a bucket, so a batch of
    /// many entries for one timeline takes one more round, not one per
    /// bucket. A time bucket holds the post, or another worker created it a
    /// moment before, or it is a leftover of an older generation (which the
    /// second conflict deletes): the same bucket again, twice at most.
    pub(crate) fn after_conflicts(self, conflicts: &[(&str, i64, u32)]) -> Vec<Option<i64>> {
        match self {
            Shape::Timed { .. } => conflicts
                .iter()
                .map(|&(_, key, attempt)| (attempt < 3).then_some(key))
                .collect(),
            Shape::Sized { size, .. } => {
                let mut highest: HashMap<&str, i64> = HashMap::new();
                for &(t, key, _) in conflicts {
                    let h = highest.entry(t).or_insert(key);
                    *h = (*h).max(key);
                }
                let mut placed: HashMap<&str, i64> = HashMap::new();
                conflicts
                    .iter()
                    .map(|&(t, _, _)| {
                        let i = placed.entry(t).or_insert(0);
                        let key = highest[t] + 1 + *i / size as i64;
                        *i += 1;
                        Some(key)
                    })
                    .collect()
            }
        }
    }

    /// The floor a timeline keeps after retention drops its buckets beyond
    /// the newest `keep`: `buckets` are (key, post ids) newest first.
    /// Time buckets hold everything from the oldest kept bucket's start up;
    /// sized buckets fill in arrival order, so only above the highest
    /// dropped id is everything still held.
    pub(crate) fn floor_after_retention(self, buckets: &[(i64, Vec<u64>)]) -> Option<PostId> {
        let keep = self.keep();
        if buckets.len() <= keep {
            return None;
        }
        match self {
            Shape::Timed { span_ms, .. } => {
                let oldest_kept = buckets[keep - 1].0.max(0) as u64;
                Some(PostId::first_at(oldest_kept * span_ms))
            }
            Shape::Sized { .. } => buckets[keep..]
                .iter()
                .flat_map(|(_, ids)| ids.iter().copied())
                .max()
                .map(|p| PostId(p + 1)),
        }
    }
}

/// The bucket key in a bucket document's `_id`.
pub(crate) fn bucket_key(shape: Shape, d: &Document) -> i64 {
    match d
        .get_document("_id")
        .ok()
        .and_then(|id| id.get(shape.key()))
    {
        Some(Bson::Int64(n)) => *n,
        Some(Bson::Int32(n)) => i64::from(*n),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retention_keeps_the_newest_buckets_and_says_the_floor() {
        let timed = Shape::Timed {
            span_ms: 1000,
            keep: 2,
        };
        let buckets = vec![(9, vec![]), (7, vec![]), (3, vec![])];
        assert_eq!(
            timed.floor_after_retention(&buckets),
            Some(PostId::first_at(7000))
        );
        assert_eq!(timed.floor_after_retention(&buckets[..2]), None);
        let sized = Shape::Sized { size: 2, keep: 1 };
        let buckets = vec![(2, vec![5, 3]), (1, vec![9, 1]), (0, vec![4])];
        assert_eq!(sized.floor_after_retention(&buckets), Some(PostId(10)));
    }

    #[test]
    fn conflicts_spread_over_the_next_sized_buckets_and_retry_a_time_bucket_twice() {
        let sized = Shape::Sized { size: 2, keep: 1 };
        let next = sized.after_conflicts(&[("a", 4, 1), ("b", 9, 1), ("a", 4, 1), ("a", 5, 2)]);
        assert_eq!(next, vec![Some(6), Some(10), Some(6), Some(7)]);
        let timed = Shape::Timed {
            span_ms: 1000,
            keep: 2,
        };
        assert_eq!(
            timed.after_conflicts(&[("a", 4, 2), ("a", 5, 3)]),
            vec![Some(4), None]
        );
    }
}
