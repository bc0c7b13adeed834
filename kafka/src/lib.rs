//! The event log on Kafka (rdkafka), behind the `EventLog` port: post events
//! on `<prefix>.posts` keyed by author, follow and account events on
//! `<prefix>.graph` keyed by the followed account, both created at start-up.

mod config;
mod consumer;
mod log;

pub use config::KafkaConfig;
pub use log::KafkaLog;
