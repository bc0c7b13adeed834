//! The producer: ingestion of users, follows and posts over REST and gRPC, and
//! the outbox relay that takes their events to the log. The logic is
//! `socialite_core::ingest`; this crate is transport and wiring.

mod grpc;
mod rest;

pub use grpc::{grpc_service, GRPC_NAME};
pub use rest::rest_routes;

use socialite_core::ports::{EventLog, Outbox};
use socialite_core::relay::run_relay;
use socialite_core::shutdown::Shutdown;
use std::sync::Arc;

/// Starts the relay from the outbox to the log.
pub fn spawn_relay(
    outbox: Arc<dyn Outbox>,
    log: Arc<dyn EventLog>,
    shutdown: Shutdown,
) -> tokio::task::JoinHandle<socialite_core::Result<()>> {
    tokio::spawn(run_relay(outbox, log, shutdown))
}
