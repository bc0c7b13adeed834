//! Every port of a deployment, opened, in one value. Which adapters fill it
//! is decided by the runtime crate from the settings; core only meters them.

use crate::feed::config::FeedConfig;
use crate::feed::filter_cache::FilterCache;
use crate::feed::hybrid::Marks;
use crate::feed::late::Late;
use crate::feed::stamp::WriteEpoch;
use crate::feed::Stores;
use crate::ports::Metered;
use crate::ports::{
    Accounts, AppliedFeed, Backup, ContentStore, EventLog, GraphStore, Outbox, RankSnapshots,
    Rewind, TimelineStore, Transfer, Webhooks,
};
use crate::standings::Standings;
use std::sync::Arc;

/// Every port, opened and metered.
#[derive(Clone)]
pub struct Backends {
    pub content: Arc<dyn ContentStore>,
    pub graph: Arc<dyn GraphStore>,
    pub outbox: Arc<dyn Outbox>,
    pub log: Arc<dyn EventLog>,
    pub timelines: Arc<dyn TimelineStore>,
    /// Rewinding consumer groups, where the log can (the embedded one).
    pub rewind: Option<Arc<dyn Rewind>>,
    /// What fanout applied, for live timelines.
    pub applied: Arc<dyn AppliedFeed>,
    pub feed: FeedConfig,
    /// Hybrid fanout's marks, shared by this process's reads and worker.
    pub marks: Arc<Marks>,
    /// Account standings (revocations, suspensions), as this process knows
    /// them.
    pub accounts: Arc<Standings>,
    /// This process's writes that change pages beside their timelines
    /// ([`crate::feed::stamp`]).
    pub epoch: Arc<WriteEpoch>,
    /// Readers' keyword filters, ready to match ([`crate::feed::filter_cache`]).
    pub filters: Arc<FilterCache>,
    /// The store written out whole and loaded in batches (export, import,
    /// migration).
    pub transfer: Arc<dyn Transfer>,
    /// A backup while it serves, where the stores are this process's files.
    pub backup: Option<Arc<dyn Backup>>,
    /// Where fanout may not have delivered yet: found by the producer's
    /// watch, merged by reads ([`crate::feed::late`]).
    pub late: Arc<Late>,
    /// Webhook endpoints and their delivery logs.
    pub webhooks: Arc<dyn Webhooks>,
    /// Ranked orders' snapshots, where several processes serve readers.
    pub snapshots: Option<Arc<dyn RankSnapshots>>,
}

/// Opened ports, before metering.
pub struct Parts {
    pub content: Arc<dyn ContentStore>,
    pub graph: Arc<dyn GraphStore>,
    pub outbox: Arc<dyn Outbox>,
    pub log: Arc<dyn EventLog>,
    pub timelines: Arc<dyn TimelineStore>,
    pub rewind: Option<Arc<dyn Rewind>>,
    pub applied: Arc<dyn AppliedFeed>,
    pub accounts: Arc<dyn Accounts>,
    pub transfer: Arc<dyn Transfer>,
    pub backup: Option<Arc<dyn Backup>>,
    pub webhooks: Arc<dyn Webhooks>,
    pub snapshots: Option<Arc<dyn RankSnapshots>>,
}

impl Backends {
    /// Wraps opened ports in the metering decorators.
    pub fn assemble(parts: Parts, feed: FeedConfig) -> Backends {
        let epoch = Arc::new(WriteEpoch::default());
        Backends {
            content: Arc::new(Metered(parts.content)),
            graph: Arc::new(Metered(parts.graph)),
            outbox: Arc::new(Metered(parts.outbox)),
            log: Arc::new(Metered(parts.log)),
            timelines: Arc::new(Metered(parts.timelines)),
            rewind: parts.rewind,
            applied: parts.applied,
            feed,
            // Snapshots are shared where several processes serve readers
            // and write: there another's follow does not move this epoch.
            marks: Arc::new(Marks::new(epoch.clone(), parts.snapshots.is_none())),
            accounts: Arc::new(Standings::new(Arc::new(Metered(parts.accounts)))),
            transfer: Arc::new(Metered(parts.transfer)),
            backup: parts.backup,
            filters: Arc::new(FilterCache::new(epoch.clone())),
            epoch,
            late: Arc::default(),
            webhooks: Arc::new(Metered(parts.webhooks)),
            snapshots: parts
                .snapshots
                .map(|s| Arc::new(Metered(s)) as Arc<dyn RankSnapshots>),
        }
    }

    pub fn stores(&self) -> Stores {
        Stores {
            content: self.content.clone(),
            graph: self.graph.clone(),
            timelines: self.timelines.clone(),
            feed: self.feed,
            marks: self.marks.clone(),
            accounts: self.accounts.clone(),
            epoch: self.epoch.clone(),
            late: self.late.clone(),
            filters: self.filters.clone(),
            snapshots: self.snapshots.clone(),
        }
    }
}
