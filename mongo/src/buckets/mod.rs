//! Time buckets and sized buckets on MongoDB, in the reference design's
//! documents (see `shape`), under the same rules as every stored timeline
//! (`socialite_domain::feed::accept`): a head per stored timeline says whether
//! it exists, what it covers and what a warming merge must leave out
//! (`head`); buckets hold the entries, written in batches (`push`).
//!
//! Retention keeps a timeline's newest `bucket_retention` buckets: after a
//! write that opened a bucket, the head's floor rises past what is dropped,
//! then the old buckets go, so a read never claims what is gone. Expiry is a
//! sweep (`expire`), not a TTL index: a TTL index would drop the head and
//! leave its buckets behind.

mod head;
mod page;
mod push;
mod removal;
mod retention;
mod shape;

use crate::cache_doc::{coverage_floor, entry_doc, warming_memory};
use crate::db::{db_err, Db, Retry, IN_CHUNK};
use crate::expiry::fresh;
use crate::store::{get_str, id_bson};
use async_trait::async_trait;
use futures_util::TryStreamExt;
use head::{projection, Head};
use mongodb::bson::{doc, DateTime, Document, RawDocumentBuf};
use mongodb::options::{IndexOptions, ReturnDocument};
use mongodb::{Collection, IndexModel};
use push::{push_all, Target};
use shape::{Shape, HELD_ONCE};
use socialite_core::error::{Error, Result};
use socialite_core::feed::config::FeedConfig;
use socialite_core::ids::{now_ms, PostId, TimelineId, UserId};
use socialite_core::metrics::metrics;
use socialite_core::model::Entry;
use socialite_core::ports::{CacheRead, Coverage, Delivery, Footprint, TimelineStore};
use socialite_core::sim::Rng;
use socialite_domain::feed::accept::{fill_entries, takes, Freshness};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

pub struct MongoBuckets {
    db: Db,
    shape: Shape,
    heads: Collection<Document>,
    buckets: Collection<Document>,
    /// Entries a fill or a backfill copies in.
    fill: usize,
    freshness: Freshness,
    generations: Mutex<Rng>,
}

impl MongoBuckets {
    /// The bucket store of `feed`'s model, with its indexes.
    pub async fn open(db: Db, feed: &FeedConfig) -> Result<MongoBuckets> {
        let Some(shape) = Shape::of(feed) else {
            return Err(Error::invalid(
                "invalid_config",
                format!("the {} feed model keeps no buckets", feed.model),
            ));
        };
        let heads = db
            .database
            .collection(&format!("{}.heads", shape.collection()));
        let buckets = db.database.collection(shape.collection());
        let index = |keys: Document, options: IndexOptions| {
            IndexModel::builder().keys(keys).options(options).build()
        };
        let named = |name: &str| IndexOptions::builder().name(name.to_owned()).build();
        // A timeline's buckets newest first: every read and retention.
        buckets
            .create_index(index(
                doc! { "_id._u": 1, shape.key_path(): -1 },
                named("u_key"),
            ))
            .await
            .map_err(db_err("creating the buckets index"))?;
        if let Shape::Sized { .. } = shape {
            // A post once per timeline, across its buckets (empty ones aside).
            let once = IndexOptions::builder()
                .name(HELD_ONCE.to_owned())
                .unique(true)
                .partial_filter_expression(doc! { "_k": { "$gt": 0 } })
                .build();
            buckets
                .create_index(index(doc! { "_id._u": 1, "_c.p": 1 }, once))
                .await
                .map_err(db_err("creating the sized buckets' unique index"))?;
        }
        heads
            .create_index(index(doc! { "read_at": 1 }, named("read_at")))
            .await
            .map_err(db_err("creating the bucket heads index"))?;
        Ok(MongoBuckets {
            db,
            shape,
            heads,
            buckets,
            fill: feed.cache_size,
            freshness: feed.freshness(),
            generations: Mutex::new(Rng::new(now_ms() ^ u64::from(std::process::id()))),
        })
    }

    fn generation(&self) -> i64 {
        let random = self
            .generations
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .next_u64();
        (random >> 1) as i64
    }

    /// The heads of those of `timelines` that exist.
    async fn heads_of(&self, timelines: &[&str]) -> Result<HashMap<String, Head>> {
        let mut out = HashMap::new();
        for chunk in timelines.chunks(IN_CHUNK) {
            let docs: Vec<Document> = self
                .heads
                .find(doc! { "_id": { "$in": chunk } })
                .projection(doc! { "g": 1, "warming": 1, "floor": 1, "open": 1 })
                .await
                .map_err(db_err("reading timeline heads"))?
                .try_collect()
                .await
                .map_err(db_err("reading timeline heads"))?;
            for d in &docs {
                out.insert(get_str(d, "_id")?.to_owned(), Head::from(d));
            }
        }
        Ok(out)
    }

    /// Pushes entries into one timeline (a fill, a backfill).
    async fn push_into(&self, timeline: &TimelineId, head: &Head, entries: &[Entry]) -> Result<()> {
        let targets = entries
            .iter()
            .filter(|e| takes(head.coverage(), e.post))
            .map(|e| self.target(timeline.as_str(), head, e))
            .collect();
        let heads = HashMap::from([(timeline.as_str().to_owned(), head.clone())]);
        let pushed = push_all(&self.db.database, self.shape, targets).await?;
        self.after_push(&heads, pushed).await.map(|_| ())
    }

    fn target(&self, timeline: &str, head: &Head, e: &Entry) -> Target {
        Target {
            timeline: timeline.to_owned(),
            generation: head.generation,
            key: self.shape.first_target(e.post, head.open),
            post: id_bson(e.post),
            entry: entry_doc(e),
            attempt: 0,
        }
    }
}

#[async_trait]
impl TimelineStore for MongoBuckets {
    fn capacity(&self) -> usize {
        self.fill
    }

    async fn read(
        &self,
        timeline: &TimelineId,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<CacheRead> {
        let found = self
            .heads
            .find_one(doc! { "_id": timeline.as_str() })
            .projection(projection())
            .await
            .map_err(db_err("reading a timeline head"))?;
        let Some(d) = found else {
            return Ok(CacheRead::Absent);
        };
        if !fresh(&self.heads, self.freshness, timeline, &d).await? {
            self.drop_buckets(timeline.as_str()).await?;
            return Ok(CacheRead::Absent);
        }
        let head = Head::from(&d);
        if head.warming || head.setup {
            return Ok(CacheRead::Warming);
        }
        let entries = self.page(timeline, &head, before, limit).await?;
        Ok(CacheRead::Ready {
            entries,
            coverage: head.coverage(),
        })
    }

    async fn create(&self, timeline: &TimelineId) -> Result<()> {
        let id = timeline.as_str();
        // At most: create, find it in setup, finish the setup, find it done.
        for _ in 0..4 {
            let found = self
                .heads
                .find_one(doc! { "_id": id })
                .projection(doc! { "g": 1, "setup": 1 })
                .await
                .map_err(db_err("reading a timeline head"))?;
            match found.as_ref().map(Head::from) {
                Some(h) if !h.setup => return Ok(()),
                Some(h) => {
                    // Buckets of earlier generations go before the timeline warms.
                    self.buckets
                        .delete_many(doc! { "_id._u": id, "g": { "$ne": h.generation } })
                        .await
                        .map_err(db_err("deleting a timeline's old buckets"))?;
                    self.heads
                        .update_one(
                            doc! { "_id": id, "g": h.generation },
                            doc! { "$set": { "setup": false } },
                        )
                        .await
                        .map_err(db_err("finishing a timeline head"))?;
                }
                None => {
                    let made = self
                        .heads
                        .update_one(
                            doc! { "_id": id },
                            doc! { "$setOnInsert": {
                                "g": self.generation(), "setup": true, "warming": true,
                                "wv": 0_i64, "floor": 0_i64, "open": 0_i64,
                                "purged": [], "retracted": [], "read_at": DateTime::now(),
                            } },
                        )
                        .upsert(true)
                        .await;
                    if let Err(e) = made {
                        // Two readers activating at once: the other one made it.
                        if !crate::db::is_duplicate_key(&e) {
                            return Err(db_err("creating a timeline head")(e));
                        }
                    }
                }
            }
        }
        Err(Error::unavailable(
            "creating a timeline head: it kept changing",
        ))
    }

    async fn fill(
        &self,
        timeline: &TimelineId,
        entries: Vec<Entry>,
        coverage: Coverage,
    ) -> Result<()> {
        let mut retry = Retry::new("filling bucketed timeline");
        loop {
            let found = self
                .heads
                .find_one(doc! { "_id": timeline.as_str(), "warming": true })
                .await
                .map_err(db_err("reading a warming timeline head"))?;
            let Some(d) = found else {
                return Ok(()); // ready already, or gone
            };
            let head = Head::from(&d);
            let memory = warming_memory(&d);
            let kept = fill_entries(entries.clone(), &memory, |_| false);
            self.push_into(timeline, &head, &kept).await?;
            // Deliveries while warming may hold what the memory excludes.
            let purged = d.get_array("purged").cloned().unwrap_or_default();
            let retracted = d.get_array("retracted").cloned().unwrap_or_default();
            if !purged.is_empty() || !retracted.is_empty() {
                self.remove(
                    doc! { "_id._u": timeline.as_str() },
                    doc! { "$and": [
                        { "$not": [{ "$in": ["$$this.a", purged] }] },
                        { "$not": [{ "$in": ["$$this.p", retracted] }] },
                    ] },
                )
                .await?;
            }
            let done = self
                .heads
                .update_one(
                    doc! { "_id": timeline.as_str(), "warming": true, "wv": head.wv },
                    doc! {
                        "$set": { "warming": false, "purged": [], "retracted": [] },
                        "$max": { "floor": coverage_floor(coverage) },
                    },
                )
                .await
                .map_err(db_err("completing a bucketed timeline"))?;
            if done.matched_count == 1 {
                let heads = HashMap::from([(timeline.as_str().to_owned(), head)]);
                self.retain(&[timeline.as_str()], &heads).await?;
                return Ok(());
            }
            retry.again().await?;
        }
    }

    async fn deliver(&self, deliveries: &[Delivery]) -> Result<usize> {
        let mut candidates: Vec<&str> = deliveries
            .iter()
            .flat_map(|(_, to)| to.iter().map(TimelineId::as_str))
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        let heads = self.heads_of(&candidates).await?;
        let mut round_trips = candidates.len().div_ceil(IN_CHUNK);
        if heads.is_empty() {
            metrics().timeline_round_trips.inc_by(round_trips as u64);
            return Ok(0);
        }
        let mut targets = Vec::new();
        // A batch may carry a post twice (a log replay): one statement each.
        let mut queued: HashSet<(&str, u64)> = HashSet::new();
        for (entry, to) in deliveries {
            for t in to.iter() {
                let Some(head) = heads.get(t.as_str()) else {
                    continue; // dormant
                };
                if takes(head.coverage(), entry.post) && queued.insert((t.as_str(), entry.post.0)) {
                    targets.push(self.target(t.as_str(), head, entry));
                }
            }
        }
        let pushed = push_all(&self.db.database, self.shape, targets).await?;
        let landed = pushed.landed;
        round_trips += pushed.round_trips;
        round_trips += self.after_push(&heads, pushed).await?;
        metrics().timeline_round_trips.inc_by(round_trips as u64);
        Ok(landed)
    }

    async fn coverage(&self, timeline: &TimelineId) -> Result<Option<Coverage>> {
        let found = self
            .heads
            .find_one(doc! { "_id": timeline.as_str() })
            .projection(doc! { "floor": 1 })
            .await
            .map_err(db_err("reading a timeline head"))?;
        Ok(found.as_ref().map(|d| Head::from(d).coverage()))
    }

    async fn backfill(
        &self,
        timeline: &TimelineId,
        author: &UserId,
        entries: Vec<Entry>,
        coverage: Coverage,
    ) -> Result<()> {
        let found = self
            .heads
            .find_one_and_update(
                doc! { "_id": timeline.as_str() },
                doc! {
                    "$pull": { "purged": author.as_str() },
                    "$inc": { "wv": 1_i64 },
                    "$max": { "floor": coverage_floor(coverage) },
                },
            )
            .projection(projection())
            .return_document(ReturnDocument::After)
            .await
            .map_err(db_err("backfilling a timeline head"))?;
        match found {
            Some(d) => self.push_into(timeline, &Head::from(&d), &entries).await,
            None => Ok(()), // dormant: the first read merges
        }
    }

    async fn purge_author(&self, timeline: &TimelineId, author: &UserId) -> Result<()> {
        self.heads
            .update_one(
                doc! { "_id": timeline.as_str(), "warming": true },
                doc! { "$addToSet": { "purged": author.as_str() }, "$inc": { "wv": 1_i64 } },
            )
            .await
            .map_err(db_err("recording a purge"))?;
        self.remove(
            doc! { "_id._u": timeline.as_str(), "_c.a": author.as_str() },
            doc! { "$ne": ["$$this.a", author.as_str()] },
        )
        .await
    }

    async fn retract_post(&self, timelines: &[TimelineId], post: PostId) -> Result<()> {
        let ids: Vec<&str> = timelines.iter().map(TimelineId::as_str).collect();
        let p = id_bson(post);
        for chunk in ids.chunks(IN_CHUNK) {
            self.heads
                .update_many(
                    doc! { "_id": { "$in": chunk }, "warming": true },
                    doc! { "$addToSet": { "retracted": p }, "$inc": { "wv": 1_i64 } },
                )
                .await
                .map_err(db_err("recording a retraction"))?;
            let mut filter = doc! { "_id._u": { "$in": chunk }, "_c.p": p };
            if let Shape::Timed { span_ms, .. } = self.shape {
                filter.insert(self.shape.key_path(), Shape::time_bucket(span_ms, post));
            }
            self.remove(filter, doc! { "$ne": ["$$this.p", p] }).await?;
        }
        Ok(())
    }

    async fn drop_timeline(&self, timeline: &TimelineId) -> Result<()> {
        // The head first: once it is gone, fanout skips the timeline.
        self.heads
            .delete_one(doc! { "_id": timeline.as_str() })
            .await
            .map_err(db_err("dropping a timeline head"))?;
        self.drop_buckets(timeline.as_str()).await
    }

    async fn expire(&self) -> Result<u64> {
        let cutoff = DateTime::from_millis(now_ms().saturating_sub(self.freshness.ttl_ms()) as i64);
        let mut dropped = 0;
        loop {
            let stale: Vec<Document> = self
                .heads
                .find(doc! { "read_at": { "$lt": cutoff } })
                .projection(doc! { "_id": 1 })
                .limit(1000)
                .await
                .map_err(db_err("finding expired timelines"))?
                .try_collect()
                .await
                .map_err(db_err("finding expired timelines"))?;
            for d in &stale {
                let id = get_str(d, "_id")?;
                let gone = self
                    .heads
                    .delete_one(doc! { "_id": id, "read_at": { "$lt": cutoff } })
                    .await
                    .map_err(db_err("dropping an expired timeline"))?;
                if gone.deleted_count == 1 {
                    self.drop_buckets(id).await?;
                    dropped += 1;
                }
            }
            if stale.len() < 1000 {
                return Ok(dropped);
            }
        }
    }

    async fn footprint(&self) -> Result<Footprint> {
        let mut f = Footprint::default();
        for (coll, is_head) in [(self.heads.name(), true), (self.buckets.name(), false)] {
            let raw = self.db.database.collection::<RawDocumentBuf>(coll);
            let mut cursor = raw
                .find(doc! {})
                .await
                .map_err(db_err("measuring bucketed timelines"))?;
            while let Some(d) = cursor
                .try_next()
                .await
                .map_err(db_err("measuring bucketed timelines"))?
            {
                f.serialized_bytes += d.as_bytes().len() as u64;
                if is_head {
                    f.users += 1;
                } else {
                    f.documents += 1;
                    if let Ok(entries) = d.get_array("_c") {
                        f.entries += entries.into_iter().count() as u64;
                    }
                }
            }
        }
        Ok(f)
    }
}
