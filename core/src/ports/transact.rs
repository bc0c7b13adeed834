//! The one write primitive a backend implements: a transaction that runs a
//! write's plan. Every write method of the other ports is provided in terms
//! of it, so a backend holds no write of the domain, and what follows a
//! commit (waking the relay, refreshing caches) is decided in one place per
//! backend, from what the transaction applied.

use crate::error::Result;
use crate::write::{Done, Write};
use async_trait::async_trait;

#[async_trait]
pub trait Transact: Send + Sync + 'static {
    /// Runs `write`'s plan ([`Write::plan`]) in one transaction of the
    /// store (retried where the store retries one) on a transaction whose
    /// ledger is [`crate::plan::Ledger::of`] the write; once it
    /// commits, acts on what the ledger holds. Returns the plan's answer.
    async fn transact(&self, write: Write) -> Result<Done>;
}
