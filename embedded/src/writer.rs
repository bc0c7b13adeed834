//! Group commit for a redb database: one thread owns the write side, takes the
//! writes that queued up while the previous commit was syncing, applies them in
//! one transaction and syncs once. Each caller is answered only after the
//! commit that covers its write is durable, so acknowledgement implies
//! durability at the cost of one fsync per batch rather than per request.
//!
//! The thread also recovers the database after an I/O error
//! ([`RecoverableDb`]): while the fault stands, writes fail at once with
//! it; between batches, and at least every second, the thread reopens the
//! file once its file system takes writes again. Writes queued during the
//! reopen wait for it and then commit.

use crate::recovery::{RecoverableDb, CHECK_EVERY};
use redb::{Database, WriteTransaction};
use socialite_core::error::{Error, ErrorKind, Result};
use socialite_core::plan::Ledger;
use socialite_core::priority::WRITES_NICE;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Arc;
use tokio::sync::oneshot;

/// Most writes folded into one transaction.
const MAX_BATCH: usize = 1024;

/// What a job sees: the open transaction and the writer's own state (sequence
/// counters and the like), which only the writer thread touches.
pub(crate) struct WriteCtx<'t, S> {
    pub txn: &'t WriteTransaction,
    pub state: &'t mut S,
    /// What the job's planned write applied (see `crate::transact`).
    pub ledger: Ledger,
    /// Set by a job whose write failed after it wrote: the batch must not
    /// commit what it wrote.
    pub undo: bool,
}

/// Answers the caller, given the batch's failure if it failed.
type Completion = Box<dyn FnOnce(Option<&Error>) + Send>;

/// How a job's write went, for the batch.
#[derive(Clone, Copy, PartialEq)]
enum Outcome {
    /// Done, or refused for a domain reason before writing anything.
    Clean,
    /// Refused after it wrote (a batch of records refused at a later
    /// one): the batch aborts, and its other writes are asked to retry.
    Undone,
    /// Failed in a way that must abort the batch.
    Fatal,
    /// Failed on I/O: the batch aborts and the store recovers.
    Io,
}

/// Runs the write in the given transaction, or, given none (the batch
/// cannot run), does nothing; returns its completion and how it went.
type Job<S> = Box<dyn FnOnce(Option<&mut WriteCtx<'_, S>>) -> (Completion, Outcome) + Send>;

/// A job, and whether it may skip the sync (see [`Writer::write_lazy`]).
type Queued<S> = (Job<S>, bool);

pub(crate) struct Writer<S> {
    jobs: Option<mpsc::Sender<Queued<S>>>,
    thread: Option<std::thread::JoinHandle<()>>,
    db: Arc<RecoverableDb>,
}

impl<S: Send + 'static> Writer<S> {
    /// Starts the writer thread. `after_commit` runs after each batch, told
    /// whether it committed (e.g. to wake readers of what was written; a
    /// batch that failed wrote nothing).
    pub fn spawn(
        name: &str,
        db: Arc<RecoverableDb>,
        mut state: S,
        after_commit: impl Fn(&mut S, bool) + Send + 'static,
    ) -> Writer<S> {
        let (tx, rx) = mpsc::channel::<Queued<S>>();
        let recoverable = db.clone();
        let thread = std::thread::Builder::new()
            .name(format!("{name}-writer"))
            .spawn(move || {
                // Commits are write work: where the process also serves
                // reads, they must not take the reads' turn on the CPU.
                socialite_core::priority::lower_this_thread(WRITES_NICE);
                // Whether a lazy batch has committed since the last synced one.
                let mut unsynced = false;
                loop {
                    // Woken at least every CHECK_EVERY, to recover from a
                    // fault even while nothing is written.
                    let first = match rx.recv_timeout(CHECK_EVERY) {
                        Ok(job) => job,
                        Err(RecvTimeoutError::Timeout) => {
                            db.recover_if_due();
                            continue;
                        }
                        Err(RecvTimeoutError::Disconnected) => break,
                    };
                    db.recover_if_due();
                    let mut jobs = vec![first];
                    while jobs.len() < MAX_BATCH {
                        match rx.try_recv() {
                            Ok(j) => jobs.push(j),
                            Err(_) => break,
                        }
                    }
                    let lazy = jobs.iter().all(|(_, lazy)| *lazy);
                    let committed = match db.writable() {
                        Ok(handle) => commit_batch(&handle, &db, &mut state, jobs),
                        Err(fault) => {
                            fail_all(jobs, &fault);
                            false
                        }
                    };
                    if committed {
                        unsynced = lazy;
                    }
                    after_commit(&mut state, committed);
                }
                // Closing: make lazy commits durable with one synced commit.
                if let Some(handle) = db.writable().ok().filter(|_| unsynced) {
                    if let Ok(txn) = handle.begin_write() {
                        let _ = txn.commit();
                    }
                }
            })
            .expect("spawn writer thread");
        Writer {
            jobs: Some(tx),
            thread: Some(thread),
            db: recoverable,
        }
    }

    /// Whether the writer thread ended while the store is open (it panicked):
    /// the store can then take no write until the process restarts.
    pub fn stopped(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| t.is_finished())
    }

    /// Runs `f` inside the next group transaction and returns its result once
    /// that transaction is durable. A job that returns a domain error
    /// (invalid, not found, conflict) before it writes anything leaves the
    /// batch to commit; one that wrote first sets `undo` (an import's batch
    /// refused at a later record), and that, or any other error, aborts the
    /// whole batch.
    pub async fn write<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut WriteCtx<'_, S>) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        self.submit(f, false).await
    }

    /// Like [`Writer::write`], for writes whose loss in a crash is harmless
    /// (they are redone: an outbox acknowledgement, a consumer offset). A
    /// batch of only such writes commits without syncing; redb makes it
    /// durable with the next synced commit.
    pub async fn write_lazy<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut WriteCtx<'_, S>) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        self.submit(f, true).await
    }

    async fn submit<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut WriteCtx<'_, S>) -> Result<R> + Send + 'static,
        lazy: bool,
    ) -> Result<R> {
        let (tx, rx) = oneshot::channel();
        // The caller's span, when traces are exported: a write's planner
        // reads it for the trace context its events carry.
        let span = socialite_core::trace::hooks().map(|_| tracing::Span::current());
        let db = self.db.clone();
        let job: Job<S> = Box::new(move |ctx| {
            let Some(ctx) = ctx else {
                // Not run: the batch's failure answers.
                let done: Completion = Box::new(move |failure| {
                    let failure = failure.map_or_else(
                        || Error::unavailable("the embedded store could not run the write"),
                        Error::duplicate,
                    );
                    let _ = tx.send(Err(failure));
                });
                return (done, Outcome::Clean);
            };
            let result = match &span {
                Some(span) => span.in_scope(|| f(ctx)),
                None => f(ctx),
            };
            let undo = std::mem::take(&mut ctx.undo);
            let outcome = match &result {
                Ok(_) => Outcome::Clean,
                Err(e) if db.note(e) => Outcome::Io,
                Err(e) if matches!(e.kind(), ErrorKind::Internal | ErrorKind::Unavailable) => {
                    Outcome::Fatal
                }
                Err(_) if undo => Outcome::Undone,
                Err(_) => Outcome::Clean,
            };
            let done: Completion = Box::new(move |failure| {
                let out = match (failure, result) {
                    // The fault's own error rather than redb's words.
                    (Some(f), Err(_)) if outcome == Outcome::Io => Err(f.duplicate()),
                    (_, Err(e)) => Err(e),
                    (Some(f), Ok(_)) => Err(f.duplicate()),
                    (None, ok) => ok,
                };
                let _ = tx.send(out);
            });
            (done, outcome)
        });
        let jobs = self
            .jobs
            .as_ref()
            .ok_or_else(|| Error::unavailable("the store is shut down"))?;
        jobs.send((job, lazy))
            .map_err(|_| Error::unavailable("the store is shut down"))?;
        rx.await
            .map_err(|_| Error::internal("the store's writer stopped"))?
    }
}

impl<S> Drop for Writer<S> {
    /// Lets the thread finish the writes already queued, and waits for it, so
    /// that the database file is closed when the store is dropped.
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Answers every job of a batch that cannot run with `failure`.
fn fail_all<S>(queued: Vec<Queued<S>>, failure: &Error) {
    for (job, _) in queued {
        let (done, _) = job(None);
        done(Some(failure));
    }
}

/// Runs the batch in one transaction and commits it; whether it committed.
/// An I/O failure (at the start, in a job, or at the commit) is recorded
/// on `recoverable`, and the batch fails with the fault's error.
fn commit_batch<S>(
    db: &Database,
    recoverable: &RecoverableDb,
    state: &mut S,
    queued: Vec<Queued<S>>,
) -> bool {
    let lazy = queued.iter().all(|(_, lazy)| *lazy);
    let mut txn = match db.begin_write() {
        Ok(t) => t,
        Err(e) => {
            let e = Error::backend(ErrorKind::Unavailable, "beginning a transaction", e);
            tracing::error!(error = %e.chain(), "embedded store could not begin a transaction");
            let failure = match recoverable.note(&e) {
                true => recoverable.error(),
                false => e,
            };
            fail_all(queued, &failure);
            return false;
        }
    };
    if lazy {
        // Not fatal if refused: the batch is then simply synced.
        let _ = txn.set_durability(redb::Durability::None);
    }
    let mut completions = Vec::with_capacity(queued.len());
    let mut worst = Outcome::Clean;
    {
        let mut ctx = WriteCtx {
            txn: &txn,
            state,
            ledger: Ledger::default(),
            undo: false,
        };
        for (job, _) in queued {
            let (done, outcome) = job(Some(&mut ctx));
            worst = match (worst, outcome) {
                (Outcome::Io, _) | (_, Outcome::Io) => Outcome::Io,
                (Outcome::Fatal, _) | (_, Outcome::Fatal) => Outcome::Fatal,
                (Outcome::Undone, _) | (_, Outcome::Undone) => Outcome::Undone,
                _ => Outcome::Clean,
            };
            completions.push(done);
        }
    }
    let failure = match worst {
        Outcome::Io => {
            let _ = txn.abort();
            Some(recoverable.error())
        }
        Outcome::Fatal | Outcome::Undone => {
            let _ = txn.abort();
            Some(Error::unavailable(
                "write aborted: another write in its batch failed; retry",
            ))
        }
        Outcome::Clean => match txn.commit() {
            Ok(()) => None,
            Err(e) => {
                let e = Error::backend(ErrorKind::Unavailable, "commit", e);
                tracing::error!(error = %e.chain(), "embedded store commit failed");
                Some(match recoverable.note(&e) {
                    true => recoverable.error(),
                    false => e,
                })
            }
        },
    };
    // A refusal is its writer's answer, not the store's failure.
    let failed = !matches!(worst, Outcome::Clean | Outcome::Undone);
    if let Some(f) = failure.as_ref().filter(|_| failed) {
        tracing::error!(error = %f.chain(), "embedded store write aborted");
    }
    let committed = failure.is_none();
    for done in completions {
        done(failure.as_ref());
    }
    committed
}
