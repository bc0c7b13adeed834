//! Removals from a bucketed timeline: an unfollow's purge, a deletion's
//! retraction, a warming merge's memory, and a dropped timeline.

use super::MongoBuckets;
use crate::db::db_err;
use mongodb::bson::{doc, Document};
use socialite_core::error::Result;

impl MongoBuckets {
    /// Removes the entries `keep` rejects from these timelines' buckets, in
    /// one pipeline update each (which also recounts `_k`), then deletes
    /// buckets left empty.
    pub(super) async fn remove(&self, filter: Document, keep: Document) -> Result<()> {
        let pipeline = vec![
            doc! { "$set": { "_c": { "$filter": { "input": "$_c", "cond": keep } } } },
            doc! { "$set": { "_k": { "$size": "$_c" } } },
        ];
        self.buckets
            .update_many(filter.clone(), pipeline)
            .await
            .map_err(db_err("removing entries from buckets"))?;
        let mut empty = filter;
        empty.remove("_c.a");
        empty.remove("_c.p");
        empty.insert("_k", 0_i64);
        self.buckets
            .delete_many(empty)
            .await
            .map_err(db_err("deleting empty buckets"))?;
        Ok(())
    }

    pub(super) async fn drop_buckets(&self, timeline: &str) -> Result<()> {
        self.buckets
            .delete_many(doc! { "_id._u": timeline })
            .await
            .map(|_| ())
            .map_err(db_err("dropping a timeline's buckets"))
    }
}
