//! Backups made on an operator's request, by the rule of
//! [`socialite_domain::transfer::backups`]: one at a time, and after each the oldest past
//! the cap removed. The copy itself is the [`Backup`] port's.

use crate::error::{Error, Result};
use crate::ports::Backup;
use socialite_domain::transfer::backups::{backup_in_progress, to_prune};
use std::path::PathBuf;
use std::sync::Arc;

pub struct Backups {
    store: Arc<dyn Backup>,
    /// Held while a backup is made.
    one: Arc<tokio::sync::Mutex<()>>,
    /// Held while a log tail is made: one at a time too, apart from the
    /// backups (a tail copies the log, so several at once would take its
    /// disk and I/O).
    one_tail: Arc<tokio::sync::Mutex<()>>,
    /// Backups kept in the backup directory; 0 keeps them all.
    keep: usize,
}

impl Backups {
    pub fn new(store: Arc<dyn Backup>, keep: usize) -> Backups {
        Backups {
            store,
            one: Arc::default(),
            one_tail: Arc::default(),
            keep,
        }
    }

    /// The same, keeping `keep` backups.
    pub fn keeping(self, keep: usize) -> Backups {
        Backups { keep, ..self }
    }

    /// Makes the backup `name` (a valid name); where it is, and its rows.
    /// Refused with `backup_in_progress` while another is being made.
    pub async fn make(&self, name: &str) -> Result<(PathBuf, u64)> {
        let one = self.one.clone().try_lock_owned();
        let one = one.map_err(|_| backup_in_progress())?;
        let (store, name, keep) = (self.store.clone(), name.to_owned(), self.keep);
        // A task of its own: a caller that goes away does not end the copy
        // early, nor let another start beside it.
        let made = tokio::spawn(async move {
            let _one = one;
            let made = store.backup_to(&name).await?;
            prune(&*store, keep).await;
            Ok(made)
        });
        made.await
            .map_err(|e| Error::internal(format!("the backup's task failed: {e}")))?
    }
}

impl Backups {
    /// Copies the log's events after `after` into the new directory
    /// `name` ([`Backup::log_tail_to`]). Not one of the backups: it takes
    /// no turn among them (a move's switch-over must not wait for an
    /// operator's backup) and prunes nothing; one tail is made at a time,
    /// refused with `backup_in_progress` while another is.
    pub async fn log_tail(&self, name: &str, after: u64) -> Result<(PathBuf, u64)> {
        let one = self.one_tail.clone().try_lock_owned();
        let one = one.map_err(|_| backup_in_progress())?;
        let (store, name) = (self.store.clone(), name.to_owned());
        // A task of its own, as a backup is.
        let made = tokio::spawn(async move {
            let _one = one;
            store.log_tail_to(&name, after).await
        });
        made.await
            .map_err(|e| Error::internal(format!("the log tail's task failed: {e}")))?
    }
}

/// Removes the backups past `keep`; one that cannot be listed or removed
/// is logged and left for the next backup: the copy just made stands.
async fn prune(store: &dyn Backup, keep: usize) {
    let held = match store.backups().await {
        Ok(held) => held,
        Err(e) => {
            tracing::warn!(error = %e.chain(), "backups: could not list them to prune");
            return;
        }
    };
    for name in to_prune(held, keep) {
        match store.remove_backup(&name).await {
            Ok(()) => {
                tracing::info!(backup = %name, kept = keep, "backups: removed one past the cap")
            }
            Err(e) => {
                tracing::warn!(backup = %name, error = %e.chain(), "backups: could not remove one past the cap")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use async_trait::async_trait;
    use socialite_domain::transfer::backups::HeldBackup;
    use std::sync::Mutex;
    use tokio::sync::Notify;

    /// Backups in memory; the first copy after `hold` is set waits for
    /// `release`.
    #[derive(Default)]
    struct Held {
        made: Mutex<Vec<HeldBackup>>,
        hold: std::sync::atomic::AtomicBool,
        started: Notify,
        release: Notify,
    }

    #[async_trait]
    impl Backup for Held {
        async fn backup_to(&self, name: &str) -> Result<(PathBuf, u64)> {
            if self.hold.swap(false, std::sync::atomic::Ordering::SeqCst) {
                self.started.notify_one();
                self.release.notified().await;
            }
            let mut made = self.made.lock().unwrap();
            let made_ms = made.len() as u64;
            made.push(HeldBackup {
                name: name.into(),
                made_ms,
            });
            Ok((PathBuf::from(name), 1))
        }
        async fn log_tail_to(&self, name: &str, _after: u64) -> Result<(PathBuf, u64)> {
            Ok((PathBuf::from(name), 0))
        }
        async fn backups(&self) -> Result<Vec<HeldBackup>> {
            Ok(self.made.lock().unwrap().clone())
        }
        async fn remove_backup(&self, name: &str) -> Result<()> {
            self.made.lock().unwrap().retain(|b| b.name != name);
            Ok(())
        }
    }

    fn names(store: &Held) -> Vec<String> {
        let made = store.made.lock().unwrap();
        made.iter().map(|b| b.name.clone()).collect()
    }

    #[tokio::test]
    async fn one_backup_at_a_time_and_the_newest_kept() {
        let store = Arc::new(Held::default());
        let backups = Arc::new(Backups::new(store.clone(), 2));
        for name in ["migrate-1-0", "a", "b", "c"] {
            backups.make(name).await.unwrap();
        }
        assert_eq!(names(&store), ["migrate-1-0", "b", "c"]);

        store.hold.store(true, std::sync::atomic::Ordering::SeqCst);
        let first = tokio::spawn({
            let backups = backups.clone();
            async move { backups.make("d").await }
        });
        store.started.notified().await;
        let refused = backups.make("e").await.unwrap_err();
        assert_eq!(refused.code(), "backup_in_progress");
        store.release.notify_one();
        first.await.unwrap().unwrap();
        backups.make("e").await.unwrap();
        assert_eq!(names(&store), ["migrate-1-0", "d", "e"]);
    }
}
