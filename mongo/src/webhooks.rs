//! Webhook endpoints on MongoDB: `webhooks` holds each endpoint as a
//! document (the domain's record, its id as `_id`), `webhook_attempts` the
//! delivery logs (`{endpoint, seq, ...}`). Every change is one update whose
//! filter carries the change's condition (a cursor still where it was, a
//! lease free or the owner's), so an admin's edit and a delivering
//! process's progress never undo each other.

use crate::db::{db_err, is_duplicate_key};
use crate::store::MongoStore;
use async_trait::async_trait;
use futures_util::TryStreamExt;
use mongodb::bson::{self, doc, Bson, Document};
use serde::de::DeserializeOwned;
use serde::Serialize;
use socialite_core::error::{Error, Result};
use socialite_core::ports::{too_many_webhooks, Webhooks};
use socialite_core::webhooks::endpoint::KEPT_ATTEMPTS;
use socialite_core::webhooks::{Attempt, Change, Endpoint, State};

fn to_bson<T: Serialize>(value: &T) -> Result<Bson> {
    bson::to_bson(value).map_err(|e| Error::internal(format!("encoding a webhook record: {e}")))
}

fn from_doc<T: DeserializeOwned>(mut d: Document, id_field: Option<&str>) -> Result<T> {
    if let Some(field) = id_field {
        if let Some(id) = d.remove("_id") {
            d.insert(field, id);
        }
    } else {
        d.remove("_id");
    }
    bson::from_document(d).map_err(|e| Error::internal(format!("decoding a webhook record: {e}")))
}

fn endpoint_doc(e: &Endpoint) -> Result<Document> {
    let Bson::Document(mut d) = to_bson(e)? else {
        return Err(Error::internal("an endpoint is a document"));
    };
    if let Some(id) = d.remove("id") {
        d.insert("_id", id);
    }
    Ok(d)
}

impl MongoStore {
    /// The update of `change` on endpoint `id`: its filter and its update.
    async fn update_of(&self, id: &str, change: &Change) -> Result<Option<(Document, Document)>> {
        let by_id = doc! { "_id": id };
        let set = |field: &str, value: Bson| doc! { "$set": { field: value } };
        Ok(Some(match change {
            Change::Settings(s) => (by_id, set("settings", to_bson(s)?)),
            Change::Secrets(s) => (by_id, set("secrets", to_bson(s)?)),
            Change::State(s) => {
                let mut update = doc! { "state": to_bson(s)? };
                if *s == State::Active {
                    update.insert("retry", Bson::Null);
                }
                (by_id, doc! { "$set": update })
            }
            Change::Replay(r) => (by_id, set("replay", to_bson(r)?)),
            Change::Retry(r) => (by_id, set("retry", to_bson(r)?)),
            Change::Advance {
                replay: false,
                from,
                to,
            } => (
                doc! { "_id": id, "live": from },
                set("live", Bson::String(to.clone())),
            ),
            Change::Advance { replay: true, .. } => {
                // Whether the replay ends is the domain's rule: applied to
                // the endpoint as read, written if its replay is unmoved.
                let Some(mut held) = self.endpoint(id).await? else {
                    return Ok(None);
                };
                // The replay as read, whole: one replaced meanwhile (even
                // from the same place) is left alone.
                let was = held.replay.clone();
                if !held.apply(change) {
                    return Ok(None);
                }
                (
                    doc! { "_id": id, "replay": to_bson(&was)? },
                    set("replay", to_bson(&held.replay)?),
                )
            }
            Change::Claim {
                owner,
                now_ms,
                until_ms,
            } => (
                doc! { "_id": id, "$or": [
                    { "lease": Bson::Null },
                    { "lease.until_ms": { "$lte": *now_ms as i64 } },
                    { "lease.owner": owner },
                ] },
                set(
                    "lease",
                    doc! { "owner": owner, "until_ms": *until_ms as i64 }.into(),
                ),
            ),
            Change::Release { owner } => (
                doc! { "_id": id, "lease.owner": owner },
                set("lease", Bson::Null),
            ),
        }))
    }
}

#[async_trait]
impl Webhooks for MongoStore {
    async fn create_endpoint(&self, endpoint: &Endpoint, cap: usize) -> Result<()> {
        let held = self
            .db
            .webhooks
            .count_documents(doc! {})
            .await
            .map_err(db_err("counting webhook endpoints"))?;
        if held as usize >= cap {
            return Err(too_many_webhooks(cap));
        }
        match self.db.webhooks.insert_one(endpoint_doc(endpoint)?).await {
            Ok(_) => Ok(()),
            Err(e) if is_duplicate_key(&e) => Err(Error::conflict(
                "webhook_exists",
                "an endpoint of that id exists",
            )),
            Err(e) => Err(db_err("storing a webhook endpoint")(e)),
        }
    }

    async fn endpoint(&self, id: &str) -> Result<Option<Endpoint>> {
        let found = self
            .db
            .webhooks
            .find_one(doc! { "_id": id })
            .await
            .map_err(db_err("reading a webhook endpoint"))?;
        found.map(|d| from_doc(d, Some("id"))).transpose()
    }

    async fn endpoints(&self) -> Result<Vec<Endpoint>> {
        let docs: Vec<Document> = self
            .db
            .webhooks
            .find(doc! {})
            .sort(doc! { "_id": 1 })
            .await
            .map_err(db_err("reading the webhook endpoints"))?
            .try_collect()
            .await
            .map_err(db_err("reading the webhook endpoints"))?;
        docs.into_iter().map(|d| from_doc(d, Some("id"))).collect()
    }

    async fn change_endpoint(&self, id: &str, change: &Change) -> Result<bool> {
        let Some((filter, update)) = self.update_of(id, change).await? else {
            return Ok(false);
        };
        let done = self
            .db
            .webhooks
            .update_one(filter, update)
            .await
            .map_err(db_err("changing a webhook endpoint"))?;
        Ok(done.matched_count == 1)
    }

    async fn delete_endpoint(&self, id: &str) -> Result<bool> {
        let done = self
            .db
            .webhooks
            .delete_one(doc! { "_id": id })
            .await
            .map_err(db_err("deleting a webhook endpoint"))?;
        self.db
            .webhook_attempts
            .delete_many(doc! { "endpoint": id })
            .await
            .map_err(db_err("deleting a webhook endpoint's deliveries"))?;
        Ok(done.deleted_count == 1)
    }

    async fn record_attempt(&self, id: &str, attempt: &Attempt) -> Result<()> {
        let Bson::Document(mut d) = to_bson(attempt)? else {
            return Err(Error::internal("an attempt is a document"));
        };
        d.insert("endpoint", id);
        self.db
            .webhook_attempts
            .insert_one(d)
            .await
            .map_err(db_err("logging a webhook delivery"))?;
        if attempt.seq.is_multiple_of(64) {
            self.trim_attempts(id).await?;
        }
        Ok(())
    }

    async fn attempts(&self, id: &str, before: Option<u64>, limit: usize) -> Result<Vec<Attempt>> {
        let mut filter = doc! { "endpoint": id };
        if let Some(b) = before {
            filter.insert("seq", doc! { "$lt": b as i64 });
        }
        let docs: Vec<Document> = self
            .db
            .webhook_attempts
            .find(filter)
            .sort(doc! { "seq": -1 })
            .limit(limit as i64)
            .await
            .map_err(db_err("reading a webhook endpoint's deliveries"))?
            .try_collect()
            .await
            .map_err(db_err("reading a webhook endpoint's deliveries"))?;
        docs.into_iter()
            .map(|mut d| {
                d.remove("endpoint");
                from_doc(d, None)
            })
            .collect()
    }
}

impl MongoStore {
    /// Past the cap by a tenth, deletes all but the newest
    /// [`KEPT_ATTEMPTS`].
    async fn trim_attempts(&self, id: &str) -> Result<()> {
        let what = "trimming a webhook endpoint's deliveries";
        let held = self
            .db
            .webhook_attempts
            .count_documents(doc! { "endpoint": id })
            .await
            .map_err(db_err(what))?;
        if (held as usize) <= KEPT_ATTEMPTS + KEPT_ATTEMPTS / 10 {
            return Ok(());
        }
        let cut = self
            .db
            .webhook_attempts
            .find_one(doc! { "endpoint": id })
            .sort(doc! { "seq": -1 })
            .skip(KEPT_ATTEMPTS as u64)
            .await
            .map_err(db_err(what))?;
        if let Some(seq) = cut.and_then(|d| d.get("seq").cloned()) {
            self.db
                .webhook_attempts
                .delete_many(doc! { "endpoint": id, "seq": { "$lte": seq } })
                .await
                .map_err(db_err(what))?;
        }
        Ok(())
    }
}
