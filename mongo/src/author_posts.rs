//! Authors' posts newest first, for read-time merges and backfills: the
//! `{author, _id}` index read per author, or for many authors at once.

use crate::db::{db_err, IN_CHUNK};
use crate::store::{get_i64, get_str, id_filter, MongoStore};
use futures_util::{StreamExt, TryStreamExt};
use mongodb::bson::{doc, Document};
use socialite_core::error::Result;
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::Entry;
use socialite_core::ports::IdRange;

/// Concurrent queries of a read-time merge over many authors.
const MERGE_QUERIES: usize = 16;

impl MongoStore {
    /// For each author, the newest `limit_each` of their posts in `range`.
    pub(crate) async fn newest_of_each(
        &self,
        authors: &[UserId],
        range: IdRange,
        limit_each: usize,
    ) -> Result<Vec<Entry>> {
        let Some(ids) = id_filter(range).filter(|_| limit_each > 0) else {
            return Ok(Vec::new());
        };
        // One indexed query per author (newest first, limited), run concurrently.
        let content = &self.db.content;
        let queries = authors.iter().cloned().map(|a| {
            let mut filter = doc! { "author": a.as_str() };
            if !ids.is_empty() {
                filter.insert("_id", ids.clone());
            }
            async move {
                let docs: Vec<Document> = content
                    .find(filter)
                    .projection(doc! { "_id": 1 })
                    .sort(doc! { "author": 1, "_id": -1 })
                    .limit(limit_each as i64)
                    .await?
                    .try_collect()
                    .await?;
                Ok::<_, mongodb::error::Error>(
                    docs.iter()
                        .map(|d| Entry::linked(PostId(get_i64(d, "_id") as u64), a.clone()))
                        .collect::<Vec<_>>(),
                )
            }
        });
        let lists: Vec<Vec<Entry>> = futures_util::stream::iter(queries)
            .buffer_unordered(MERGE_QUERIES)
            .try_collect()
            .await
            .map_err(db_err("reading authors' posts"))?;
        Ok(lists.into_iter().flatten().collect())
    }

    /// The newest `limit` posts of all the authors together. One query per
    /// chunk of authors: `$in` on the `{author, _id}` index,
    /// sorted by `_id` and limited, which the server answers by merging the
    /// authors' index ranges (a SORT_MERGE), not by reading `limit` of each.
    pub(crate) async fn newest_of_all(
        &self,
        authors: &[UserId],
        range: IdRange,
        limit: usize,
    ) -> Result<Vec<Entry>> {
        let Some(ids) = id_filter(range).filter(|_| limit > 0) else {
            return Ok(Vec::new());
        };
        let mut all = Vec::new();
        for chunk in authors.chunks(IN_CHUNK) {
            let names: Vec<&str> = chunk.iter().map(UserId::as_str).collect();
            let mut filter = doc! { "author": { "$in": &names } };
            if !ids.is_empty() {
                filter.insert("_id", ids.clone());
            }
            let docs: Vec<Document> = self
                .db
                .content
                .find(filter)
                .projection(doc! { "_id": 1, "author": 1 })
                .sort(doc! { "_id": -1 })
                .limit(limit as i64)
                .await
                .map_err(db_err("reading authors' posts"))?
                .try_collect()
                .await
                .map_err(db_err("reading authors' posts"))?;
            for d in &docs {
                let author = UserId::from_stored(get_str(d, "author")?.to_owned());
                all.push(Entry::linked(PostId(get_i64(d, "_id") as u64), author));
            }
        }
        Ok(socialite_core::model::newest(all, limit))
    }
}
