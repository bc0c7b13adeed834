//! The applied feed of a single process (the embedded default): a
//! broadcast channel from the fanout worker to the live hub.

use crate::event::Event;
use crate::ports::{Applied, AppliedFeed, AppliedStream};
use async_trait::async_trait;
use std::sync::Arc;
use tokio::sync::broadcast;

/// Batches a slow subscriber may fall behind before it is told it lost some.
const BACKLOG: usize = 4096;

pub struct InProcessFeed {
    tx: broadcast::Sender<Arc<Vec<Event>>>,
}

impl InProcessFeed {
    pub fn new() -> InProcessFeed {
        InProcessFeed {
            tx: broadcast::channel(BACKLOG).0,
        }
    }
}

impl Default for InProcessFeed {
    fn default() -> Self {
        InProcessFeed::new()
    }
}

#[async_trait]
impl AppliedFeed for InProcessFeed {
    async fn publish(&self, events: &[Event]) -> crate::Result<()> {
        // No subscriber is no error: nobody holds a stream.
        let _ = self.tx.send(Arc::new(events.to_vec()));
        Ok(())
    }

    async fn subscribe(&self) -> crate::Result<Box<dyn AppliedStream>> {
        Ok(Box::new(Subscriber(self.tx.subscribe())))
    }
}

struct Subscriber(broadcast::Receiver<Arc<Vec<Event>>>);

#[async_trait]
impl AppliedStream for Subscriber {
    async fn next(&mut self) -> Applied {
        match self.0.recv().await {
            Ok(events) => Applied::Events(events.to_vec()),
            Err(broadcast::error::RecvError::Lagged(_)) => Applied::Lost,
            // The feed lives as long as the process's backends.
            Err(broadcast::error::RecvError::Closed) => std::future::pending().await,
        }
    }
}
