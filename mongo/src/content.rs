//! The content store's port on MongoDB: users, posts, deletions and the
//! outbox, over the collections `crate::store` describes. Users and posts
//! are written by the planners (`crate::txn`).

use crate::db::{db_err, IN_CHUNK};
use crate::store::{get_i64, id_bson, id_filter, to_post, to_user, MongoStore};
use crate::user_rows::present;
use async_trait::async_trait;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use socialite_core::error::Result;
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::collection::{Collection, Kept};
use socialite_core::model::filter::FilterSet;
use socialite_core::model::{Entry, Post, PostCounts, User};
use socialite_core::ports::{
    Collections, Deletions, Filters, IdRange, Likes, Markers, Notices, Posts, Reposts, Users,
};
use socialite_domain::feed::markers::Marker;
use socialite_domain::notifications::notified::{GroupKey, NoticeGroup};

#[async_trait]
impl Users for MongoStore {
    async fn get_user(&self, id: &UserId) -> Result<Option<User>> {
        let found = self
            .db
            .users
            .find_one(doc! { "_id": id.as_str() })
            .await
            .map_err(db_err("reading a user"))?;
        let found = found.filter(present);
        let Some(mut user) = found.as_ref().map(to_user).transpose()? else {
            return Ok(None);
        };
        user.followers = self.with_shards(user.followers, id).await?;
        Ok(Some(user))
    }

    async fn most_followed(&self, at_least: u64, limit: usize) -> Result<Vec<(UserId, u64)>> {
        self.most_followed_among_counts(at_least, limit).await
    }
}

#[async_trait]
impl Deletions for MongoStore {
    async fn pending_deletions(&self) -> Result<Vec<UserId>> {
        self.pending_deletion_list().await
    }
}

#[async_trait]
impl Posts for MongoStore {
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
}

#[async_trait]
impl Likes for MongoStore {
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

    async fn liked_since(&self, user: &UserId, from: PostId, limit: usize) -> Result<Vec<PostId>> {
        self.liked_since_of(user, from, limit).await
    }
}

#[async_trait]
impl Reposts for MongoStore {
    async fn reposted_among(&self, posts: &[PostId]) -> Result<Vec<PostId>> {
        self.reposted_among_of(posts).await
    }

    async fn reposters(&self, post: PostId, limit: usize) -> Result<Vec<(UserId, PostId)>> {
        self.reposters_of(post, limit).await
    }

    async fn reposts_among(&self, post: PostId, users: &[UserId]) -> Result<Vec<(UserId, PostId)>> {
        self.reposts_among_of(post, users).await
    }
}

#[async_trait]
impl Notices for MongoStore {
    async fn muted_threads(
        &self,
        user: &UserId,
        after: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        self.muted_threads_of(user.as_str(), after, limit).await
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
}

#[async_trait]
impl Collections for MongoStore {
    async fn kept(
        &self,
        collection: &Collection,
        user: &UserId,
        before: Option<(u64, PostId)>,
        limit: usize,
    ) -> Result<Vec<Kept>> {
        self.kept_page(collection, user.as_str(), before, limit)
            .await
    }
}

#[async_trait]
impl Markers for MongoStore {
    async fn markers(&self, user: &UserId) -> Result<Vec<Marker>> {
        self.markers_of(user.as_str()).await
    }
}

#[async_trait]
impl Filters for MongoStore {
    async fn filters(&self, user: &UserId) -> Result<Option<FilterSet>> {
        self.filters_of(user.as_str()).await
    }

    async fn filters_rev(&self, user: &UserId) -> Result<Option<u64>> {
        self.filters_rev_of(user.as_str()).await
    }
}
