//! Hybrid fanout's marks on MongoDB: one `{_id: author}` document per
//! marked author in `hybrid` (a handful), and which marked authors a reader
//! follows.

use crate::db::db_err;
use crate::store::{get_str, MongoStore};
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Document};
use socialite_core::error::Result;
use socialite_core::ids::UserId;

impl MongoStore {
    /// The authors marked for hybrid fanout, in id order.
    pub(crate) async fn marked_authors(&self) -> Result<Vec<UserId>> {
        let docs: Vec<Document> = self
            .db
            .hybrid
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .await
            .map_err(db_err("reading the hybrid authors"))?
            .try_collect()
            .await
            .map_err(db_err("reading the hybrid authors"))?;
        docs.iter()
            .map(|d| Ok(UserId::from_stored(get_str(d, "_id")?.to_owned())))
            .collect()
    }

    /// Marks or unmarks an author (an upsert or a delete of `{_id}`).
    pub(crate) async fn mark_author(&self, author: &UserId, on: bool) -> Result<()> {
        let id = doc! { "_id": author.as_str() };
        let h = &self.db.hybrid;
        let done = match on {
            true => h
                .update_one(id.clone(), doc! { "$set": { "_id": author.as_str() } })
                .upsert(true)
                .await
                .map(drop),
            false => h.delete_one(id).await.map(drop),
        };
        done.map_err(db_err("marking a hybrid author"))
    }

    /// Which of `candidates` `user` follows: one `$in` query.
    pub(crate) async fn followees_among(
        &self,
        user: &UserId,
        candidates: &[UserId],
    ) -> Result<Vec<UserId>> {
        if candidates.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<&str> = candidates.iter().map(UserId::as_str).collect();
        let filter = doc! { "user": user.as_str(), "followee": { "$in": &ids } };
        let docs: Vec<Document> = self
            .db
            .following
            .find(filter)
            .projection(doc! { "_id": 0, "followee": 1 })
            .await
            .map_err(db_err("reading followees"))?
            .try_collect()
            .await
            .map_err(db_err("reading followees"))?;
        let found: std::collections::HashSet<&str> = docs
            .iter()
            .filter_map(|d| d.get_str("followee").ok())
            .collect();
        Ok(candidates
            .iter()
            .filter(|c| found.contains(c.as_str()))
            .cloned()
            .collect())
    }
}
