//! Opens the backends that the services run on.

use crate::embedded::{EmbeddedLog, EmbeddedStore, MemoryTimelines};
use crate::error::{Error, ErrorKind, Result};
use crate::feed::config::FeedConfig;
use crate::feed::{NoTimelines, Stores};
use crate::metered::Metered;
use crate::ports::{ContentStore, EventLog, GraphStore, Outbox, TimelineStore};
use std::path::PathBuf;
use std::sync::Arc;

/// Settings of the embedded default.
#[derive(Debug, Clone)]
pub struct EmbeddedConfig {
    /// Holds `content.redb` and `log.redb`.
    pub data_dir: PathBuf,
    /// Events the log keeps behind its slowest consumer group.
    pub log_retention: u64,
    /// The feed model and its parameters.
    pub feed: FeedConfig,
}

/// Every port, opened.
#[derive(Clone)]
pub struct Backends {
    pub content: Arc<dyn ContentStore>,
    pub graph: Arc<dyn GraphStore>,
    pub outbox: Arc<dyn Outbox>,
    pub log: Arc<dyn EventLog>,
    pub timelines: Arc<dyn TimelineStore>,
    /// The embedded log itself, for replays and tests.
    pub embedded_log: Arc<EmbeddedLog>,
    pub feed: FeedConfig,
}

impl Backends {
    pub fn embedded(config: &EmbeddedConfig) -> Result<Backends> {
        config.feed.validate()?;
        std::fs::create_dir_all(&config.data_dir).map_err(|e| {
            Error::backend(
                ErrorKind::Unavailable,
                &format!("creating data directory {}", config.data_dir.display()),
                e,
            )
        })?;
        let in_use = |e: Error| {
            Error::new(
                ErrorKind::Unavailable,
                "data_dir_unavailable",
                format!(
                    "cannot open the data directory {} ({}); is another socialite using it?",
                    config.data_dir.display(),
                    e.chain()
                ),
            )
        };
        let store =
            Arc::new(EmbeddedStore::open(&config.data_dir.join("content.redb")).map_err(in_use)?);
        let log = Arc::new(
            EmbeddedLog::open(&config.data_dir.join("log.redb"), config.log_retention)
                .map_err(in_use)?,
        );
        let content: Arc<dyn ContentStore> = store.clone();
        let graph: Arc<dyn GraphStore> = store.clone();
        let outbox: Arc<dyn Outbox> = store;
        let event_log: Arc<dyn EventLog> = log.clone();
        let timelines: Arc<dyn TimelineStore> = match config.feed.layout() {
            Some(layout) => Arc::new(MemoryTimelines::new(layout, config.feed.cache_size)),
            None => Arc::new(NoTimelines),
        };
        Ok(Backends {
            content: Arc::new(Metered(content)),
            graph: Arc::new(Metered(graph)),
            outbox: Arc::new(Metered(outbox)),
            log: Arc::new(Metered(event_log)),
            timelines: Arc::new(Metered(timelines)),
            embedded_log: log,
            feed: config.feed,
        })
    }

    pub fn stores(&self) -> Stores {
        Stores {
            content: self.content.clone(),
            graph: self.graph.clone(),
            timelines: self.timelines.clone(),
            feed: self.feed,
        }
    }
}
