//! Group commit for a redb database: one thread owns the write side, takes the
//! writes that queued up while the previous commit was syncing, applies them in
//! one transaction and syncs once. Each caller is answered only after the
//! commit that covers its write is durable, so acknowledgement implies
//! durability at the cost of one fsync per batch rather than per request.

use redb::{Database, WriteTransaction};
use socialite_core::error::{Error, ErrorKind, Result};
use std::sync::mpsc;
use std::sync::Arc;
use tokio::sync::oneshot;

/// Most writes folded into one transaction.
const MAX_BATCH: usize = 1024;

/// What a job sees: the open transaction and the writer's own state (sequence
/// counters and the like), which only the writer thread touches.
pub(crate) struct WriteCtx<'t, S> {
    pub txn: &'t WriteTransaction,
    pub state: &'t mut S,
}

type Completion = Box<dyn FnOnce(Option<&Error>) + Send>;
/// Runs the write in the given transaction, or, given none (the transaction
/// could not begin), fails it; returns its completion and whether it failed
/// in a way that must abort the batch.
type Job<S> = Box<dyn FnOnce(Option<&mut WriteCtx<'_, S>>) -> (Completion, bool) + Send>;

/// A job, and whether it may skip the sync (see [`Writer::write_lazy`]).
type Queued<S> = (Job<S>, bool);

pub(crate) struct Writer<S> {
    jobs: Option<mpsc::Sender<Queued<S>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl<S: Send + 'static> Writer<S> {
    /// Starts the writer thread. `after_commit` runs after each durable commit
    /// (e.g. to wake readers of what was written).
    pub fn spawn(
        name: &str,
        db: Arc<Database>,
        mut state: S,
        after_commit: impl Fn(&mut S) + Send + 'static,
    ) -> Writer<S> {
        let (tx, rx) = mpsc::channel::<Queued<S>>();
        let thread = std::thread::Builder::new()
            .name(format!("{name}-writer"))
            .spawn(move || {
                // Whether a lazy batch has committed since the last synced one.
                let mut unsynced = false;
                while let Ok(first) = rx.recv() {
                    let mut jobs = vec![first];
                    while jobs.len() < MAX_BATCH {
                        match rx.try_recv() {
                            Ok(j) => jobs.push(j),
                            Err(_) => break,
                        }
                    }
                    let lazy = jobs.iter().all(|(_, lazy)| *lazy);
                    commit_batch(&db, &mut state, jobs);
                    unsynced = lazy;
                    after_commit(&mut state);
                }
                // Closing: make lazy commits durable with one synced commit.
                if unsynced {
                    if let Ok(txn) = db.begin_write() {
                        let _ = txn.commit();
                    }
                }
            })
            .expect("spawn writer thread");
        Writer {
            jobs: Some(tx),
            thread: Some(thread),
        }
    }

    /// Runs `f` inside the next group transaction and returns its result once
    /// that transaction is durable. A job must return domain errors (invalid,
    /// not found, conflict) before it writes anything; any other error aborts
    /// the whole batch.
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
        let job: Job<S> = Box::new(move |ctx| {
            let result = match ctx {
                Some(ctx) => match &span {
                    Some(span) => span.in_scope(|| f(ctx)),
                    None => f(ctx),
                },
                None => Err(Error::unavailable(
                    "the embedded store could not begin a transaction",
                )),
            };
            let fatal = matches!(&result, Err(e) if matches!(e.kind(), ErrorKind::Internal | ErrorKind::Unavailable));
            let done: Completion = Box::new(move |failure| {
                let out = match (failure, result) {
                    (_, Err(e)) => Err(e),
                    (Some(f), Ok(_)) => Err(f.duplicate()),
                    (None, ok) => ok,
                };
                let _ = tx.send(out);
            });
            (done, fatal)
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

fn commit_batch<S>(db: &Database, state: &mut S, queued: Vec<Queued<S>>) {
    let lazy = queued.iter().all(|(_, lazy)| *lazy);
    let jobs: Vec<Job<S>> = queued.into_iter().map(|(job, _)| job).collect();
    let mut txn = match db.begin_write() {
        Ok(t) => t,
        Err(e) => {
            tracing::error!(error = %e, "embedded store could not begin a transaction");
            for job in jobs {
                let (done, _) = job(None);
                done(None);
            }
            return;
        }
    };
    if lazy {
        // Not fatal if refused: the batch is then simply synced.
        let _ = txn.set_durability(redb::Durability::None);
    }
    let mut completions = Vec::with_capacity(jobs.len());
    let mut abort = false;
    {
        let mut ctx = WriteCtx { txn: &txn, state };
        for job in jobs {
            let (done, fatal) = job(Some(&mut ctx));
            abort |= fatal;
            completions.push(done);
        }
    }
    let failure = if abort {
        let _ = txn.abort();
        Some(Error::unavailable(
            "write aborted: another write in its batch failed; retry",
        ))
    } else {
        txn.commit()
            .err()
            .map(|e| Error::backend(ErrorKind::Unavailable, "commit", e))
    };
    if let Some(f) = &failure {
        tracing::error!(error = %f.chain(), "embedded store commit failed");
    }
    for done in completions {
        done(failure.as_ref());
    }
}
