//! The outbox on MongoDB: `{_id: sequence (Int64), event: protobuf bytes}`,
//! relayed oldest first and acknowledged by number, and the relay lease in
//! `leases` (`{_id: "relay", owner, until}`) that lets one relay run at a time.

use crate::db::{db_err, is_duplicate_key, IN_CHUNK};
use crate::store::{get_i64, MongoStore};
use async_trait::async_trait;
use futures_util::TryStreamExt;
use mongodb::bson::{doc, DateTime, Document};
use socialite_core::error::{Error, Result};
use socialite_core::event::Event;
use socialite_core::ports::Outbox;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

/// How long a relay's lease lasts without renewal.
const LEASE: Duration = Duration::from_secs(10);

#[async_trait]
impl Outbox for MongoStore {
    async fn pending(&self, limit: usize) -> Result<Vec<(u64, Event)>> {
        let docs: Vec<Document> = self
            .db
            .outbox
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .limit(limit as i64)
            .await
            .map_err(db_err("reading the outbox"))?
            .try_collect()
            .await
            .map_err(db_err("reading the outbox"))?;
        docs.iter()
            .map(|d| {
                let bytes = d
                    .get_binary_generic("event")
                    .map_err(|_| Error::internal("outbox document without an event"))?;
                Ok((get_i64(d, "_id") as u64, Event::decode(bytes)?))
            })
            .collect()
    }

    async fn ack(&self, seqs: &[u64]) -> Result<()> {
        for chunk in seqs.chunks(IN_CHUNK) {
            let ids: Vec<i64> = chunk.iter().map(|s| *s as i64).collect();
            self.db
                .outbox
                .delete_many(doc! { "_id": { "$in": ids } })
                .await
                .map_err(db_err("acknowledging outbox events"))?;
        }
        Ok(())
    }

    async fn backlog(&self) -> Result<u64> {
        self.db
            .outbox
            .count_documents(doc! {})
            .await
            .map_err(db_err("counting the outbox"))
    }

    fn notifier(&self) -> Arc<Notify> {
        self.outbox_ready.clone()
    }

    async fn lease(&self) -> Result<bool> {
        let now = DateTime::now();
        let until = DateTime::from_millis(now.timestamp_millis() + LEASE.as_millis() as i64);
        let taken = self
            .db
            .leases
            .update_one(
                doc! { "_id": "relay", "$or": [ { "owner": &self.owner }, { "until": { "$lt": now } } ] },
                doc! { "$set": { "owner": &self.owner, "until": until } },
            )
            .upsert(true)
            .await;
        match taken {
            Ok(_) => Ok(true),
            // Held by another producer's relay: the upsert hit the unique _id.
            Err(e) if is_duplicate_key(&e) => Ok(false),
            Err(e) => Err(db_err("taking the relay lease")(e)),
        }
    }
}
