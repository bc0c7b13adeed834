//! Deleting a user on MongoDB in bounded steps planned by
//! `socialite_core::plan::deletion`: the first write marks the `users`
//! document `deleting: true`, which every existence check reads as absent
//! and which `pending_deletions` finds after a crash. Here are the queries
//! behind the deletion's facts.

use crate::db::{db_err, TxnError, FOLLOWERS, FOLLOWING};
use crate::lists::lists_of;
use crate::store::{get_i64, get_str, MongoStore};
use crate::txn::MongoTxn;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::{ListName, PostId, UserId};
use socialite_core::plan::deletion::deletion_step;
use socialite_core::rules::cascade::DeletionStage;
use socialite_core::rules::relations::Relation;

impl MongoStore {
    /// Marks the user as being deleted, with the lists they have now, which
    /// the deletion's last event names (its steps empty them on the way).
    pub(crate) async fn begin_deletion_of(&self, id: &UserId) -> Result<bool> {
        let what = "marking a user as being deleted";
        self.db
            .transaction(what, |mut s| async move {
                let r = async {
                    let u = id.as_str();
                    let filter = doc! { "_id": u, "deleting": { "$ne": true } };
                    let found = self.db.users.find_one(filter.clone());
                    let found = found
                        .projection(doc! { "lists": 1 })
                        .session(&mut s)
                        .await?;
                    let Some(user) = found else {
                        return Ok(false);
                    };
                    let lists: Vec<String> = list_names(&user);
                    let mark = doc! { "$set": { "deleting": true, "deleting_lists": lists } };
                    self.db
                        .users
                        .update_one(filter, mark)
                        .session(&mut s)
                        .await?;
                    Ok(true)
                }
                .await;
                (s, r)
            })
            .await
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

    /// Up to `limit` of `user`'s edges in `collection`, in id order, with
    /// their lists.
    pub(crate) async fn edges_to_cut(
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
    pub(crate) async fn ids_where(
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
}

impl MongoStore {
    /// One step of a begun deletion, in a transaction; whether the stage
    /// has more.
    pub(crate) async fn deletion_step_of(
        &self,
        id: &UserId,
        stage: DeletionStage,
        limit: usize,
    ) -> Result<bool> {
        let done = self
            .db
            .transaction("deleting a user", |mut s| async move {
                let txn = &mut MongoTxn {
                    store: self,
                    s: &mut s,
                };
                let r = deletion_step(txn, id, stage, limit).await;
                (s, r)
            })
            .await?;
        Ok(done.more)
    }

    /// The lists the user had while their deletion runs; `None` if none does.
    pub(crate) async fn deleting_lists(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<Option<Vec<ListName>>, TxnError> {
        let found = self
            .db
            .users
            .find_one(doc! { "_id": user, "deleting": true })
            .projection(doc! { "lists": 1, "deleting_lists": 1 })
            .session(&mut *s)
            .await?;
        Ok(found.map(|d| {
            // A deletion begun before the lists were kept at its start
            // names those left.
            let names = match d.get_array("deleting_lists") {
                Ok(kept) => kept
                    .iter()
                    .filter_map(|v| v.as_str())
                    .map(str::to_owned)
                    .collect(),
                Err(_) => list_names(&d),
            };
            names.iter().map(|n| ListName::from_stored(n)).collect()
        }))
    }

    /// Up to `limit` of the relations the user keeps.
    pub(crate) async fn relations_kept(
        &self,
        s: &mut ClientSession,
        user: &str,
        limit: usize,
    ) -> Result<Vec<(Relation, UserId)>, TxnError> {
        let mut cursor = self
            .db
            .relations
            .find(doc! { "u": user })
            .projection(doc! { "_id": 0, "k": 1, "t": 1 })
            .limit(limit as i64)
            .session(&mut *s)
            .await?;
        let mut out = Vec::new();
        while let Some(d) = cursor.next(&mut *s).await {
            let d = d?;
            if let Some(r) = Relation::from_code(get_i64(&d, "k") as u8) {
                out.push((r, UserId::from_stored(get_str(&d, "t")?.to_owned())));
            }
        }
        Ok(out)
    }

    /// Up to `limit` of the ids of the posts `filter` selects, by the index
    /// `sort` names.
    pub(crate) async fn post_page(
        &self,
        s: &mut ClientSession,
        filter: Document,
        sort: Document,
        limit: usize,
    ) -> Result<Vec<PostId>, TxnError> {
        let ids = self.ids_where(s, filter, sort, limit).await?;
        Ok(ids.into_iter().map(|p| PostId(p as u64)).collect())
    }

    /// The user's record, follower count shards and deletion mark.
    pub(crate) async fn remove_user(
        &self,
        s: &mut ClientSession,
        user: &str,
    ) -> Result<(), TxnError> {
        self.db
            .users
            .delete_one(doc! { "_id": user, "deleting": true })
            .session(&mut *s)
            .await?;
        self.delete_follower_count(s, user).await
    }

    /// Removes these edges `(follower, followee)`, both directions: one
    /// command per collection, however many.
    pub(crate) async fn remove_edges(
        &self,
        s: &mut ClientSession,
        edges: &[(&str, &str)],
    ) -> Result<(), TxnError> {
        if edges.is_empty() {
            return Ok(());
        }
        let following: Vec<Document> = edges
            .iter()
            .map(|(f, t)| doc! { "q": { "user": *f, "followee": *t }, "limit": 1 })
            .collect();
        let followers: Vec<Document> = edges
            .iter()
            .map(|(f, t)| doc! { "q": { "user": *t, "follower": *f }, "limit": 1 })
            .collect();
        for (collection, deletes) in [(FOLLOWING, following), (FOLLOWERS, followers)] {
            let command = doc! { "delete": collection, "deletes": deletes, "ordered": true };
            self.db
                .database
                .run_command(command)
                .session(&mut *s)
                .await?;
        }
        Ok(())
    }
}

/// The names of the lists a `users` document holds sizes of.
fn list_names(user: &Document) -> Vec<String> {
    user.get_document("lists")
        .map(|l| l.keys().cloned().collect())
        .unwrap_or_default()
}
