//! Notifications: what a user is told of, decided from the log's events
//! ([`notified`]), the notices and their grouping ([`notices`]), and
//! notices applied to their recipients ([`notify`]).

pub mod notices;
pub mod notified;
pub mod notify;
