//! The deployment being moved: its copies, and its write stop.

use super::copies::{Copy, Tail};
use crate::admin::Admin;
use crate::transfer::embedded_config as embedded;
use socialite_core::ports::Backup;
use socialite_core::relay::relay_once;
use socialite_embedded::backup::EmbeddedBackup;
use socialite_embedded::{EmbeddedLog, EmbeddedStore};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the source may take to bring what is in flight onto its log
/// (its outbox drained, its deletions finished) before a settled tail: a
/// deletion cut short is finished by the sweeper, which looks every
/// minute.
const SETTLE_WITHIN: Duration = Duration::from_secs(150);
/// Full copies taken while the source serves, at most, until one is whole.
const WHOLE_ATTEMPTS: u32 = 5;

/// Where the source's copies come from.
pub(super) enum Source {
    /// No server holds the data directory: this process does, so nobody
    /// writes to it while the move runs.
    Local(EmbeddedBackup),
    /// Its server makes the copies and stops its writes.
    Server(Admin),
}

impl Source {
    /// The deployment in `dir`: this process's when no server holds it,
    /// else the server's at `url` (with `api_key`, or the admin key in
    /// `dir`).
    pub(super) fn open(dir: &Path, url: &str, api_key: Option<&str>) -> Result<Source, String> {
        if !dir.join("content.redb").exists() {
            return Err(format!("{}: no embedded store to move", dir.display()));
        }
        let config = embedded(dir);
        Ok(match (config.open_store(), config.open_log()) {
            (Ok(store), Ok(log)) => Source::Local(EmbeddedBackup {
                store: Some(store),
                log: Some(log),
                root: dir.join("backups"),
            }),
            _ => Source::Server(Admin::new(url, api_key, dir)?),
        })
    }

    /// A new backup named `name`, under DATA_DIR/backups; with
    /// `log_after`, a log tail.
    async fn make(&self, name: &str, log_after: Option<u64>) -> Result<PathBuf, String> {
        match self {
            Source::Local(b) => {
                // No server runs its relay and deletions: this process
                // does, so that the copy's log holds every write.
                if let (Some(store), Some(log)) = (&b.store, &b.log) {
                    settle(store, log).await.map_err(|e| e.chain())?;
                }
                let made = match log_after {
                    Some(after) => b.log_tail_to(name, after).await,
                    None => b.backup_to(name).await,
                };
                made.map(|d| d.0).map_err(|e| e.chain())
            }
            Source::Server(admin) => admin.backup(name, log_after).await.map(|d| d.0),
        }
    }

    /// A full copy, opened.
    pub(super) async fn copy(&self, name: &str) -> Result<Copy, String> {
        Copy::open(self.make(name, None).await?).await
    }

    /// A log tail of the events after `after`, opened.
    pub(super) async fn tail(&self, name: &str, after: u64) -> Result<Tail, String> {
        Tail::open(self.make(name, Some(after)).await?)
    }

    /// A full copy taken while the source serves that is [`Copy::whole`],
    /// named by `name(label)` and the attempt.
    pub(super) async fn whole_copy(
        &self,
        name: &impl Fn(&str) -> String,
        label: &str,
    ) -> Result<Copy, String> {
        for attempt in 0..WHOLE_ATTEMPTS {
            let copy = self.copy(&name(&format!("{label}-{attempt}"))).await?;
            if copy.whole().await? {
                return Ok(copy);
            }
            copy.discard();
        }
        Err(format!(
            "{WHOLE_ATTEMPTS} copies of the source each held writes not yet on its log (a deletion under way, or a relay that does not keep up): try again later"
        ))
    }

    pub(super) async fn read_only(&self, on: bool) -> Result<(), String> {
        match self {
            Source::Local(_) => Ok(()),
            Source::Server(admin) => admin.read_only(on).await,
        }
    }

    /// Marks a server's deployment moved to `to`: it takes no more account
    /// safety acts. A source no server runs takes none anyway.
    pub(super) async fn seal(&self, to: &str) -> Result<(), String> {
        match self {
            Source::Local(_) => Ok(()),
            Source::Server(admin) => admin.moved(to).await,
        }
    }

    /// A log tail after `after` taken once every write the source
    /// acknowledged is on its log (its outbox drained, no deletion under
    /// way), named by `name(label)` and the attempt. With the source's
    /// writes stopped, it holds every acknowledged write not yet carried.
    pub(super) async fn settled_tail(
        &self,
        name: &impl Fn(&str) -> String,
        label: &str,
        after: u64,
    ) -> Result<Tail, String> {
        // The outbox drains within a relay's round; a deletion under way
        // ends within its steps. Until both have, the log misses writes.
        let deadline = Instant::now() + SETTLE_WITHIN;
        let mut attempt = 0;
        loop {
            let tail = self
                .tail(&name(&format!("{label}-{attempt}")), after)
                .await?;
            if tail.settled() {
                return Ok(tail);
            }
            drop(tail);
            attempt += 1;
            if Instant::now() > deadline {
                return Err(format!(
                    "the source's outbox did not drain onto its log within {} s: is its relay running?",
                    SETTLE_WITHIN.as_secs()
                ));
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Finishes the deletions a stopped server left and moves its outbox onto
/// its log.
async fn settle(
    store: &Arc<EmbeddedStore>,
    log: &Arc<EmbeddedLog>,
) -> socialite_core::error::Result<()> {
    use socialite_core::ports::Deletions;
    store.resume_deletions().await?;
    while relay_once(&**store, &**log).await? > 0 {}
    Ok(())
}
