//! The webhooks port: the endpoints an admin registered, with how far
//! delivery went, and each one's delivery log. Every change to an endpoint
//! is a [`Change`] whose rule is [`Endpoint::apply`]; a store runs each in
//! one atomic step, so an admin's edit and a delivering process's progress
//! never undo each other.

use super::metered::{port, Metered, Port};
use crate::error::Result;
use socialite_domain::webhooks::{Attempt, Change, Endpoint};

port! {
    pub trait Webhooks: Port as "webhooks" for Metered<dyn Webhooks> {
        /// Stores a new endpoint; 409 `too_many_webhooks` when `cap` exist.
        async fn create_endpoint(&self, endpoint: &Endpoint, cap: usize) -> Result<()>;
        async fn endpoint(&self, id: &str) -> Result<Option<Endpoint>>;
        /// Every endpoint, in id order (at most the cap).
        async fn endpoints(&self) -> Result<Vec<Endpoint>>;
        /// Applies `change` as [`Endpoint::apply`] does, atomically; false if
        /// there is no such endpoint or the change's condition did not hold.
        async fn change_endpoint(&self, id: &str, change: &Change) -> Result<bool>;
        /// Removes the endpoint and its delivery log; false if there was none.
        async fn delete_endpoint(&self, id: &str) -> Result<bool>;
        /// Adds an attempt to the endpoint's log, keeping about the newest
        /// [`socialite_domain::webhooks::endpoint::KEPT_ATTEMPTS`].
        async fn record_attempt(&self, id: &str, attempt: &Attempt) -> Result<()>;
        /// The endpoint's attempts, newest first, those with `seq` below
        /// `before` when given.
        async fn attempts(&self, id: &str, before: Option<u64>, limit: usize) -> Result<Vec<Attempt>>;
    }
}

/// 409 `too_many_webhooks`: the cap of endpoints is reached.
pub fn too_many(cap: usize) -> crate::error::Error {
    crate::error::Error::conflict(
        "too_many_webhooks",
        format!(
            "at most {cap} webhook endpoints may be registered (--max-webhooks); delete one first"
        ),
    )
}
