//! Deleting a user on MongoDB: their edges both ways (the other ends'
//! counts moved), their lists, groups and posts, the mentions of them, and
//! the events the cascade rule decides, in one transaction.

use crate::db::{TxnError, IN_CHUNK};
use crate::store::MongoStore;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::ids::{ListName, UserId};
use socialite_core::rules::cascade::UserDeletion;
use socialite_core::rules::checks::Membership;

impl MongoStore {
    pub(crate) async fn delete_user_in(
        &self,
        s: &mut ClientSession,
        id: &UserId,
    ) -> Result<bool, TxnError> {
        let u = id.as_str();
        let exists = self
            .db
            .users
            .find_one(doc! { "_id": u })
            .projection(doc! { "_id": 1 })
            .session(&mut *s)
            .await?;
        if exists.is_none() {
            return Ok(false);
        }
        let filed_by = self.edge_list(s, "followers", u).await?;
        let following = self.edge_list(s, "following", u).await?;
        let followers: Vec<UserId> = filed_by.iter().map(|(f, _)| f.clone()).collect();
        let listed: Vec<(UserId, ListName)> = filed_by
            .iter()
            .flat_map(|(f, lists)| lists.iter().map(|l| (f.clone(), l.clone())))
            .collect();
        let followees: Vec<UserId> = following.iter().map(|(t, _)| t.clone()).collect();
        let (fwers, fwing) = (&self.db.followers, &self.db.following);
        fwers
            .delete_many(doc! { "user": u })
            .session(&mut *s)
            .await?;
        fwing
            .delete_many(doc! { "user": u })
            .session(&mut *s)
            .await?;
        // The other ends: their reverse edges go, their counts drop.
        self.cut_other_ends(s, &followers, fwing, "followee", u, "following")
            .await?;
        self.cut_other_ends(s, &followees, fwers, "follower", u, "followers")
            .await?;
        // The user leaves every group.
        let groups = self.groups_in(s, u).await?;
        for group in &groups {
            let leave = Membership {
                group: group.clone(),
                user: id.clone(),
                join: false,
            };
            self.membership_in(s, &leave).await?;
        }
        // The lists that filed the user lose a member.
        for (f, lists) in filed_by.iter().filter(|(_, l)| !l.is_empty()) {
            self.move_list_sizes(s, f.as_str(), &[], lists).await?;
        }
        self.db
            .content
            .delete_many(doc! { "author": u })
            .session(&mut *s)
            .await?;
        // Others' posts no longer mention a user who is gone (so a user
        // created again under the id inherits none).
        self.db
            .content
            .update_many(doc! { "mentions": u }, doc! { "$pull": { "mentions": u } })
            .session(&mut *s)
            .await?;
        self.db
            .users
            .delete_one(doc! { "_id": u })
            .session(&mut *s)
            .await?;
        self.delete_follower_count(s, u).await?;
        let events = UserDeletion {
            user: id,
            followers: &followers,
            listed: &listed,
            following: &following,
            groups: &groups,
        }
        .events();
        self.emit(s, &events).await?;
        Ok(true)
    }
}

impl MongoStore {
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
