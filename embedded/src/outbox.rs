//! The embedded store's outbox: events queued by its writes, in commit
//! order, until the relay has put them on the log.

use crate::store::EmbeddedStore;
use crate::tables::*;
use async_trait::async_trait;
use redb::ReadableTableMetadata;
use socialite_core::error::Result;
use socialite_core::event::Event;
use socialite_core::ports::Outbox;
use std::sync::Arc;
use tokio::sync::Notify;

#[async_trait]
impl Outbox for EmbeddedStore {
    async fn pending(&self, limit: usize) -> Result<Vec<(u64, Event)>> {
        self.read(|txn| {
            let outbox = txn.open_table(OUTBOX).store()?;
            let mut out = Vec::new();
            for item in outbox.range(0u64..).store()?.take(limit) {
                let (k, v) = item.store()?;
                out.push((k.value(), Event::decode(v.value())?));
            }
            Ok(out)
        })
    }

    async fn ack(&self, seqs: &[u64]) -> Result<()> {
        // Sequence numbers here follow commit order, so `pending` listed a prefix.
        let Some(&through) = seqs.iter().max() else {
            return Ok(());
        };
        self.writer
            .write_lazy(move |ctx| {
                ctx.txn
                    .open_table(OUTBOX)
                    .store()?
                    .retain_in(..=through, |_, _| false)
                    .store()?;
                Ok(())
            })
            .await
    }

    async fn backlog(&self) -> Result<u64> {
        self.read(|txn| txn.open_table(OUTBOX).store()?.len().store())
    }

    fn notifier(&self) -> Arc<Notify> {
        self.outbox_ready.clone()
    }
}
