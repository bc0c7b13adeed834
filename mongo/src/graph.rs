//! The follow graph on MongoDB, after the reference design: one document per
//! edge in each direction (`followers`: `{user, follower, _g}`, `following`:
//! `{user, followee, _g}`), each with a compound unique index that also
//! serves the lists as covered queries, and counts kept on the `users`
//! documents in the same transaction as the edges and the event. `_g`, the
//! reference design's group label, holds the lists the edge is filed under
//! (absent when none); `{user, _g, followee}` serves a list's members, and
//! each list's size is kept on the user's document (`lists: {name: n}`).

use crate::db::{db_err, IN_CHUNK};
use crate::lists::lists_of;
use crate::store::{get_i64, get_str, MongoStore};
use async_trait::async_trait;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::Collection;
use socialite_core::error::Result;
use socialite_core::ids::{GroupName, ListName, UserId};
use socialite_core::ports::{Edges, Groups, HybridMarks, Lists, Mutes};
use socialite_domain::graph::relations::{Relation, Relations};

/// The field holding the other end of an edge in each edge collection.
pub(crate) fn other_end(collection: &str) -> &'static str {
    if collection == "followers" {
        "follower"
    } else {
        "followee"
    }
}

/// One page of the documents `of` (each a user under `field`, at a time
/// `at`), newest first, ties in id order, after `after`: an index on
/// `of`'s fields, `at` descending, then `field`. Follow lists and a post's
/// likers are read so.
pub(crate) async fn newest_first(
    collection: &Collection<Document>,
    mut of: Document,
    field: &str,
    after: Option<&(u64, UserId)>,
    limit: usize,
) -> Result<Vec<(UserId, u64)>> {
    if let Some((at, id)) = after {
        let at = *at as i64;
        of.insert(
            "$or",
            vec![
                doc! { "at": { "$lt": at } },
                doc! { "at": at, field: { "$gt": id.as_str() } },
            ],
        );
    }
    let docs: Vec<Document> = collection
        .find(of)
        .projection(doc! { "_id": 0, field: 1, "at": 1 })
        .sort(doc! { "at": -1, field: 1 })
        .limit(limit.min(i64::MAX as usize) as i64)
        .await
        .map_err(db_err("reading a page newest first"))?
        .try_collect()
        .await
        .map_err(db_err("reading a page newest first"))?;
    docs.iter()
        .map(|d| {
            let id = UserId::from_stored(get_str(d, field)?.to_owned());
            Ok((id, get_i64(d, "at").max(0) as u64))
        })
        .collect()
}

impl MongoStore {
    pub(crate) fn edges(&self, collection: &str) -> &Collection<Document> {
        if collection == "followers" {
            &self.db.followers
        } else {
            &self.db.following
        }
    }

    /// One page of `user`'s edges, newest follow first (ties in id order),
    /// with their times: the `{user, at, other}` index.
    async fn edge_page_by_time(
        &self,
        collection: &str,
        user: &UserId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        let field = other_end(collection);
        let of = doc! { "user": user.as_str() };
        newest_first(self.edges(collection), of, field, after, limit).await
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
}

#[async_trait]
impl Edges for MongoStore {
    async fn following_among(&self, user: &UserId, candidates: &[UserId]) -> Result<Vec<UserId>> {
        self.followees_among(user, candidates).await
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

    async fn followers_by_time(
        &self,
        user: &UserId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        self.edge_page_by_time("followers", user, after, limit)
            .await
    }

    async fn following_by_time(
        &self,
        user: &UserId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        self.edge_page_by_time("following", user, after, limit)
            .await
    }

    async fn edge(&self, user: &UserId, target: &UserId) -> Result<Option<Vec<ListName>>> {
        let edge = doc! { "user": user.as_str(), "followee": target.as_str() };
        let found = self
            .db
            .following
            .find_one(edge)
            .projection(doc! { "_id": 0, "_g": 1 })
            .await
            .map_err(db_err("reading an edge"))?;
        Ok(found.as_ref().map(lists_of))
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

#[async_trait]
impl Lists for MongoStore {
    async fn exclusive_lists(&self, user: &UserId) -> Result<Vec<ListName>> {
        let marked = self.exclusive_lists_in(None, user.as_str()).await;
        marked.map_err(|e| e.into_error("reading exclusive lists"))
    }

    async fn lists(&self, user: &UserId) -> Result<Vec<(ListName, u64)>> {
        self.list_sizes(None, user.as_str())
            .await
            .map_err(|e| e.into_error("reading lists"))
    }

    async fn list_members(
        &self,
        user: &UserId,
        list: &ListName,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        let mut filter = doc! { "user": user.as_str(), "_g": list.as_str() };
        if let Some(a) = after {
            filter.insert("followee", doc! { "$gt": a.as_str() });
        }
        let docs: Vec<Document> = self
            .db
            .following
            .find(filter)
            .projection(doc! { "_id": 0, "followee": 1 })
            .sort(doc! { "followee": 1 })
            .limit(limit.min(i64::MAX as usize) as i64)
            .await
            .map_err(db_err("reading a list"))?
            .try_collect()
            .await
            .map_err(db_err("reading a list"))?;
        docs.iter()
            .map(|d| Ok(UserId::from_stored(get_str(d, "followee")?.to_owned())))
            .collect()
    }

    async fn listed_by(&self, users: &[UserId]) -> Result<Vec<Vec<(UserId, ListName)>>> {
        let mut by_user: std::collections::HashMap<&str, Vec<(UserId, ListName)>> =
            users.iter().map(|u| (u.as_str(), Vec::new())).collect();
        for chunk in users.chunks(IN_CHUNK) {
            let ids: Vec<&str> = chunk.iter().map(UserId::as_str).collect();
            let mut cursor = self
                .db
                .followers
                .find(doc! { "user": { "$in": ids }, "_g.0": { "$exists": true } })
                .projection(doc! { "_id": 0, "user": 1, "follower": 1, "_g": 1 })
                .await
                .map_err(db_err("reading listed followers"))?;
            while let Some(d) = cursor
                .try_next()
                .await
                .map_err(db_err("reading listed followers"))?
            {
                if let Some(list) = by_user.get_mut(get_str(&d, "user")?) {
                    let follower = UserId::from_stored(get_str(&d, "follower")?.to_owned());
                    list.extend(lists_of(&d).into_iter().map(|l| (follower.clone(), l)));
                }
            }
        }
        Ok(users
            .iter()
            .map(|u| by_user.remove(u.as_str()).unwrap_or_default())
            .collect())
    }
}

#[async_trait]
impl Groups for MongoStore {
    async fn group_size(&self, group: &GroupName) -> Result<u64> {
        self.group_size_of(group).await
    }

    async fn group_members(
        &self,
        group: &GroupName,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        self.group_page(group, after, limit).await
    }

    async fn groups_of(&self, users: &[UserId]) -> Result<Vec<Vec<GroupName>>> {
        self.groups_of_users(users).await
    }
}

#[async_trait]
impl Mutes for MongoStore {
    async fn relations(
        &self,
        user: &UserId,
        relation: Relation,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        self.relation_page(("u", "t"), user, relation, after, limit)
            .await
    }

    async fn related(
        &self,
        target: &UserId,
        relation: Relation,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        self.relation_page(("t", "u"), target, relation, after, limit)
            .await
    }

    async fn subscriptions(&self, user: &UserId) -> Result<Vec<(UserId, u64)>> {
        self.subscriptions_of(user).await
    }

    async fn mute_end(&self, user: &UserId, target: &UserId) -> Result<Option<u64>> {
        let end = self.mute_end_in(None, user.as_str(), target.as_str()).await;
        end.map_err(|e| e.into_error("reading a mute's end"))
    }

    async fn mutes_due(&self, now_ms: u64, limit: usize) -> Result<Vec<(UserId, UserId)>> {
        self.mutes_due_by(now_ms, limit).await
    }

    async fn has_relation(
        &self,
        user: &UserId,
        relation: Relation,
        target: &UserId,
    ) -> Result<bool> {
        let key =
            doc! { "u": user.as_str(), "k": i32::from(relation.code()), "t": target.as_str() };
        let found = self
            .db
            .relations
            .find_one(key)
            .projection(doc! { "_id": 1 })
            .await
            .map_err(db_err("reading a mute or block"))?;
        Ok(found.is_some())
    }

    async fn relations_of(&self, user: &UserId) -> Result<Relations> {
        self.relations_touching(user).await
    }

    async fn related_to_each(
        &self,
        users: &[UserId],
        relation: Relation,
    ) -> Result<Vec<Vec<UserId>>> {
        self.related_of_each(users, relation).await
    }
}

#[async_trait]
impl HybridMarks for MongoStore {
    async fn hybrid_authors(&self) -> Result<Vec<UserId>> {
        self.marked_authors().await
    }

    async fn set_hybrid(&self, author: &UserId, on: bool) -> Result<()> {
        self.mark_author(author, on).await
    }
}
