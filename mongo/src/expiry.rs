//! Expiry of timeline caches on MongoDB: `read_at` on each cache document,
//! rewritten by reads as `Freshness` says, under a TTL index of the ttl;
//! reads also treat an expired cache as absent (and delete it), so expiry
//! does not wait for the server's TTL monitor.

use crate::db::{db_err, Db};
use mongodb::bson::{doc, Bson, DateTime, Document};
use mongodb::options::IndexOptions;
use mongodb::{Collection, IndexModel};
use socialite_core::error::Result;
use socialite_core::ids::{now_ms, TimelineId};
use socialite_domain::feed::accept::Freshness;
use std::time::Duration;

/// Creates the TTL index on `read_at`, or changes its ttl in place.
pub(crate) async fn ttl_index(db: &Db, freshness: Freshness) {
    let ttl = Duration::from_millis(freshness.ttl_ms());
    let index = IndexModel::builder()
        .keys(doc! { "read_at": 1 })
        .options(
            IndexOptions::builder()
                .name("read_at_ttl".to_owned())
                .expire_after(ttl)
                .build(),
        )
        .build();
    if let Err(e) = db.timelines.create_index(index).await {
        // Another ttl than the index was made with: change it in place.
        let changed = db
            .database
            .run_command(doc! {
                "collMod": crate::db::TIMELINE_CACHE,
                "index": { "name": "read_at_ttl", "expireAfterSeconds": ttl.as_secs() as i64 },
            })
            .await;
        if let Err(again) = changed {
            tracing::warn!(error = %e, collmod = %again, "the timeline caches' TTL index could not be set; reads still expire caches");
        }
    }
}

/// Whether the timeline document `d` (a cache, or a bucketed timeline's
/// head) of `coll`, just read, is still fresh. One that
/// was not read for the ttl is deleted (if nobody read it meanwhile) and
/// the reader is dormant again; a fresh one's read time is rewritten
/// when [`Freshness`] says so (at most once a day).
pub(crate) async fn fresh(
    coll: &Collection<Document>,
    freshness: Freshness,
    user: &TimelineId,
    d: &Document,
) -> Result<bool> {
    let now = now_ms();
    let read_at = match d.get("read_at") {
        Some(Bson::DateTime(t)) => t.timestamp_millis().max(0) as u64,
        _ => 0, // made before read times were kept: refreshed now
    };
    let stamp = |ms: u64| DateTime::from_millis(ms as i64);
    if read_at > 0 && freshness.expired(read_at, now) {
        let cutoff = now - freshness.ttl_ms();
        coll.delete_one(doc! { "_id": user.as_str(), "read_at": { "$lt": stamp(cutoff) } })
            .await
            .map_err(db_err("dropping an expired timeline cache"))?;
        return Ok(false);
    }
    if freshness.refreshes(read_at, now) {
        coll.update_one(
            doc! { "_id": user.as_str() },
            doc! { "$max": { "read_at": stamp(now) } },
        )
        .await
        .map_err(db_err("refreshing a timeline cache's read time"))?;
    }
    Ok(true)
}
