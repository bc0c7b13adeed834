//! One `timeline_cache` document as the updates see it: its state as read,
//! judged by `socialite_domain::feed::accept`, the removal guard that seals
//! the floor, and entry conversion.

use crate::store::{get_i64, get_str, id_bson};
use mongodb::bson::{doc, Bson, Document};
use serde_json::Value;
use socialite_core::error::{Error, Result};
use socialite_core::ids::{PostId, TimelineId, UserId};
use socialite_core::model::{Body, Entry, PostRef};
use socialite_domain::feed::accept::{capped_coverage, takes, Coverage, WarmingMemory};
use std::sync::Arc;

/// What a read of a cache document found.
pub(crate) struct CacheState {
    pub(crate) warming: bool,
    pub(crate) wv: i64,
    pub(crate) floor: u64,
    /// Post ids, newest first, as stored.
    pub(crate) ids: Vec<u64>,
}

impl CacheState {
    pub(crate) fn from(doc: &Document) -> CacheState {
        let ids = match doc.get_array("entries") {
            Ok(entries) => entries
                .iter()
                .filter_map(|e| e.as_document().map(|d| get_i64(d, "p") as u64))
                .collect(),
            Err(_) => Vec::new(),
        };
        CacheState {
            warming: doc.get_bool("warming").unwrap_or(false),
            wv: get_i64(doc, "wv"),
            floor: get_i64(doc, "floor") as u64,
            ids,
        }
    }

    /// The oldest entry of a full array: nothing at or above it was dropped.
    pub(crate) fn full_bound(&self, cap: usize) -> Option<u64> {
        (self.ids.len() >= cap)
            .then(|| self.ids.last().copied())
            .flatten()
    }

    /// The rule's coverage of a capped array: the sealed `floor`, raised to
    /// the oldest entry of a full array.
    pub(crate) fn coverage(&self, cap: usize) -> Coverage {
        let sealed = match self.floor {
            0 => Coverage::All,
            f => Coverage::From(PostId(f)),
        };
        let oldest = self.ids.last().map(|p| PostId(*p));
        capped_coverage(sealed, self.ids.len(), oldest, cap)
    }

    /// Whether a delivery of `post` is for this cache, as read: the rule
    /// takes it and the cache does not hold it. The update's filter checks
    /// both again against the document as it is then.
    pub(crate) fn wants(&self, post: PostId, cap: usize) -> bool {
        takes(self.coverage(cap), post) && !self.holds(post)
    }

    pub(crate) fn holds(&self, post: PostId) -> bool {
        self.ids.contains(&post.0)
    }

    /// The filter and seal of a removal from this state: the update applies
    /// only if the array is still as full as it was read, with the same
    /// oldest entry, and raises the floor to that entry first.
    pub(crate) fn removal(&self, user: &TimelineId, cap: usize) -> (Document, Document) {
        let mut filter = doc! { "_id": user.as_str(), "warming": self.warming };
        let mut update = doc! {};
        // Guards on the length read (not on `cap`, which a restart may change).
        let len = self.ids.len();
        filter.insert(format!("entries.{len}"), doc! { "$exists": false });
        match self.full_bound(cap) {
            Some(bound) => {
                filter.insert(format!("entries.{}.p", len - 1), bound as i64);
                update.insert("$max", doc! { "floor": bound as i64 });
            }
            None if len > 0 => {
                filter.insert(format!("entries.{}", len - 1), doc! { "$exists": true });
            }
            None => {}
        }
        if self.warming {
            filter.insert("wv", self.wv);
            update.insert("$inc", doc! { "wv": 1_i64 });
        }
        (filter, update)
    }
}

/// A filter that the cache holds none of `entries` (empty if there are none).
pub(crate) fn none_of(entries: &[&Entry]) -> Document {
    if entries.is_empty() {
        return doc! {};
    }
    let ids: Vec<i64> = entries.iter().map(|e| id_bson(e.post)).collect();
    doc! { "entries.p": { "$nin": ids } }
}

pub(crate) fn coverage_floor(c: Coverage) -> i64 {
    match c {
        Coverage::All => 0,
        Coverage::From(p) => id_bson(p),
    }
}

pub(crate) fn entry_doc(e: &Entry) -> Document {
    let mut d = doc! { "p": id_bson(e.post), "a": e.author.as_str() };
    if let Some(body) = &e.body {
        d.insert("m", &body.message);
        if let Some(data) = &body.data {
            d.insert("d", Value::Object(data.clone()).to_string());
        }
        if !body.mentions.is_empty() {
            let n: Vec<&str> = body.mentions.iter().map(UserId::as_str).collect();
            d.insert("n", n);
        }
        let link = |r: &PostRef| doc! { "i": id_bson(r.id), "a": r.author.as_str() };
        if let Some(r) = &body.reply_to {
            d.insert("r", link(r));
        }
        if let Some(r) = &body.repost_of {
            d.insert("o", link(r));
        }
    }
    d
}

/// The post an embedded entry names under `key` (`{i, a}`), if any.
fn linked(d: &Document, key: &str) -> Result<Option<PostRef>> {
    let Ok(r) = d.get_document(key) else {
        return Ok(None);
    };
    Ok(Some(PostRef {
        id: PostId(get_i64(r, "i") as u64),
        author: UserId::from_stored(get_str(r, "a")?.to_owned()),
    }))
}

pub(crate) fn to_entry(d: &Document) -> Result<Entry> {
    let post = PostId(get_i64(d, "p") as u64);
    let author = UserId::from_stored(get_str(d, "a")?.to_owned());
    let body = match d.get("m") {
        Some(Bson::String(message)) => {
            let data = match d.get("d") {
                Some(Bson::String(text)) => match serde_json::from_str(text) {
                    Ok(Value::Object(m)) => Some(m),
                    _ => return Err(Error::internal("embedded post data is not a JSON object")),
                },
                _ => None,
            };
            let mentions = d
                .get_array("n")
                .map(|a| {
                    a.iter()
                        .filter_map(Bson::as_str)
                        .map(|m| UserId::from_stored(m.to_owned()))
                        .collect()
                })
                .unwrap_or_default();
            Some(Arc::new(Body {
                message: message.clone(),
                data,
                mentions,
                reply_to: linked(d, "r")?,
                repost_of: linked(d, "o")?,
            }))
        }
        _ => None,
    };
    Ok(Entry { post, author, body })
}

/// The purges and retractions a warming timeline recorded (a cache
/// document, or a bucketed timeline's head).
pub(crate) fn warming_memory(d: &Document) -> WarmingMemory {
    let purged = d
        .get_array("purged")
        .map(|a| {
            a.iter()
                .filter_map(Bson::as_str)
                .map(|s| UserId::from_stored(s.to_owned()))
                .collect()
        })
        .unwrap_or_else(|_| Vec::new());
    let retracted = d
        .get_array("retracted")
        .map(|a| {
            a.iter()
                .filter_map(Bson::as_i64)
                .map(|p| PostId(p as u64))
                .collect()
        })
        .unwrap_or_else(|_| Vec::new());
    WarmingMemory::new(purged, retracted)
}
