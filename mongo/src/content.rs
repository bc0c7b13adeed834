//! The content store's port on MongoDB: users, posts, deletions and the
//! outbox, over the collections `crate::store` describes. Users and posts
//! are written by the planners (`crate::txn`).

use crate::db::{db_err, IN_CHUNK};
use crate::store::{get_i64, id_bson, id_filter, to_post, to_user, MongoStore};
use async_trait::async_trait;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use serde_json::{Map, Value};
use socialite_core::error::Result;
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::{Entry, Post, PostCounts, User};
use socialite_core::plan::repost::Reposted;
use socialite_core::ports::{ContentStore, IdRange};
use socialite_core::rules::cascade::DeletionStage;
use socialite_core::rules::likes::LikeChange;
use socialite_core::rules::markers::Marker;
use socialite_core::rules::notifications::{GroupKey, NoticeChange, NoticeGroup};
use socialite_core::rules::reposts::RepostChange;

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

    async fn most_followed(&self, at_least: u64, limit: usize) -> Result<Vec<(UserId, u64)>> {
        self.most_followed_among_counts(at_least, limit).await
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

    async fn change_like(&self, change: &LikeChange) -> Result<bool> {
        crate::txn::planned!(self, "storing a like", |txn| {
            socialite_core::plan::like::change_like(txn, change)
        })
    }

    async fn likers(
        &self,
        post: PostId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        self.likers_of(post, after, limit).await
    }

    async fn post_counts(&self, posts: &[PostId]) -> Result<Vec<PostCounts>> {
        self.post_counts_of(posts).await
    }

    async fn change_repost(&self, change: &RepostChange, id: PostId) -> Result<Reposted> {
        let done = crate::txn::planned!(self, "storing a repost", |txn| {
            socialite_core::plan::repost::change_repost(txn, change, id)
        })?;
        if done.changed {
            self.queued();
        }
        Ok(done)
    }

    async fn reposted_among(&self, posts: &[PostId]) -> Result<Vec<PostId>> {
        self.reposted_among_of(posts).await
    }

    async fn reposters(&self, post: PostId, limit: usize) -> Result<Vec<(UserId, PostId)>> {
        self.reposters_of(post, limit).await
    }

    async fn reposts_among(&self, post: PostId, users: &[UserId]) -> Result<Vec<(UserId, PostId)>> {
        self.reposts_among_of(post, users).await
    }

    async fn replies_of(
        &self,
        post: PostId,
        after: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        let what = "reading replies";
        let mut filter = doc! { "reply_to.id": id_bson(post) };
        if let Some(a) = after {
            filter.insert("_id", doc! { "$gt": id_bson(a) });
        }
        let docs: Vec<Document> = self
            .db
            .content
            .find(filter)
            .projection(doc! { "_id": 1 })
            .sort(doc! { "_id": 1 })
            .limit(limit.min(i64::MAX as usize) as i64)
            .await
            .map_err(db_err(what))?
            .try_collect()
            .await
            .map_err(db_err(what))?;
        Ok(docs
            .iter()
            .map(|d| PostId(get_i64(d, "_id") as u64))
            .collect())
    }

    async fn apply_notices(&self, changes: &[NoticeChange]) -> Result<usize> {
        crate::txn::planned!(self, "storing notifications", |txn| {
            socialite_core::plan::notify::apply_notices(txn, changes)
        })
    }

    async fn forget_notices(&self, user: &UserId, limit: usize) -> Result<bool> {
        crate::txn::planned!(self, "forgetting notifications", |txn| {
            socialite_core::plan::notify::forget_page(txn, user, limit)
        })
    }

    async fn notice_groups(
        &self,
        user: &UserId,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<NoticeGroup>> {
        self.notice_groups_of(user.as_str(), before, limit).await
    }

    async fn entry_notices(
        &self,
        user: &UserId,
        group: GroupKey,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<(PostId, UserId)>> {
        self.entry_notices_of(user.as_str(), group, before, limit)
            .await
    }

    async fn entry_notices_by(
        &self,
        user: &UserId,
        group: GroupKey,
        actors: &[UserId],
    ) -> Result<Vec<(PostId, UserId)>> {
        self.entry_notices_by_of(user.as_str(), group, actors).await
    }

    async fn set_marker(&self, user: &UserId, to: Marker, force: bool) -> Result<(Marker, bool)> {
        crate::txn::planned!(self, "storing a marker", |txn| {
            socialite_core::plan::marker::set_marker(txn, user, to, force)
        })
    }

    async fn markers(&self, user: &UserId) -> Result<Vec<Marker>> {
        self.markers_of(user.as_str()).await
    }
}
