//! Socialite's domain: what a write is and whether it may be made, with
//! nothing of how it is stored or carried. The core crate builds the ports,
//! the feed and the use cases on it and re-exports every module, so
//! `socialite_core::posts` holds `socialite_domain::posts`.
//!
//! The floor, which every feature uses and which imports none:
//! - [`ids`], [`model`], [`error`]: the domain's values and their limits;
//!   [`numbers`]: dense timeline numbers, which fanout's target lists carry.
//! - [`event`]: what happened, as it travels on the log ([`trace`]: the
//!   trace context an event carries).
//! - [`checks`]: the refusals and limits several features share.
//! - [`plan`]: the vocabulary of a write: the facts a planner reads and the
//!   steps a backend applies, in one transaction.
//! - [`filters`]: a reader's keyword filters, what they hide and warn of
//!   (the timelines' read pass applies them) and how they are written.
//!
//! The features, one folder each, holding their rules and their planners:
//! [`accounts`], [`graph`], [`posts`], [`interactions`] (likes, reposts),
//! [`notifications`], [`feed`] (what timelines accept, markers),
//! [`deletion`] and [`transfer`] (the export format, import, replay,
//! backups). [`collections`]: posts a user keeps (a collection a feature
//! such as bookmarks names), stored, deleted, exported and replayed alike
//! for every collection. A feature imports the floor and the features below it, never
//! one above: accounts, graph, feed and notifications use the floor only;
//! interactions add notifications; posts add interactions; deletion and
//! transfer come last.
//!
//! [`firehose`]: which acts of the log are public, as other systems
//! follow them (it reads events only).
//!
//! On top, [`write`]: every write of the domain as one value, planned by the
//! feature it belongs to.

pub mod accounts;
pub mod checks;
pub mod collections;
pub mod deletion;
pub mod error;
pub mod event;
mod event_decode;
pub mod feed;
pub mod filters;
pub mod firehose;
pub mod graph;
pub mod ids;
pub mod interactions;
pub mod model;
pub mod notifications;
pub mod numbers;
pub mod plan;
pub mod posts;
pub mod trace;
pub mod transfer;
pub mod webhooks;
pub mod write;

pub use error::{Error, ErrorKind, Result};
