//! A redb database that recovers from I/O errors by itself.
//!
//! After an I/O error (a full disk, a failing device) redb refuses every
//! later operation of that `Database` ("Previous I/O error occurred. Please
//! close and re-open the database"), even once the cause is gone. So each
//! embedded file (`content.redb`, `log.redb`) is held here, and:
//!
//! - the first I/O error, met by the writer or a reader, records a fault:
//!   from then on writes fail at once with 503 `unavailable` naming the
//!   store and the cause, readiness says so, and reads go on from the old
//!   handle where they can (what redb has cached);
//! - the store's writer thread, the only one that writes, checks about
//!   every second whether the file system takes writes again (it writes,
//!   syncs and removes a probe file beside the database), and when it does,
//!   reopens the database: it takes the handle away from readers (who get
//!   503 meanwhile), waits for the reads holding it to finish, drops it,
//!   and opens the file again, which makes redb repair it. There is never
//!   more than one `Database` on a file. A read transaction begun before
//!   and still open fails cleanly (redb: the database is closed).
//!
//! Nothing acknowledged is lost: a write is acknowledged only after its
//! commit was durable, and a reopen rolls back only commits that were not
//! (writes whose loss is harmless: an outbox acknowledgement, a consumer
//! offset, which are redone). A reopen that fails on something other than
//! I/O (a corrupt file) is final: the store then says it cannot recover,
//! and the process is not alive (`/healthz`).

use redb::{Database, DatabaseError, StorageError};
use socialite_core::error::{Error, ErrorKind, Result};
use socialite_core::fault::{FaultReason, StoreFault};
use socialite_core::metrics::{metrics, StoreLabel};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

/// How much the probe file writes: a file system with less room than this
/// is not worth reopening on yet.
const PROBE_BYTES: usize = 1 << 20;
/// How long a reopen waits for the reads holding the old handle.
const READERS_WAIT: Duration = Duration::from_secs(5);
/// How often the writer checks whether the cause is gone.
pub(crate) const CHECK_EVERY: Duration = Duration::from_secs(1);
/// The longest pause between reopen attempts that failed.
const MAX_PAUSE: Duration = Duration::from_secs(10);

/// An I/O failure of a redb operation: the handle is then unusable.
#[derive(Debug)]
pub(crate) enum IoFault {
    /// The error itself.
    Io(FaultReason, String),
    /// redb refused because an earlier operation failed.
    Latched,
    /// The handle was closed: a read begun before a reopen.
    Closed,
}

/// The I/O failure among the causes of `e`, if any.
pub(crate) fn io_fault(e: &(dyn std::error::Error + 'static)) -> Option<IoFault> {
    let mut cause = Some(e);
    while let Some(c) = cause {
        if let Some(found) = redb_io(c) {
            return Some(found);
        }
        cause = c.source();
    }
    None
}

fn storage_io(s: &StorageError) -> Option<IoFault> {
    match s {
        StorageError::Io(io) => Some(IoFault::Io(FaultReason::of_io(io), io.to_string())),
        StorageError::PreviousIo => Some(IoFault::Latched),
        StorageError::DatabaseClosed => Some(IoFault::Closed),
        _ => None,
    }
}

/// The I/O failure of one of redb's error types.
fn redb_io(c: &(dyn std::error::Error + 'static)) -> Option<IoFault> {
    if let Some(io) = c.downcast_ref::<std::io::Error>() {
        return Some(IoFault::Io(FaultReason::of_io(io), io.to_string()));
    }
    if let Some(s) = c.downcast_ref::<StorageError>() {
        return storage_io(s);
    }
    if let Some(redb::TableError::Storage(s)) = c.downcast_ref::<redb::TableError>() {
        return storage_io(s);
    }
    if let Some(redb::TransactionError::Storage(s)) = c.downcast_ref::<redb::TransactionError>() {
        return storage_io(s);
    }
    if let Some(redb::CommitError::Storage(s)) = c.downcast_ref::<redb::CommitError>() {
        return storage_io(s);
    }
    if let Some(DatabaseError::Storage(s)) = c.downcast_ref::<DatabaseError>() {
        return storage_io(s);
    }
    match c.downcast_ref::<redb::Error>()? {
        redb::Error::Io(io) => Some(IoFault::Io(FaultReason::of_io(io), io.to_string())),
        redb::Error::PreviousIo => Some(IoFault::Latched),
        redb::Error::DatabaseClosed => Some(IoFault::Closed),
        _ => None,
    }
}

struct Fault {
    reason: FaultReason,
    cause: String,
    since: Instant,
    recovers: bool,
    /// When the writer checks again, and the pause after that.
    next_try: Instant,
    pause: Duration,
}

/// One redb file, reopened after I/O errors (see the module's notes).
pub(crate) struct RecoverableDb {
    /// For messages: "content store", "event log".
    name: &'static str,
    /// Its readiness check's name, the metrics' `store` label.
    label: &'static str,
    path: PathBuf,
    cache_bytes: usize,
    /// `None` while it is being reopened, or after a reopen failed.
    db: RwLock<Option<Arc<Database>>>,
    fault: Mutex<Option<Fault>>,
}

impl RecoverableDb {
    pub fn open(
        name: &'static str,
        label: &'static str,
        path: &Path,
        cache_bytes: usize,
    ) -> Result<RecoverableDb> {
        let db = open_file(path, cache_bytes).map_err(|e| storage_error(e, "opening"))?;
        // A probe a crash left behind.
        let _ = std::fs::remove_file(probe_path(path));
        Ok(RecoverableDb {
            name,
            label,
            path: path.to_path_buf(),
            cache_bytes,
            db: RwLock::new(Some(Arc::new(db))),
            fault: Mutex::new(None),
        })
    }

    /// The database to read from: the current handle, even after a fault
    /// (redb still answers what it cached), unless it is being reopened.
    pub fn db(&self) -> Result<Arc<Database>> {
        let held = self.db.read().unwrap_or_else(|p| p.into_inner()).clone();
        held.ok_or_else(|| self.error())
    }

    /// The database to write to: none while a fault stands.
    pub fn writable(&self) -> Result<Arc<Database>> {
        if self.lock_fault().is_some() {
            return Err(self.error());
        }
        self.db()
    }

    /// `result`, after recording the I/O fault it may show; such an error
    /// becomes the fault's own (503, naming the store and the cause).
    pub fn check<T>(&self, result: Result<T>) -> Result<T> {
        match result {
            Err(e) if self.note(&e) => Err(self.error()),
            Err(e) if matches!(io_fault(&e), Some(IoFault::Closed)) => Err(Error::unavailable(
                format!("the {} was reopened after an I/O error; retry", self.name),
            )),
            other => other,
        }
    }

    /// Records the I/O fault `e` shows, if it shows one; whether it did. A
    /// read of a handle closed by a reopen shows none: the new one is fine.
    pub fn note(&self, e: &Error) -> bool {
        let (reason, cause) = match io_fault(e) {
            Some(IoFault::Io(reason, cause)) => (reason, cause),
            Some(IoFault::Latched) => (FaultReason::IoError, "an earlier I/O error".to_owned()),
            Some(IoFault::Closed) | None => return false,
        };
        let mut fault = self.lock_fault();
        if fault.is_none() {
            tracing::error!(store = self.label, %cause, error = %e.chain(), "the {} cannot write; it reopens by itself once its file system takes writes again", self.name);
            let now = Instant::now();
            *fault = Some(Fault {
                reason,
                cause,
                since: now,
                recovers: true,
                next_try: now + CHECK_EVERY,
                pause: CHECK_EVERY,
            });
        }
        true
    }

    /// The fault, for readiness and liveness.
    pub fn fault(&self) -> Option<StoreFault> {
        let fault = self.lock_fault();
        let f = fault.as_ref()?;
        Some(StoreFault {
            reason: f.reason,
            message: self.describe(f),
            recovers: f.recovers,
        })
    }

    /// What a write or read meets while the fault stands.
    pub fn error(&self) -> Error {
        match self.lock_fault().as_ref() {
            Some(f) => Error::unavailable(self.describe(f)),
            None => Error::unavailable(format!("the {} is reopening", self.name)),
        }
    }

    fn describe(&self, f: &Fault) -> String {
        let secs = f.since.elapsed().as_secs();
        match f.recovers {
            true => format!(
                "the {} cannot write since {secs} s: {}; it recovers by itself once the cause is gone",
                self.name, f.cause
            ),
            false => format!(
                "the {} cannot write since {secs} s and cannot recover by itself: {}",
                self.name, f.cause
            ),
        }
    }

    fn lock_fault(&self) -> std::sync::MutexGuard<'_, Option<Fault>> {
        self.fault.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reopens the database if a fault stands and its cause seems gone.
    /// Called by the store's writer thread only (between batches, so no
    /// write transaction is open), at least every [`CHECK_EVERY`].
    pub fn recover_if_due(&self) {
        {
            let fault = self.lock_fault();
            match fault.as_ref() {
                Some(f) if f.recovers && Instant::now() >= f.next_try => {}
                _ => return,
            }
        }
        if let Err(e) = self.probe() {
            // Still no room (or no writes at all): look again shortly.
            if let Some(f) = self.lock_fault().as_mut() {
                f.next_try = Instant::now() + CHECK_EVERY;
                tracing::debug!(store = self.label, error = %e, "the file system does not take writes yet");
            }
            return;
        }
        let started = Instant::now();
        match self.reopen() {
            Ok(()) => {
                let was = self.lock_fault().take();
                let down = was.map_or(0, |f| f.since.elapsed().as_secs());
                metrics()
                    .store_recoveries
                    .get_or_create(&StoreLabel { store: self.label })
                    .inc();
                tracing::info!(
                    store = self.label,
                    down_s = down,
                    reopen_ms = started.elapsed().as_millis() as u64,
                    "the {} reopened and takes writes again",
                    self.name
                );
            }
            Err(Reopen::Busy) => self.retry_later(None, true),
            Err(Reopen::Failed(e)) => {
                let io = io_fault(&e);
                let cause = format!("reopening failed: {e}");
                tracing::warn!(store = self.label, error = %e, "reopening the {} failed", self.name);
                self.retry_later(Some(cause), io.is_some());
            }
        }
    }

    fn retry_later(&self, cause: Option<String>, recovers: bool) {
        if let Some(f) = self.lock_fault().as_mut() {
            if let Some(cause) = cause {
                f.cause = cause;
            }
            f.recovers = recovers;
            f.next_try = Instant::now() + f.pause;
            f.pause = (f.pause * 2).min(MAX_PAUSE);
        }
    }

    /// Whether the file system beside the database takes a write and a
    /// sync again.
    fn probe(&self) -> std::io::Result<()> {
        let probe = probe_path(&self.path);
        let written = (|| {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = options.open(&probe)?;
            file.write_all(&vec![0u8; PROBE_BYTES])?;
            file.sync_all()
        })();
        let _ = std::fs::remove_file(&probe);
        written
    }

    /// Closes the old handle and opens the file again.
    fn reopen(&self) -> std::result::Result<(), Reopen> {
        let taken = self.db.write().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(mut old) = taken {
            // Readers clone the handle for one read: wait for them to end,
            // so that the old handle is closed before the new one opens.
            let deadline = Instant::now() + READERS_WAIT;
            loop {
                match Arc::try_unwrap(old) {
                    Ok(db) => {
                        drop(db);
                        break;
                    }
                    Err(held) if Instant::now() < deadline => {
                        old = held;
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(held) => {
                        *self.db.write().unwrap_or_else(|p| p.into_inner()) = Some(held);
                        return Err(Reopen::Busy);
                    }
                }
            }
        }
        let db = open_file(&self.path, self.cache_bytes).map_err(Reopen::Failed)?;
        *self.db.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(db));
        Ok(())
    }
}

enum Reopen {
    /// Reads held the old handle too long; try again later.
    Busy,
    Failed(DatabaseError),
}

/// The probe file beside a database: `content.redb.probe`.
fn probe_path(db: &Path) -> PathBuf {
    let mut name = db.file_name().unwrap_or_default().to_owned();
    name.push(".probe");
    db.with_file_name(name)
}

fn open_file(path: &Path, cache_bytes: usize) -> std::result::Result<Database, DatabaseError> {
    Database::builder().set_cache_size(cache_bytes).create(path)
}

fn storage_error(e: DatabaseError, what: &str) -> Error {
    let kind = match io_fault(&e) {
        Some(_) => ErrorKind::Unavailable,
        None => ErrorKind::Internal,
    };
    Error::backend(kind, &format!("{what} the embedded store"), e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::EmbeddedLog;
    use socialite_core::event::Event;
    use socialite_core::ids::{PostId, UserId};
    use socialite_core::model::Post;
    use socialite_core::ports::EventLog;

    /// Where the test may fill a file system: `SOCIALITE_TEST_SMALL_FS`
    /// (see `tests/tests/full_disk.rs`); the test is skipped without it,
    /// unless `SOCIALITE_REQUIRE_SERVERS=1` (CI).
    fn small_fs() -> Option<PathBuf> {
        let Some(dir) = std::env::var_os("SOCIALITE_TEST_SMALL_FS") else {
            let required = std::env::var("SOCIALITE_REQUIRE_SERVERS").as_deref() == Ok("1");
            assert!(!required, "SOCIALITE_TEST_SMALL_FS is unset");
            return None;
        };
        let dir = Path::new(&dir).join(format!("recovery-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Some(dir)
    }

    fn post(n: u64) -> Event {
        Event::PostCreated {
            post: Post {
                id: PostId(n),
                author: UserId::parse("alice").unwrap(),
                message: format!("{n} {}", "x".repeat(4000)),
                data: None,
                mentions: Vec::new(),
                reply_to: None,
                repost_of: None,
            },
            trace: Default::default(),
        }
    }

    /// A log on a full file system refuses appends with the cause, says
    /// so as its fault, reopens by itself once space is freed, and keeps
    /// every append it acknowledged, in order.
    #[tokio::test]
    async fn a_full_log_recovers_when_space_returns_and_keeps_what_it_acknowledged() {
        let Some(dir) = small_fs() else {
            eprintln!("SKIPPED: set SOCIALITE_TEST_SMALL_FS to a small mounted file system");
            return;
        };
        let _cleanup = RemoveOnDrop(dir.clone());
        let ballast = dir.join("ballast");
        std::fs::write(&ballast, vec![1u8; 4 << 20]).unwrap();
        let log = EmbeddedLog::open(&dir.join("log.redb"), 1_000_000).unwrap();
        let (mut acked, mut n) = (Vec::new(), 0);
        let refusal = loop {
            n += 1;
            match log.append(&[post(n)]).await {
                Ok(()) => acked.push(n),
                Err(e) => break e,
            }
            assert!(n < 100_000, "the file system never filled");
        };
        assert!(!acked.is_empty());
        assert_eq!(
            refusal.kind(),
            ErrorKind::Unavailable,
            "{}",
            refusal.chain()
        );
        assert!(
            refusal.message().contains("No space left on device"),
            "{}",
            refusal.message()
        );
        let fault = EventLog::fault(&log).expect("a fault while the disk is full");
        assert_eq!((fault.reason, fault.recovers), (FaultReason::NoSpace, true));
        // Still full: refused at once, with the same fault (and so after
        // the writer finished with the refused append).
        assert!(log.append(&[post(n + 1)]).await.is_err());
        // Consumers are not woken for appends that failed: they would read
        // their empty range again and again. One event per append, from 1.
        let head = acked.len() as u64;
        assert_eq!(log.head(), head, "the head moved for a failed append");

        std::fs::remove_file(&ballast).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while EventLog::fault(&log).is_some() {
            assert!(Instant::now() < deadline, "the log never reopened");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        log.append(&[post(n + 2)]).await.unwrap();
        acked.push(n + 2);
        let read: Vec<u64> = log
            .read_after(0, usize::MAX)
            .unwrap()
            .into_iter()
            .map(|(_, e)| match e {
                Event::PostCreated { post, .. } => post.id.0,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(
            read, acked,
            "every acknowledged append, in order, and nothing else"
        );
    }

    /// Removes the test's directory however the test ends: the small file
    /// system is shared with the next run.
    struct RemoveOnDrop(PathBuf);

    impl Drop for RemoveOnDrop {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
