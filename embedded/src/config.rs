//! Where the embedded stores live and how they are opened. A data directory
//! belongs to one process at a time (redb locks its files).

use crate::layout::LayoutSpec;
use crate::log::EmbeddedLog;
use crate::store::EmbeddedStore;
use crate::timelines::MemoryTimelines;
use socialite_core::error::{Error, ErrorKind, Result};
use socialite_core::feed::config::{FeedConfig, FeedModel};
use socialite_core::feed::NoTimelines;
use socialite_core::ports::TimelineStore;
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
    /// Opened by a command that moves data (import, export, backup and
    /// restore, migrate), not by a serving process: the content store gets
    /// a larger page cache, which imports need.
    pub bulk: bool,
}

impl EmbeddedConfig {
    fn in_use(&self) -> impl Fn(Error) -> Error + '_ {
        move |e: Error| {
            // An I/O failure (a full disk) is not another process's lock.
            let hint = match crate::recovery::io_fault(&e) {
                Some(_) => "",
                None => "; is another socialite using it?",
            };
            Error::new(
                ErrorKind::Unavailable,
                "data_dir_unavailable",
                format!(
                    "cannot open the data directory {} ({}){hint}",
                    self.data_dir.display(),
                    e.chain()
                ),
            )
        }
    }

    /// Creates the data directory readable by its owner only (0700), as
    /// every file in it is (0600): the data is the users' and posts'.
    fn create_dir(&self) -> Result<()> {
        let failed = |e| {
            Error::backend(
                ErrorKind::Unavailable,
                &format!("creating data directory {}", self.data_dir.display()),
                e,
            )
        };
        if self.data_dir.is_dir() {
            return Ok(());
        }
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&self.data_dir).map_err(failed)
    }

    /// Creates `name` in the data directory with owner-only permissions
    /// (0600) if it is not there yet, so the store never exists readable by
    /// others, and returns its path.
    fn private_file(&self, name: &str) -> Result<std::path::PathBuf> {
        self.create_dir()?;
        let path = self.data_dir.join(name);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true).truncate(false);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        options.open(&path).map_err(|e| {
            Error::backend(
                ErrorKind::Unavailable,
                &format!("creating {}", path.display()),
                e,
            )
        })?;
        Ok(path)
    }

    /// Opens `content.redb`: users, posts, the graph and the outbox.
    pub fn open_store(&self) -> Result<Arc<EmbeddedStore>> {
        let path = self.private_file("content.redb")?;
        let store = EmbeddedStore::open_with(&path, self.bulk);
        Ok(Arc::new(store.map_err(self.in_use())?))
    }

    /// Opens `log.redb`, the event log.
    pub fn open_log(&self) -> Result<Arc<EmbeddedLog>> {
        let path = self.private_file("log.redb")?;
        Ok(Arc::new(
            EmbeddedLog::open(&path, self.log_retention).map_err(self.in_use())?,
        ))
    }

    /// The in-memory timelines of the configured feed model.
    pub fn memory_timelines(&self) -> Arc<dyn TimelineStore> {
        match layout_of(&self.feed) {
            Some(layout) => Arc::new(MemoryTimelines::new(
                layout,
                self.feed.cache_size,
                self.feed.freshness(),
            )),
            None => Arc::new(NoTimelines),
        }
    }
}

/// The layout of a stored feed model; `None` for fanout on read.
pub fn layout_of(feed: &FeedConfig) -> Option<LayoutSpec> {
    match feed.model {
        FeedModel::FanoutOnRead => None,
        FeedModel::Cache => Some(LayoutSpec::Capped {
            cap: feed.cache_size,
        }),
        FeedModel::TimeBuckets => Some(LayoutSpec::TimeBuckets {
            span_ms: feed.time_bucket_ms,
            keep: feed.bucket_retention,
        }),
        FeedModel::SizedBuckets => Some(LayoutSpec::SizedBuckets {
            size: feed.bucket_size,
            keep: feed.bucket_retention,
        }),
    }
}
