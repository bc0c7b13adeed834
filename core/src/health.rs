//! Liveness and readiness: whether the backends answer and can write, why
//! not, and, where the process runs a fanout worker, whether it holds its
//! place in the consumer group.
//!
//! - **Ready** (`/readyz`): every store answers within [`CHECK_LIMIT`] and
//!   knows of no fault of its own (the embedded stores after an I/O error,
//!   until they reopened), and the worker, if any, has joined its group. A
//!   failing check names the store and why ([`FaultReason`]).
//! - **Alive** (`/healthz`): no store knows of a fault it cannot recover
//!   from by itself. A store that waits for space or for its server is
//!   alive (restarting would not help it); one whose file is corrupt or
//!   whose writer stopped is not, and says so.
//!
//! Each readiness evaluation sets `socialite_store_fault{store,reason}`;
//! [`Health::watch`] evaluates it in the background so the metric holds
//! without probes.

use crate::error::Error;
use crate::fault::{FaultReason, StoreFault};
use crate::ids::UserId;
use crate::metrics::metrics;
use crate::ports::{ContentStore, EventLog};
use crate::shutdown::Shutdown;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;

/// How long a readiness check may take: a store that does not answer by
/// then is not ready (a MongoDB driver would otherwise wait 30 s for a
/// server to select).
pub const CHECK_LIMIT: Duration = Duration::from_secs(2);

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
    /// Why a store's check failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<FaultReason>,
    /// Whether the store recovers by itself (a failed store check only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovers: Option<bool>,
}

/// The checks' names for the stores, which are also the metric's `store`.
const CONTENT: &str = "content_store";
const LOG: &str = "event_log";

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
        let content = match self.content.fault() {
            Some(fault) => faulted(CONTENT, fault),
            None => probed(CONTENT, self.content.get_user(&probe)).await,
        };
        let log = match self.log.fault() {
            Some(fault) => faulted(LOG, fault),
            None => probed(LOG, self.log.ping()).await,
        };
        let mut checks = vec![content, log];
        for check in &checks {
            record(check);
        }
        if let Some(joined) = &self.worker {
            let ok = joined.get();
            checks.push(Check {
                name: "fanout_consumer",
                ok,
                error: (!ok).then(|| "the fanout worker has not joined its group".into()),
                reason: None,
                recovers: None,
            });
        }
        (checks.iter().all(|c| c.ok), checks)
    }

    /// Whether the process is alive: false when a store knows it cannot
    /// recover by itself. Asks no server, so an unreachable MongoDB or
    /// Kafka (which the process waits out) never fails it. Returns the
    /// stores' known faults, recoverable ones included.
    pub fn alive(&self) -> (bool, Vec<Check>) {
        let faults: Vec<Check> = [(CONTENT, self.content.fault()), (LOG, self.log.fault())]
            .into_iter()
            .filter_map(|(name, fault)| Some(faulted(name, fault?)))
            .collect();
        (faults.iter().all(|c| c.recovers != Some(false)), faults)
    }

    /// Evaluates readiness every `every` until `shutdown`, so the fault
    /// metric holds without probes, and logs each time readiness turns.
    pub async fn watch(self, every: Duration, mut shutdown: Shutdown) {
        // Whether it was ready at the last evaluation, and whether turning
        // not ready was logged (not at start, while the worker joins).
        let (mut was, mut warned) = (None, false);
        loop {
            let (ready, checks) = tokio::select! {
                _ = shutdown.wait() => return,
                r = self.ready() => r,
            };
            if was == Some(true) && !ready {
                let failing: Vec<String> = checks
                    .iter()
                    .filter(|c| !c.ok)
                    .map(|c| format!("{}: {}", c.name, c.error.as_deref().unwrap_or("")))
                    .collect();
                tracing::warn!(failing = %failing.join("; "), "not ready");
                warned = true;
            } else if ready && warned {
                tracing::info!("ready again");
                warned = false;
            }
            was = Some(ready);
            if !shutdown.pause(every).await {
                return;
            }
        }
    }
}

fn faulted(name: &'static str, fault: StoreFault) -> Check {
    Check {
        name,
        ok: false,
        error: Some(fault.message),
        reason: Some(fault.reason),
        recovers: Some(fault.recovers),
    }
}

/// Runs a store's probe within [`CHECK_LIMIT`].
async fn probed<T>(
    name: &'static str,
    probe: impl std::future::Future<Output = crate::Result<T>>,
) -> Check {
    let result = match tokio::time::timeout(CHECK_LIMIT, probe).await {
        Ok(r) => r.map(|_| ()),
        Err(_) => Err(Error::unavailable(format!(
            "no answer within {} s",
            CHECK_LIMIT.as_secs()
        ))),
    };
    match result {
        Ok(()) => Check {
            name,
            ok: true,
            error: None,
            reason: None,
            recovers: None,
        },
        Err(e) => Check {
            name,
            ok: false,
            error: Some(e.message().to_owned()),
            reason: Some(FaultReason::of(&e)),
            recovers: Some(true),
        },
    }
}

/// Sets the store's fault gauges: 1 for the reason it fails with, 0 for
/// the others.
fn record(check: &Check) {
    for reason in FaultReason::ALL {
        let on = check.reason == Some(reason);
        metrics()
            .store_fault(check.name, reason.label())
            .set(on as i64);
    }
}
