//! What migrate reads the source from: full copies (a backup, opened as a
//! deployment of its own) and log tails (the log's events after a point),
//! each deleted when dropped unless kept, so a move that fails anywhere
//! leaves none of them behind.

use crate::backends::{open_keeping_embedded, BackendConfig};
use crate::transfer::embedded_config as embedded;
use socialite_core::backends::Backends;
use socialite_core::transfer::catch_up::{Replayed, Target};
use socialite_embedded::backup::Position;
use socialite_embedded::backup_tail::TAIL_FILE;
use socialite_embedded::{EmbeddedLog, EmbeddedStore};
use std::path::PathBuf;
use std::sync::Arc;

/// Events read from a copy's log at a time.
const EVENTS_PER_READ: usize = 1000;
/// Events a full copy's outbox may hold and still be checked against its
/// log; past it the relay was stalled, and the copy is taken again.
const OUTBOX_CHECKED: usize = 100_000;
/// A directory migrate made, deleted when dropped unless `keep`.
pub(super) struct Scratch {
    pub(super) dir: PathBuf,
    keep: bool,
}

impl Scratch {
    fn new(dir: PathBuf) -> Scratch {
        Scratch { dir, keep: false }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        if let Err(e) = std::fs::remove_dir_all(&self.dir) {
            eprintln!("could not remove {}: {e}", self.dir.display());
        }
    }
}

/// Replays onto `target` the events of `log` after `from`; moves `from`
/// to the last one replayed. Returns how many.
async fn replay_log(
    log: &EmbeddedLog,
    from: &mut u64,
    target: &Backends,
    tally: &mut Replayed,
) -> Result<u64, String> {
    use socialite_core::ports::Rewind;
    let oldest = log.first_retained().map_err(|e| e.chain())?;
    if log.head() > *from && oldest > *from + 1 {
        return Err(format!(
            "the source's log no longer holds the events after {from} (its oldest is {oldest}): more writes came during the copy than it keeps; run migrate again"
        ));
    }
    let to = Target {
        transfer: &*target.transfer,
        content: &*target.content,
    };
    let mut replayed = 0;
    loop {
        let events = log
            .read_after(*from, EVENTS_PER_READ)
            .map_err(|e| e.chain())?;
        let Some((last, _)) = events.last() else {
            return Ok(replayed);
        };
        let last = *last;
        to.replay(&events, tally).await.map_err(|e| e.chain())?;
        replayed += events.len() as u64;
        *from = last;
    }
}

/// A backup, opened to be read.
pub(super) struct Copy {
    pub(super) backends: Backends,
    store: Arc<EmbeddedStore>,
    log: Arc<EmbeddedLog>,
    position: Position,
    /// Last: dropped once the stores above have closed their files.
    pub(super) scratch: Scratch,
}

impl Copy {
    pub(super) async fn open(dir: PathBuf) -> Result<Copy, String> {
        let scratch = Scratch::new(dir.clone());
        let position = Position::read(&dir).map_err(|e| e.chain())?;
        let config = BackendConfig::embedded(embedded(&dir));
        let (backends, parts) = open_keeping_embedded(&config)
            .await
            .map_err(|e| e.chain())?;
        let (Some(store), Some(log)) = parts else {
            return Err(format!("{}: not an embedded backup", dir.display()));
        };
        Ok(Copy {
            backends,
            store,
            log,
            position,
            scratch,
        })
    }

    /// The sequence every event up to which its content holds.
    pub(super) fn log_before(&self) -> u64 {
        self.position.log_before
    }

    /// Whether its content, brought up to its own log, is the source's
    /// state at the log's head: no deletion was under way, and the events
    /// its outbox held are on its log (the log is copied after the
    /// content, and the relay moves events within moments). A copy taken
    /// while the source serves is checked so before it is compared.
    ///
    /// The relay appends the outbox's events in its order, a batch at a
    /// time, and forgets them only once the log holds them. So those it
    /// held are on the log as one run, in that order, ending after the
    /// position read before the content's snapshot (a batch may have been
    /// appended then and not yet forgotten): such a run is looked for.
    pub(super) async fn whole(&self) -> Result<bool, String> {
        use socialite_core::ports::{Deletions, Outbox};
        let chain = |e: socialite_core::error::Error| e.chain();
        if !Deletions::pending_deletions(&*self.store)
            .await
            .map_err(chain)?
            .is_empty()
        {
            return Ok(false);
        }
        let held = Outbox::pending(&*self.store, OUTBOX_CHECKED)
            .await
            .map_err(chain)?;
        if held.is_empty() {
            return Ok(true);
        }
        if held.len() == OUTBOX_CHECKED {
            return Ok(false);
        }
        let held: Vec<Vec<u8>> = held.iter().map(|(_, e)| e.encode()).collect();
        let mut logged = Vec::new();
        let mut at = self.position.log_before.saturating_sub(held.len() as u64);
        loop {
            let events = self.log.read_after(at, EVENTS_PER_READ).map_err(chain)?;
            let Some((last, _)) = events.last() else {
                break;
            };
            at = *last;
            logged.extend(events.iter().map(|(_, e)| e.encode()));
        }
        Ok(logged.windows(held.len()).any(|run| run == held.as_slice()))
    }

    /// Replays onto `target` the events of its log after `from`; moves
    /// `from` to the last one replayed.
    pub(super) async fn catch_up(
        &self,
        from: &mut u64,
        target: &Backends,
        tally: &mut Replayed,
    ) -> Result<u64, String> {
        replay_log(&self.log, from, target, tally).await
    }

    /// Brings the copy's content up to its own log: the events after its
    /// position replayed onto it (a replay over a state that holds it
    /// changes nothing), so that it is the source's state where the
    /// target was caught up to.
    pub(super) async fn up_to_its_log(&self) -> Result<(), String> {
        let mut from = self.position.log_before;
        let mut tally = Replayed::default();
        self.catch_up(&mut from, &self.backends, &mut tally)
            .await
            .map(drop)
    }

    /// Closes it and deletes its files.
    pub(super) fn discard(self) {
        drop(self);
    }

    /// Keeps its files once it is closed.
    pub(super) fn keep(&mut self) {
        self.scratch.keep = true;
    }
}

/// A log tail (`socialite_embedded::backup_tail`), opened to be read.
pub(super) struct Tail {
    log: EmbeddedLog,
    position: Position,
    _scratch: Scratch,
}

impl Tail {
    pub(super) fn open(dir: PathBuf) -> Result<Tail, String> {
        let scratch = Scratch::new(dir.clone());
        let position = Position::read(&dir).map_err(|e| e.chain())?;
        if position.tail_after.is_none() {
            return Err(format!("{}: not a log tail", dir.display()));
        }
        let log = EmbeddedLog::open(&dir.join(TAIL_FILE), u64::MAX).map_err(|e| e.chain())?;
        Ok(Tail {
            log,
            position,
            _scratch: scratch,
        })
    }

    /// Whether nothing was in flight towards the log when it was read.
    pub(super) fn settled(&self) -> bool {
        self.position.settled
    }

    /// Replays onto `target` its events after `from`; moves `from` to the
    /// last one replayed. Returns how many.
    pub(super) async fn catch_up(
        &self,
        from: &mut u64,
        target: &Backends,
        tally: &mut Replayed,
    ) -> Result<u64, String> {
        if self.position.tail_after.is_some_and(|after| after > *from) {
            return Err(format!(
                "a log tail after event {:?} cannot carry on from event {from}",
                self.position.tail_after
            ));
        }
        replay_log(&self.log, from, target, tally).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::open_keeping_embedded;
    use socialite_core::ingest::Ingest;
    use socialite_core::relay::relay_once;
    use socialite_domain::accounts::access::Caller;
    use socialite_embedded::backup::EmbeddedBackup;

    /// A copy whose outbox holds events its log lacks is not whole; once
    /// the log holds them (relayed while the copy's log was read), it is.
    #[tokio::test]
    async fn a_copy_is_whole_when_its_log_holds_what_its_outbox_held() {
        let dir = tempfile::tempdir().unwrap();
        let config = BackendConfig::embedded(embedded(dir.path()));
        let (backends, parts) = open_keeping_embedded(&config).await.unwrap();
        let (Some(store), Some(log)) = parts else {
            panic!("embedded")
        };
        let ingest = Ingest::new(&backends, 1).await.unwrap();
        ingest
            .put_user(&Caller::Trusted, "ann", None)
            .await
            .unwrap();
        let backup = EmbeddedBackup {
            store: Some(store.clone()),
            log: Some(log.clone()),
            root: dir.path().join("backups"),
        };
        let held = dir.path().join("held");
        backup.backup_into(&held).await.unwrap();
        let whole = |dir: PathBuf| async move {
            // Kept: a copy deletes its files when dropped.
            let mut copy = Copy::open(dir).await.unwrap();
            copy.keep();
            copy.whole().await.unwrap()
        };
        assert!(!whole(held.clone()).await);

        // The same content, with the log as it is once relayed.
        while relay_once(&*store, &*log).await.unwrap() > 0 {}
        let relayed = dir.path().join("relayed");
        std::fs::create_dir(&relayed).unwrap();
        log.backup_into(&relayed).unwrap();
        std::fs::copy(relayed.join("log.redb"), held.join("log.redb")).unwrap();
        assert!(whole(held).await);
        // And one taken after the relay holds no outbox at all.
        let after = dir.path().join("after");
        backup.backup_into(&after).await.unwrap();
        assert!(whole(after).await);
    }
}
