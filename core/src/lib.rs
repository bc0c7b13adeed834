//! Socialite's core: the domain, the ports, the feed logic and the embedded
//! adapters. Services are thin shells around it.
//!
//! # Layout
//!
//! - [`model`], [`ids`], [`event`], [`error`]: the domain and its limits.
//! - [`ports`]: one trait per store (`ContentStore`, `GraphStore`, `Outbox`,
//!   `EventLog`, `TimelineStore`).
//! - [`feed`]: what goes into whose timeline: read-time merge, the cached read
//!   path with activation of dormant users, and fanout of log events.
//! - [`ingest`] and [`reads`]: the operations the APIs offer, validated once
//!   for REST and gRPC alike.
//! - [`relay`] (outbox → log) and [`worker`] (log → caches): the two loops of
//!   the pipeline.
//! - [`embedded`]: the default backends, persistent, in one process.
//! - [`backends`]: opens them.

pub mod backends;
pub mod embedded;
pub mod error;
pub mod event;
pub mod feed;
pub mod health;
pub mod ids;
pub mod ingest;
pub mod metered;
pub mod metrics;
pub mod model;
pub mod ports;
pub mod reads;
pub mod relay;
pub mod shutdown;
pub mod sim;
pub mod worker;

pub use error::{Error, ErrorKind, Result};
