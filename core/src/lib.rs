//! Socialite's core: the domain, the ports, every rule that decides what a
//! timeline holds, and the use cases. Backends (embedded, MongoDB, Kafka)
//! implement the ports in crates of their own; the API crate maps the use
//! cases to REST and gRPC; the runtime crate opens backends from settings.
//!
//! Core must not know any backend, driver, transport or setting source: it
//! depends on the protobuf event schema and nothing of the services.
//!
//! # Layout
//!
//! - [`model`], [`ids`], [`event`], [`error`]: the domain and its limits;
//!   [`numbers`]: dense timeline numbers, which fanout's target lists carry.
//! - [`ports`]: one trait per capability (`ContentStore`, `GraphStore`,
//!   `Outbox`, `EventLog`, `TimelineStore`), and [`backends`]: all of them
//!   opened, metered by [`metered`].
//! - [`rules`]: the checks that refuse writes, what a deletion tells the
//!   pipeline, which entries a stored timeline accepts. Every backend obeys
//!   them; the conformance suite proves it.
//! - [`plan`]: each write's sequence (facts read, checks run, steps
//!   applied), decided once; a backend supplies only the primitives.
//! - [`feed`]: what goes into whose timeline: read-time merge, the cached read
//!   path with activation of dormant users, and fanout of log events.
//! - [`ingest`] and [`reads`]: the operations the APIs offer, validated once
//!   for REST and gRPC alike.
//! - [`live`]: live timelines, pushed to open streams as fanout applies them.
//! - [`relay`] (outbox → log) and [`worker`] (log → timelines): the two loops
//!   of the pipeline; [`health`] (with [`fault`]), [`metrics`], [`shutdown`] serve them.
//! - [`sim`]: seeded random numbers and Zipf picks for tests, benchmarks and
//!   retry jitter.

pub mod accounts;
pub mod backends;
pub mod backups;
pub mod deletions;
pub mod error;
pub mod event;
pub mod fault;
pub mod format;
pub mod feed;
pub mod gate;
pub mod health;
pub mod ids;
pub mod ingest;
pub mod live;
pub mod metered;
pub mod metrics;
pub mod model;
pub mod numbers;
pub mod plan;
pub mod ports;
pub mod reads;
pub mod redact;
pub mod relay;
pub mod rules;
pub mod shutdown;
pub mod sim;
pub mod trace;
pub mod transfer;
pub mod worker;

pub use error::{Error, ErrorKind, Result};
