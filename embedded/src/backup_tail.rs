//! A log tail: the log's events after a given sequence, copied into a new
//! directory, without the content. `socialite migrate` takes tails for its
//! catch-up rounds and at its switch-over: a full backup copies the whole
//! store (tens of seconds on a large one), a tail only what was logged
//! since the last copy, so writes stop for as long as those events take.
//!
//! A tail says whether it is *settled*: the outbox was empty and no
//! deletion was under way just before its log was read. The relay takes
//! an event from the outbox only once the log holds it, so a settled
//! tail holds the event of every write acknowledged before the check
//! (with writes stopped: every write the deployment acknowledged).
//!
//! Its file is `log-tail.redb`, not `log.redb`: a tail is no backup
//! (`socialite restore` refuses it, and backups' listings skip it).

use crate::backup::{new_backup_dir, snapshot, EmbeddedBackup, Position};
use crate::log::EmbeddedLog;
use crate::store::EmbeddedStore;
use crate::tables::*;
use redb::ReadableTableMetadata;
use socialite_core::error::{Error, Result};
use std::path::Path;

/// The file of a log tail's events, beside its [`Position`].
pub const TAIL_FILE: &str = "log-tail.redb";

impl EmbeddedLog {
    /// Copies the events after `after` into `dir/log-tail.redb`, as the
    /// log is now; returns how many.
    pub fn tail_into(&self, dir: &Path, after: u64) -> Result<u64> {
        let db = self.db()?;
        snapshot(&db, &dir.join(TAIL_FILE), |from, to| {
            let src = from.open_table(LOG).store()?;
            let mut dst = to.open_table(LOG).store()?;
            let mut rows = 0;
            for item in src.range(after.saturating_add(1)..).store()? {
                let (k, v) = item.store()?;
                dst.insert(k.value(), v.value()).store()?;
                rows += 1;
            }
            Ok(rows)
        })
    }
}

impl EmbeddedStore {
    /// Whether nothing is in flight towards the log: the outbox is empty
    /// and no deletion is under way. Both from one snapshot: a deletion's
    /// last step lifts its mark and queues its last event at once, and
    /// the sweeper that finishes one does not wait at the write gate.
    pub fn settled(&self) -> Result<bool> {
        self.read(|txn| {
            let outbox = txn.open_table(OUTBOX).store()?.is_empty().store()?;
            let deleting = txn.open_table(DELETING).store()?.is_empty().store()?;
            Ok(outbox && deleting)
        })
    }
}

impl EmbeddedBackup {
    /// Copies the log's events after `after` into `dir`, a new directory
    /// this makes, with a [`Position`] that says whether it is settled;
    /// returns how many events.
    pub async fn log_tail_into(&self, dir: &Path, after: u64) -> Result<u64> {
        let (Some(store), Some(log)) = (self.store.clone(), self.log.clone()) else {
            return Err(Error::invalid(
                "backup_unsupported",
                "a log tail is taken where the embedded store and its log are both this process's",
            ));
        };
        new_backup_dir(dir)?;
        let dir = dir.to_owned();
        let made = dir.clone();
        let copy = move || -> Result<u64> {
            // Checked before the log is read (see the module's comment).
            let settled = store.settled()?;
            let log_before = log.head();
            let position = Position {
                log_before,
                tail_after: Some(after),
                settled,
            };
            position.write(&dir)?;
            log.tail_into(&dir, after)
        };
        let copied = tokio::task::spawn_blocking(copy)
            .await
            .map_err(|e| Error::internal(format!("log tail task failed: {e}")))
            .and_then(|r| r);
        if copied.is_err() {
            // Nothing lists a tail (it is no backup): one cut short would
            // stay unseen.
            let _ = std::fs::remove_dir_all(&made);
        }
        copied
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use socialite_core::event::Event;
    use socialite_core::ids::UserId;
    use socialite_core::ports::EventLog;
    use std::sync::Arc;

    fn event(i: u64) -> Event {
        Event::Joined {
            group: socialite_core::ids::GroupName::parse("g").unwrap(),
            user: UserId::parse(&format!("u{i}")).unwrap(),
        }
    }

    #[tokio::test]
    async fn a_tail_holds_the_events_after_its_point_and_says_it_is_settled() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(EmbeddedStore::open(&dir.path().join("content.redb")).unwrap());
        let log = Arc::new(EmbeddedLog::open(&dir.path().join("log.redb"), 1_000).unwrap());
        let events: Vec<Event> = (1..=5).map(event).collect();
        log.append(&events).await.unwrap();
        let backup = EmbeddedBackup {
            store: Some(store),
            log: Some(log.clone()),
            root: dir.path().join("backups"),
        };
        let tail = dir.path().join("tail");
        assert_eq!(backup.log_tail_into(&tail, 3).await.unwrap(), 2);
        let position = Position::read(&tail).unwrap();
        assert_eq!(
            position,
            Position {
                log_before: log.head(),
                tail_after: Some(3),
                settled: true
            }
        );
        let copied = EmbeddedLog::open(&tail.join(TAIL_FILE), 1_000).unwrap();
        let read = copied.read_after(0, 10).unwrap();
        assert_eq!(read, vec![(4, event(4)), (5, event(5))]);
        assert!(
            backup.log_tail_into(&tail, 0).await.is_err(),
            "a tail goes to a new directory"
        );
    }
}
