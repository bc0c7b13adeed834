//! The embedded store's one write primitive: a planned write run as a job of
//! the writer (group committed with the others of its batch), then the
//! caches refreshed from what it applied, whichever write it was.

use crate::store::EmbeddedStore;
use async_trait::async_trait;
use socialite_core::error::Result;
use socialite_core::plan::run_ready;
use socialite_core::plan::Ledger;
use socialite_core::ports::Transact;
use socialite_core::write::{Done, Write};
use std::sync::Arc;

#[async_trait]
impl Transact for EmbeddedStore {
    async fn transact(&self, write: Write) -> Result<Done> {
        let (done, ledger) = self
            .writer
            .write(move |ctx| {
                ctx.ledger = Ledger::of(&write);
                let done = run_ready(write.plan(ctx));
                // Refused after writing: what it wrote must not commit.
                ctx.undo = done.is_err() && ctx.ledger.steps > 0;
                let done = done?;
                Ok((done, std::mem::take(&mut ctx.ledger)))
            })
            .await?;
        self.committed(ledger);
        Ok(done)
    }
}

impl EmbeddedStore {
    /// The post caches follow the posts a committed write stored, removed
    /// or rewrote; then the relay is woken if it queued events (in that
    /// order: what fanout does with the events may read the caches).
    fn committed(&self, ledger: Ledger) {
        let emitted = ledger.emitted;
        for post in ledger.posted {
            self.recent.posted(&post.author, post.id.0);
            self.posts.put(Arc::new(post));
        }
        for (author, id) in ledger.removed {
            self.recent.removed(&author, id.0);
            self.posts.remove(id);
        }
        for id in ledger.rewritten {
            self.posts.remove(id);
        }
        if emitted > 0 {
            self.outbox_ready.notify_one();
        }
    }
}
