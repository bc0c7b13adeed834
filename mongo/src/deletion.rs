//! Deleting a user on MongoDB in bounded steps (see
//! `socialite_core::rules::cascade::DeletionStage`): the first write marks
//! the `users` document `deleting: true`, which every existence check reads
//! as absent and which `pending_deletions` finds after a crash; each step is
//! a transaction over at most a step's records, with the events they queue.

use crate::db::{db_err, TxnError, IN_CHUNK};
use crate::lists::lists_of;
use crate::store::{get_str, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::{ListName, UserId};
use socialite_core::rules::cascade::{timeline_dropped, DeletionStage, UserDeletion};
use socialite_core::rules::checks::Membership;

impl MongoStore {
    pub(crate) async fn begin_deletion_of(&self, id: &UserId) -> Result<bool> {
        let marked = self
            .db
            .users
            .update_one(
                doc! { "_id": id.as_str(), "deleting": { "$ne": true } },
                doc! { "$set": { "deleting": true } },
            )
            .await
            .map_err(db_err("marking a user as being deleted"))?;
        Ok(marked.matched_count == 1)
    }

    pub(crate) async fn pending_deletion_list(&self) -> Result<Vec<UserId>> {
        let docs: Vec<Document> = self
            .db
            .users
            .find(doc! { "deleting": true })
            .projection(doc! { "_id": 1 })
            .await
            .map_err(db_err("finding unfinished deletions"))?
            .try_collect()
            .await
            .map_err(db_err("finding unfinished deletions"))?;
        docs.iter()
            .map(|d| Ok(UserId::from_stored(get_str(d, "_id")?.to_owned())))
            .collect()
    }

    /// One step of `stage` inside a transaction; whether the stage has more.
    pub(crate) async fn deletion_step_in(
        &self,
        s: &mut ClientSession,
        id: &UserId,
        stage: DeletionStage,
        limit: usize,
    ) -> Result<bool, TxnError> {
        let u = id.as_str();
        let more = match stage {
            DeletionStage::Followers => {
                let filed_by = self.edges_to_cut(s, "followers", u, limit).await?;
                let followers: Vec<UserId> = filed_by.iter().map(|(f, _)| f.clone()).collect();
                let listed: Vec<(UserId, ListName)> = filed_by
                    .iter()
                    .flat_map(|(f, lists)| lists.iter().map(|l| (f.clone(), l.clone())))
                    .collect();
                let ids: Vec<&str> = followers.iter().map(UserId::as_str).collect();
                self.db
                    .followers
                    .delete_many(doc! { "user": u, "follower": { "$in": &ids } })
                    .session(&mut *s)
                    .await?;
                let fwing = &self.db.following;
                self.cut_other_ends(s, &followers, fwing, "followee", u, "following")
                    .await?;
                // The lists that filed the user lose a member.
                for (f, lists) in filed_by.iter().filter(|(_, l)| !l.is_empty()) {
                    self.move_list_sizes(s, f.as_str(), &[], lists).await?;
                }
                self.emit(
                    s,
                    &UserDeletion::of_followers(id, &followers, &listed).events(),
                )
                .await?;
                followers.len() == limit
            }
            DeletionStage::Following => {
                let following = self.edges_to_cut(s, "following", u, limit).await?;
                let followees: Vec<UserId> = following.iter().map(|(t, _)| t.clone()).collect();
                let ids: Vec<&str> = followees.iter().map(UserId::as_str).collect();
                self.db
                    .following
                    .delete_many(doc! { "user": u, "followee": { "$in": &ids } })
                    .session(&mut *s)
                    .await?;
                let fwers = &self.db.followers;
                self.cut_other_ends(s, &followees, fwers, "follower", u, "followers")
                    .await?;
                self.emit(s, &UserDeletion::of_following(id, &following).events())
                    .await?;
                following.len() == limit
            }
            DeletionStage::Groups => {
                // At most `MAX_GROUPS_PER_USER`: one step.
                let groups = self.groups_in(s, u).await?;
                for group in &groups {
                    let leave = Membership {
                        group: group.clone(),
                        user: id.clone(),
                        join: false,
                    };
                    self.put_membership(s, &leave).await?;
                }
                self.emit(s, &UserDeletion::of_groups(id, &groups).events())
                    .await?;
                false
            }
            DeletionStage::Relations => {
                let (muted, more) = self.remove_relations(s, u, limit).await?;
                self.emit(s, &UserDeletion::of_relations(id, &muted).events())
                    .await?;
                more
            }
            DeletionStage::Posts => {
                let posts = self
                    .ids_where(
                        s,
                        doc! { "author": u },
                        doc! { "author": 1, "_id": 1 },
                        limit,
                    )
                    .await?;
                self.db
                    .content
                    .delete_many(doc! { "_id": { "$in": &posts } })
                    .session(&mut *s)
                    .await?;
                posts.len() == limit
            }
            DeletionStage::Mentions => {
                // Others' posts no longer mention a user who is gone (so a
                // user created again under the id inherits none).
                let posts = self
                    .ids_where(
                        s,
                        doc! { "mentions": u },
                        doc! { "mentions": 1, "_id": -1 },
                        limit,
                    )
                    .await?;
                self.db
                    .content
                    .update_many(
                        doc! { "_id": { "$in": &posts } },
                        doc! { "$pull": { "mentions": u } },
                    )
                    .session(&mut *s)
                    .await?;
                posts.len() == limit
            }
            DeletionStage::Finish => {
                let user = self
                    .db
                    .users
                    .find_one_and_delete(doc! { "_id": u, "deleting": true })
                    .projection(doc! { "lists": 1 })
                    .session(&mut *s)
                    .await?;
                if let Some(user) = user {
                    self.delete_follower_count(s, u).await?;
                    let lists = user
                        .get_document("lists")
                        .map(|l| l.keys().map(|k| ListName::from_stored(k)).collect())
                        .unwrap_or_default();
                    self.emit(s, &[timeline_dropped(id, lists)]).await?;
                }
                false
            }
        };
        Ok(more)
    }

    /// Up to `limit` of `user`'s edges in `collection`, in id order, with
    /// their lists.
    async fn edges_to_cut(
        &self,
        s: &mut ClientSession,
        collection: &str,
        user: &str,
        limit: usize,
    ) -> Result<Vec<(UserId, Vec<ListName>)>, TxnError> {
        let field = crate::graph::other_end(collection);
        let mut cursor = self
            .edges(collection)
            .find(doc! { "user": user })
            .projection(doc! { "_id": 0, field: 1, "_g": 1 })
            .sort(doc! { "user": 1, field: 1 })
            .limit(limit as i64)
            .session(&mut *s)
            .await?;
        let mut out = Vec::new();
        while let Some(d) = cursor.next(&mut *s).await {
            let d = d?;
            out.push((
                UserId::from_stored(get_str(&d, field)?.to_owned()),
                lists_of(&d),
            ));
        }
        Ok(out)
    }

    /// The ids of up to `limit` posts that `filter` selects, by the index `sort` names.
    async fn ids_where(
        &self,
        s: &mut ClientSession,
        filter: Document,
        sort: Document,
        limit: usize,
    ) -> Result<Vec<i64>, TxnError> {
        let mut cursor = self
            .db
            .content
            .find(filter)
            .projection(doc! { "_id": 1 })
            .sort(sort)
            .limit(limit as i64)
            .session(&mut *s)
            .await?;
        let mut out = Vec::new();
        while let Some(d) = cursor.next(&mut *s).await {
            out.push(crate::store::get_i64(&d?, "_id"));
        }
        Ok(out)
    }

    /// For each of `others`, removes its edge to `u` from `edges` (whose
    /// other-end field is `field`) and decrements its `count`.
    async fn cut_other_ends(
        &self,
        s: &mut ClientSession,
        others: &[UserId],
        edges: &mongodb::Collection<Document>,
        field: &str,
        u: &str,
        count: &str,
    ) -> Result<(), TxnError> {
        for chunk in others.chunks(IN_CHUNK) {
            let ids: Vec<&str> = chunk.iter().map(UserId::as_str).collect();
            edges
                .delete_many(doc! { "user": { "$in": &ids }, field: u })
                .session(&mut *s)
                .await?;
            if count == "followers" {
                // Follower counts live in shards (see `counts`).
                self.drop_follower_counts(s, &ids, u).await?;
                continue;
            }
            self.db
                .users
                .update_many(
                    doc! { "_id": { "$in": &ids } },
                    doc! { "$inc": { count: -1_i64 } },
                )
                .session(&mut *s)
                .await?;
        }
        Ok(())
    }
}
