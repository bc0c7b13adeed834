//! Users, posts and the outbox on MongoDB. Every write that queues an event
//! does so in the same transaction, so an acknowledged change always reaches
//! the log.
//!
//! `users`: `{_id: user id, profile: JSON text, followers, following}`
//! (follower counts are mostly in `counts`, see `crate::counts`).
//! `content`: `{_id: post id (Int64), author, message, data: JSON text}`,
//! indexed by `{author, _id}`. Application JSON is kept as text: it round-trips
//! exactly (numbers, key order, keys MongoDB would refuse).
//! `outbox`: `{_id: sequence (Int64), event: protobuf bytes}`.
//! `leases`: `{_id: "relay", owner, until}`: one relay at a time.

use crate::db::{Db, TxnError, IN_CHUNK};
use mongodb::bson::{doc, spec::BinarySubtype, Binary, Bson, Document};
use mongodb::ClientSession;
use serde_json::{Map, Value};
use socialite_core::error::{Error, Result};
use socialite_core::event::Event;
use socialite_core::ids::{now_ms, PostId, UserId};
use socialite_core::model::{Post, PostRef, User};
use socialite_core::ports::IdRange;
use socialite_core::ports::Standing;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use tokio::sync::Notify;

pub struct MongoStore {
    pub(crate) db: Db,
    pub(crate) outbox_ready: Arc<Notify>,
    /// This process, as a lease owner.
    pub(crate) owner: String,
    last_seq: AtomicU64,
}

impl MongoStore {
    pub fn new(db: Db) -> MongoStore {
        let owner = format!(
            "{}-{}-{}",
            std::env::var("HOSTNAME").unwrap_or_else(|_| "host".into()),
            std::process::id(),
            now_ms()
        );
        MongoStore {
            db,
            outbox_ready: Arc::new(Notify::new()),
            owner,
            last_seq: AtomicU64::new(0),
        }
    }

    /// A new outbox sequence number: milliseconds and a counter, increasing
    /// in this process. Other producers interleave, which the relay's
    /// acknowledgement by number allows for.
    fn next_seq(&self) -> i64 {
        let floor = now_ms() << 20;
        let mut prev = self.last_seq.load(Ordering::Relaxed);
        loop {
            let next = floor.max(prev + 1);
            match self
                .last_seq
                .compare_exchange(prev, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return next as i64,
                Err(seen) => prev = seen,
            }
        }
    }

    pub(crate) async fn emit(
        &self,
        s: &mut ClientSession,
        events: &[Event],
    ) -> Result<(), TxnError> {
        if events.is_empty() {
            return Ok(());
        }
        let docs: Vec<Document> = events
            .iter()
            .map(|e| {
                doc! {
                    "_id": self.next_seq(),
                    "event": Binary { subtype: BinarySubtype::Generic, bytes: e.encode() },
                }
            })
            .collect();
        for chunk in docs.chunks(IN_CHUNK) {
            self.db.outbox.insert_many(chunk).session(&mut *s).await?;
        }
        Ok(())
    }
}

pub(crate) fn json_text(map: &Option<Map<String, Value>>) -> Bson {
    match map {
        Some(m) => Bson::String(Value::Object(m.clone()).to_string()),
        None => Bson::Null,
    }
}

pub(crate) fn json_map(doc: &Document, key: &str) -> Result<Option<Map<String, Value>>> {
    match doc.get(key) {
        Some(Bson::String(text)) => match serde_json::from_str(text) {
            Ok(Value::Object(m)) => Ok(Some(m)),
            _ => Err(Error::internal(format!(
                "stored {key} is not a JSON object"
            ))),
        },
        _ => Ok(None),
    }
}

pub(crate) fn get_i64(doc: &Document, key: &str) -> i64 {
    match doc.get(key) {
        Some(Bson::Int64(n)) => *n,
        Some(Bson::Int32(n)) => i64::from(*n),
        Some(Bson::Double(n)) => *n as i64,
        _ => 0,
    }
}

pub(crate) fn get_str<'a>(doc: &'a Document, key: &str) -> Result<&'a str> {
    doc.get_str(key)
        .map_err(|_| Error::internal(format!("stored document lacks `{key}`")))
}

pub(crate) fn to_user(doc: &Document) -> Result<User> {
    Ok(User {
        id: UserId::from_stored(get_str(doc, "_id")?.to_owned()),
        followers: get_i64(doc, "followers").max(0) as u64,
        following: get_i64(doc, "following").max(0) as u64,
        profile: json_map(doc, "profile")?,
    })
}

pub(crate) fn to_post(doc: &Document) -> Result<Post> {
    Ok(Post {
        id: PostId(get_i64(doc, "_id") as u64),
        author: UserId::from_stored(get_str(doc, "author")?.to_owned()),
        message: get_str(doc, "message")?.to_owned(),
        data: json_map(doc, "data")?,
        mentions: doc
            .get_array("mentions")
            .map(|a| {
                a.iter()
                    .filter_map(Bson::as_str)
                    .map(|m| UserId::from_stored(m.to_owned()))
                    .collect()
            })
            .unwrap_or_default(),
        reply_to: post_ref(doc, "reply_to")?,
        repost_of: post_ref(doc, "repost_of")?,
    })
}

/// A post named under `key` (`{id, author}`), if there is one.
fn post_ref(doc: &Document, key: &str) -> Result<Option<PostRef>> {
    let Ok(r) = doc.get_document(key) else {
        return Ok(None);
    };
    Ok(Some(PostRef {
        id: PostId(get_i64(r, "id") as u64),
        author: UserId::from_stored(get_str(r, "author")?.to_owned()),
    }))
}

/// The inclusive-exclusive id filter of a range, or `None` when it is empty.
pub(crate) fn id_filter(range: IdRange) -> Option<Document> {
    if range.below == Some(PostId(0)) {
        return None;
    }
    let mut ids = doc! {};
    if let Some(b) = range.below {
        ids.insert("$lt", id_bson(b));
    }
    if let Some(f) = range.from {
        ids.insert("$gte", id_bson(f));
    }
    Some(ids)
}

/// Post ids are below 2^63 for the next 69 years; stored as Int64.
pub(crate) fn id_bson(id: PostId) -> i64 {
    id.0 as i64
}

/// An `accounts` document's standing.
pub(crate) fn standing(d: &Document) -> Standing {
    Standing {
        tokens_after_ms: get_i64(d, "after").max(0) as u64,
        suspended: d.get_bool("suspended").unwrap_or(false),
    }
}
