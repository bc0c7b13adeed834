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
    /// The embedded log itself, for replays and tests, when the log is embedded.
    pub embedded_log: Option<Arc<EmbeddedLog>>,
    pub feed: FeedConfig,
}

/// Settings of the embedded default that can be opened apart: the store
/// (content, graph, outbox) and the log share the data directory.
impl EmbeddedConfig {
    fn in_use(&self) -> impl Fn(Error) -> Error + '_ {
        move |e: Error| {
            Error::new(
                ErrorKind::Unavailable,
                "data_dir_unavailable",
                format!(
                    "cannot open the data directory {} ({}); is another socialite using it?",
                    self.data_dir.display(),
                    e.chain()
                ),
            )
        }
    }

    fn create_dir(&self) -> Result<()> {
        std::fs::create_dir_all(&self.data_dir).map_err(|e| {
            Error::backend(
                ErrorKind::Unavailable,
                &format!("creating data directory {}", self.data_dir.display()),
                e,
            )
        })
    }

    /// Opens `content.redb`: users, posts, the graph and the outbox.
    pub fn open_store(&self) -> Result<Arc<EmbeddedStore>> {
        self.create_dir()?;
        let path = self.data_dir.join("content.redb");
        Ok(Arc::new(EmbeddedStore::open(&path).map_err(self.in_use())?))
    }

    /// Opens `log.redb`, the event log.
    pub fn open_log(&self) -> Result<Arc<EmbeddedLog>> {
        self.create_dir()?;
        let path = self.data_dir.join("log.redb");
        Ok(Arc::new(
            EmbeddedLog::open(&path, self.log_retention).map_err(self.in_use())?,
        ))
    }

    /// The in-memory timeline caches of the configured feed model.
    pub fn memory_timelines(&self) -> Arc<dyn TimelineStore> {
        match self.feed.layout() {
            Some(layout) => Arc::new(MemoryTimelines::new(layout, self.feed.cache_size)),
            None => Arc::new(NoTimelines),
        }
    }
}

/// Opened ports, before metering.
pub struct Parts {
    pub content: Arc<dyn ContentStore>,
    pub graph: Arc<dyn GraphStore>,
    pub outbox: Arc<dyn Outbox>,
    pub log: Arc<dyn EventLog>,
    pub timelines: Arc<dyn TimelineStore>,
    pub embedded_log: Option<Arc<EmbeddedLog>>,
}

impl Backends {
    /// Every port on the embedded default.
    pub fn embedded(config: &EmbeddedConfig) -> Result<Backends> {
        config.feed.validate()?;
        let store = config.open_store()?;
        let log = config.open_log()?;
        let parts = Parts {
            content: store.clone(),
            graph: store.clone(),
            outbox: store,
            log: log.clone(),
            timelines: config.memory_timelines(),
            embedded_log: Some(log),
        };
        Ok(Backends::assemble(parts, config.feed))
    }

    /// Wraps opened ports in the metering decorators.
    pub fn assemble(parts: Parts, feed: FeedConfig) -> Backends {
        Backends {
            content: Arc::new(Metered(parts.content)),
            graph: Arc::new(Metered(parts.graph)),
            outbox: Arc::new(Metered(parts.outbox)),
            log: Arc::new(Metered(parts.log)),
            timelines: Arc::new(Metered(parts.timelines)),
            embedded_log: parts.embedded_log,
            feed,
        }
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
