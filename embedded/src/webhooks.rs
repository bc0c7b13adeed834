//! Webhook endpoints in `content.redb`: `WEBHOOKS` holds each endpoint as
//! JSON, `WEBHOOK_ATTEMPTS` its delivery log by (endpoint, seq). Each
//! change is one write job, applied by the domain's rule; a delivering
//! process's progress (cursor, lease, attempts) is written lazily: lost in
//! a crash it is redone, the events delivered again (at least once).

use crate::store::EmbeddedStore;
use crate::tables::{decode, encode, StoreResult, WEBHOOKS, WEBHOOK_ATTEMPTS};
use async_trait::async_trait;
use redb::{ReadableTable, ReadableTableMetadata, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ports::{too_many_webhooks, Webhooks};
use socialite_core::webhooks::endpoint::KEPT_ATTEMPTS;
use socialite_core::webhooks::{Attempt, Change, Endpoint};

fn load(txn: &WriteTransaction, id: &str) -> Result<Option<Endpoint>> {
    let table = txn.open_table(WEBHOOKS).store()?;
    let found = table.get(id).store()?;
    found.map(|v| decode(v.value())).transpose()
}

/// Whether a change only records a delivering process's progress.
fn progress(change: &Change) -> bool {
    matches!(
        change,
        Change::Advance { .. } | Change::Claim { .. } | Change::Release { .. } | Change::Retry(_)
    )
}

#[async_trait]
impl Webhooks for EmbeddedStore {
    async fn create_endpoint(&self, endpoint: &Endpoint, cap: usize) -> Result<()> {
        let endpoint = endpoint.clone();
        self.writer
            .write(move |ctx| {
                let mut table = ctx.txn.open_table(WEBHOOKS).store()?;
                if table.len().store()? as usize >= cap {
                    return Err(too_many_webhooks(cap));
                }
                table
                    .insert(endpoint.id.as_str(), encode(&endpoint).as_slice())
                    .store()?;
                Ok(())
            })
            .await
    }

    async fn endpoint(&self, id: &str) -> Result<Option<Endpoint>> {
        self.read(|txn| {
            let table = txn.open_table(WEBHOOKS).store()?;
            let found = table.get(id).store()?;
            found.map(|v| decode(v.value())).transpose()
        })
    }

    async fn endpoints(&self) -> Result<Vec<Endpoint>> {
        self.read(|txn| {
            let table = txn.open_table(WEBHOOKS).store()?;
            let mut out = Vec::new();
            for row in table.iter().store()? {
                out.push(decode(row.store()?.1.value())?);
            }
            Ok(out)
        })
    }

    async fn change_endpoint(&self, id: &str, change: &Change) -> Result<bool> {
        let (id, change) = (id.to_owned(), change.clone());
        let lazy = progress(&change);
        let job = move |ctx: &mut crate::store::Ctx<'_>| {
            let Some(mut endpoint) = load(ctx.txn, &id)? else {
                return Ok(false);
            };
            if !endpoint.apply(&change) {
                return Ok(false);
            }
            let mut table = ctx.txn.open_table(WEBHOOKS).store()?;
            table
                .insert(id.as_str(), encode(&endpoint).as_slice())
                .store()?;
            Ok(true)
        };
        match lazy {
            true => self.writer.write_lazy(job).await,
            false => self.writer.write(job).await,
        }
    }

    async fn delete_endpoint(&self, id: &str) -> Result<bool> {
        let id = id.to_owned();
        self.writer
            .write(move |ctx| {
                let mut table = ctx.txn.open_table(WEBHOOKS).store()?;
                let found = table.remove(id.as_str()).store()?.is_some();
                let mut attempts = ctx.txn.open_table(WEBHOOK_ATTEMPTS).store()?;
                attempts
                    .retain_in((id.as_str(), 0)..=(id.as_str(), u64::MAX), |_, _| false)
                    .store()?;
                Ok(found)
            })
            .await
    }

    async fn record_attempt(&self, id: &str, attempt: &Attempt) -> Result<()> {
        let (id, attempt) = (id.to_owned(), attempt.clone());
        self.writer
            .write_lazy(move |ctx| {
                let mut table = ctx.txn.open_table(WEBHOOK_ATTEMPTS).store()?;
                table
                    .insert((id.as_str(), attempt.seq), encode(&attempt).as_slice())
                    .store()?;
                // Past the cap by a tenth, the oldest tenth goes: trimming
                // is then rare.
                let range = (id.as_str(), 0)..=(id.as_str(), u64::MAX);
                if attempt.seq.is_multiple_of(64) {
                    let held = table.range(range.clone()).store()?.count();
                    if held > KEPT_ATTEMPTS + KEPT_ATTEMPTS / 10 {
                        let cut = table
                            .range(range)
                            .store()?
                            .nth(held - KEPT_ATTEMPTS)
                            .map(|r| r.map(|(k, _)| k.value().1))
                            .transpose()
                            .store()?
                            .unwrap_or(0);
                        table
                            .retain_in((id.as_str(), 0)..(id.as_str(), cut), |_, _| false)
                            .store()?;
                    }
                }
                Ok(())
            })
            .await
    }

    async fn attempts(&self, id: &str, before: Option<u64>, limit: usize) -> Result<Vec<Attempt>> {
        self.read(|txn| {
            let table = txn.open_table(WEBHOOK_ATTEMPTS).store()?;
            let end = before.unwrap_or(u64::MAX);
            let mut out = Vec::new();
            for row in table.range((id, 0)..(id, end)).store()?.rev().take(limit) {
                out.push(decode(row.store()?.1.value())?);
            }
            Ok(out)
        })
    }
}
