//! First pages of timelines kept whole, as the bytes they were answered
//! with: a reader who reads the same page again, with nothing changed, is
//! answered without reading the timeline, its posts or the reader's
//! relations. A page is kept with the stamp it was read at
//! ([`socialite_core::feed::stamp`]) and served only while the stamp taken
//! for the next request is the same: any delivery to the timeline, and
//! any write that changes pages beside it (a deletion, a follow, a mute or
//! block, a repost, a suspension), makes it stale at once.

use crate::fragments::PostFragments;
use crate::metrics::transport;
use axum::body::Bytes;
use axum::http::{header, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use rustc_hash::FxHashMap;
use socialite_core::feed::stamp::{PageAt, Stamp};
use socialite_core::feed::timeline::ReadSource;
use socialite_core::ids::{PostId, TimelineId, UserId};
use socialite_core::metrics::metrics;
use socialite_core::model::{FeedItem, Page};
use std::sync::{Mutex, MutexGuard};

/// Names where a timeline page came from (`cache`, `past_cache`, `merge`).
pub const TIMELINE_SOURCE: HeaderName = HeaderName::from_static("x-timeline-source");

const SHARDS: usize = 16;

/// Bytes of pages kept, all shards together.
const CAPACITY_BYTES: usize = 64 << 20;

/// A timeline's first page of `limit` entries, as a viewer sees it.
type Key = (TimelineId, Option<UserId>, usize);

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

/// What the cache holds of a first page asked.
pub enum Lookup {
    /// The page, still exact.
    Hit(Bytes),
    /// Nothing exact: the page is read, and kept where this says.
    Miss(Option<(PageAt, usize)>),
}

impl PageCache {
    /// The first page of `limit` entries that `at` names (as
    /// `Reads::first_page_at` and `Reads::group_first_page_at` give it),
    /// if it is kept as it is now.
    pub fn lookup(&self, at: Option<PageAt>, limit: usize) -> Lookup {
        let Some(at) = at else {
            return Lookup::Miss(None);
        };
        match self.get(&at, limit) {
            Some(body) => {
                transport().page_cache_hits.inc();
                // Still a read served by the cache, for the hit ratio.
                metrics().timeline_read(ReadSource::Cache.as_str());
                Lookup::Hit(body)
            }
            None => {
                transport().page_cache_misses.inc();
                Lookup::Miss(Some((at, limit)))
            }
        }
    }

    /// A page read, answered, and kept where `miss` says if it came from
    /// the stored timeline alone.
    pub fn answer(
        &self,
        fragments: &PostFragments,
        (page, source): (Page<FeedItem, PostId>, ReadSource),
        miss: Option<(PageAt, usize)>,
    ) -> Response {
        let body = Bytes::from(fragments.page_json(&page));
        if let (Some((at, limit)), ReadSource::Cache) = (miss, source) {
            self.put(at, limit, body.clone());
        }
        reply(body, source.as_str())
    }

    /// The page of `limit` entries kept for `at`, if it was read at the
    /// same stamp.
    pub fn get(&self, at: &PageAt, limit: usize) -> Option<Bytes> {
        let key = (at.timeline.clone(), at.viewer.clone(), limit);
        let shard = self.shard(&at.timeline);
        let kept = shard.pages.get(&key)?;
        (kept.stamp == at.stamp).then(|| kept.body.clone())
    }

    /// Keeps the page read from `at`, in place of what was kept.
    pub fn put(&self, at: PageAt, limit: usize, body: Bytes) {
        let per_shard = CAPACITY_BYTES / SHARDS;
        if body.len() > per_shard {
            return;
        }
        let mut shard = self.shard(&at.timeline);
        if shard.bytes + body.len() > per_shard {
            // Full: start afresh; pages still read come back on their next read.
            shard.pages.clear();
            shard.bytes = 0;
        }
        shard.bytes += body.len();
        let (key, stamp) = ((at.timeline, at.viewer, limit), at.stamp);
        if let Some(old) = shard.pages.insert(key, Kept { stamp, body }) {
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
        Stamp {
            epoch,
            timeline,
            marked: 0,
        }
    }

    fn page(user: &str, viewer: Option<&str>, stamp: Stamp) -> PageAt {
        PageAt {
            timeline: home(user),
            viewer: viewer.map(|v| UserId::parse(v).unwrap()),
            stamp,
        }
    }

    #[test]
    fn a_page_is_served_only_at_the_stamp_it_was_read_at() {
        let pages = PageCache::default();
        let body = Bytes::from_static(b"{\"posts\":[]}");
        pages.put(page("a", None, at(1, 7)), 50, body.clone());
        let get = |user, viewer, stamp, limit| pages.get(&page(user, viewer, stamp), limit);
        assert_eq!(get("a", None, at(1, 7), 50), Some(body.clone()));
        assert_eq!(get("a", None, at(2, 7), 50), None, "a write since");
        assert_eq!(get("a", None, at(1, 8), 50), None, "a delivery since");
        assert_eq!(get("a", None, at(1, 7), 20), None, "another size");
        assert_eq!(get("b", None, at(1, 7), 50), None, "another timeline");
        assert_eq!(get("a", Some("v"), at(1, 7), 50), None, "another viewer");
        let newer = Bytes::from_static(b"{\"posts\":[1]}");
        pages.put(page("a", None, at(2, 7)), 50, newer.clone());
        assert_eq!(get("a", None, at(2, 7), 50), Some(newer));
    }

    #[test]
    fn pages_kept_stay_within_their_bytes() {
        let pages = PageCache::default();
        let body = Bytes::from(vec![b' '; 256 << 10]);
        for i in 0..1_000 {
            pages.put(page(&format!("u{i}"), None, at(0, 0)), 50, body.clone());
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
