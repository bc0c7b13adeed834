//! Webhooks: endpoints that receive the firehose's public acts by HTTP
//! POST, signed as Standard Webhooks sign them. What an endpoint is and
//! how each change to it applies ([`endpoint`]), how a request is signed
//! ([`sign`]), when a failed delivery is tried again ([`schedule`]) and
//! which addresses are never called ([`address`]) are decided here once;
//! the stores keep endpoints, `socialite_core::webhooks` delivers.

pub mod address;
pub mod endpoint;
pub mod schedule;
pub mod sign;

#[cfg(test)]
mod tests;

pub use endpoint::{
    Attempt, Change, Endpoint, Lease, Outcome, Replay, Retry, Secrets, Settings, State,
};
