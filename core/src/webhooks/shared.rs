//! What every endpoint task of a process shares.

use super::config::{now_ms, WebhookConfig};
use super::outbound::Outbound;
use crate::firehose::Delivered;
use crate::ports::{EventLog, Webhooks};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How often a delivering task renews its lease (and at least once
/// between two requests).
pub(super) const RENEW_EVERY: Duration = Duration::from_secs(3);

/// A request's body from its acts: `true` when the endpoint takes
/// batches (the JSON is the transport's: `socialite_api`).
pub type Encode = Arc<dyn Fn(&[Delivered], bool) -> Vec<u8> + Send + Sync>;

/// What every endpoint task of the process shares.
pub(super) struct Shared {
    pub(super) store: Arc<dyn Webhooks>,
    pub(super) log: Arc<dyn EventLog>,
    pub(super) outbound: Arc<dyn Outbound>,
    pub(super) encode: Encode,
    pub(super) config: WebhookConfig,
    /// This process, as leases name it.
    pub(super) owner: String,
    pub(super) seq: AtomicU64,
}

impl Shared {
    /// How long a lease lasts unless renewed: longer than a request may
    /// take after the last renewal, so that no other process takes the
    /// endpoint while a request is in flight (with a margin for clocks).
    pub(super) fn lease(&self) -> Duration {
        self.config.timeout + 2 * RENEW_EVERY + Duration::from_secs(5)
    }

    /// A delivery log sequence number: the time in microseconds, made to
    /// grow within the process.
    pub(super) fn next_seq(&self) -> u64 {
        let now = now_ms() * 1000;
        let mut held = self.seq.load(Ordering::Relaxed);
        loop {
            let next = held.max(now) + 1;
            match self
                .seq
                .compare_exchange(held, next, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return next,
                Err(now_held) => held = now_held,
            }
        }
    }
}
