//! Deliveries into buckets, batched: every delivery of a batch is one
//! statement of one `update` command (split only past MongoDB's command
//! limits), so a batch costs one round trip, plus one more for the few
//! deliveries whose bucket turned out full or was created by another worker
//! meanwhile. Idempotent: a held post is never pushed again (the bucket's
//! `_c.p` filter, and for sized buckets a unique index over a timeline's
//! posts), whatever the replays and however many workers push at once.

use super::shape::{Shape, HELD_ONCE};
use crate::db::db_err;
use crate::store::get_i64;
use mongodb::bson::{doc, Bson, Document, RawDocumentBuf};
use mongodb::Database;
use socialite_core::error::{Error, Result};
use socialite_core::metrics::metrics;
use std::collections::HashMap;

/// Statements sent in one command at most, and about this many bytes of them.
const MAX_OPS: usize = 10_000;
const MAX_BATCH_BYTES: usize = 8 << 20;
const DUPLICATE_KEY: i64 = 11000;

/// One entry on its way into one timeline's bucket.
pub(crate) struct Target {
    pub(crate) timeline: String,
    pub(crate) generation: i64,
    pub(crate) key: i64,
    pub(crate) post: i64,
    pub(crate) entry: Document,
    pub(crate) attempt: u32,
}

/// What a push did.
#[derive(Debug, Default)]
pub(crate) struct Pushed {
    pub(crate) landed: usize,
    /// Per timeline, the highest bucket key an entry landed in.
    pub(crate) last_key: HashMap<String, i64>,
    /// Timelines that got a new bucket: retention may have work.
    pub(crate) opened: Vec<String>,
    pub(crate) round_trips: usize,
}

/// What became of one statement.
enum Outcome {
    Landed {
        upserted: bool,
    },
    /// The post is held already.
    Held,
    /// The upsert met an existing bucket that did not take the entry.
    Conflict,
}

/// Pushes every target, round after round, until each landed or is held.
pub(crate) async fn push_all(
    db: &Database,
    shape: Shape,
    mut targets: Vec<Target>,
) -> Result<Pushed> {
    let mut pushed = Pushed::default();
    // Sized buckets: at most the retained buckets above a stale open hint.
    let max_rounds = shape.keep() as u32 + 8;
    let mut round = 0;
    while !targets.is_empty() {
        round += 1;
        if round > max_rounds {
            return Err(Error::unavailable(format!(
                "delivering into {}: {} entries found no bucket after {max_rounds} rounds",
                shape.collection(),
                targets.len()
            )));
        }
        let outcomes = run(db, shape, &targets, &mut pushed).await?;
        let mut conflicts = Vec::new();
        for (mut t, outcome) in targets.into_iter().zip(outcomes) {
            match outcome {
                Outcome::Landed { upserted } => {
                    pushed.landed += 1;
                    let last = pushed.last_key.entry(t.timeline.clone()).or_insert(t.key);
                    *last = (*last).max(t.key);
                    if upserted {
                        pushed.opened.push(t.timeline);
                    }
                }
                Outcome::Held => {}
                Outcome::Conflict => {
                    t.attempt += 1;
                    conflicts.push(t);
                }
            }
        }
        let tried: Vec<(&str, i64, u32)> = conflicts
            .iter()
            .map(|t| (t.timeline.as_str(), t.key, t.attempt))
            .collect();
        let keys = shape.after_conflicts(&tried);
        let mut next = Vec::new();
        let mut foreign = Vec::new();
        for (mut t, key) in conflicts.into_iter().zip(keys) {
            let Some(key) = key else {
                continue; // held
            };
            if key == t.key && t.attempt == 2 {
                foreign.push(doc! {
                    "q": { "_id": shape.bucket_id(&t.timeline, key), "g": { "$ne": t.generation } },
                    "limit": 1,
                });
            }
            t.key = key;
            next.push(t);
        }
        if !foreign.is_empty() {
            // A time bucket of an earlier generation of the timeline (one
            // that expired while a delivery was in flight) is garbage.
            db.run_command(
                doc! { "delete": shape.collection(), "deletes": foreign, "ordered": false },
            )
            .await
            .map_err(db_err("deleting leftover buckets"))?;
            pushed.round_trips += 1;
        }
        targets = next;
    }
    pushed.opened.sort_unstable();
    pushed.opened.dedup();
    Ok(pushed)
}

/// Sends the targets' statements, in as few commands as the limits allow.
async fn run(
    db: &Database,
    shape: Shape,
    targets: &[Target],
    pushed: &mut Pushed,
) -> Result<Vec<Outcome>> {
    let mut outcomes = Vec::with_capacity(targets.len());
    let mut batch: Vec<Document> = Vec::new();
    let mut bytes = 0;
    for (i, t) in targets.iter().enumerate() {
        let statement = shape.push(&t.timeline, t.generation, t.key, t.post, t.entry.clone());
        bytes += RawDocumentBuf::from_document(&statement).map_or(0, |r| r.as_bytes().len());
        batch.push(statement);
        if batch.len() >= MAX_OPS || bytes >= MAX_BATCH_BYTES || i + 1 == targets.len() {
            let ops = batch.len();
            let reply = db
                .run_command(doc! {
                    "update": shape.collection(),
                    "updates": std::mem::take(&mut batch),
                    "ordered": false,
                })
                .await
                .map_err(db_err("delivering into buckets"))?;
            pushed.round_trips += 1;
            metrics().timeline_bulk_writes.inc();
            metrics().timeline_bulk_ops.observe(ops as f64);
            outcomes.extend(outcomes_of(&reply, ops)?);
            bytes = 0;
        }
    }
    Ok(outcomes)
}

/// Each statement's outcome, from an `update` command's reply.
fn outcomes_of(reply: &Document, ops: usize) -> Result<Vec<Outcome>> {
    let mut out: Vec<Outcome> = (0..ops)
        .map(|_| Outcome::Landed { upserted: false })
        .collect();
    if let Ok(upserted) = reply.get_array("upserted") {
        for u in upserted.iter().filter_map(Bson::as_document) {
            if let Some(o) = out.get_mut(get_i64(u, "index") as usize) {
                *o = Outcome::Landed { upserted: true };
            }
        }
    }
    if let Ok(errors) = reply.get_array("writeErrors") {
        for e in errors.iter().filter_map(Bson::as_document) {
            let index = get_i64(e, "index") as usize;
            if get_i64(e, "code") != DUPLICATE_KEY {
                return Err(Error::unavailable(format!(
                    "delivering into buckets: {} of {ops} updates failed, first: {e}",
                    errors.len()
                )));
            }
            if let Some(o) = out.get_mut(index) {
                *o = if held_once_violated(e) {
                    Outcome::Held
                } else {
                    Outcome::Conflict
                };
            }
        }
    }
    Ok(out)
}

/// Whether a duplicate key error is the sized buckets' once-per-timeline
/// index (the post is in another bucket) rather than the bucket's `_id`.
fn held_once_violated(e: &Document) -> bool {
    match e.get_document("keyPattern") {
        Ok(pattern) => pattern.contains_key("_c.p"),
        Err(_) => e
            .get_str("errmsg")
            .is_ok_and(|m| m.contains(&format!("index: {HELD_ONCE}"))),
    }
}
