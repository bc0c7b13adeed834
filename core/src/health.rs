//! Readiness: whether the backends answer and, where the process runs a
//! fanout worker, whether it holds its place in the consumer group.

use crate::ids::UserId;
use crate::ports::{ContentStore, EventLog};
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// Whether a fanout worker holds its place in its consumer group: set by
/// the worker, read by readiness probes, and awaited (not polled) by a
/// process that answers only once its worker has joined.
#[derive(Clone)]
pub struct Joined(Arc<tokio::sync::watch::Sender<bool>>);

impl Default for Joined {
    fn default() -> Self {
        Joined(Arc::new(tokio::sync::watch::Sender::new(false)))
    }
}

impl Joined {
    pub fn set(&self, joined: bool) {
        self.0.send_replace(joined);
    }

    pub fn get(&self) -> bool {
        *self.0.borrow()
    }

    /// Waits at most `limit` for the worker to join; whether it has.
    pub async fn wait(&self, limit: Duration) -> bool {
        let mut joined = self.0.subscribe();
        let waited = tokio::time::timeout(limit, joined.wait_for(|j| *j)).await;
        matches!(waited, Ok(Ok(_)))
    }
}

#[derive(Clone)]
pub struct Health {
    content: Arc<dyn ContentStore>,
    log: Arc<dyn EventLog>,
    /// Set by the worker once it has joined its group.
    worker: Option<Joined>,
}

#[derive(Debug, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Health {
    pub fn new(
        content: Arc<dyn ContentStore>,
        log: Arc<dyn EventLog>,
        worker: Option<Joined>,
    ) -> Health {
        Health {
            content,
            log,
            worker,
        }
    }

    /// Every check, and whether all passed.
    pub async fn ready(&self) -> (bool, Vec<Check>) {
        let probe = UserId::parse("readiness-probe").expect("a valid id");
        let mut checks = vec![
            check(
                "content_store",
                self.content.get_user(&probe).await.map(|_| ()),
            ),
            check("event_log", self.log.ping().await),
        ];
        if let Some(joined) = &self.worker {
            let ok = joined.get();
            checks.push(Check {
                name: "fanout_consumer",
                ok,
                error: (!ok).then(|| "the fanout worker has not joined its group".into()),
            });
        }
        (checks.iter().all(|c| c.ok), checks)
    }
}

fn check(name: &'static str, result: crate::Result<()>) -> Check {
    Check {
        name,
        ok: result.is_ok(),
        error: result.err().map(|e| e.message().to_owned()),
    }
}
