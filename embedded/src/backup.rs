//! Online backup of the embedded stores: each database copied, table by
//! table, from one read transaction into a new file, while writes go on.
//! The content store is copied before the log: an event the relay moves to
//! the log after the content's snapshot is then still in the copy's outbox
//! (relayed again after a restore, and fanout is idempotent), so no
//! acknowledged write is missing from the copy, however the two interleave.

use crate::log::EmbeddedLog;
use crate::store::EmbeddedStore;
use crate::tables::*;
use async_trait::async_trait;
use redb::{
    Database, ReadTransaction, ReadableDatabase, ReadableTable, TableDefinition, WriteTransaction,
};
use socialite_core::error::{Error, Result};
use socialite_core::ports::Backup;
use socialite_domain::transfer::backups::HeldBackup;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn copy<K: redb::Key + 'static, V: redb::Value + 'static>(
    from: &ReadTransaction,
    to: &WriteTransaction,
    table: TableDefinition<K, V>,
) -> Result<u64> {
    let src = from.open_table(table).store()?;
    let mut dst = to.open_table(table).store()?;
    let mut rows = 0;
    for item in src.iter().store()? {
        let (k, v) = item.store()?;
        dst.insert(k.value(), v.value()).store()?;
        rows += 1;
    }
    Ok(rows)
}

/// Writes a new database at `path` from `db`'s snapshot; returns the rows.
pub(crate) fn snapshot(
    db: &Database,
    path: &Path,
    copy_all: impl FnOnce(&ReadTransaction, &WriteTransaction) -> Result<u64>,
) -> Result<u64> {
    let from = db.begin_read().store()?;
    // An empty file readable by its owner only, which redb initializes: the
    // copy is as private as the data directory's files.
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let made = options.open(path);
    made.map_err(|e| Error::invalid("invalid_backup_path", format!("{}: {e}", path.display())))?;
    let out = Database::create(path).store()?;
    let to = out.begin_write().store()?;
    let rows = copy_all(&from, &to)?;
    to.commit().store()?;
    Ok(rows)
}

/// Every table of `content.redb`.
pub(crate) fn copy_content(from: &ReadTransaction, to: &WriteTransaction) -> Result<u64> {
    Ok(copy(from, to, USERS)?
        + copy(from, to, DELETING)?
        + copy(from, to, COUNTS)?
        + copy(from, to, FOLLOWING)?
        + copy(from, to, FOLLOWERS)?
        + copy(from, to, EDGE_TIMES)?
        + copy(from, to, FOLLOWING_BY_TIME)?
        + copy(from, to, FOLLOWERS_BY_TIME)?
        + copy(from, to, EDGE_LISTS)?
        + copy(from, to, LISTED)?
        + copy(from, to, LIST_MEMBERS)?
        + copy(from, to, USER_LISTS)?
        + copy(from, to, GROUP_MEMBERS)?
        + copy(from, to, USER_GROUPS)?
        + copy(from, to, GROUP_SIZES)?
        + copy(from, to, RELATIONS)?
        + copy(from, to, RELATED)?
        + copy(from, to, MUTE_ENDS)?
        + copy(from, to, MUTES_DUE)?
        + copy(from, to, NOTIFY_SINCE)?
        + copy(from, to, HYBRID)?
        + copy(from, to, ACCOUNTS)?
        + copy(from, to, POSTS)?
        + copy(from, to, AUTHOR_POSTS)?
        + copy(from, to, MENTIONS)?
        + copy(from, to, LIKES)?
        + copy(from, to, LIKES_BY_TIME)?
        + copy(from, to, USER_LIKES)?
        + copy(from, to, TALLIES)?
        + copy(from, to, MARKERS)?
        + copy(from, to, FILTERS)?
        + copy(from, to, THREAD_MUTES)?
        + copy(from, to, EXCLUSIVE_LISTS)?
        + copy(from, to, KEPT)?
        + copy(from, to, KEPT_ORDER)?
        + copy(from, to, KEPT_BY_POST)?
        + copy(from, to, REPLIES)?
        + copy(from, to, REPOSTS)?
        + copy(from, to, REPOSTERS)?
        + copy(from, to, WEBHOOKS)?
        + copy(from, to, WEBHOOK_ATTEMPTS)?
        + copy_notices(from, to)?
        + copy(from, to, OUTBOX)?)
}

/// The notifications' tables.
fn copy_notices(from: &ReadTransaction, to: &WriteTransaction) -> Result<u64> {
    Ok(copy(from, to, NOTICES)?
        + copy(from, to, NOTICES_BY_ACTOR)?
        + copy(from, to, ENTRY_NOTICES)?
        + copy(from, to, NOTICE_GROUPS)?
        + copy(from, to, NOTICE_ORDER)?)
}

/// Every table of `log.redb`.
pub(crate) fn copy_log(from: &ReadTransaction, to: &WriteTransaction) -> Result<u64> {
    Ok(copy(from, to, LOG)? + copy(from, to, OFFSETS)?)
}

impl EmbeddedStore {
    /// Copies `content.redb` into `dir` (which exists) as it is now.
    pub fn backup_into(&self, dir: &Path) -> Result<u64> {
        let db = self.db()?;
        snapshot(&db, &dir.join("content.redb"), copy_content)
    }
}

impl EmbeddedLog {
    /// Copies `log.redb` into `dir` (which exists) as it is now, consumer
    /// offsets included.
    pub fn backup_into(&self, dir: &Path) -> Result<u64> {
        let db = self.db()?;
        snapshot(&db, &dir.join("log.redb"), copy_log)
    }
}

/// Where a backup stands in its log: every event up to `log_before` was
/// in the log before the content's snapshot began, so its write is in the
/// copy. Events after it may be in the copy too, or not yet: a migration
/// replays the log from there (`socialite_domain::transfer::replay`).
///
/// A log tail ([`crate::backup_tail`]) holds no content: `log_before` is
/// the log's head when it was taken, `tail_after` where its events start.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Position {
    pub log_before: u64,
    /// Of a log tail: it holds the events after this sequence only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tail_after: Option<u64>,
    /// Of a log tail: nothing was in flight when it was taken (the outbox
    /// was empty, no deletion under way), so every write acknowledged
    /// before has its event in the log by then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub settled: bool,
}

/// The file of a backup's [`Position`].
pub const POSITION_FILE: &str = "position.json";

impl Position {
    pub(crate) fn write(self, dir: &Path) -> Result<()> {
        let text = serde_json::to_string(&self).expect("plain numbers");
        std::fs::write(dir.join(POSITION_FILE), text)
            .map_err(|e| Error::internal(format!("{}: {e}", dir.display())))
    }

    /// The position of the backup in `dir`.
    pub fn read(dir: &Path) -> Result<Position> {
        let path = dir.join(POSITION_FILE);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| Error::invalid("invalid_backup", format!("{}: {e}", path.display())))?;
        serde_json::from_str(&text)
            .map_err(|e| Error::invalid("invalid_backup", format!("{}: {e}", path.display())))
    }
}

/// Makes `dir` for a backup: new, and readable by its owner only.
pub(crate) fn new_backup_dir(dir: &Path) -> Result<()> {
    private_dir(dir, false)
}

/// Makes `dir` readable by its owner only; `existing` accepts one that is
/// there already.
pub(crate) fn private_dir(dir: &Path, existing: bool) -> Result<()> {
    if existing && dir.is_dir() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|e| match e.kind() {
        std::io::ErrorKind::AlreadyExists => Error::conflict(
            "backup_exists",
            format!(
                "{}: already exists; a backup goes to a new directory",
                dir.display()
            ),
        ),
        _ => Error::invalid("invalid_backup_path", format!("{}: {e}", dir.display())),
    })
}

/// The embedded stores this process has open (the content store, the log,
/// or both), and where it writes backups (`DATA_DIR/backups`).
pub struct EmbeddedBackup {
    pub store: Option<Arc<EmbeddedStore>>,
    pub log: Option<Arc<EmbeddedLog>>,
    pub root: PathBuf,
}

#[async_trait]
impl Backup for EmbeddedBackup {
    async fn backup_to(&self, name: &str) -> Result<(PathBuf, u64)> {
        private_dir(&self.root, true)?;
        let dir = self.root.join(name);
        let rows = self.backup_into(&dir).await?;
        Ok((dir, rows))
    }

    async fn log_tail_to(&self, name: &str, after: u64) -> Result<(PathBuf, u64)> {
        private_dir(&self.root, true)?;
        let dir = self.root.join(name);
        let rows = self.log_tail_into(&dir, after).await?;
        Ok((dir, rows))
    }

    async fn backups(&self) -> Result<Vec<HeldBackup>> {
        let root = self.root.clone();
        let list = move || -> std::io::Result<Vec<HeldBackup>> {
            let mut held = Vec::new();
            let entries = match std::fs::read_dir(&root) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(held),
                entries => entries?,
            };
            for entry in entries {
                let entry = entry?;
                let path = entry.path();
                let is_backup = ["content.redb", "log.redb"]
                    .iter()
                    .any(|f| path.join(f).is_file());
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    continue;
                };
                if !entry.file_type()?.is_dir() || !is_backup {
                    continue;
                }
                let made = entry.metadata()?.modified()?;
                let made_ms = made
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_millis() as u64);
                held.push(HeldBackup { name, made_ms });
            }
            Ok(held)
        };
        let listed = tokio::task::spawn_blocking(list).await;
        let listed = listed.map_err(|e| Error::internal(format!("listing backups failed: {e}")))?;
        listed.map_err(|e| Error::internal(format!("{}: {e}", self.root.display())))
    }

    async fn remove_backup(&self, name: &str) -> Result<()> {
        socialite_core::checks::check_backup_name(name)?;
        let dir = self.root.join(name);
        let remove = move || std::fs::remove_dir_all(&dir).map_err(|e| (dir, e));
        match tokio::task::spawn_blocking(remove).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err((dir, e))) => Err(Error::internal(format!("{}: {e}", dir.display()))),
            Err(e) => Err(Error::internal(format!("removing a backup failed: {e}"))),
        }
    }
}

impl EmbeddedBackup {
    /// Copies the stores into `dir`, a new directory this makes.
    pub async fn backup_into(&self, dir: &Path) -> Result<u64> {
        new_backup_dir(dir)?;
        let (store, log, dir) = (self.store.clone(), self.log.clone(), dir.to_owned());
        // The content before the log (see the module's comment).
        let copy = move || -> Result<u64> {
            if let (Some(_), Some(log)) = (&store, &log) {
                let log_before = log.head();
                Position {
                    log_before,
                    ..Position::default()
                }
                .write(&dir)?;
            }
            let rows = store.map(|s| s.backup_into(&dir)).transpose()?.unwrap_or(0);
            Ok(rows + log.map(|l| l.backup_into(&dir)).transpose()?.unwrap_or(0))
        };
        tokio::task::spawn_blocking(copy)
            .await
            .map_err(|e| Error::internal(format!("backup task failed: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use redb::TableHandle;

    /// The names of the tables of `db`, to check a copy left none out.
    fn table_names(db: &Database) -> Result<Vec<String>> {
        let txn = db.begin_read().store()?;
        let names = txn
            .list_tables()
            .store()?
            .map(|t| t.name().to_owned())
            .collect();
        Ok(names)
    }

    /// A table added to a store and not to its copy would be lost in every
    /// backup: the copy must hold every table the store has.
    #[test]
    fn a_backup_copies_every_table() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(&dir.path().join("content.redb")).unwrap();
        let log = EmbeddedLog::open(&dir.path().join("log.redb"), 10).unwrap();
        let out = dir.path().join("backup");
        std::fs::create_dir(&out).unwrap();
        store.backup_into(&out).unwrap();
        log.backup_into(&out).unwrap();
        for (db, copy) in [
            (store.db().unwrap(), "content.redb"),
            (log.db().unwrap(), "log.redb"),
        ] {
            let mut have = table_names(&db).unwrap();
            let mut copied = table_names(&Database::open(out.join(copy)).unwrap()).unwrap();
            have.sort();
            copied.sort();
            assert_eq!(copied, have, "{copy}");
        }
    }
}
