//! The ports: one trait per capability, taking and returning the project's own
//! types. Adapters (the embedded, MongoDB and Kafka crates) implement them,
//! and no driver type crosses them.

use crate::error::Result;
use crate::event::Event;
use crate::fault::StoreFault;

use crate::write::Done;
use crate::write::Write;
use async_trait::async_trait;
use metered::{port, timed};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;

mod accounts;
mod applied;
mod backup;
mod content;
mod graph;
pub(crate) mod metered;
mod snapshots;
mod tail;
mod timelines;
mod transact;
mod transfer;
mod webhooks;
pub use accounts::Accounts;
pub use applied::{Applied, AppliedFeed, AppliedStream};
pub use backup::Backup;
pub use content::{
    Collections, ContentStore, Deletions, Filters, IdRange, Likes, Markers, Notices, Posts,
    Reposts, Users,
};
pub use graph::{Edges, GraphStore, Groups, HybridMarks, Lists, Mutes};
pub use metered::{Metered, Port};
pub use snapshots::RankSnapshots;
pub use socialite_domain::accounts::lifecycle::Standing;
pub use tail::{cursor_too_old, Extent, LogTail, Placed};
pub use timelines::{CacheRead, Coverage, Delivery, Footprint, TimelineStore};
pub use transact::Transact;
pub use transfer::{ExportView, Transfer};
pub use webhooks::{too_many as too_many_webhooks, Webhooks};

port! {
    /// Events queued by the stores' writes, waiting for the relay to put them on
    /// the log. `pending` lists them oldest first by sequence number.
    pub trait Outbox: Port as "outbox" for Metered<dyn Outbox> {
        async fn pending(&self, limit: usize) -> Result<Vec<(u64, Event)>>;
        /// Forgets these events (sequence numbers from `pending`), now on the log.
        /// Named one by one: a store whose sequence numbers are not allocated in
        /// commit order may still hold older ones that `pending` did not list.
        async fn ack(&self, seqs: &[u64]) -> Result<()>;
        /// Whether this process may relay now. Stores shared by several
        /// producers grant one relay at a time, so the log keeps commit order.
        async fn lease(&self) -> Result<bool> {
            Ok(true)
        }
        /// How many events wait.
        async fn backlog(&self) -> Result<u64>;
        /// Notified after a write queued events.
        fn notifier(&self) -> Arc<Notify>;
    }
}

port! {
    /// The durable event log, consumed at least once by groups of consumers.
    pub trait EventLog: Port as "log" for Metered<dyn EventLog> {
        /// Appends in order; durable when it returns.
        async fn append(&self, events: &[Event]) -> Result<()>;
        /// Whether the log answers, for readiness probes.
        async fn ping(&self) -> Result<()>;
        /// A fault the log knows of without asking anything (see
        /// [`Users::fault`]).
        fn fault(&self) -> Option<StoreFault> {
            None
        }
        /// Joins consumer `group`, resuming after its last commit.
        own async fn consumer(&self, group: &str) -> Result<Box<dyn LogConsumer>>;
        /// How far `group` has committed, against the log's end, seen from
        /// outside the group (a producer watching fanout's lag).
        async fn position(&self, group: &str) -> Result<LogPosition>;
        /// What each partition keeps, in the order a firehose cursor names
        /// them ([`crate::firehose`]).
        async fn extent(&self) -> Result<Vec<Extent>> {
            Err(tail::not_followed())
        }
        /// Reads every partition from `next` (offsets in the order of
        /// [`EventLog::extent`]), outside every consumer group.
        async fn tail(&self, next: &[u64]) -> Result<Box<dyn LogTail>> {
            let _ = next;
            Err(tail::not_followed())
        }
        /// Keeps the events from `next` on (offsets in the order of
        /// [`EventLog::extent`]) for `name` (a webhook endpoint), on a log
        /// that drops what its readers are past (the embedded one); `None`
        /// lets them go. A log that keeps by time (Kafka) needs nothing.
        async fn hold(&self, name: &str, next: Option<&[u64]>) -> Result<()> {
            let _ = (name, next);
            Ok(())
        }
    }
    metered {
        async fn consumer(&self, group: &str) -> Result<Box<dyn LogConsumer>> {
            let inner = timed("log", "join", self.0.consumer(group)).await?;
            Ok(Box::new(MeteredConsumer(inner)))
        }
    }
}

/// A consumer group's place on the log, partition by partition.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LogPosition {
    /// Each partition's place, in an order that stays the same between
    /// readings while the partitions do.
    pub partitions: Vec<PartitionPosition>,
}

/// A consumer group's place in one partition of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PartitionPosition {
    /// Events the group has committed.
    pub committed: u64,
    /// Events in the partition.
    pub end: u64,
}

impl LogPosition {
    /// The place on a log of one partition.
    pub fn single(committed: u64, end: u64) -> LogPosition {
        LogPosition {
            partitions: vec![PartitionPosition { committed, end }],
        }
    }

    /// Events the group has committed, over every partition.
    pub fn committed(&self) -> u64 {
        self.partitions.iter().map(|p| p.committed).sum()
    }

    /// Events on the log, over every partition.
    pub fn end(&self) -> u64 {
        self.partitions.iter().map(|p| p.end).sum()
    }

    /// Events the group has not committed.
    pub fn backlog(&self) -> u64 {
        self.partitions
            .iter()
            .map(|p| p.end.saturating_sub(p.committed))
            .sum()
    }
}

#[async_trait]
pub trait LogConsumer: Send + Sync {
    /// Up to `max` events in log order; waits at most `wait` for the first,
    /// then at most `linger` for more to fill the batch.
    async fn poll(&mut self, max: usize, wait: Duration, linger: Duration) -> Result<Vec<Event>>;
    /// True once after the consumer's share of the log changed (a rebalance):
    /// state kept from earlier events of other partitions may be stale.
    fn reassigned(&mut self) -> bool {
        false
    }
    /// Durably records that every event polled so far is processed.
    async fn commit(&mut self) -> Result<()>;
    /// Events on the log that this group has not committed.
    async fn backlog(&self) -> Result<u64>;
}

/// Rewinding a consumer group, where the log keeps what it consumed: the
/// embedded log does, for replay tests and for operators who rebuild from it.
#[async_trait]
pub trait Rewind: Send + Sync + 'static {
    /// The oldest sequence number still on the log.
    fn first_retained(&self) -> Result<u64>;
    /// Makes `group` consume again from sequence `next`.
    async fn rewind(&self, group: &str, next: u64) -> Result<()>;
}

/// A consumer whose calls are metered: polls count only failures (waiting
/// for events is not store latency).
struct MeteredConsumer(Box<dyn LogConsumer>);

#[async_trait]
impl LogConsumer for MeteredConsumer {
    async fn poll(&mut self, max: usize, wait: Duration, linger: Duration) -> Result<Vec<Event>> {
        let result = self.0.poll(max, wait, linger).await;
        if result.is_err() {
            crate::metrics::metrics().observe_store("log", "poll", Default::default(), true);
        }
        result
    }
    async fn commit(&mut self) -> Result<()> {
        timed("log", "commit", self.0.commit()).await
    }
    async fn backlog(&self) -> Result<u64> {
        timed("log", "backlog", self.0.backlog()).await
    }
    fn reassigned(&mut self) -> bool {
        self.0.reassigned()
    }
}

/// The writes of a metered port, each timed under its own name
/// ([`Write::name`]): the ports' write methods are not forwarded, so each
/// reaches the wrapped store through this.
macro_rules! metered_writes {
    ($($port:ident => $store:literal),* $(,)?) => {$(
        #[async_trait]
        impl Transact for Metered<dyn $port> {
            async fn transact(&self, write: Write) -> Result<Done> {
                timed($store, write.name(), self.0.transact(write)).await
            }
        }
    )*};
}

metered_writes!(
    Accounts => "accounts",
    Transfer => "transfer",
    ContentStore => "content",
    GraphStore => "graph",
);
