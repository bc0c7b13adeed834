//! A user's deletion on MongoDB, begun and stepped as
//! `socialite_domain::deletion::plan` plans it, each in a transaction (its
//! facts and steps are in `txn`). Its mark is `deleting: true` on the `users` document (with the user's lists
//! at the start), which every existence check reads as absent and which
//! `pending_deletions` finds after a crash.

use crate::db::db_err;
use crate::store::{get_str, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use socialite_core::error::Result;
use socialite_core::ids::UserId;

impl MongoStore {
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
}
