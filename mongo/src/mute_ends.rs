//! When mutes end, on MongoDB: the end of a mute that ends by itself is the
//! `until` field of its document in `relations` (ms since the epoch), so it
//! goes with the mute; the `until` index finds the ends that have come for
//! the sweep. The rules are `socialite_domain::graph::mute_ends`'.

use crate::db::{db_err, TxnError};
use crate::relations::code;
use crate::store::{get_str, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::ClientSession;
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_domain::graph::relations::Relation;

fn key(user: &str, target: &str) -> Document {
    doc! { "u": user, "k": code(Relation::Mute), "t": target }
}

/// The end a relation document holds, if any.
pub(crate) fn until(d: &Document) -> Option<u64> {
    match d.get("until") {
        Some(Bson::Int64(n)) => Some(*n as u64),
        _ => None,
    }
}

impl MongoStore {
    pub(crate) async fn mute_end_in(
        &self,
        s: Option<&mut ClientSession>,
        user: &str,
        target: &str,
    ) -> Result<Option<u64>, TxnError> {
        let find = self.db.relations.find_one(key(user, target));
        let find = find.projection(doc! { "_id": 0, "until": 1 });
        let found = match s {
            Some(s) => find.session(s).await?,
            None => find.await?,
        };
        Ok(found.as_ref().and_then(until))
    }

    /// Sets the end of the mute (`None`: removes it); the mute's document
    /// is written before, in the same transaction.
    pub(crate) async fn put_mute_end_in(
        &self,
        s: &mut ClientSession,
        user: &str,
        target: &str,
        at_ms: Option<u64>,
    ) -> Result<(), TxnError> {
        let change = match at_ms {
            Some(at) => doc! { "$set": { "until": at as i64 } },
            None => doc! { "$unset": { "until": "" } },
        };
        let write = self.db.relations.update_one(key(user, target), change);
        write.session(&mut *s).await?;
        Ok(())
    }

    pub(crate) async fn mutes_due_by(
        &self,
        now_ms: u64,
        limit: usize,
    ) -> Result<Vec<(UserId, UserId)>> {
        let filter = doc! { "until": { "$lte": now_ms as i64 }, "k": code(Relation::Mute) };
        let docs: Vec<Document> = self
            .db
            .relations
            .find(filter)
            .projection(doc! { "_id": 0, "u": 1, "t": 1 })
            .sort(doc! { "until": 1 })
            .limit(limit.min(i64::MAX as usize) as i64)
            .await
            .map_err(db_err("reading the mutes that end"))?
            .try_collect()
            .await
            .map_err(db_err("reading the mutes that end"))?;
        docs.iter()
            .map(|d| {
                let (u, t) = (get_str(d, "u")?, get_str(d, "t")?);
                Ok((
                    UserId::from_stored(u.to_owned()),
                    UserId::from_stored(t.to_owned()),
                ))
            })
            .collect()
    }
}
