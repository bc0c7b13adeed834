//! The follow graph on MongoDB, after the reference design: one document per
//! edge in each direction (`followers`: `{user, follower}`, `following`:
//! `{user, followee}`), each with a compound unique index that also serves
//! the lists as covered queries, and counts kept on the `users` documents in
//! the same transaction as the edges and the event.

use crate::db::{db_err, TxnError, IN_CHUNK};
use crate::store::{get_str, MongoStore};
use async_trait::async_trait;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::{ClientSession, Collection};
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_core::ports::GraphStore;
use socialite_core::rules::checks::EdgeChange;

/// The field holding the other end of an edge in each edge collection.
fn other_end(collection: &str) -> &'static str {
    if collection == "followers" {
        "follower"
    } else {
        "followee"
    }
}

impl MongoStore {
    fn edges(&self, collection: &str) -> &Collection<Document> {
        if collection == "followers" {
            &self.db.followers
        } else {
            &self.db.following
        }
    }

    /// Every edge of `user` in `collection`, inside a transaction.
    pub(crate) async fn edge_list(
        &self,
        s: &mut ClientSession,
        collection: &str,
        user: &str,
    ) -> Result<Vec<UserId>, TxnError> {
        let field = other_end(collection);
        let mut cursor = self
            .edges(collection)
            .find(doc! { "user": user })
            .projection(doc! { "_id": 0, field: 1 })
            .sort(doc! { "user": 1, field: 1 })
            .session(&mut *s)
            .await?;
        let mut out = Vec::new();
        while let Some(d) = cursor.next(&mut *s).await {
            out.push(UserId::from_stored(get_str(&d?, field)?.to_owned()));
        }
        Ok(out)
    }

    /// One page of `user`'s edges, in id order: a covered query on the
    /// `{user, other}` index.
    async fn edge_page(
        &self,
        collection: &str,
        user: &UserId,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        let field = other_end(collection);
        let mut filter = doc! { "user": user.as_str() };
        if let Some(a) = after {
            filter.insert(field, doc! { "$gt": a.as_str() });
        }
        let docs: Vec<Document> = self
            .edges(collection)
            .find(filter)
            .projection(doc! { "_id": 0, field: 1 })
            .sort(doc! { "user": 1, field: 1 })
            .limit(limit.min(i64::MAX as usize) as i64)
            .await
            .map_err(db_err("reading edges"))?
            .try_collect()
            .await
            .map_err(db_err("reading edges"))?;
        docs.iter()
            .map(|d| Ok(UserId::from_stored(get_str(d, field)?.to_owned())))
            .collect()
    }

    async fn change_edge_in(
        &self,
        s: &mut ClientSession,
        change: &EdgeChange,
    ) -> Result<bool, TxnError> {
        self.check_users(s, change).await?;
        let (a, b) = (change.follower().as_str(), change.followee().as_str());
        let edge = doc! { "user": a, "followee": b };
        let exists = self
            .db
            .following
            .find_one(edge.clone())
            .projection(doc! { "_id": 0, "user": 1 })
            .session(&mut *s)
            .await?
            .is_some();
        if exists == change.adds() {
            return Ok(false);
        }
        if change.adds() {
            self.db.following.insert_one(edge).session(&mut *s).await?;
            self.db
                .followers
                .insert_one(doc! { "user": b, "follower": a })
                .session(&mut *s)
                .await?;
        } else {
            self.db.following.delete_one(edge).session(&mut *s).await?;
            self.db
                .followers
                .delete_one(doc! { "user": b, "follower": a })
                .session(&mut *s)
                .await?;
        }
        let step = change.count_step();
        self.db
            .users
            .update_one(doc! { "_id": a }, doc! { "$inc": { "following": step } })
            .session(&mut *s)
            .await?;
        self.db
            .users
            .update_one(doc! { "_id": b }, doc! { "$inc": { "followers": step } })
            .session(&mut *s)
            .await?;
        self.emit(s, &[change.event()]).await?;
        Ok(true)
    }

    /// The rule's existence check, with one query for both users.
    async fn check_users(
        &self,
        s: &mut ClientSession,
        change: &EdgeChange,
    ) -> Result<(), TxnError> {
        let ids: Vec<&str> = change.required().iter().map(|u| u.as_str()).collect();
        let mut cursor = self
            .db
            .users
            .find(doc! { "_id": { "$in": &ids } })
            .projection(doc! { "_id": 1 })
            .session(&mut *s)
            .await?;
        let mut found = std::collections::HashSet::new();
        while let Some(d) = cursor.next(&mut *s).await {
            found.insert(get_str(&d?, "_id")?.to_owned());
        }
        change.check_users(|u| Ok(found.contains(u.as_str())))?;
        Ok(())
    }
}

#[async_trait]
impl GraphStore for MongoStore {
    async fn change_edge(&self, change: &EdgeChange) -> Result<bool> {
        let what = if change.adds() {
            "following"
        } else {
            "unfollowing"
        };
        let changed = self
            .db
            .transaction(what, |mut s| async move {
                let r = self.change_edge_in(&mut s, change).await;
                (s, r)
            })
            .await?;
        if changed {
            self.queued();
        }
        Ok(changed)
    }

    async fn followers(
        &self,
        user: &UserId,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        self.edge_page("followers", user, after, limit).await
    }

    async fn following(
        &self,
        user: &UserId,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        self.edge_page("following", user, after, limit).await
    }

    async fn is_following(&self, user: &UserId, target: &UserId) -> Result<bool> {
        let edge = doc! { "user": user.as_str(), "followee": target.as_str() };
        let found = self
            .db
            .following
            .find_one(edge)
            .projection(doc! { "_id": 0, "user": 1 })
            .await
            .map_err(db_err("reading an edge"))?;
        Ok(found.is_some())
    }

    async fn followers_of(&self, users: &[UserId]) -> Result<Vec<Vec<UserId>>> {
        let mut by_user: std::collections::HashMap<&str, Vec<UserId>> =
            users.iter().map(|u| (u.as_str(), Vec::new())).collect();
        for chunk in users.chunks(IN_CHUNK) {
            let ids: Vec<&str> = chunk.iter().map(UserId::as_str).collect();
            let mut cursor = self
                .db
                .followers
                .find(doc! { "user": { "$in": ids } })
                .projection(doc! { "_id": 0, "user": 1, "follower": 1 })
                .await
                .map_err(db_err("reading followers"))?;
            while let Some(d) = cursor
                .try_next()
                .await
                .map_err(db_err("reading followers"))?
            {
                if let Some(list) = by_user.get_mut(get_str(&d, "user")?) {
                    list.push(UserId::from_stored(get_str(&d, "follower")?.to_owned()));
                }
            }
        }
        Ok(users
            .iter()
            .map(|u| by_user.remove(u.as_str()).unwrap_or_default())
            .collect())
    }
}
