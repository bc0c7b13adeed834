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
//! - [`model`], [`ids`], [`event`], [`error`], [`rules`], [`format`](mod@format),
//!   [`plan`], [`numbers`], [`trace`]: the domain floor, the crate
//!   `socialite-domain` (re-exported here): values, events, the rules
//!   that decide every write, the export format and the write planners.
//! - [`ports`]: one trait per capability (`ContentStore`, `GraphStore`,
//!   `Outbox`, `EventLog`, `TimelineStore`), and [`backends`]: all of them
//!   opened, each metered (`ports::Metered`, generated with its port).
//! - [`feed`]: what goes into whose timeline: read-time merge, the cached read
//!   path with activation of dormant users, and fanout of log events.
//! - [`ingest`] and [`reads`]: the operations the APIs offer, validated once
//!   for REST and gRPC alike.
//! - [`live`]: live timelines, pushed to open streams as fanout applies them.
//! - [`relay`] (outbox → log) and [`worker`] (log → timelines): the two loops
//!   of the pipeline; [`health`] (with [`fault`]), [`metrics`], [`shutdown`] serve them.
//! - [`standings`]: account standings as this process knows them, read through the
//!   `Accounts` port and kept fresh; [`deletions`]: finishing the user
//!   deletions a crash cut short.
//! - [`transfer`]: export, import, verification, a migration's catch-up and
//!   warm-up, over the `Transfer` port; [`backups`]: backups on request;
//!   [`gate`]: the write gate a migration closes.
//! - [`sim`]: seeded random numbers and Zipf picks for tests, benchmarks and
//!   retry jitter; [`redact`]: secrets kept out of logged URIs.

pub use socialite_domain::{
    error, event, format, ids, model, numbers, plan, rules, timeline_change, trace,
};

pub mod backends;
pub mod backups;
pub mod deletions;
pub mod fault;
pub mod feed;
pub mod gate;
pub mod health;
pub mod ingest;
pub mod live;
pub mod metrics;
pub mod ports;
pub mod reads;
pub mod redact;
pub mod relay;
pub mod shutdown;
pub mod sim;
pub mod standings;
pub mod transfer;
pub mod worker;

pub use error::{Error, ErrorKind, Result};
