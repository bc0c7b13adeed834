//! MongoDB's primitives for the planned writes (`socialite_core::plan`):
//! facts read in the session's transaction, and each step written as the
//! documents it touches. The planner decides the sequence; here is only how
//! a fact is read and a step stored.

use crate::db::TxnError;
use crate::lists::lists_of;
use crate::relations::code;
use crate::store::{get_str, MongoStore};
use crate::user_rows::present;
use mongodb::bson::doc;
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::{GroupName, ListName, PostId, UserId};
use socialite_core::model::collection::Collection;
use socialite_core::model::filter::FilterSet;
use socialite_core::model::Post;
use socialite_core::plan::Ledger;
use socialite_core::plan::Side;
use socialite_core::plan::{Step, Txn};
use socialite_core::ports::Standing;
use socialite_domain::feed::markers::{Marker, MarkerTimeline};
use socialite_domain::graph::relations::Relation;
use socialite_domain::notifications::notified::{GroupKey, Notice, NoticeGroup, NoticeKey};

mod ahead;
mod pending;
mod steps;
mod transact;

/// One transaction of the store, as the planners see it.
pub(crate) struct MongoTxn<'a> {
    pub store: &'a MongoStore,
    pub s: &'a mut ClientSession,
    ledger: Ledger,
    /// What a run's rules were read ahead for, kept true across writes.
    ahead: ahead::ReadAhead,
    /// A run's new posts not written yet (`pending.rs`).
    pending: Vec<Post>,
}

impl Txn for MongoTxn<'_> {
    type Error = TxnError;

    async fn existing_users(&mut self, users: &[&UserId]) -> Result<Vec<UserId>, TxnError> {
        if let Some(found) = self.ahead.existing(users) {
            return Ok(found);
        }
        self.flush_posts().await?;
        let ids: Vec<&str> = users.iter().map(|u| u.as_str()).collect();
        let mut cursor = self
            .store
            .db
            .users
            .find(doc! { "_id": { "$in": &ids } })
            .projection(doc! { "_id": 1, "deleting": 1 })
            .session(&mut *self.s)
            .await?;
        let mut found = Vec::with_capacity(users.len());
        while let Some(d) = cursor.next(&mut *self.s).await {
            let d = d?;
            if present(&d) {
                found.push(UserId::from_stored(get_str(&d, "_id")?.to_owned()));
            }
        }
        Ok(found)
    }

    async fn edge_lists(
        &mut self,
        follower: &UserId,
        followee: &UserId,
    ) -> Result<Option<Vec<ListName>>, TxnError> {
        if !self.ahead.edges.is_empty() {
            if let Some(held) = self.ahead.edges.get(&(follower.clone(), followee.clone())) {
                return Ok(held.clone());
            }
        }
        self.flush_posts().await?;
        let found = self
            .store
            .db
            .following
            .find_one(doc! { "user": follower.as_str(), "followee": followee.as_str() })
            .projection(doc! { "_id": 0, "_g": 1 })
            .session(&mut *self.s)
            .await?;
        Ok(found.as_ref().map(lists_of))
    }

    async fn blocked_either_way(&mut self, a: &UserId, b: &UserId) -> Result<bool, TxnError> {
        if !self.ahead.blocked.is_empty() {
            if let Some(held) = self.ahead.blocked.get(&(a.clone(), b.clone())) {
                return Ok(*held);
            }
        }
        self.flush_posts().await?;
        let (a, b) = (a.as_str(), b.as_str());
        self.store.blocked_either_way(self.s, a, b).await
    }

    async fn following_count(&mut self, user: &UserId) -> Result<u64, TxnError> {
        if let Some((n, _)) = self.ahead.followers.get(user) {
            return Ok(*n);
        }
        self.flush_posts().await?;
        self.store.following_count(self.s, user.as_str()).await
    }

    async fn list_names(&mut self, user: &UserId) -> Result<Vec<ListName>, TxnError> {
        if let Some((_, lists)) = self.ahead.followers.get(user) {
            return Ok(lists.clone());
        }
        self.flush_posts().await?;
        let held = self.store.list_sizes(Some(&mut *self.s), user.as_str());
        Ok(held.await?.into_iter().map(|(l, _)| l).collect())
    }

    async fn relation_exists(
        &mut self,
        user: &UserId,
        relation: Relation,
        target: &UserId,
    ) -> Result<bool, TxnError> {
        self.flush_posts().await?;
        let key = doc! { "u": user.as_str(), "k": code(relation), "t": target.as_str() };
        let found = self.store.db.relations.find_one(key);
        Ok(found.session(&mut *self.s).await?.is_some())
    }

    async fn mute_end(&mut self, user: &UserId, target: &UserId) -> Result<Option<u64>, TxnError> {
        self.flush_posts().await?;
        let s = Some(&mut *self.s);
        self.store
            .mute_end_in(s, user.as_str(), target.as_str())
            .await
    }

    async fn relation_count(
        &mut self,
        user: &UserId,
        relation: Relation,
        cap: usize,
    ) -> Result<usize, TxnError> {
        self.flush_posts().await?;
        let n = self
            .store
            .db
            .relations
            .count_documents(doc! { "u": user.as_str(), "k": code(relation) })
            .limit(cap as u64)
            .session(&mut *self.s)
            .await?;
        Ok(n as usize)
    }

    async fn is_member(&mut self, group: &GroupName, user: &UserId) -> Result<bool, TxnError> {
        if !self.ahead.members.is_empty() {
            if let Some(held) = self.ahead.members.get(&(group.clone(), user.clone())) {
                return Ok(*held);
            }
        }
        self.flush_posts().await?;
        let member = doc! { "group": group.as_str(), "user": user.as_str() };
        let found = self.store.db.group_members.find_one(member);
        let found = found.projection(doc! { "_id": 1 }).session(&mut *self.s);
        Ok(found.await?.is_some())
    }

    async fn group_count(&mut self, user: &UserId, cap: usize) -> Result<usize, TxnError> {
        if let Some(n) = self.ahead.group_counts.get(user) {
            return Ok((*n).min(cap));
        }
        self.flush_posts().await?;
        let n = self
            .store
            .db
            .group_members
            .count_documents(doc! { "user": user.as_str() })
            .limit(cap as u64)
            .session(&mut *self.s)
            .await?;
        Ok(n as usize)
    }

    async fn deleting(&mut self, user: &UserId) -> Result<Option<Vec<ListName>>, TxnError> {
        self.flush_posts().await?;
        self.store.deleting_lists(self.s, user.as_str()).await
    }

    async fn edge_page(
        &mut self,
        user: &UserId,
        side: Side,
        limit: usize,
    ) -> Result<Vec<(UserId, Vec<ListName>)>, TxnError> {
        self.flush_posts().await?;
        let collection = match side {
            Side::Followers => "followers",
            Side::Following => "following",
        };
        let page = self
            .store
            .edges_to_cut(self.s, collection, user.as_str(), limit);
        page.await
    }

    async fn groups_of(&mut self, user: &UserId) -> Result<Vec<GroupName>, TxnError> {
        self.flush_posts().await?;
        self.store.groups_in(self.s, user.as_str()).await
    }

    async fn relations_kept(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(Relation, UserId)>, TxnError> {
        self.flush_posts().await?;
        self.store
            .relations_kept(self.s, user.as_str(), limit)
            .await
    }

    async fn posts_by(&mut self, user: &UserId, limit: usize) -> Result<Vec<PostId>, TxnError> {
        self.flush_posts().await?;
        let (filter, sort) = (
            doc! { "author": user.as_str() },
            doc! { "author": 1, "_id": 1 },
        );
        self.store.post_page(self.s, filter, sort, limit).await
    }

    async fn answered_among(&mut self, posts: &[PostId]) -> Result<Vec<PostId>, TxnError> {
        self.flush_posts().await?;
        self.store.answered_among_in(self.s, posts).await
    }

    async fn posts_mentioning(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<PostId>, TxnError> {
        self.flush_posts().await?;
        let (filter, sort) = (
            doc! { "mentions": user.as_str() },
            doc! { "mentions": 1, "_id": -1 },
        );
        self.store.post_page(self.s, filter, sort, limit).await
    }

    async fn profile(
        &mut self,
        user: &UserId,
    ) -> Result<Option<Option<serde_json::Map<String, serde_json::Value>>>, TxnError> {
        self.flush_posts().await?;
        let filter = doc! { "_id": user.as_str() };
        let found = self
            .store
            .db
            .users
            .find_one(filter)
            .projection(doc! { "profile": 1, "deleting": 1 });
        let found = found.session(&mut *self.s).await?;
        Ok(found
            .filter(present)
            .map(|d| crate::store::json_map(&d, "profile"))
            .transpose()?)
    }

    async fn standing(&mut self, user: &UserId) -> Result<Standing, TxnError> {
        self.flush_posts().await?;
        let found = self
            .store
            .db
            .accounts
            .find_one(doc! { "_id": user.as_str() });
        let found = found.session(&mut *self.s).await?;
        Ok(found
            .as_ref()
            .map(crate::store::standing)
            .unwrap_or_default())
    }

    async fn post(&mut self, id: PostId) -> Result<Option<Post>, TxnError> {
        if let Some(held) = self.ahead.posts.get(&id) {
            return Ok(held.clone());
        }
        self.flush_posts().await?;
        self.store.post_in(self.s, id).await
    }

    async fn kept_at(
        &mut self,
        collection: &Collection,
        user: &UserId,
        post: PostId,
    ) -> Result<Option<u64>, TxnError> {
        self.flush_posts().await?;
        let at = self
            .store
            .kept_at_in(self.s, collection, user.as_str(), post);
        at.await
    }

    async fn kept_count(
        &mut self,
        collection: &Collection,
        user: &UserId,
    ) -> Result<u64, TxnError> {
        self.flush_posts().await?;
        self.store
            .kept_count_in(self.s, collection, user.as_str())
            .await
    }

    async fn exclusive_lists(&mut self, user: &UserId) -> Result<Vec<ListName>, TxnError> {
        self.flush_posts().await?;
        let s = Some(&mut *self.s);
        self.store.exclusive_lists_in(s, user.as_str()).await
    }

    async fn thread_mutes(&mut self, user: &UserId, limit: usize) -> Result<Vec<PostId>, TxnError> {
        if let Some(held) = self.ahead.thread_mutes.get(user) {
            return Ok(held.iter().take(limit).copied().collect());
        }
        self.flush_posts().await?;
        let s = Some(&mut *self.s);
        self.store
            .thread_mutes_in(s, user.as_str(), None, limit)
            .await
    }

    async fn filters(&mut self, user: &UserId) -> Result<Option<FilterSet>, TxnError> {
        self.flush_posts().await?;
        self.store.filters_in(self.s, user.as_str()).await
    }

    async fn marker(
        &mut self,
        user: &UserId,
        timeline: MarkerTimeline,
    ) -> Result<Option<Marker>, TxnError> {
        self.flush_posts().await?;
        self.store.marker_in(self.s, user.as_str(), timeline).await
    }

    async fn liked(&mut self, post: PostId, user: &UserId) -> Result<Option<u64>, TxnError> {
        self.flush_posts().await?;
        self.store.liked_in(self.s, post, user.as_str()).await
    }

    async fn likes_by(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(PostId, bool)>, TxnError> {
        self.flush_posts().await?;
        self.store.likes_by_in(self.s, user.as_str(), limit).await
    }

    async fn notice(&mut self, key: &NoticeKey) -> Result<Option<PostId>, TxnError> {
        if !self.ahead.notices.is_empty() {
            if let Some(held) = self.ahead.notices.get(&crate::notices::notice_id(key)) {
                return Ok(*held);
            }
        }
        self.flush_posts().await?;
        self.store.notice_in(self.s, key).await
    }

    async fn notice_group(
        &mut self,
        recipient: &UserId,
        group: GroupKey,
    ) -> Result<Option<NoticeGroup>, TxnError> {
        if !self.ahead.groups.is_empty() {
            let id = crate::notices::group_id(recipient.as_str(), group);
            if let Some(held) = self.ahead.groups.get(&id) {
                return Ok(held.clone());
            }
        }
        self.flush_posts().await?;
        let held = self
            .store
            .notice_group_in(self.s, recipient.as_str(), group);
        held.await
    }

    async fn group_notices(
        &mut self,
        recipient: &UserId,
        group: GroupKey,
        limit: usize,
    ) -> Result<Vec<(PostId, UserId)>, TxnError> {
        self.flush_posts().await?;
        let newest = self
            .store
            .group_notices_in(self.s, recipient.as_str(), group, limit);
        newest.await
    }

    async fn notices_of(&mut self, user: &UserId, limit: usize) -> Result<Vec<Notice>, TxnError> {
        self.flush_posts().await?;
        self.store.notices_of_in(self.s, user.as_str(), limit).await
    }

    async fn reposted(&mut self, post: PostId, user: &UserId) -> Result<Option<PostId>, TxnError> {
        self.flush_posts().await?;
        self.store.reposted_in(self.s, post, user.as_str()).await
    }

    async fn reposts_by(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(PostId, PostId, bool)>, TxnError> {
        self.flush_posts().await?;
        self.store.reposts_by_in(self.s, user.as_str(), limit).await
    }

    async fn read_ahead_edges(&mut self, pairs: &[(&UserId, &UserId)]) -> Result<(), TxnError> {
        self.flush_posts().await?;
        self.read_edges_ahead(pairs).await
    }

    async fn read_ahead_posts(
        &mut self,
        posts: &[PostId],
        users: &[&UserId],
    ) -> Result<(), TxnError> {
        self.flush_posts().await?;
        self.read_posts_ahead(posts, users).await
    }

    async fn read_ahead_members(
        &mut self,
        pairs: &[(&GroupName, &UserId)],
    ) -> Result<(), TxnError> {
        self.flush_posts().await?;
        self.read_members_ahead(pairs).await
    }

    async fn read_ahead_notices(
        &mut self,
        keys: &[&NoticeKey],
        groups: &[(&UserId, GroupKey)],
    ) -> Result<(), TxnError> {
        self.flush_posts().await?;
        self.read_notices_ahead(keys, groups).await
    }

    async fn write_steps(&mut self, steps: &[Step]) -> Result<(), TxnError> {
        self.ahead.after(steps);
        self.write_or_hold(steps).await
    }

    fn ledger(&mut self) -> &mut Ledger {
        &mut self.ledger
    }
}
