//! Notifications: what a user is told of, decided from the log's events
//! ([`notified`]), the notices and their grouping ([`notices`]), and
//! notices applied to their recipients ([`notify`]); the alerts of the
//! accounts a reader follows with `notify`, derived when read
//! ([`alerts`]); and the threads a user muted, which notify them no more
//! ([`thread_mutes`]).

pub mod alerts;
pub mod notices;
pub mod notified;
pub mod notify;
pub mod thread_mutes;
