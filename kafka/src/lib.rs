//! The event log on Kafka (rdkafka), behind the `EventLog` port: post events
//! on `<prefix>.posts` keyed by author, follow and account events on
//! `<prefix>.graph` keyed by the followed account, both created at start-up.
//!
//! This crate moves events; it decides nothing about timelines and must not
//! know the stores, the transports or the other backends.
//!
//! # Layout
//!
//! - [`config`]: the `kafka://` URI and its settings.
//! - `log`: the producer side (topics, idempotent appends) and the port.
//! - `consumer`: the consumer-group member, offsets stored after the writes
//!   they cover, rebalances.
//! - `stale`: its watch for partitions nobody consumes, and the backoff of
//!   the rejoins it makes.
//! - `applied`: the applied feed of live timelines on `<prefix>.applied`,
//!   which every subscriber reads whole from where it joined.
//! - `tail`: the log read from a cursor of one's own (the firehose),
//!   outside every group.
//! - [`security`]: TLS and SASL options, the clients' shared settings.
//! - `probe`: the first contact at start-up, whose refusal names the setting.
//! - `error`: Kafka errors as port errors.

mod applied;
pub mod config;
mod consumer;
mod error;
mod log;
mod position;
mod probe;
pub mod security;
mod stale;
mod tail;

pub use applied::KafkaApplied;
pub use config::KafkaConfig;
pub use log::KafkaLog;
