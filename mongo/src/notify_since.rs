//! When each `notify` option was turned on, on MongoDB: the `since` field
//! (ms since the epoch) of the option's document in `relations`, so it goes
//! with the option (and the `u_k_t` index finds a user's). Notifications read it to derive the user's alerts
//! (`socialite_domain::notifications::alerts`).

use crate::db::{db_err, TxnError};
use crate::relations::code;
use crate::store::{get_str, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_domain::graph::relations::{FollowOption, Relation};

const NOTIFY: Relation = Relation::Option(FollowOption::Notify);

fn key(user: &str, target: &str) -> Document {
    doc! { "u": user, "k": code(NOTIFY), "t": target }
}

/// The time an option's document holds, if it is a `notify` with one.
pub(crate) fn since(d: &Document) -> Option<u64> {
    match d.get("since") {
        Some(Bson::Int64(n)) => Some((*n).max(0) as u64),
        _ => None,
    }
}

impl MongoStore {
    /// Sets when the option was turned on; its document is written before,
    /// in the same transaction.
    pub(crate) async fn put_notify_since_in(
        &self,
        s: &mut ClientSession,
        user: &str,
        target: &str,
        at_ms: u64,
    ) -> Result<(), TxnError> {
        let change = doc! { "$set": { "since": at_ms as i64 } };
        let write = self.db.relations.update_one(key(user, target), change);
        write.session(&mut *s).await?;
        Ok(())
    }

    /// The user's `notify` options with their times. One kept by a version
    /// that kept no time is given one now, once (through the `u_k_t` index),
    /// and counts from then: the notices made of earlier posts stay as
    /// they were.
    pub(crate) async fn subscriptions_of(&self, user: &UserId) -> Result<Vec<(UserId, u64)>> {
        let filter = doc! { "u": user.as_str(), "k": code(NOTIFY) };
        let docs: Vec<Document> = self
            .db
            .relations
            .find(filter)
            .projection(doc! { "_id": 0, "t": 1, "since": 1 })
            .sort(doc! { "u": 1, "k": 1, "t": 1 })
            .await
            .map_err(db_err("reading notify options"))?
            .try_collect()
            .await
            .map_err(db_err("reading notify options"))?;
        let now = socialite_core::ids::now_ms();
        if docs.iter().any(|d| since(d).is_none()) {
            let untimed =
                doc! { "u": user.as_str(), "k": code(NOTIFY), "since": { "$exists": false } };
            self.db
                .relations
                .update_many(untimed, doc! { "$set": { "since": now as i64 } })
                .await
                .map_err(db_err("giving notify options a time"))?;
        }
        docs.iter()
            .map(|d| {
                let t = UserId::from_stored(get_str(d, "t")?.to_owned());
                Ok((t, since(d).unwrap_or(now)))
            })
            .collect()
    }
}
