//! The settings of webhook delivery (docs/webhooks.md).

use crate::settings::parse_duration_secs;
use clap::Args;
use socialite_core::webhooks::schedule::{Schedule, DEFAULT};
use socialite_core::webhooks::{WebhookConfig, DEFAULT_MAX_WEBHOOKS};
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct WebhookArgs {
    /// Webhook endpoints that may be registered.
    #[arg(long, env = "SOCIALITE_MAX_WEBHOOKS", default_value_t = DEFAULT_MAX_WEBHOOKS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000))]
    pub max_webhooks: usize,
    /// When a failed webhook delivery is tried again: delays separated by
    /// commas (`ms`, `s`, `m`, `h`, `d`), each with 20 % jitter; after the
    /// last, the endpoint is turned off. The default spans about three days.
    #[arg(long, env = "SOCIALITE_WEBHOOK_RETRIES", default_value = DEFAULT, value_parser = Schedule::parse)]
    pub webhook_retries: Schedule,
    /// How long one webhook request may take, its answer included (1 s to
    /// 2 min; a lease on an endpoint lasts this and 11 s).
    #[arg(long, env = "SOCIALITE_WEBHOOK_TIMEOUT", default_value = "15s", value_parser = parse_duration_secs)]
    pub webhook_timeout: u64,
    /// Lets endpoints be internal addresses (loopback, private, link-local,
    /// cloud metadata): for a deployment whose receivers are on its own
    /// network. Off, such addresses are refused on registration and on every
    /// connection.
    #[arg(long, env = "SOCIALITE_WEBHOOK_ALLOW_INTERNAL")]
    pub webhook_allow_internal: bool,
}

impl WebhookArgs {
    pub fn config(&self) -> WebhookConfig {
        WebhookConfig {
            max_endpoints: self.max_webhooks,
            schedule: self.webhook_retries.clone(),
            allow_internal: self.webhook_allow_internal,
            timeout: Duration::from_secs(self.webhook_timeout.clamp(1, 120)),
            ..WebhookConfig::default()
        }
    }
}
