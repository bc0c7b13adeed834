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
//! - [`model`], [`ids`], [`event`], [`error`], [`checks`], [`plan`],
//!   [`write`], [`numbers`], [`trace`]: the domain's floor and its writes,
//!   from the crate `socialite-domain` (re-exported here). The domain's
//!   features (the rules and planners of accounts, graph, posts,
//!   interactions, notifications, feed, deletion and transfer) are named
//!   through `socialite_domain`, since core's own feed and transfer
//!   folders share their names.
//! - [`ports`]: one trait per capability (`ContentStore`, `GraphStore`,
//!   `Outbox`, `EventLog`, `TimelineStore`), and [`backends`]: all of them
//!   opened, each metered (`ports::Metered`, generated with its port).
//! - [`feed`]: what goes into whose timeline: read-time merge, the cached read
//!   path with activation of dormant users, and fanout of log events.
//! - [`ingest`] and [`reads`]: the use cases the APIs call, validated once
//!   for REST and gRPC alike: the two structs, what every operation shares
//!   (gates, ids, viewing) and the timelines' reads. Each feature's
//!   operations sit in its folder, as `impl` blocks of them: [`accounts`],
//!   [`graph`], [`posts`], [`interactions`], [`notifications`], [`markers`],
//!   [`bookmarks`],
//!   [`deletion`] (with finishing the deletions a crash cut short).
//! - [`live`]: live timelines, pushed to open streams as fanout applies them;
//!   [`firehose`]: the network's public acts, followed from a cursor.
//! - [`relay`] (outbox → log) and [`worker`] (log → timelines): the two loops
//!   of the pipeline; [`health`] (with [`fault`]), [`metrics`], [`shutdown`] serve them;
//!   [`priority`] orders reads, writes and fanout on busy cores.
//! - [`standings`]: account standings as this process knows them, read through the
//!   `Accounts` port and kept fresh.
//! - [`transfer`]: export, import, verification, a migration's catch-up and
//!   warm-up, over the `Transfer` port; [`backups`]: backups on request;
//!   [`gate`]: the write gate a migration closes.
//! - [`sim`]: seeded random numbers and Zipf picks for tests, benchmarks and
//!   retry jitter; [`redact`]: secrets kept out of logged URIs.

pub use socialite_domain::{checks, error, event, ids, model, numbers, plan, trace, write};

pub mod accounts;
pub mod backends;
pub mod backups;
pub mod bookmarks;
pub mod budgets;
pub mod deletion;
pub mod fault;
pub mod feed;
pub mod filters;
pub mod firehose;
pub mod gate;
pub mod graph;
pub mod health;
pub mod ingest;
pub mod interactions;
pub mod live;
pub mod load;
pub mod markers;
pub mod metrics;
pub mod notifications;
pub mod ports;
pub mod posts;
pub mod priority;
pub mod reads;
pub mod reads_first;
pub mod redact;
pub mod relay;
pub mod shutdown;
pub mod sim;
pub mod standings;
pub mod transfer;
pub mod webhooks;
pub mod worker;

pub use error::{Error, ErrorKind, Result};
