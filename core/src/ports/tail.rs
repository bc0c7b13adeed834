//! Reading the log from a place of one's own, outside every consumer
//! group: what the firehose follows ([`crate::firehose`]).

use crate::error::{Error, ErrorKind, Result};
use crate::event::Event;
use async_trait::async_trait;
use socialite_domain::firehose::cursor::Cursor;
use std::time::Duration;

/// What one partition of the log keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Extent {
    /// The offset of the oldest event kept (events before it are gone).
    pub oldest: u64,
    /// The offset the next event will take.
    pub next: u64,
}

/// An event where it stands on the log.
#[derive(Debug, Clone, PartialEq)]
pub struct Placed {
    /// The partition's index, in [`super::EventLog::extent`]'s order.
    pub partition: usize,
    pub offset: u64,
    pub event: Event,
}

#[async_trait]
pub trait LogTail: Send {
    /// Up to `max` events after the last read, each partition's in order;
    /// waits at most `wait` for the first (none: an empty batch). An event
    /// no longer kept fails with `cursor_too_old`; an event that cannot be
    /// decoded (written by hand or by a newer version) is passed over and
    /// counted (`socialite_log_undecodable_total`).
    async fn read(&mut self, max: usize, wait: Duration) -> Result<Vec<Placed>>;
}

pub(crate) fn not_followed() -> Error {
    Error::new(
        ErrorKind::Unavailable,
        "firehose_unavailable",
        "this event log cannot be followed from a cursor",
    )
}

/// The reader is behind what the log keeps: `oldest` is each partition's
/// oldest offset kept, the oldest cursor there is.
pub fn cursor_too_old(oldest: Vec<u64>) -> Error {
    let oldest = Cursor::new(oldest);
    Error::conflict(
        "cursor_too_old",
        format!(
            "the log no longer keeps the events after this cursor; the oldest cursor there is is {oldest} (or start without one, from now)"
        ),
    )
}
