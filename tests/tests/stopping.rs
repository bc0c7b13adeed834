//! The pipeline's loops stop when shutdown begins, whatever their stores
//! do: a fanout worker whose offset commits keep failing, and a relay
//! whose log never answers. Each would otherwise retry (or wait) for ever
//! and hold the process past its grace period (finding 9: the worker
//! retried its commit every 200 ms after SIGTERM, until kill -9).

use async_trait::async_trait;
use socialite_core::backends::Backends;
use socialite_core::error::{Error, Result};
use socialite_core::event::Event;
use socialite_core::health::Joined;
use socialite_core::ingest::Ingest;
use socialite_core::ports::{EventLog, LogConsumer, LogPosition};
use socialite_core::shutdown;
use socialite_core::worker::{run_worker, WorkerConfig};
use socialite_domain::accounts::access::Caller;
use socialite_embedded::EmbeddedConfig;
use socialite_runtime::backends::{open_backends, BackendConfig};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What a loop may take to stop once shutdown fired: far more than it
/// needs (it stops at its next wait), far less than never.
const STOPS_WITHIN: Duration = Duration::from_secs(20);

async fn backends(dir: &std::path::Path) -> Backends {
    let config = BackendConfig::embedded(EmbeddedConfig {
        data_dir: dir.to_path_buf(),
        log_retention: 1_000_000,
        feed: Default::default(),
        bulk: false,
    });
    open_backends(&config).await.unwrap()
}

/// A post by alice, relayed onto the log: a batch for the worker.
async fn a_post_on_the_log(b: &Backends) {
    let ingest = Ingest::new(b, 0).await.unwrap();
    ingest
        .put_user(&Caller::Trusted, "alice", None)
        .await
        .unwrap();
    let message = "hello".to_owned();
    ingest
        .create_post(&Caller::Trusted, "alice", message, None)
        .await
        .unwrap();
    while socialite_core::relay::relay_once(&*b.outbox, &*b.log)
        .await
        .unwrap()
        > 0
    {}
}

/// The log, whose consumers poll as usual and fail every commit.
struct RefusedCommits {
    log: Arc<dyn EventLog>,
    commits: Arc<AtomicUsize>,
}

struct RefusingConsumer {
    inner: Box<dyn LogConsumer>,
    commits: Arc<AtomicUsize>,
}

#[async_trait]
impl EventLog for RefusedCommits {
    async fn append(&self, events: &[Event]) -> Result<()> {
        self.log.append(events).await
    }
    async fn ping(&self) -> Result<()> {
        self.log.ping().await
    }
    async fn consumer(&self, group: &str) -> Result<Box<dyn LogConsumer>> {
        Ok(Box::new(RefusingConsumer {
            inner: self.log.consumer(group).await?,
            commits: self.commits.clone(),
        }))
    }
    async fn position(&self, group: &str) -> Result<LogPosition> {
        self.log.position(group).await
    }
}

#[async_trait]
impl LogConsumer for RefusingConsumer {
    async fn poll(&mut self, max: usize, wait: Duration, linger: Duration) -> Result<Vec<Event>> {
        self.inner.poll(max, wait, linger).await
    }
    async fn commit(&mut self) -> Result<()> {
        self.commits.fetch_add(1, Ordering::SeqCst);
        Err(Error::unavailable(
            "the event log cannot write: no space left on device",
        ))
    }
    async fn backlog(&self) -> Result<u64> {
        self.inner.backlog().await
    }
}

/// A log that never answers an append (a broker gone, a request never
/// timing out); counts the appends begun.
struct Silent(Arc<dyn EventLog>, Arc<AtomicUsize>);

#[async_trait]
impl EventLog for Silent {
    async fn append(&self, _: &[Event]) -> Result<()> {
        self.1.fetch_add(1, Ordering::SeqCst);
        std::future::pending().await
    }
    async fn ping(&self) -> Result<()> {
        std::future::pending().await
    }
    async fn consumer(&self, group: &str) -> Result<Box<dyn LogConsumer>> {
        self.0.consumer(group).await
    }
    async fn position(&self, _: &str) -> Result<LogPosition> {
        std::future::pending().await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_whose_commits_keep_failing_stops_on_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let b = backends(dir.path()).await;
    a_post_on_the_log(&b).await;
    let commits = Arc::new(AtomicUsize::new(0));
    let log = Arc::new(RefusedCommits {
        log: b.log.clone(),
        commits: commits.clone(),
    });
    let (trigger, stop) = shutdown::channel();
    let joined = Joined::default();
    let worker = tokio::spawn(run_worker(
        b.stores(),
        log,
        b.applied.clone(),
        WorkerConfig::default(),
        joined.clone(),
        stop,
    ));
    // The batch applied, its commit failing and retried.
    let deadline = std::time::Instant::now() + STOPS_WITHIN;
    while commits.load(Ordering::SeqCst) < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "the worker never committed"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    trigger.trigger();
    let stopped = tokio::time::timeout(STOPS_WITHIN, worker).await;
    let result = stopped.expect("the worker kept retrying its commit after shutdown");
    result.unwrap().unwrap();
    assert!(!joined.get(), "a stopped worker says it left its group");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_relay_whose_log_never_answers_stops_on_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let b = backends(dir.path()).await;
    let ingest = Ingest::new(&b, 0).await.unwrap();
    ingest
        .put_user(&Caller::Trusted, "alice", None)
        .await
        .unwrap();
    let message = "waits in the outbox".to_owned();
    ingest
        .create_post(&Caller::Trusted, "alice", message, None)
        .await
        .unwrap();
    let (trigger, stop) = shutdown::channel();
    let appends = Arc::new(AtomicUsize::new(0));
    let log = Arc::new(Silent(b.log.clone(), appends.clone()));
    let relay = tokio::spawn(socialite_core::relay::run_relay(
        b.outbox.clone(),
        log,
        stop,
    ));
    let deadline = std::time::Instant::now() + STOPS_WITHIN;
    while appends.load(Ordering::SeqCst) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the relay never appended"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    trigger.trigger();
    let stopped = tokio::time::timeout(STOPS_WITHIN, relay).await;
    stopped
        .expect("the relay waited on its log after shutdown")
        .unwrap()
        .unwrap();
    assert!(
        b.outbox.backlog().await.unwrap() >= 1,
        "the event still waits in the outbox"
    );
}
