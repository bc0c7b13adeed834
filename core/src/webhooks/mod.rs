//! Webhooks: admins register HTTP endpoints ([`WebhookAdmin`]); each one
//! receives the firehose's public acts that its filter admits, signed per
//! Standard Webhooks, at least once and in cursor order ([`Deliveries`]).
//!
//! An endpoint's queue is the event log itself from the endpoint's stored
//! cursor: nothing is copied, so a restart or a kill -9 of any process
//! loses nothing, and the cursor moves only after the endpoint answered
//! 2xx. One process at a time delivers to an endpoint, under a lease in the
//! store; each endpoint has its own task, reader and request in flight, so
//! a dead or slow endpoint delays only itself.

mod admin;
mod batch;
mod config;
mod courier;
mod deliveries;
mod outbound;
mod shared;

pub use admin::{Edit, WebhookAdmin};
pub use config::{WebhookConfig, DEFAULT_MAX_WEBHOOKS, MAX_ANSWER_BYTES};
pub use deliveries::Deliveries;
pub use outbound::{Answer, Outbound, Request};
pub use shared::Encode;
pub use socialite_domain::webhooks::{
    address, endpoint, schedule, sign, Attempt, Change, Endpoint, Outcome, Replay, Retry, Secrets,
    Settings, State,
};
