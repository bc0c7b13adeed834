//! Timeline caches on MongoDB: one `timeline_cache` document per active user,
//! `{_id: timeline, entries: [{p, a[, m, d, n]}], floor, warming, wv, purged, retracted}`,
//! entries newest first. Dormant users have no document, and every write is
//! `upsert: false`, so fanout never creates one.
//!
//! The exactness rules are `socialite_domain::feed::accept`, the same the
//! embedded store applies, expressed as single-document atomic updates:
//! - Delivery is `$push` with `$each`/`$sort`/`$slice`, filtered on the entry
//!   not being there yet and on the floor, so a replay changes nothing.
//! - When a full array drops its oldest entry, the cache still covers
//!   everything from its oldest entry up. So the coverage floor is the larger
//!   of `floor` and, when the array is full, its last entry. A removal
//!   (purge, retraction) makes the array non-full, so it first seals that
//!   bound into `floor`, in the same update, guarded by a filter on the very
//!   entry it read.
//! - Entries that a floor raise leaves below the floor are ignored on read
//!   and are the first to go by `$slice`.
//! - While warming, purges and retractions are also recorded in `purged` and
//!   `retracted`, and bump `wv`; `fill` applies them to the merge's entries
//!   and completes only if `wv` is unchanged, or reads again.

use crate::cache_doc::{coverage_floor, entry_doc, none_of, to_entry, warming_memory, CacheState};
use crate::db::{db_err, Db, Retry, IN_CHUNK};
use crate::expiry::{fresh, ttl_index};
use crate::store::{get_i64, get_str, id_bson};
use async_trait::async_trait;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, DateTime, Document, RawDocumentBuf};
use socialite_core::error::{Error, Result};
use socialite_core::ids::{PostId, TimelineId, UserId};
use socialite_core::metrics::metrics;
use socialite_core::model::Entry;
use socialite_core::ports::{CacheRead, Coverage, Delivery, Footprint, TimelineStore};
use socialite_domain::feed::accept::{fill_entries, lacking, Freshness, PageWindow};
use std::collections::{HashMap, HashSet};

/// Deliveries sent in one `update` command at most.
const MAX_OPS: usize = 10_000;
/// And at most about this many bytes of them (MongoDB takes 16 MiB).
const MAX_BATCH_BYTES: usize = 8 << 20;

pub struct MongoTimelines {
    db: Db,
    cap: usize,
    freshness: Freshness,
}

impl MongoTimelines {
    /// The timeline caches, with a TTL index that drops a cache not read for
    /// the ttl (`read_at`, which reads refresh as [`Freshness`] says; reads
    /// also treat an expired cache as absent, so expiry does not wait for
    /// the server's TTL monitor).
    pub async fn open(db: Db, cap: usize, freshness: Freshness) -> Result<MongoTimelines> {
        ttl_index(&db, freshness).await;
        Ok(MongoTimelines { db, cap, freshness })
    }

    fn push(&self, entries: Vec<Document>) -> Document {
        doc! { "entries": { "$each": entries, "$sort": { "p": -1 }, "$slice": self.cap as i64 } }
    }

    async fn state(&self, user: &TimelineId) -> Result<Option<CacheState>> {
        let found = self
            .db
            .timelines
            .find_one(doc! { "_id": user.as_str() })
            .projection(state_fields())
            .await
            .map_err(db_err("reading a timeline cache"))?;
        Ok(found.as_ref().map(CacheState::from))
    }

    /// Runs `update` commands of many single-document updates, one round
    /// trip per batch; returns how many documents they modified.
    async fn bulk_update(&self, updates: Vec<Document>) -> Result<u64> {
        let mut modified = 0;
        let mut batch: Vec<Document> = Vec::new();
        let mut bytes = 0;
        let mut updates = updates.into_iter().peekable();
        while let Some(u) = updates.next() {
            bytes += RawDocumentBuf::from_document(&u).map_or(0, |r| r.as_bytes().len());
            batch.push(u);
            if batch.len() >= MAX_OPS || bytes >= MAX_BATCH_BYTES || updates.peek().is_none() {
                let ops = batch.len();
                let reply = self
                    .db
                    .database
                    .run_command(doc! {
                        "update": crate::db::TIMELINE_CACHE,
                        "updates": std::mem::take(&mut batch),
                        "ordered": false,
                    })
                    .await
                    .map_err(db_err("writing timeline caches"))?;
                write_errors(&reply, "writing timeline caches", ops)?;
                metrics().timeline_bulk_writes.inc();
                metrics().timeline_round_trips.inc();
                metrics().timeline_bulk_ops.observe(ops as f64);
                modified += get_i64(&reply, "nModified") as u64;
                bytes = 0;
            }
        }
        Ok(modified)
    }

    /// Which of `users` have a cache, with its state when `with_state`.
    async fn active(
        &self,
        users: &[&str],
        filter: Document,
        projection: Document,
    ) -> Result<Vec<(TimelineId, CacheState)>> {
        let mut out = Vec::new();
        for chunk in users.chunks(IN_CHUNK) {
            let mut f = filter.clone();
            f.insert("_id", doc! { "$in": chunk });
            let docs: Vec<Document> = self
                .db
                .timelines
                .find(f)
                .projection(projection.clone())
                .await
                .map_err(db_err("reading timeline caches"))?
                .try_collect()
                .await
                .map_err(db_err("reading timeline caches"))?;
            for d in &docs {
                out.push((
                    TimelineId::from_stored(get_str(d, "_id")?),
                    CacheState::from(d),
                ));
            }
        }
        Ok(out)
    }

    /// Removes what `pull` matches from the caches of `users` (all of them
    /// when `filter` is empty, else those it selects), sealing floors and,
    /// while warming, recording `remember`. Repeats for caches that changed
    /// between the read and the write, with a bounded [`Retry`].
    async fn remove(
        &self,
        users: &[&str],
        filter: Document,
        pull: Document,
        remember: Document,
    ) -> Result<()> {
        let mut todo: Vec<String> = users.iter().map(|u| (*u).to_owned()).collect();
        let mut retry = Retry::new("removing entries from timeline caches");
        while !todo.is_empty() {
            let names: Vec<&str> = todo.iter().map(String::as_str).collect();
            let found = self.active(&names, filter.clone(), state_fields()).await?;
            let updates: Vec<Document> = found
                .iter()
                .map(|(user, state)| {
                    let (q, mut u) = state.removal(user, self.cap);
                    u.insert("$pull", pull.clone());
                    if state.warming {
                        u.insert("$addToSet", remember.clone());
                    }
                    doc! { "q": q, "u": u, "upsert": false }
                })
                .collect();
            let ops = updates.len() as u64;
            if self.bulk_update_matched(updates).await? == ops {
                return Ok(());
            }
            // Some cache changed under us: read them all again (doing the
            // rest again is harmless).
            todo = found.iter().map(|(u, _)| u.as_str().to_owned()).collect();
            retry.again().await?;
        }
        Ok(())
    }

    /// Like [`bulk_update`](Self::bulk_update) but counts matched documents.
    async fn bulk_update_matched(&self, updates: Vec<Document>) -> Result<u64> {
        let mut matched = 0;
        for chunk in updates.chunks(MAX_OPS) {
            let reply = self
                .db
                .database
                .run_command(doc! {
                    "update": crate::db::TIMELINE_CACHE,
                    "updates": chunk.to_vec(),
                    "ordered": false,
                })
                .await
                .map_err(db_err("updating timeline caches"))?;
            write_errors(&reply, "updating timeline caches", chunk.len())?;
            matched += get_i64(&reply, "n") as u64;
        }
        Ok(matched)
    }
}

#[async_trait]
impl TimelineStore for MongoTimelines {
    fn capacity(&self) -> usize {
        self.cap
    }

    async fn read(
        &self,
        user: &TimelineId,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<CacheRead> {
        let found = self
            .db
            .timelines
            .find_one(doc! { "_id": user.as_str() })
            .projection(doc! { "purged": 0, "retracted": 0 })
            .await
            .map_err(db_err("reading a timeline cache"))?;
        let Some(d) = found else {
            return Ok(CacheRead::Absent);
        };
        if !fresh(&self.db.timelines, self.freshness, user, &d).await? {
            return Ok(CacheRead::Absent);
        }
        let state = CacheState::from(&d);
        if state.warming {
            return Ok(CacheRead::Warming);
        }
        let coverage = state.coverage(self.cap);
        let mut window = PageWindow::new(coverage, before, limit);
        let mut entries = Vec::new();
        for e in d
            .get_array("entries")
            .map_err(|_| Error::internal("cache without entries"))?
        {
            let Some(e) = e.as_document() else { continue };
            if window.admit(PostId(get_i64(e, "p") as u64)) {
                entries.push(to_entry(e)?);
            }
            if window.is_full() {
                break;
            }
        }
        Ok(CacheRead::Ready { entries, coverage })
    }

    async fn create(&self, user: &TimelineId) -> Result<()> {
        self.db
            .timelines
            .update_one(
                doc! { "_id": user.as_str() },
                doc! { "$setOnInsert": {
                    "warming": true, "wv": 0_i64, "floor": 0_i64,
                    "entries": [], "purged": [], "retracted": [],
                    "read_at": DateTime::now(),
                } },
            )
            .upsert(true)
            .await
            .map(|_| ())
            .or_else(|e| {
                // Two readers activating at once: the other one created it.
                if crate::db::is_duplicate_key(&e) {
                    Ok(())
                } else {
                    Err(db_err("creating a timeline cache")(e))
                }
            })
    }

    async fn fill(&self, user: &TimelineId, entries: Vec<Entry>, coverage: Coverage) -> Result<()> {
        let mut retry = Retry::new("filling a timeline cache");
        loop {
            let found = self
                .db
                .timelines
                .find_one(doc! { "_id": user.as_str(), "warming": true })
                .projection(doc! { "wv": 1, "purged": 1, "retracted": 1, "entries.p": 1 })
                .await
                .map_err(db_err("reading a warming timeline cache"))?;
            let Some(d) = found else {
                return Ok(()); // ready already, or gone
            };
            let held = CacheState::from(&d);
            let kept = fill_entries(entries.clone(), &warming_memory(&d), |p| held.holds(p));
            let kept: Vec<&Entry> = kept.iter().collect();
            let mut filter =
                doc! { "_id": user.as_str(), "warming": true, "wv": get_i64(&d, "wv") };
            filter.extend(none_of(&kept));
            let kept = kept.into_iter().map(entry_doc).collect();
            let done = self
                .db
                .timelines
                .update_one(
                    filter,
                    doc! {
                        "$set": { "warming": false, "purged": [], "retracted": [] },
                        "$max": { "floor": coverage_floor(coverage) },
                        "$push": self.push(kept),
                    },
                )
                .await
                .map_err(db_err("filling a timeline cache"))?;
            if done.matched_count == 1 {
                return Ok(());
            }
            retry.again().await?;
        }
    }

    async fn deliver(&self, deliveries: &[Delivery]) -> Result<usize> {
        // Only users with a cache get an update: ask which first, in chunks.
        let mut candidates: Vec<&str> = deliveries
            .iter()
            .flat_map(|(_, followers)| followers.iter().map(TimelineId::as_str))
            .collect();
        candidates.sort_unstable();
        candidates.dedup();
        // Only which exist and their sealed floors: the statements' filters
        // decide the rest, so no candidate's entries cross the wire.
        let active: HashMap<String, CacheState> = self
            .active(&candidates, doc! {}, doc! { "floor": 1 })
            .await?
            .into_iter()
            .map(|(u, state)| (u.as_str().to_owned(), state))
            .collect();
        metrics()
            .timeline_round_trips
            .inc_by(candidates.len().div_ceil(IN_CHUNK) as u64);
        if active.is_empty() {
            return Ok(0);
        }
        let wanted = |f: &TimelineId, post: PostId| {
            active
                .get(f.as_str())
                .is_some_and(|s| s.wants(post, self.cap))
        };
        let mut updates = Vec::new();
        // A batch may carry a post twice (a log replay): one statement each.
        let mut queued: HashSet<(&str, u64)> = HashSet::new();
        for (entry, followers) in deliveries {
            let p = id_bson(entry.post);
            let push = self.push(vec![entry_doc(entry)]);
            for f in followers.iter().filter(|f| wanted(f, entry.post)) {
                if !queued.insert((f.as_str(), entry.post.0)) {
                    continue;
                }
                updates.push(doc! {
                    "q": { "_id": f.as_str(), "entries.p": { "$ne": p }, "floor": { "$lte": p } },
                    "u": { "$push": push.clone() },
                    "upsert": false,
                });
            }
        }
        Ok(self.bulk_update(updates).await? as usize)
    }

    async fn coverage(&self, user: &TimelineId) -> Result<Option<Coverage>> {
        Ok(self.state(user).await?.map(|s| s.coverage(self.cap)))
    }

    async fn backfill(
        &self,
        user: &TimelineId,
        author: &UserId,
        entries: Vec<Entry>,
        coverage: Coverage,
    ) -> Result<()> {
        // A replayed follow must not add what the cache holds already: push
        // only the entries it lacks, on the condition that it still lacks them.
        let mut retry = Retry::new("backfilling a timeline cache");
        loop {
            let Some(state) = self.state(user).await? else {
                return Ok(()); // dormant: the first read merges
            };
            let missing = lacking(entries.clone(), |p| state.holds(p));
            let missing: Vec<&Entry> = missing.iter().collect();
            let mut filter = doc! { "_id": user.as_str() };
            filter.extend(none_of(&missing));
            let docs = missing.into_iter().map(entry_doc).collect();
            let done = self
                .db
                .timelines
                .update_one(
                    filter,
                    doc! {
                        "$pull": { "purged": author.as_str() },
                        "$inc": { "wv": 1_i64 },
                        "$max": { "floor": coverage_floor(coverage) },
                        "$push": self.push(docs),
                    },
                )
                .await
                .map_err(db_err("backfilling a timeline cache"))?;
            if done.matched_count == 1 {
                return Ok(());
            }
            retry.again().await?;
        }
    }

    async fn purge_author(&self, user: &TimelineId, author: &UserId) -> Result<()> {
        self.remove(
            &[user.as_str()],
            doc! {},
            doc! { "entries": { "a": author.as_str() } },
            doc! { "purged": author.as_str() },
        )
        .await
    }

    async fn retract_post(&self, users: &[TimelineId], post: PostId) -> Result<()> {
        let ids: Vec<&str> = users.iter().map(TimelineId::as_str).collect();
        let p = id_bson(post);
        self.remove(
            &ids,
            doc! { "$or": [ { "entries.p": p }, { "warming": true } ] },
            doc! { "entries": { "p": p } },
            doc! { "retracted": p },
        )
        .await
    }

    async fn drop_timeline(&self, user: &TimelineId) -> Result<()> {
        self.db
            .timelines
            .delete_one(doc! { "_id": user.as_str() })
            .await
            .map(|_| ())
            .map_err(db_err("dropping a timeline cache"))
    }

    async fn footprint(&self) -> Result<Footprint> {
        let raw = self
            .db
            .database
            .collection::<RawDocumentBuf>(crate::db::TIMELINE_CACHE);
        let mut cursor = raw
            .find(doc! {})
            .projection(doc! { "entries": 1 })
            .await
            .map_err(db_err("measuring timeline caches"))?;
        let mut f = Footprint::default();
        while let Some(d) = cursor
            .try_next()
            .await
            .map_err(db_err("measuring timeline caches"))?
        {
            f.users += 1;
            f.documents += 1;
            f.serialized_bytes += d.as_bytes().len() as u64;
            if let Ok(entries) = d.get_array("entries") {
                f.entries += entries.into_iter().count() as u64;
            }
        }
        Ok(f)
    }
}

/// The fields of a cache document that its [`CacheState`] reads.
fn state_fields() -> Document {
    doc! { "warming": 1, "wv": 1, "floor": 1, "entries.p": 1 }
}

/// An `update` command's write errors as one error: a failed statement is
/// never taken for a lost race.
fn write_errors(reply: &Document, what: &str, ops: usize) -> Result<()> {
    match reply
        .get_array("writeErrors")
        .ok()
        .and_then(|e| e.first().map(|f| (e.len(), f)))
    {
        Some((n, first)) => Err(Error::unavailable(format!(
            "{what}: {n} of {ops} updates failed, first: {first}"
        ))),
        None => Ok(()),
    }
}
