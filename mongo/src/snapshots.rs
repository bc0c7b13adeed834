//! Ranked orders' snapshots on MongoDB, so that any timeline API serves a
//! page past the first: `rank_snapshots` holds one document per snapshot,
//! `{_id: id, r: reader, t: timeline, x: expiry, e: [entries]}`, each entry
//! `[post, item, author, reason, [parts], more]`. A TTL index on `x` lets
//! the server drop expired ones; a reader's others but the newest
//! [`PER_READER`] (by expiry: every API ranks with the same ttl) are
//! deleted after each new one, off the reader's path.

use crate::db::db_err;
use crate::store::MongoStore;
use async_trait::async_trait;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, DateTime, Document};
use mongodb::Collection;
use socialite_core::error::{Error, Result};
use socialite_core::ids::{PostId, TimelineId, UserId};
use socialite_core::ports::RankSnapshots;
use socialite_domain::feed::rank::{Parts, Reason};
use socialite_domain::feed::snapshot::{Snapshot, SnapshotEntry, PER_READER};

fn entry_bson(e: &SnapshotEntry) -> Bson {
    let parts: Vec<Bson> = e.parts.to_array().into_iter().map(Bson::Double).collect();
    Bson::Array(vec![
        Bson::Int64(e.post.0 as i64),
        Bson::Int64(e.item.0 as i64),
        Bson::String(e.author.as_str().to_owned()),
        Bson::String(e.reason.as_str().to_owned()),
        Bson::Array(parts),
        Bson::Int64(e.more as i64),
    ])
}

fn bad(what: &str) -> Error {
    Error::internal(format!("a stored ranked snapshot is malformed: {what}"))
}

fn entry_of(b: &Bson) -> Result<SnapshotEntry> {
    let Bson::Array(a) = b else {
        return Err(bad("an entry is not a list"));
    };
    let int = |i: usize| match a.get(i) {
        Some(Bson::Int64(n)) => Ok(*n as u64),
        _ => Err(bad("an entry's number")),
    };
    let text = |i: usize| match a.get(i) {
        Some(Bson::String(s)) => Ok(s.as_str()),
        _ => Err(bad("an entry's name")),
    };
    let Some(Bson::Array(parts)) = a.get(4).filter(|_| a.len() == 6) else {
        return Err(bad("an entry's parts"));
    };
    if parts.len() != 7 {
        return Err(bad("an entry's parts"));
    }
    let mut p = [0.0; 7];
    for (slot, v) in p.iter_mut().zip(parts) {
        *slot = v.as_f64().ok_or_else(|| bad("a part"))?;
    }
    Ok(SnapshotEntry {
        post: PostId(int(0)?),
        item: PostId(int(1)?),
        author: UserId::parse(text(2)?).map_err(|_| bad("an author"))?,
        reason: Reason::named(text(3)?).ok_or_else(|| bad("a reason"))?,
        parts: Parts::from_array(p),
        more: int(5)?,
    })
}

fn snapshot_of(d: &Document) -> Result<Snapshot> {
    let id = match d.get("_id") {
        Some(Bson::Int64(n)) => *n as u64,
        _ => return Err(bad("its id")),
    };
    let reader = d.get_str("r").map_err(|_| bad("its reader"))?;
    let timeline = d.get_str("t").map_err(|_| bad("its timeline"))?;
    let expires = d.get_datetime("x").map_err(|_| bad("its expiry"))?;
    let entries = d.get_array("e").map_err(|_| bad("its entries"))?;
    Ok(Snapshot {
        id,
        reader: UserId::parse(reader).map_err(|_| bad("its reader"))?,
        timeline: TimelineId::from_stored(timeline),
        expires_ms: expires.timestamp_millis().max(0) as u64,
        entries: entries.iter().map(entry_of).collect::<Result<_>>()?,
    })
}

/// Deletes the reader's snapshots but the newest [`PER_READER`].
async fn keep_newest(coll: Collection<Document>, reader: String) -> Result<()> {
    let older: Vec<Document> = coll
        .find(doc! { "r": &reader })
        .sort(doc! { "x": -1 })
        .skip(PER_READER as u64)
        .projection(doc! { "_id": 1 })
        .await
        .map_err(db_err("listing a reader's ranked snapshots"))?
        .try_collect()
        .await
        .map_err(db_err("listing a reader's ranked snapshots"))?;
    let ids: Vec<Bson> = older
        .into_iter()
        .filter_map(|d| d.get("_id").cloned())
        .collect();
    if !ids.is_empty() {
        coll.delete_many(doc! { "_id": { "$in": ids } })
            .await
            .map_err(db_err("deleting a reader's older ranked snapshots"))?;
    }
    Ok(())
}

#[async_trait]
impl RankSnapshots for MongoStore {
    async fn keep_snapshot(&self, s: &Snapshot) -> Result<()> {
        let d = doc! {
            "_id": s.id as i64,
            "r": s.reader.as_str(),
            "t": s.timeline.as_str(),
            "x": DateTime::from_millis(s.expires_ms.min(i64::MAX as u64) as i64),
            "e": s.entries.iter().map(entry_bson).collect::<Vec<_>>(),
        };
        let coll = self.db.rank_snapshots.clone();
        coll.insert_one(d)
            .await
            .map_err(db_err("keeping a ranked snapshot"))?;
        // The bound, off the reader's path: the first page waits for the
        // snapshot only.
        let reader = s.reader.as_str().to_owned();
        tokio::spawn(async move {
            if let Err(e) = keep_newest(coll, reader).await {
                tracing::warn!(error = %e, "a reader's older ranked snapshots stay until they expire");
            }
        });
        Ok(())
    }

    async fn snapshot(&self, reader: &UserId, id: u64) -> Result<Option<Snapshot>> {
        let found = self
            .db
            .rank_snapshots
            .find_one(doc! { "_id": id as i64, "r": reader.as_str() })
            .await
            .map_err(db_err("reading a ranked snapshot"))?;
        found.as_ref().map(snapshot_of).transpose()
    }
}
