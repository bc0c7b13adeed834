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

use crate::db::{db_err, Db, TxnError, IN_CHUNK};
use async_trait::async_trait;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, spec::BinarySubtype, Binary, Bson, Document};
use mongodb::ClientSession;
use serde_json::{Map, Value};
use socialite_core::error::{Error, Result};
use socialite_core::event::Event;
use socialite_core::ids::{now_ms, PostId, UserId};
use socialite_core::model::{Entry, Post, User};
use socialite_core::ports::{ContentStore, IdRange};
use socialite_core::rules::cascade::DeletionStage;
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

    /// Call after a transaction that queued events committed.
    pub(crate) fn queued(&self) {
        self.outbox_ready.notify_one();
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
    })
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

#[async_trait]
impl ContentStore for MongoStore {
    async fn put_user(
        &self,
        id: &UserId,
        profile: Option<Map<String, Value>>,
    ) -> Result<(User, bool)> {
        let profile = &profile;
        let (created, profile) = crate::txn::planned!(self, "storing a user", |txn| {
            socialite_core::plan::account::put_user(txn, id, profile.clone())
        })?;
        let mut user = User {
            id: id.clone(),
            followers: 0,
            following: 0,
            profile,
        };
        // The answer is what was written: the counts of a user already
        // there are read after, and a deletion committed since leaves them 0.
        if !created {
            if let Some(held) = self.get_user(id).await? {
                (user.followers, user.following) = (held.followers, held.following);
            }
        }
        Ok((user, created))
    }

    async fn get_user(&self, id: &UserId) -> Result<Option<User>> {
        let found = self
            .db
            .users
            .find_one(doc! { "_id": id.as_str(), "deleting": { "$ne": true } })
            .await
            .map_err(db_err("reading a user"))?;
        let Some(mut user) = found.as_ref().map(to_user).transpose()? else {
            return Ok(None);
        };
        user.followers = self.with_shards(user.followers, id).await?;
        Ok(Some(user))
    }

    async fn begin_deletion(&self, id: &UserId) -> Result<bool> {
        self.begin_deletion_of(id).await
    }

    async fn deletion_step(&self, id: &UserId, stage: DeletionStage, limit: usize) -> Result<bool> {
        let more = self.deletion_step_of(id, stage, limit).await?;
        self.queued();
        Ok(more)
    }

    async fn pending_deletions(&self) -> Result<Vec<UserId>> {
        self.pending_deletion_list().await
    }

    async fn create_post(&self, post: Post) -> Result<Post> {
        let stored = self.create_post_of(&post).await?;
        self.queued();
        Ok(stored)
    }

    async fn mentions_of(
        &self,
        user: &UserId,
        range: IdRange,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        let Some(ids) = id_filter(range).filter(|_| limit > 0) else {
            return Ok(Vec::new());
        };
        let mut filter = doc! { "mentions": user.as_str() };
        if !ids.is_empty() {
            filter.insert("_id", ids);
        }
        let docs: Vec<Document> = self
            .db
            .content
            .find(filter)
            .projection(doc! { "_id": 1 })
            .sort(doc! { "_id": -1 })
            .limit(limit.min(i64::MAX as usize) as i64)
            .await
            .map_err(db_err("reading mentions"))?
            .try_collect()
            .await
            .map_err(db_err("reading mentions"))?;
        Ok(docs
            .iter()
            .map(|d| PostId(get_i64(d, "_id") as u64))
            .collect())
    }

    async fn get_posts(&self, ids: &[PostId]) -> Result<Vec<Post>> {
        let mut found = std::collections::HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(IN_CHUNK) {
            let wanted: Vec<i64> = chunk.iter().map(|p| id_bson(*p)).collect();
            let docs: Vec<Document> = self
                .db
                .content
                .find(doc! { "_id": { "$in": wanted } })
                .await
                .map_err(db_err("reading posts"))?
                .try_collect()
                .await
                .map_err(db_err("reading posts"))?;
            for d in &docs {
                let post = to_post(d)?;
                found.insert(post.id, post);
            }
        }
        // Each id asked for gets its post, repeats included, as on every store.
        Ok(ids.iter().filter_map(|id| found.get(id).cloned()).collect())
    }

    async fn delete_post(&self, id: PostId) -> Result<Option<Post>> {
        let deleted = self.delete_post_of(id).await?;
        if deleted.is_some() {
            self.queued();
        }
        Ok(deleted)
    }

    async fn post_ids_by(
        &self,
        authors: &[UserId],
        range: IdRange,
        limit_each: usize,
    ) -> Result<Vec<Entry>> {
        self.newest_of_each(authors, range, limit_each).await
    }

    async fn newest_by(
        &self,
        authors: &[UserId],
        range: IdRange,
        limit: usize,
    ) -> Result<Vec<Entry>> {
        self.newest_of_all(authors, range, limit).await
    }

    async fn newest_post_id(&self) -> Result<Option<PostId>> {
        let newest = self
            .db
            .content
            .find_one(doc! {})
            .projection(doc! { "_id": 1 })
            .sort(doc! { "_id": -1 })
            .await
            .map_err(db_err("reading the newest post"))?;
        Ok(newest.map(|d| PostId(get_i64(&d, "_id") as u64)))
    }
}
