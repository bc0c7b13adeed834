//! Pages of posts assembled from pre-serialized posts. A post never changes
//! once written, so its JSON is made once and copied into every page that
//! shows it: a cached first page of 50 costs 50 lookups and one copy of its
//! bytes instead of 50 serializations (ids and dates formatted, messages
//! escaped, a few allocations each). What an entry adds to its post (who
//! reposted it where) is the reader's, so it is written after the post's
//! own fields, per page.

use crate::json;
use axum::http::{header, HeaderValue};
use axum::response::{IntoResponse, Response};
use socialite_core::ids::PostId;
use socialite_core::model::{FeedItem, Page, Post};
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

const SHARDS: usize = 16;

/// Posts kept serialized: recent posts are on most pages.
const CAPACITY: usize = 65_536;

/// One per REST router, so that two services in one process (tests) never
/// share posts by id.
pub struct PostFragments {
    per_shard: usize,
    shards: Vec<Mutex<HashMap<u64, Box<[u8]>>>>,
}

impl Default for PostFragments {
    fn default() -> Self {
        PostFragments {
            per_shard: CAPACITY / SHARDS,
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
        }
    }
}

impl PostFragments {
    /// The page as `application/json`: the bytes `json::post_page` serializes to.
    pub fn reply(&self, page: &Page<FeedItem, PostId>) -> Response {
        let body = self.page_json(page);
        let json = HeaderValue::from_static("application/json");
        ([(header::CONTENT_TYPE, json)], body).into_response()
    }

    pub fn page_json(&self, page: &Page<FeedItem, PostId>) -> Vec<u8> {
        let mut out = Vec::with_capacity(48 + page.items.len() * 192);
        out.extend_from_slice(b"{\"posts\":[");
        for (i, item) in page.items.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            self.append(&mut out, &item.post);
            if !item.reposted_by.is_empty() {
                reposts(&mut out, item);
            }
            if !item.filtered.is_empty() {
                filtered(&mut out, item);
            }
        }
        out.extend_from_slice(b"],\"next_cursor\":");
        match page.next_cursor {
            // A cursor is hex digits: nothing to escape.
            Some(c) => out.extend_from_slice(format!("\"{c}\"").as_bytes()),
            None => out.extend_from_slice(b"null"),
        }
        out.push(b'}');
        out
    }

    fn append(&self, out: &mut Vec<u8>, post: &Post) {
        let mut shard = self.shard(post.id);
        if let Some(fragment) = shard.get(&post.id.0) {
            out.extend_from_slice(fragment);
            return;
        }
        let fragment = serde_json::to_vec(&json::post(post)).unwrap_or_default();
        out.extend_from_slice(&fragment);
        // Full: start afresh; recent posts come back on their next page.
        if shard.len() >= self.per_shard {
            shard.clear();
        }
        shard.insert(post.id.0, fragment.into_boxed_slice());
    }

    fn shard(&self, id: PostId) -> MutexGuard<'_, HashMap<u64, Box<[u8]>>> {
        let i = (id.0.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 60) as usize % SHARDS;
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Puts the entry's own fields inside the post's object, as serde writes
/// them (they follow every field of the post).
fn reposts(out: &mut Vec<u8>, item: &FeedItem) {
    debug_assert_eq!(out.last(), Some(&b'}'));
    out.pop();
    out.extend_from_slice(b",\"reposted_by\":[");
    for (i, u) in item.reposted_by.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // A user id is letters, digits and `_-.`: nothing to escape.
        out.push(b'"');
        out.extend_from_slice(u.as_str().as_bytes());
        out.push(b'"');
    }
    let tail = format!(
        "],\"reposted_by_count\":{},\"position\":\"{}\"}}",
        item.reposts_seen, item.position
    );
    out.extend_from_slice(tail.as_bytes());
}

/// Puts the warning filters that match the entry inside its object, last
/// (as serde writes them).
fn filtered(out: &mut Vec<u8>, item: &FeedItem) {
    debug_assert_eq!(out.last(), Some(&b'}'));
    out.pop();
    out.extend_from_slice(b",\"filtered\":");
    // Plain strings and numbers always serialize.
    serde_json::to_writer(&mut *out, &json::filtered_hits(&item.filtered)).unwrap_or_default();
    out.push(b'}');
}

#[cfg(test)]
mod tests {
    use super::*;
    use socialite_core::ids::UserId;

    fn post(id: u64, message: &str, mentions: &[&str]) -> Post {
        let data = serde_json::json!({"k": [1, "two\n"]});
        let mut p = Post::written(
            PostId(id),
            UserId::parse("alice").unwrap(),
            message.into(),
            id.is_multiple_of(2)
                .then(|| data.as_object().unwrap().clone()),
            mentions.iter().map(|m| UserId::parse(m).unwrap()).collect(),
        );
        if id.is_multiple_of(3) {
            p.reply_to = Some(socialite_core::model::PostRef {
                id: PostId(5),
                author: UserId::parse("bob").unwrap(),
            });
        }
        p
    }

    fn plain(p: Post) -> FeedItem {
        FeedItem::plain(p)
    }

    fn reposted(p: Post, by: &[&str]) -> FeedItem {
        FeedItem {
            position: PostId(p.id.0 + 9),
            post: p,
            reposted_by: by.iter().map(|u| UserId::parse(u).unwrap()).collect(),
            reposts_seen: by.len() as u64 + 1,
            filtered: Vec::new(),
        }
    }

    #[test]
    fn pages_are_the_bytes_serde_makes_served_fresh_or_cached() {
        let fragments = PostFragments::default();
        let pages = [
            Page {
                items: vec![
                    reposted(
                        post(400 << 22, "quote \" back\\slash \u{1F600} <tag>", &["bob"]),
                        &["carol", "dan"],
                    ),
                    plain(post(300 << 22, "plain", &[])),
                ],
                next_cursor: Some(PostId(300 << 22)),
            },
            Page {
                items: vec![
                    reposted(post(300 << 22, "plain", &[]), &["erin"]),
                    plain(post(7, "tab\there", &["bob", "carol"])),
                    plain(post(9, "a reply", &[])),
                ],
                next_cursor: None,
            },
            Page {
                items: vec![],
                next_cursor: None,
            },
        ];
        for _ in 0..2 {
            for page in &pages {
                let expected = serde_json::to_vec(&json::post_page(page)).unwrap();
                assert_eq!(
                    String::from_utf8(fragments.page_json(page)).unwrap(),
                    String::from_utf8(expected).unwrap()
                );
            }
        }
    }
}
