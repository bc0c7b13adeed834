//! Retention of a bucketed timeline, after a write opened a bucket: the
//! newest `bucket_retention` buckets stay; the head's floor rises past what
//! goes before it goes, so a read never claims what is gone. And the open
//! bucket hints that deliveries move up.

use super::head::Head;
use super::push::Pushed;
use super::shape::{bucket_key, Shape};
use super::MongoBuckets;
use crate::db::{db_err, IN_CHUNK};
use crate::store::id_bson;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use mongodb::Collection;
use socialite_core::error::Result;
use std::collections::HashMap;

impl MongoBuckets {
    /// Moves the open-bucket hints up and applies retention where a bucket
    /// was opened.
    pub(super) async fn after_push(
        &self,
        heads: &HashMap<String, Head>,
        pushed: Pushed,
    ) -> Result<usize> {
        let mut round_trips = 0;
        if let Shape::Sized { .. } = self.shape {
            let hints: Vec<Document> = pushed
                .last_key
                .iter()
                .filter(|(t, key)| heads.get(*t).is_some_and(|h| **key > h.open))
                .map(|(t, key)| doc! { "q": { "_id": t }, "u": { "$max": { "open": key } } })
                .collect();
            round_trips += self
                .run_updates(&self.heads, hints, "moving open bucket hints")
                .await?;
        }
        let opened: Vec<&str> = pushed.opened.iter().map(String::as_str).collect();
        Ok(round_trips + self.retain(&opened, heads).await?)
    }

    /// Drops buckets beyond the retention of these timelines, raising each
    /// head's floor past what goes first.
    /// Returns the round trips it made.
    pub(super) async fn retain(
        &self,
        timelines: &[&str],
        heads: &HashMap<String, Head>,
    ) -> Result<usize> {
        let mut round_trips = 0;
        for chunk in timelines.chunks(IN_CHUNK) {
            let mut found: HashMap<String, Vec<(i64, Vec<u64>)>> = HashMap::new();
            let mut cursor = self
                .buckets
                .find(doc! { "_id._u": { "$in": chunk } })
                .projection(doc! { "_c.p": 1, "g": 1 })
                .await
                .map_err(db_err("reading buckets for retention"))?;
            round_trips += 1;
            while let Some(d) = cursor
                .try_next()
                .await
                .map_err(db_err("reading buckets for retention"))?
            {
                let id = d.get_document("_id").ok();
                let Some(t) = id.and_then(|i| i.get_str("_u").ok()) else {
                    continue;
                };
                if heads
                    .get(t)
                    .is_some_and(|h| crate::store::get_i64(&d, "g") != h.generation)
                {
                    continue; // another generation's leftover: not this timeline's
                }
                let ids = post_ids(&d);
                found
                    .entry(t.to_owned())
                    .or_default()
                    .push((bucket_key(self.shape, &d), ids));
            }
            let mut floors = Vec::new();
            let mut drops = Vec::new();
            for (t, mut buckets) in found {
                buckets.sort_unstable_by_key(|(k, _)| std::cmp::Reverse(*k));
                let Some(floor) = self.shape.floor_after_retention(&buckets) else {
                    continue;
                };
                let newest_dropped = buckets[self.shape.keep()].0;
                floors.push(
                    doc! { "q": { "_id": &t }, "u": { "$max": { "floor": id_bson(floor) } } },
                );
                drops.push(doc! {
                    "q": { "_id._u": &t, self.shape.key_path(): { "$lte": newest_dropped } },
                    "limit": 0,
                });
            }
            // The floor first: a read between the two never serves a gap.
            round_trips += self
                .run_updates(&self.heads, floors, "raising timeline floors")
                .await?;
            if !drops.is_empty() {
                self.db
                    .database
                    .run_command(doc! { "delete": self.shape.collection(), "deletes": drops, "ordered": false })
                    .await
                    .map_err(db_err("dropping buckets past retention"))?;
                round_trips += 1;
            }
        }
        Ok(round_trips)
    }

    pub(super) async fn run_updates(
        &self,
        coll: &Collection<Document>,
        updates: Vec<Document>,
        what: &'static str,
    ) -> Result<usize> {
        for chunk in updates.chunks(IN_CHUNK) {
            self.db
                .database
                .run_command(
                    doc! { "update": coll.name(), "updates": chunk.to_vec(), "ordered": false },
                )
                .await
                .map_err(db_err(what))?;
        }
        Ok(updates.len().div_ceil(IN_CHUNK))
    }
}

fn post_ids(d: &Document) -> Vec<u64> {
    d.get_array("_c")
        .map(|a| {
            a.iter()
                .filter_map(Bson::as_document)
                .map(|e| crate::store::get_i64(e, "p") as u64)
                .collect()
        })
        .unwrap_or_default()
}
