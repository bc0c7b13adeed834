//! First pages of timelines kept whole, as the bytes they were answered
//! with: a reader who reads the same page again, with nothing changed, is
//! answered without reading the timeline, its posts or the reader's
//! relations. A page is kept with the stamp it was read at
//! ([`socialite_core::feed::stamp`]) and served only while the stamp taken
//! for the next request is the same: any delivery to the timeline, and
//! any write that changes pages beside it (a deletion, a follow, a mute or
//! block, a repost, a suspension), makes it stale at once.

use axum::body::Bytes;
use axum::http::{header, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use rustc_hash::FxHashMap;
use socialite_core::feed::stamp::Stamp;
use socialite_core::ids::TimelineId;
use std::sync::{Mutex, MutexGuard};

/// Names where a timeline page came from (`cache`, `past_cache`, `merge`).
pub const TIMELINE_SOURCE: HeaderName = HeaderName::from_static("x-timeline-source");

const SHARDS: usize = 16;

/// Bytes of pages kept, all shards together.
const CAPACITY_BYTES: usize = 64 << 20;

/// A timeline's first page of `limit` entries.
type Key = (TimelineId, usize);

struct Kept {
    stamp: Stamp,
    body: Bytes,
}

#[derive(Default)]
struct Shard {
    pages: FxHashMap<Key, Kept>,
    bytes: usize,
}

/// One per REST router, like the post fragments.
pub struct PageCache {
    shards: Vec<Mutex<Shard>>,
}

impl Default for PageCache {
    fn default() -> Self {
        PageCache {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl PageCache {
    /// The page kept for the timeline at `stamp`, if it is still that.
    pub fn get(&self, timeline: &TimelineId, limit: usize, stamp: Stamp) -> Option<Bytes> {
        let key = (timeline.clone(), limit);
        let shard = self.shard(timeline);
        let kept = shard.pages.get(&key)?;
        (kept.stamp == stamp).then(|| kept.body.clone())
    }

    /// Keeps the page read from `stamp`, in place of what was kept.
    pub fn put(&self, timeline: TimelineId, limit: usize, stamp: Stamp, body: Bytes) {
        let per_shard = CAPACITY_BYTES / SHARDS;
        if body.len() > per_shard {
            return;
        }
        let mut shard = self.shard(&timeline);
        if shard.bytes + body.len() > per_shard {
            // Full: start afresh; pages still read come back on their next read.
            shard.pages.clear();
            shard.bytes = 0;
        }
        shard.bytes += body.len();
        if let Some(old) = shard.pages.insert((timeline, limit), Kept { stamp, body }) {
            shard.bytes -= old.body.len();
        }
    }

    fn shard(&self, timeline: &TimelineId) -> MutexGuard<'_, Shard> {
        use std::hash::{Hash, Hasher};
        let mut h = rustc_hash::FxHasher::default();
        timeline.hash(&mut h);
        let i = (h.finish().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize % SHARDS;
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A timeline page as `application/json`, naming where it came from (a
/// kept page came from the cache).
pub fn reply(body: Bytes, source: &'static str) -> Response {
    let headers = [
        (
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        ),
        (TIMELINE_SOURCE, HeaderValue::from_static(source)),
    ];
    (headers, body).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;
    use socialite_core::ids::UserId;

    fn home(u: &str) -> TimelineId {
        TimelineId::home(&UserId::parse(u).unwrap())
    }

    fn at(epoch: u64, timeline: u64) -> Stamp {
        Stamp { epoch, timeline }
    }

    #[test]
    fn a_page_is_served_only_at_the_stamp_it_was_read_at() {
        let pages = PageCache::default();
        let body = Bytes::from_static(b"{\"posts\":[]}");
        pages.put(home("a"), 50, at(1, 7), body.clone());
        assert_eq!(pages.get(&home("a"), 50, at(1, 7)), Some(body.clone()));
        assert_eq!(pages.get(&home("a"), 50, at(2, 7)), None, "a write since");
        assert_eq!(
            pages.get(&home("a"), 50, at(1, 8)),
            None,
            "a delivery since"
        );
        assert_eq!(pages.get(&home("a"), 20, at(1, 7)), None, "another size");
        assert_eq!(
            pages.get(&home("b"), 50, at(1, 7)),
            None,
            "another timeline"
        );
        let newer = Bytes::from_static(b"{\"posts\":[1]}");
        pages.put(home("a"), 50, at(2, 7), newer.clone());
        assert_eq!(pages.get(&home("a"), 50, at(2, 7)), Some(newer));
    }

    #[test]
    fn pages_kept_stay_within_their_bytes() {
        let pages = PageCache::default();
        let body = Bytes::from(vec![b' '; 256 << 10]);
        for i in 0..1_000 {
            pages.put(home(&format!("u{i}")), 50, at(0, 0), body.clone());
        }
        let kept: usize = pages
            .shards
            .iter()
            .map(|s| {
                let s = s.lock().unwrap();
                let counted: usize = s.pages.values().map(|k| k.body.len()).sum();
                assert_eq!(counted, s.bytes, "a shard counts what it keeps");
                s.bytes
            })
            .sum();
        assert!(kept <= CAPACITY_BYTES, "{kept} bytes kept");
        assert!(kept > 0);
    }
}
