//! Backing up a deployment while it serves, where its stores are files of
//! this process (the embedded default). MongoDB and Kafka are backed up with
//! their own tools.

use crate::error::Result;
use async_trait::async_trait;
use socialite_domain::transfer::backups::HeldBackup;
use std::path::PathBuf;

#[async_trait]
pub trait Backup: Send + Sync + 'static {
    /// Copies the stores, consistently, into a new directory `name` (a
    /// valid [`crate::checks::check_backup_name`]) under the
    /// deployment's backup directory, readable by its owner only. Returns
    /// where, and the rows copied.
    async fn backup_to(&self, name: &str) -> Result<(PathBuf, u64)>;
    /// Copies only the log's events after the sequence `after` into a new
    /// directory `name`, and whether nothing was in flight towards the
    /// log when they were read (a *log tail*: what `socialite migrate`
    /// carries over after its first copy). Returns where, and the events
    /// copied.
    async fn log_tail_to(&self, name: &str, after: u64) -> Result<(PathBuf, u64)>;
    /// The backups in the backup directory (its directories that hold a
    /// store), with when each was made.
    async fn backups(&self) -> Result<Vec<HeldBackup>>;
    /// Removes the backup `name` from the backup directory.
    async fn remove_backup(&self, name: &str) -> Result<()>;
}
