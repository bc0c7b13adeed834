//! The operator's settings of webhook delivery, and what the use cases
//! and the delivering tasks share.

use socialite_domain::webhooks::schedule::Schedule;
use std::time::Duration;

/// Endpoints registered at most, by default.
pub const DEFAULT_MAX_WEBHOOKS: usize = 64;

/// How webhooks are delivered: the operator's settings.
#[derive(Debug, Clone)]
pub struct WebhookConfig {
    /// Endpoints that may be registered.
    pub max_endpoints: usize,
    /// When failed deliveries are tried again.
    pub schedule: Schedule,
    /// Whether endpoints may be internal addresses (loopback, private,
    /// link-local...): off unless an operator allows it.
    pub allow_internal: bool,
    /// How long one request may take, answer included.
    pub timeout: Duration,
    /// How long a rotated secret signs beside the new one, by default.
    pub rotation_grace: Duration,
}

impl Default for WebhookConfig {
    fn default() -> WebhookConfig {
        WebhookConfig {
            max_endpoints: DEFAULT_MAX_WEBHOOKS,
            schedule: Schedule::default(),
            allow_internal: false,
            timeout: Duration::from_secs(15),
            rotation_grace: Duration::from_secs(24 * 3600),
        }
    }
}

/// Most bytes of an answer's body read (the rest is not waited for).
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// What the log keeps for endpoint `id` (see
/// [`crate::ports::EventLog::hold`]).
pub(super) fn hold_name(id: &str) -> String {
    format!("webhook:{id}")
}

/// Milliseconds since the epoch.
pub(super) fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// 404 `webhook_not_found`.
pub(super) fn not_found(id: &str) -> crate::error::Error {
    crate::error::Error::not_found("webhook_not_found", format!("no webhook endpoint {id:?}"))
}
