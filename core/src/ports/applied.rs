//! The applied feed's port, for live timelines.

use crate::error::Result;
use crate::event::Event;
use async_trait::async_trait;

/// What fanout workers applied, for the processes that push live timelines
/// ([`crate::live`]): each worker publishes a batch's events once they are in
/// the timelines, and every subscriber, in any process, receives every batch
/// published after it subscribed.
#[async_trait]
pub trait AppliedFeed: Send + Sync + 'static {
    async fn publish(&self, events: &[Event]) -> Result<()>;
    async fn subscribe(&self) -> Result<Box<dyn AppliedStream>>;
}

/// One subscriber's view of the applied events.
#[async_trait]
pub trait AppliedStream: Send {
    /// The next events, waiting for them; `Applied::Lost` when some may
    /// have been missed (the subscriber fell behind, or the feed failed).
    async fn next(&mut self) -> Applied;
}

#[derive(Debug, Clone, PartialEq)]
pub enum Applied {
    Events(Vec<Event>),
    Lost,
}
