//! The embedded event log: a redb file (`log.redb`) of sequence-numbered
//! events and one committed offset per consumer group. Appends and commits go
//! through the group-commit writer, so both are durable when they return.

use crate::recovery::RecoverableDb;
use crate::tables::*;
use crate::writer::Writer;
use async_trait::async_trait;
use redb::{Database, ReadTransaction, ReadableDatabase, ReadableTable};
use socialite_core::error::Result;
use socialite_core::event::Event;
use socialite_core::fault::{FaultReason, StoreFault};
use socialite_core::ports::{EventLog, Extent, LogConsumer, LogPosition, LogTail, Rewind};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Events kept behind the slowest consumer group, for replays.
pub const DEFAULT_RETENTION: u64 = 1_000_000;
/// Most events deleted by one commit, to keep commits short.
const TRUNCATE_STEP: u64 = 10_000;

pub struct EmbeddedLog {
    inner: Arc<Inner>,
}

struct Inner {
    db: Arc<RecoverableDb>,
    writer: Writer<LogState>,
    /// The sequence of the newest durable event.
    head: watch::Receiver<u64>,
    retention: u64,
}

struct LogState {
    /// The last sequence handed out. A batch that fails to commit leaves
    /// its sequences unused (never reused: a gap is harmless to readers,
    /// who read ranges).
    head: u64,
    /// The last sequence the batch being written appended, if it did.
    appended: Option<u64>,
    notify: watch::Sender<u64>,
}

impl EmbeddedLog {
    /// The database to read from (see [`RecoverableDb::db`]).
    pub(crate) fn db(&self) -> Result<Arc<Database>> {
        self.inner.db.db()
    }

    /// The sequence of the newest durable event (0: none yet).
    pub fn head(&self) -> u64 {
        *self.inner.head.borrow()
    }

    /// Up to `max` events after the sequence `after`, with their sequences,
    /// oldest first (a migration reading a backup's log).
    pub fn read_after(&self, after: u64, max: usize) -> Result<Vec<(u64, Event)>> {
        self.inner.read_from(after + 1, max)
    }

    pub fn open(path: &Path, retention: u64) -> Result<EmbeddedLog> {
        // Consumers read the log's tail, which is also what was written last:
        // a small page cache suffices (redb's default is 1 GiB).
        let db = Arc::new(RecoverableDb::open(
            "event log",
            "event_log",
            path,
            16 << 20,
        )?);
        let txn = db.db()?.begin_write().store()?;
        let head = {
            txn.open_table(OFFSETS).store()?;
            last_u64_key(&txn.open_table(LOG).store()?)?
        };
        txn.commit().store()?;
        let (tx, rx) = watch::channel(head);
        let state = LogState {
            head,
            appended: None,
            notify: tx,
        };
        // Consumers learn of committed events only: told of a batch that
        // failed, they would read its empty range again and again.
        let writer = Writer::spawn("log", db.clone(), state, |s, committed| {
            if let Some(top) = s.appended.take().filter(|_| committed) {
                s.notify.send_replace(top);
            }
        });
        Ok(EmbeddedLog {
            inner: Arc::new(Inner {
                db,
                writer,
                head: rx,
                retention,
            }),
        })
    }
}

#[async_trait]
impl Rewind for EmbeddedLog {
    /// Moves a group's offset back so that it consumes again from `next`
    /// (a replay). It never moves forward: skipping events would lose them.
    /// Consumers of the group that are open keep their own position.
    async fn rewind(&self, group: &str, next: u64) -> Result<()> {
        let group = group.to_owned();
        self.inner
            .writer
            .write(move |ctx| {
                let mut offsets = ctx.txn.open_table(OFFSETS).store()?;
                let current = offsets
                    .get(group.as_str())
                    .store()?
                    .map(|g| g.value())
                    .unwrap_or(1);
                offsets
                    .insert(group.as_str(), next.clamp(1, current))
                    .store()?;
                Ok(())
            })
            .await
    }

    fn first_retained(&self) -> Result<u64> {
        self.inner.read(|txn| {
            Ok(txn
                .open_table(LOG)
                .store()?
                .first()
                .store()?
                .map(|(k, _)| k.value())
                .unwrap_or(0))
        })
    }
}

#[async_trait]
impl EventLog for EmbeddedLog {
    async fn append(&self, events: &[Event]) -> Result<()> {
        let encoded: Vec<Vec<u8>> = events.iter().map(Event::encode).collect();
        self.inner
            .writer
            .write(move |ctx| {
                let mut log = ctx.txn.open_table(LOG).store()?;
                let mut seq = ctx.state.head;
                for e in &encoded {
                    seq += 1;
                    log.insert(seq, e.as_slice()).store()?;
                }
                ctx.state.head = seq;
                ctx.state.appended = Some(seq);
                Ok(())
            })
            .await
    }

    async fn ping(&self) -> Result<()> {
        self.inner.read(|txn| {
            txn.open_table(OFFSETS).store()?;
            Ok(())
        })
    }

    fn fault(&self) -> Option<StoreFault> {
        self.inner.db.fault().or_else(|| {
            self.inner.writer.stopped().then(|| StoreFault {
                reason: FaultReason::Failing,
                message: "the event log's writer stopped; restart the process".into(),
                recovers: false,
            })
        })
    }

    async fn consumer(&self, group: &str) -> Result<Box<dyn LogConsumer>> {
        let next = self.inner.next_of(group)?;
        Ok(Box::new(Consumer {
            inner: self.inner.clone(),
            group: group.to_owned(),
            next,
            committed: next,
        }))
    }

    async fn position(&self, group: &str) -> Result<LogPosition> {
        let next = self.inner.next_of(group)?;
        Ok(LogPosition::single(next - 1, self.head()))
    }

    async fn extent(&self) -> Result<Vec<Extent>> {
        crate::log_tail::extent(&self.inner.source()).map(|e| vec![e])
    }

    async fn tail(&self, next: &[u64]) -> Result<Box<dyn LogTail>> {
        crate::log_tail::open(self.inner.source(), next)
    }

    /// A hold is an entry among the groups' offsets: truncation keeps
    /// what the slowest entry has not passed.
    async fn hold(&self, name: &str, next: Option<&[u64]>) -> Result<()> {
        let (name, next) = (name.to_owned(), next.and_then(|n| n.first().copied()));
        self.inner
            .writer
            .write_lazy(move |ctx| {
                let mut offsets = ctx.txn.open_table(OFFSETS).store()?;
                match next {
                    Some(next) => offsets.insert(name.as_str(), next).store()?,
                    None => offsets.remove(name.as_str()).store()?,
                };
                Ok(())
            })
            .await
    }
}

struct Consumer {
    inner: Arc<Inner>,
    group: String,
    /// The next sequence to hand out.
    next: u64,
    committed: u64,
}

impl Inner {
    /// What a reader of the log from a sequence of its own needs.
    fn source(&self) -> crate::log_tail::Source {
        crate::log_tail::Source {
            db: self.db.clone(),
            head: self.head.clone(),
        }
    }

    /// The sequence `group` consumes next, after its last commit.
    fn next_of(&self, group: &str) -> Result<u64> {
        self.read(|txn| {
            Ok(txn
                .open_table(OFFSETS)
                .store()?
                .get(group)
                .store()?
                .map(|g| g.value())
                .unwrap_or(1))
        })
    }

    /// A read of the log; its I/O failure is recorded as the log's fault.
    fn read<R>(&self, f: impl FnOnce(&ReadTransaction) -> Result<R>) -> Result<R> {
        let read = || f(&self.db.db()?.begin_read().store()?);
        self.db.check(read())
    }

    /// Up to `max` events from the sequence `next` on, oldest first.
    fn read_from(&self, next: u64, max: usize) -> Result<Vec<(u64, Event)>> {
        self.read(|txn| {
            let log = txn.open_table(LOG).store()?;
            let mut out = Vec::new();
            for item in log.range(next..).store()?.take(max) {
                let (k, v) = item.store()?;
                out.push((k.value(), Event::decode(v.value())?));
            }
            Ok(out)
        })
    }
}

impl Consumer {
    fn read(&self, max: usize) -> Result<Vec<(u64, Event)>> {
        self.inner.read_from(self.next, max)
    }
}

#[async_trait]
impl LogConsumer for Consumer {
    async fn poll(&mut self, max: usize, wait: Duration, linger: Duration) -> Result<Vec<Event>> {
        let mut head = self.inner.head.clone();
        if *head.borrow_and_update() < self.next {
            let _ = tokio::time::timeout(wait, head.wait_for(|h| *h >= self.next)).await;
        }
        // Some events wait but not a full batch: give the rest `linger` to arrive.
        let full = self.next + max as u64 - 1;
        let known = *head.borrow();
        if !linger.is_zero() && known >= self.next && known < full {
            let _ = tokio::time::timeout(linger, head.wait_for(|h| *h >= full)).await;
        }
        let batch = self.read(max)?;
        if let Some((last, _)) = batch.last() {
            self.next = last + 1;
        }
        Ok(batch.into_iter().map(|(_, e)| e).collect())
    }

    async fn commit(&mut self) -> Result<()> {
        if self.next == self.committed {
            return Ok(());
        }
        let (group, next, retention) = (self.group.clone(), self.next, self.inner.retention);
        self.inner
            .writer
            .write_lazy(move |ctx| {
                let mut offsets = ctx.txn.open_table(OFFSETS).store()?;
                offsets.insert(group.as_str(), next).store()?;
                let mut slowest = next;
                for item in offsets.iter().store()? {
                    slowest = slowest.min(item.store()?.1.value());
                }
                // Keep `retention` events behind the slowest group, deleting a
                // bounded step per commit.
                let keep_from = slowest.saturating_sub(retention);
                let mut log = ctx.txn.open_table(LOG).store()?;
                let first = log.first().store()?.map(|(k, _)| k.value());
                if let Some(first) = first {
                    let upto = keep_from.min(first + TRUNCATE_STEP);
                    if upto > first {
                        log.retain_in(first..upto, |_, _| false).store()?;
                    }
                }
                Ok(())
            })
            .await?;
        self.committed = next;
        Ok(())
    }

    async fn backlog(&self) -> Result<u64> {
        let head = *self.inner.head.borrow();
        Ok((head + 1).saturating_sub(self.committed))
    }
}

impl Drop for Consumer {
    fn drop(&mut self) {
        if self.next != self.committed {
            tracing::debug!(group = %self.group, "consumer dropped with uncommitted events; they will be redelivered");
        }
    }
}
