//! The store's one write primitive ([`Transact`]) on MongoDB: a planned
//! write run in a transaction ([`MongoTxn`]), retried as the database
//! retries it.

use super::MongoTxn;
use crate::store::MongoStore;
use async_trait::async_trait;
use socialite_core::error::Result;
use socialite_core::plan::Ledger;
use socialite_core::ports::Transact;
use socialite_core::write::{Done, Write};

/// The store's one write primitive: the write planned in a transaction of
/// the store (retried as `Db::transaction` retries; each attempt keeps a
/// ledger of its own), then what follows a commit, from what it applied.
#[async_trait]
impl Transact for MongoStore {
    async fn transact(&self, write: Write) -> Result<Done> {
        let write = &write;
        let (done, ledger) = self
            .db
            .transaction(write.doing(), |mut s| async move {
                let txn = &mut MongoTxn {
                    store: self,
                    s: &mut s,
                    ledger: Ledger::of(write),
                    ahead: Default::default(),
                    pending: Vec::new(),
                };
                let r = match write.plan(txn).await {
                    Ok(done) => txn.flush_posts().await.map(|()| done),
                    Err(e) => Err(e),
                };
                let ledger = std::mem::take(&mut txn.ledger);
                (s, r.map(|done| (done, ledger)))
            })
            .await?;
        self.committed(&ledger);
        Ok(done)
    }
}

impl MongoStore {
    /// The relay is woken when a write queued events, whichever write it
    /// was (it would otherwise find them at its idle poll).
    fn committed(&self, ledger: &Ledger) {
        if ledger.emitted > 0 {
            self.outbox_ready.notify_one();
        }
    }
}
