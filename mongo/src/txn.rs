//! MongoDB's primitives for the planned writes (`socialite_core::plan`):
//! facts read in the session's transaction, and each step written as the
//! documents it touches. The planner decides the sequence; here is only how
//! a fact is read and a step stored.

use crate::db::TxnError;
use crate::lists::{lists_of, names};
use crate::store::{get_str, MongoStore};
use mongodb::bson::doc;
use mongodb::ClientSession;
use socialite_core::ids::{GroupName, ListName, UserId};
use socialite_core::plan::{Step, Txn};
use socialite_core::rules::relations::Relation;

/// One transaction of the store, as the planners see it.
pub(crate) struct MongoTxn<'a> {
    pub store: &'a MongoStore,
    pub s: &'a mut ClientSession,
}

fn code(r: Relation) -> i32 {
    i32::from(r.code())
}

impl Txn for MongoTxn<'_> {
    type Error = TxnError;

    async fn existing_users(&mut self, users: &[&UserId]) -> Result<Vec<UserId>, TxnError> {
        let ids: Vec<&str> = users.iter().map(|u| u.as_str()).collect();
        let mut cursor = self
            .store
            .db
            .users
            .find(doc! { "_id": { "$in": &ids }, "deleting": { "$ne": true } })
            .projection(doc! { "_id": 1 })
            .session(&mut *self.s)
            .await?;
        let mut found = Vec::with_capacity(users.len());
        while let Some(d) = cursor.next(&mut *self.s).await {
            found.push(UserId::from_stored(get_str(&d?, "_id")?.to_owned()));
        }
        Ok(found)
    }

    async fn edge_lists(
        &mut self,
        follower: &UserId,
        followee: &UserId,
    ) -> Result<Option<Vec<ListName>>, TxnError> {
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
        let (a, b) = (a.as_str(), b.as_str());
        self.store.blocked_either_way(self.s, a, b).await
    }

    async fn following_count(&mut self, user: &UserId) -> Result<u64, TxnError> {
        self.store.following_count(self.s, user.as_str()).await
    }

    async fn list_names(&mut self, user: &UserId) -> Result<Vec<ListName>, TxnError> {
        let held = self.store.list_sizes(Some(&mut *self.s), user.as_str());
        Ok(held.await?.into_iter().map(|(l, _)| l).collect())
    }

    async fn relation_exists(
        &mut self,
        user: &UserId,
        relation: Relation,
        target: &UserId,
    ) -> Result<bool, TxnError> {
        let key = doc! { "u": user.as_str(), "k": code(relation), "t": target.as_str() };
        let found = self.store.db.relations.find_one(key);
        Ok(found.session(&mut *self.s).await?.is_some())
    }

    async fn relation_count(
        &mut self,
        user: &UserId,
        relation: Relation,
        cap: usize,
    ) -> Result<usize, TxnError> {
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
        let member = doc! { "group": group.as_str(), "user": user.as_str() };
        let found = self.store.db.group_members.find_one(member);
        let found = found.projection(doc! { "_id": 1 }).session(&mut *self.s);
        Ok(found.await?.is_some())
    }

    async fn group_count(&mut self, user: &UserId, cap: usize) -> Result<usize, TxnError> {
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

    async fn apply(&mut self, steps: &[Step]) -> Result<(), TxnError> {
        for step in steps {
            self.apply_step(step).await?;
        }
        Ok(())
    }
}

impl MongoTxn<'_> {
    async fn apply_step(&mut self, step: &Step) -> Result<(), TxnError> {
        let (db, s) = (&self.store.db, &mut *self.s);
        match step {
            Step::AddEdge {
                follower,
                followee,
                lists,
                at_ms,
            } => {
                let (f, t, at) = (follower.as_str(), followee.as_str(), *at_ms as i64);
                let mut edge = doc! { "user": f, "followee": t, "at": at };
                let mut reverse = doc! { "user": t, "follower": f, "at": at };
                if !lists.is_empty() {
                    edge.insert("_g", names(lists));
                    reverse.insert("_g", names(lists));
                }
                db.following.insert_one(edge).session(&mut *s).await?;
                db.followers.insert_one(reverse).session(&mut *s).await?;
            }
            Step::RefileEdge {
                follower,
                followee,
                lists,
            } => {
                let (f, t) = (follower.as_str(), followee.as_str());
                let set = match lists.is_empty() {
                    true => doc! { "$unset": { "_g": "" } },
                    false => doc! { "$set": { "_g": names(lists) } },
                };
                let edge = doc! { "user": f, "followee": t };
                db.following
                    .update_one(edge, set.clone())
                    .session(&mut *s)
                    .await?;
                let reverse = doc! { "user": t, "follower": f };
                db.followers
                    .update_one(reverse, set)
                    .session(&mut *s)
                    .await?;
            }
            Step::RemoveEdge { follower, followee } => {
                let (f, t) = (follower.as_str(), followee.as_str());
                let edge = doc! { "user": f, "followee": t };
                db.following.delete_one(edge).session(&mut *s).await?;
                let reverse = doc! { "user": t, "follower": f };
                db.followers.delete_one(reverse).session(&mut *s).await?;
            }
            Step::MoveLists {
                follower,
                added,
                removed,
                ..
            } => {
                // A list's members are the edges filed under it: only the
                // sizes are kept apart.
                let user = follower.as_str();
                self.store.move_list_sizes(s, user, added, removed).await?;
            }
            Step::FollowCounts {
                follower,
                followee,
                step,
            } => {
                let (f, t) = (follower.as_str(), followee.as_str());
                let inc = doc! { "$inc": { "following": step } };
                db.users
                    .update_one(doc! { "_id": f }, inc)
                    .session(&mut *s)
                    .await?;
                self.store.add_follower_count(s, t, f, *step).await?;
            }
            Step::Relation {
                user,
                relation,
                target,
                active,
            } => {
                let key = doc! { "u": user.as_str(), "k": code(*relation), "t": target.as_str() };
                match active {
                    true => db
                        .relations
                        .insert_one(key)
                        .session(&mut *s)
                        .await
                        .map(drop)?,
                    false => db
                        .relations
                        .delete_one(key)
                        .session(&mut *s)
                        .await
                        .map(drop)?,
                }
            }
            Step::Membership(change) => self.store.put_membership(s, change).await?,
            Step::Emit(event) => self.store.emit(s, std::slice::from_ref(event)).await?,
        }
        Ok(())
    }
}
