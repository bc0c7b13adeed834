//! The embedded default: every port of the pipeline in one process with no
//! servers. Users, the graph, posts and the outbox persist in `content.redb`,
//! the event log in `log.redb` (both redb: pure Rust, ACID, crash-safe
//! copy-on-write B-trees), and stored timelines live in memory, in the
//! layout of the configured feed model.
//!
//! This crate stores and fetches. What a write checks, what a deletion
//! queues and which entries a timeline accepts are `socialite_core::rules`,
//! which every function here calls; it must not know MongoDB, Kafka,
//! transports or settings sources.
//!
//! # Layout
//!
//! - [`config`]: the data directory and opening the stores.
//! - `store` (the handle), `content`, `graph`, `outbox`, `import` (bulk
//!   loading): `content.redb`, written through the group-commit `writer`.
//! - `log`: the event log with consumer offsets.
//! - `timelines` over `stored` (one user's timeline and its exactness
//!   rules), `layout` (capped array, time buckets, sized buckets; the capped
//!   array `packed` in bytes, the buckets as `slot`s) and
//!   `authors` (interned author ids).

mod accounts;
mod authors;
pub mod backup;
pub mod backup_tail;
pub mod config;
mod content;
mod deletion;
mod edge_runs;
mod edge_times;
mod exclusive;
mod filters;
mod graph;
mod groups;
mod import;
mod kept;
mod layout;
mod likes;
mod lists;
mod log;
mod log_tail;
mod markers;
mod mute_ends;
mod notices;
mod notify_since;
mod outbox;
mod packed;
mod post_cache;
mod post_rows;
mod recent;
mod recovery;
mod relations;
mod reposts;
mod slot;
mod store;
mod stored;
mod tables;
mod thread_mutes;
mod timelines;
mod transact;
mod transfer;
mod txn;
mod webhooks;
mod writer;

pub use config::EmbeddedConfig;
pub use layout::LayoutSpec;
pub use log::{EmbeddedLog, DEFAULT_RETENTION};
pub use store::EmbeddedStore;
pub use timelines::MemoryTimelines;
