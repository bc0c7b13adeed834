//! The deliveries of one process: every second it looks for active
//! endpoints whose lease is free, takes them, and runs one
//! [`Courier`](super::courier::Courier) task per endpoint it holds.

use super::config::{now_ms, WebhookConfig};
use super::courier::Courier;
use super::outbound::Outbound;
use super::shared::{Encode, Shared};
use crate::error::Result;
use crate::ports::{EventLog, Webhooks};
use crate::shutdown::Shutdown;
use socialite_domain::webhooks::{Change, State};
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

/// How often endpoints are looked for.
const SCAN_EVERY: Duration = Duration::from_secs(1);
/// How long the endpoints' tasks may take to stop on shutdown.
const STOP_WAIT: Duration = Duration::from_secs(5);

pub struct Deliveries {
    shared: Arc<Shared>,
}

impl Deliveries {
    pub fn new(
        store: Arc<dyn Webhooks>,
        log: Arc<dyn EventLog>,
        outbound: Arc<dyn Outbound>,
        encode: Encode,
        config: WebhookConfig,
    ) -> Deliveries {
        let mut tag = [0u8; 6];
        let _ = getrandom::fill(&mut tag);
        let tag: String = tag.iter().map(|b| format!("{b:02x}")).collect();
        let owner = format!("{}-{}", std::process::id(), tag);
        Deliveries {
            shared: Arc::new(Shared {
                store,
                log,
                outbound,
                encode,
                config,
                owner,
                seq: AtomicU64::new(0),
            }),
        }
    }

    /// Delivers until `shutdown`, then lets every lease go.
    pub async fn run(self, mut shutdown: Shutdown) -> Result<()> {
        let mut tasks: HashMap<String, tokio::task::JoinHandle<()>> = HashMap::new();
        loop {
            tasks.retain(|_, t| !t.is_finished());
            if let Err(e) = self.take_free(&mut tasks, &shutdown).await {
                tracing::warn!(error = %e.chain(), "cannot read the webhook endpoints; trying again");
            }
            if !shutdown.pause(SCAN_EVERY).await {
                break;
            }
        }
        for (_, task) in tasks {
            let _ = tokio::time::timeout(STOP_WAIT, task).await;
        }
        Ok(())
    }

    async fn take_free(
        &self,
        tasks: &mut HashMap<String, tokio::task::JoinHandle<()>>,
        shutdown: &Shutdown,
    ) -> Result<()> {
        let now = now_ms();
        for ep in self.shared.store.endpoints().await? {
            let free = ep
                .lease
                .as_ref()
                .is_none_or(|l| l.until_ms <= now || l.owner == self.shared.owner);
            if ep.state != State::Active || tasks.contains_key(&ep.id) || !free {
                continue;
            }
            let claim = Change::Claim {
                owner: self.shared.owner.clone(),
                now_ms: now,
                until_ms: now + self.shared.lease().as_millis() as u64,
            };
            if self.shared.store.change_endpoint(&ep.id, &claim).await? {
                let courier = Courier::new(ep.id.clone(), self.shared.clone());
                tasks.insert(ep.id, tokio::spawn(courier.run(shutdown.clone())));
            }
        }
        Ok(())
    }
}
