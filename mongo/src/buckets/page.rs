//! Reading a page of a bucketed timeline: time buckets newest first until
//! the page is full; sized buckets, whose entries arrive in any id order,
//! all gathered and ordered.

use super::head::Head;
use super::shape::Shape;
use super::MongoBuckets;
use crate::cache_doc::to_entry;
use crate::db::db_err;
use crate::store::get_i64;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use socialite_core::error::Result;
use socialite_core::ids::{PostId, TimelineId};
use socialite_core::model::Entry;
use socialite_domain::feed::accept::PageWindow;

impl MongoBuckets {
    /// Up to `limit` entries of the timeline below `before`, newest first.
    pub(super) async fn page(
        &self,
        timeline: &TimelineId,
        head: &Head,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<Entry>> {
        let coverage = head.coverage();
        let mut filter = doc! { "_id._u": timeline.as_str(), "g": head.generation };
        if let (Shape::Timed { span_ms, .. }, Some(b)) = (self.shape, before) {
            filter.insert(
                self.shape.key_path(),
                doc! { "$lte": Shape::time_bucket(span_ms, b) },
            );
        }
        let mut cursor = self
            .buckets
            .find(filter)
            .sort(doc! { "_id._u": 1, self.shape.key_path(): -1 })
            .batch_size(4)
            .await
            .map_err(db_err("reading buckets"))?;
        let mut window = PageWindow::new(coverage, before, limit);
        let mut entries = Vec::new();
        let mut gathered = Vec::new();
        while let Some(d) = cursor.try_next().await.map_err(db_err("reading buckets"))? {
            let bucket = d.get_array("_c").map(|a| a.to_vec()).unwrap_or_default();
            if let Shape::Sized { .. } = self.shape {
                // Arrival order is not id order: every bucket may hold any id.
                gathered.extend(bucket);
                continue;
            }
            // Time buckets come newest first, each sorted newest first.
            for e in bucket.iter().filter_map(Bson::as_document) {
                if window.admit(PostId(get_i64(e, "p") as u64)) {
                    entries.push(to_entry(e)?);
                }
            }
            if window.is_full() {
                break;
            }
        }
        let mut gathered: Vec<&Document> = gathered.iter().filter_map(Bson::as_document).collect();
        gathered.sort_by_key(|e| std::cmp::Reverse(get_i64(e, "p")));
        for e in gathered {
            if window.admit(PostId(get_i64(e, "p") as u64)) {
                entries.push(to_entry(e)?);
            }
        }
        Ok(entries)
    }
}
