//! Readiness: whether the backends answer and, where the process runs a
//! fanout worker, whether it holds its place in the consumer group.

use crate::ids::UserId;
use crate::ports::{ContentStore, EventLog};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Clone)]
pub struct Health {
    content: Arc<dyn ContentStore>,
    log: Arc<dyn EventLog>,
    /// Set by the worker once it has joined its group.
    worker: Option<Arc<AtomicBool>>,
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
        worker: Option<Arc<AtomicBool>>,
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
        if let Some(flag) = &self.worker {
            let ok = flag.load(Ordering::Relaxed);
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
