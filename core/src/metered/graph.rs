//! The graph store's ports, metered: every call timed and its failures
//! counted as the other ports' are.

use super::{timed, Metered};
use crate::error::Result;
use crate::ids::{GroupName, ListName, UserId};
use crate::ports::*;

use crate::rules::relations::{Relation, Relations};
use async_trait::async_trait;

#[async_trait]
impl Edges for Metered<dyn GraphStore> {
    async fn followers(
        &self,
        user: &UserId,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        timed("graph", "followers", self.0.followers(user, after, limit)).await
    }
    async fn following(
        &self,
        user: &UserId,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        timed("graph", "following", self.0.following(user, after, limit)).await
    }
    async fn is_following(&self, user: &UserId, target: &UserId) -> Result<bool> {
        timed("graph", "is_following", self.0.is_following(user, target)).await
    }
    async fn followers_by_time(
        &self,
        user: &UserId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        timed(
            "graph",
            "followers_by_time",
            self.0.followers_by_time(user, after, limit),
        )
        .await
    }
    async fn following_by_time(
        &self,
        user: &UserId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        timed(
            "graph",
            "following_by_time",
            self.0.following_by_time(user, after, limit),
        )
        .await
    }
    async fn edge(&self, user: &UserId, target: &UserId) -> Result<Option<Vec<ListName>>> {
        timed("graph", "edge", self.0.edge(user, target)).await
    }
    async fn following_among(&self, user: &UserId, candidates: &[UserId]) -> Result<Vec<UserId>> {
        let call = self.0.following_among(user, candidates);
        timed("graph", "following_among", call).await
    }
    async fn followers_of(&self, users: &[UserId]) -> Result<Vec<Vec<UserId>>> {
        timed("graph", "followers_of", self.0.followers_of(users)).await
    }
}

#[async_trait]
impl Lists for Metered<dyn GraphStore> {
    async fn lists(&self, user: &UserId) -> Result<Vec<(ListName, u64)>> {
        timed("graph", "lists", self.0.lists(user)).await
    }
    async fn list_members(
        &self,
        user: &UserId,
        list: &ListName,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        timed(
            "graph",
            "list_members",
            self.0.list_members(user, list, after, limit),
        )
        .await
    }
    async fn listed_by(&self, users: &[UserId]) -> Result<Vec<Vec<(UserId, ListName)>>> {
        timed("graph", "listed_by", self.0.listed_by(users)).await
    }
}

#[async_trait]
impl Groups for Metered<dyn GraphStore> {
    async fn group_size(&self, group: &GroupName) -> Result<u64> {
        timed("graph", "group_size", self.0.group_size(group)).await
    }
    async fn group_members(
        &self,
        group: &GroupName,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        timed(
            "graph",
            "group_members",
            self.0.group_members(group, after, limit),
        )
        .await
    }
    async fn groups_of(&self, users: &[UserId]) -> Result<Vec<Vec<GroupName>>> {
        timed("graph", "groups_of", self.0.groups_of(users)).await
    }
}

#[async_trait]
impl Mutes for Metered<dyn GraphStore> {
    async fn relations(
        &self,
        user: &UserId,
        relation: Relation,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        let call = self.0.relations(user, relation, after, limit);
        timed("graph", "relations", call).await
    }
    async fn related(
        &self,
        target: &UserId,
        relation: Relation,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        let call = self.0.related(target, relation, after, limit);
        timed("graph", "related", call).await
    }
    async fn has_relation(
        &self,
        user: &UserId,
        relation: Relation,
        target: &UserId,
    ) -> Result<bool> {
        let call = self.0.has_relation(user, relation, target);
        timed("graph", "has_relation", call).await
    }
    async fn relations_of(&self, user: &UserId) -> Result<Relations> {
        timed("graph", "relations_of", self.0.relations_of(user)).await
    }
    async fn muted_by(&self, users: &[UserId]) -> Result<Vec<Vec<UserId>>> {
        timed("graph", "muted_by", self.0.muted_by(users)).await
    }
}

#[async_trait]
impl HybridMarks for Metered<dyn GraphStore> {
    async fn hybrid_authors(&self) -> Result<Vec<UserId>> {
        timed("graph", "hybrid_authors", self.0.hybrid_authors()).await
    }
    async fn set_hybrid(&self, author: &UserId, on: bool) -> Result<()> {
        timed("graph", "set_hybrid", self.0.set_hybrid(author, on)).await
    }
}
