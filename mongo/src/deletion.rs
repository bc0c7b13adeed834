//! A user's deletion on MongoDB, begun and stepped as
//! `socialite_core::plan::deletion` plans it, each in a transaction (its
//! facts and steps are in `txn`). Its mark is `deleting: true` on the `users` document (with the user's lists
//! at the start), which every existence check reads as absent and which
//! `pending_deletions` finds after a crash.

use crate::db::db_err;
use crate::store::{get_str, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_core::plan::deletion::{begin_deletion, deletion_step};
use socialite_core::rules::cascade::DeletionStage;

impl MongoStore {
    pub(crate) async fn begin_deletion_of(&self, id: &UserId) -> Result<bool> {
        crate::txn::planned!(self, "marking a user as being deleted", |txn| {
            begin_deletion(txn, id)
        })
    }

    pub(crate) async fn pending_deletion_list(&self) -> Result<Vec<UserId>> {
        let what = "finding unfinished deletions";
        let found = self.db.users.find(doc! { "deleting": true });
        let cursor = found.projection(doc! { "_id": 1 }).await;
        let docs: Result<Vec<Document>, _> = cursor.map_err(db_err(what))?.try_collect().await;
        let docs = docs.map_err(db_err(what))?;
        docs.iter()
            .map(|d| Ok(UserId::from_stored(get_str(d, "_id")?.to_owned())))
            .collect()
    }

    /// One step of a begun deletion; whether the stage has more.
    pub(crate) async fn deletion_step_of(
        &self,
        id: &UserId,
        stage: DeletionStage,
        limit: usize,
    ) -> Result<bool> {
        let done = crate::txn::planned!(self, "deleting a user", |txn| {
            deletion_step(txn, id, stage, limit)
        })?;
        Ok(done.more)
    }
}
