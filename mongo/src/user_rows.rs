//! The rows of users, standings and relations that planned writes touch
//! on MongoDB (`crate::txn` applies the steps).

use crate::db::TxnError;
use crate::store::MongoStore;
use mongodb::bson::doc;
use mongodb::ClientSession;
use socialite_core::ids::{ListName, UserId};
use socialite_core::ports::Standing;

impl MongoStore {
    /// The lists the user had while their deletion runs; `None` if none does.
    pub(crate) async fn deleting_lists(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<Option<Vec<ListName>>, TxnError> {
        let found = self
            .db
            .users
            .find_one(doc! { "_id": user, "deleting": true });
        let found = found.projection(doc! { "lists": 1, "deleting_lists": 1 });
        let Some(d) = found.session(&mut *s).await? else {
            return Ok(None);
        };
        // A deletion begun before the lists were kept at its start names
        // those left.
        let names: Vec<String> = match d.get_array("deleting_lists") {
            Ok(kept) => kept
                .iter()
                .filter_map(|v| v.as_str())
                .map(str::to_owned)
                .collect(),
            Err(_) => d
                .get_document("lists")
                .map(|l| l.keys().cloned().collect())
                .unwrap_or_default(),
        };
        Ok(Some(
            names.iter().map(|n| ListName::from_stored(n)).collect(),
        ))
    }

    /// Marks the user as being deleted, keeping `own` (their lists).
    pub(crate) async fn mark_deleting(
        &self,
        s: &mut ClientSession,
        user: &str,
        own: &[ListName],
    ) -> Result<(), TxnError> {
        let filter = doc! { "_id": user, "deleting": { "$ne": true } };
        let mark =
            doc! { "$set": { "deleting": true, "deleting_lists": crate::lists::names(own) } };
        self.db
            .users
            .update_one(filter, mark)
            .session(&mut *s)
            .await?;
        Ok(())
    }

    /// The user's record, follower count shards and deletion mark.
    pub(crate) async fn remove_user(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<(), TxnError> {
        let filter = doc! { "_id": user, "deleting": true };
        self.db.users.delete_one(filter).session(&mut *s).await?;
        self.delete_follower_count(s, user).await
    }
}

impl MongoStore {
    /// Creates the user (counts at 0) if there is none, and gives them
    /// `profile` if it is `Some`.
    pub(crate) async fn put_user_in(
        &self,
        s: &mut ClientSession,
        user: &UserId,
        profile: &Option<serde_json::Map<String, serde_json::Value>>,
    ) -> Result<(), TxnError> {
        let mut on_insert = doc! { "followers": 0_i64, "following": 0_i64 };
        let mut update = doc! {};
        match profile {
            Some(_) => update.insert("$set", doc! { "profile": crate::store::json_text(profile) }),
            None => on_insert.insert("profile", mongodb::bson::Bson::Null),
        };
        update.insert("$setOnInsert", on_insert);
        let filter = doc! { "_id": user.as_str() };
        let put = self.db.users.update_one(filter, update).upsert(true);
        put.session(&mut *s).await?;
        Ok(())
    }

    /// Sets the id's standing.
    pub(crate) async fn set_standing_in(
        &self,
        s: &mut ClientSession,
        user: &UserId,
        standing: Standing,
    ) -> Result<(), TxnError> {
        let after = standing.tokens_after_ms as i64;
        let set = doc! { "$set": { "after": after, "suspended": standing.suspended } };
        let filter = doc! { "_id": user.as_str() };
        let put = self.db.accounts.update_one(filter, set).upsert(true);
        put.session(&mut *s).await?;
        Ok(())
    }
}

impl MongoStore {
    /// Makes (`active`) or lifts the relation document `key`.
    pub(crate) async fn put_relation_in(
        &self,
        s: &mut ClientSession,
        key: mongodb::bson::Document,
        active: bool,
    ) -> Result<(), TxnError> {
        let relations = &self.db.relations;
        if active {
            relations.insert_one(key).session(&mut *s).await?;
        } else {
            relations.delete_one(key).session(&mut *s).await?;
        }
        Ok(())
    }
}
