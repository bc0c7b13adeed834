//! Socialite's domain floor: what a write is and whether it may be made,
//! with nothing of how it is stored or carried. The core crate builds the
//! ports, the feed and the use cases on it and re-exports every module, so
//! `socialite_core::rules` and `socialite_domain::rules` are one module.
//!
//! - [`ids`], [`model`], [`error`]: the domain's values and their limits;
//!   [`numbers`]: dense timeline numbers, which fanout's target lists carry.
//! - [`event`]: what happened, as it travels on the log ([`trace`]: the
//!   trace context an event carries); [`timeline_change`]: the log as
//!   timelines read it.
//! - [`rules`]: the checks that refuse writes, what a deletion tells the
//!   pipeline, which entries a stored timeline accepts.
//! - [`format`](mod@format): the export format's records, and what an import admits.
//! - [`plan`]: each write's sequence (facts read, checks run, steps
//!   applied), decided once; a backend supplies only the primitives.
//!
//! No module here imports one above it: values, then events, then rules,
//! then the format, then the planners.

pub mod error;
pub mod event;
pub mod format;
pub mod ids;
pub mod model;
pub mod numbers;
pub mod plan;
pub mod rules;
pub mod timeline_change;
pub mod trace;

pub use error::{Error, ErrorKind, Result};
