//! The service builder: turns settings into opened backends and running
//! services on given listeners. Each binary names the services it runs:
//! `socialite up` all three, `socialite-producer`, `socialite-fanout-worker`
//! and `socialite-timeline-api` one each. Every process serves the
//! operators' endpoints on its REST listener; gRPC is served when a service
//! that has gRPC runs.

use crate::backends::open_backends;
pub use crate::services::{AppConfig, Service};
use crate::serving::{serve, Apis, Listening};
use socialite_api::auth::Authenticator;
use socialite_core::backends::Backends;
use socialite_core::deletion::run_deletions;
use socialite_core::graph::run_mute_ends;
use socialite_core::health::{Health, Joined};
use socialite_core::ingest::Ingest;
use socialite_core::live::hub::LiveHub;
use socialite_core::reads::Reads;
use socialite_core::redact;
use socialite_core::relay::run_relay;
use socialite_core::shutdown::{self, ShutdownTrigger};
use socialite_core::worker::run_worker;
use socialite_core::{Error, ErrorKind, Result};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tonic_health::server::HealthReporter;
use tonic_health::ServingStatus;

/// How often readiness is evaluated in the background (for the store
/// fault metric and the log).
const HEALTH_EVERY: Duration = Duration::from_secs(2);
/// How long the last relay pass of a shutdown may take.
const LAST_RELAY: Duration = Duration::from_secs(3);
/// Kept from the grace period for what follows the ordered shutdown
/// (closing the stores, flushing traces).
const SHUTDOWN_MARGIN: Duration = Duration::from_secs(2);

/// Running services.
pub struct App {
    pub rest_addr: SocketAddr,
    /// Where gRPC is served, when a service with gRPC runs.
    pub grpc_addr: Option<SocketAddr>,
    /// Where the operators' endpoints are served apart, if they are.
    pub ops_addr: Option<SocketAddr>,
    pub backends: Backends,
    /// The use cases the APIs call, for in-process callers (the benchmark).
    pub ingest: Arc<Ingest>,
    pub reads: Arc<Reads>,
    /// The live hub, where the timeline-api runs.
    pub live: Option<Arc<LiveHub>>,
    services: Vec<Service>,
    grpc_health: Option<HealthReporter>,
    servers: ShutdownTrigger,
    pipeline: ShutdownTrigger,
    server_tasks: Vec<JoinHandle<()>>,
    pipeline_tasks: Vec<JoinHandle<Result<()>>>,
    /// The runtime write requests are handled on, kept until the servers
    /// have stopped.
    writes: Option<crate::background::Apart>,
}

fn invalid_settings(message: String) -> Error {
    Error::new(ErrorKind::Invalid, "invalid_settings", message)
}

/// Opens the backends and starts `services` on the given listeners: REST
/// (with the operators' endpoints unless `config.ops_addr` serves them
/// apart) always, gRPC when given. In steps: what can fail on the settings
/// alone, the backends and use cases, the APIs, their servers, then the
/// pipeline's loops.
pub async fn start(
    services: &[Service],
    config: &AppConfig,
    rest: TcpListener,
    grpc: Option<TcpListener>,
) -> Result<App> {
    let runs = |s: Service| services.contains(&s);
    let (auth, ops) = credentials_and_ops(services, config).await?;
    let backends = open_backends(&config.storage).await?;
    let ingest = Arc::new(new_ingest(&backends, config).await?);
    let auth = auth.map(|a| {
        Arc::new(
            a.with_accounts(backends.accounts.clone())
                .with_budgets(ingest.budgets().clone()),
        )
    });
    // This process's ingest takes the writes its reads see (one process
    // where snapshots are not shared).
    let reads =
        Arc::new(Reads::with_ranking(backends.stores(), config.ranking.clone()).keeping_views());
    let (servers, server_shutdown) = shutdown::channel();
    let (pipeline, pipeline_shutdown) = shutdown::channel();
    // Ready means the worker holds its group only where a worker runs.
    let joined = Joined::default();
    let health = Health::new(
        backends.content.clone(),
        backends.log.clone(),
        runs(Service::FanoutWorker).then(|| joined.clone()),
    );
    let mut apis = Apis::build(
        services,
        &backends,
        &ingest,
        &reads,
        config,
        &server_shutdown,
    );
    let live = apis.live.clone();
    apis.tasks.push(tokio::spawn(
        health.clone().watch(HEALTH_EVERY, server_shutdown.clone()),
    ));
    let listening = Listening { rest, grpc, ops };
    let served = serve(
        services,
        apis,
        listening,
        auth.as_ref(),
        health,
        config,
        server_shutdown,
    )
    .await?;
    let pipeline_tasks = start_pipeline(
        services,
        &backends,
        config,
        &joined,
        &ingest,
        pipeline_shutdown,
    );
    if runs(Service::FanoutWorker) {
        // The worker may start on threads of its own: answer once it holds
        // its place in the group, so that a process that says it is up is
        // also ready, unless the log keeps it waiting (readiness says so).
        joined.wait(Duration::from_secs(5)).await;
    }
    tracing::info!(
        ?services, rest_addr = %served.rest_addr, grpc_addr = ?served.grpc_addr,
        ops_addr = ?served.ops_addr,
        auth = match &auth { Some(a) if a.checks() => "keys", Some(_) => "none", None => "no API" },
        store = %redact::uri(&config.storage.store), event_log = %redact::uri(&config.storage.event_log),
        "services are up"
    );
    Ok(App {
        rest_addr: served.rest_addr,
        grpc_addr: served.grpc_addr,
        ops_addr: served.ops_addr,
        backends,
        ingest,
        reads,
        live,
        services: services.to_vec(),
        grpc_health: served.grpc_health,
        servers,
        pipeline,
        server_tasks: served.tasks,
        pipeline_tasks,
        writes: served.writes,
    })
}

/// The write use cases with the settings' limits; refusing every write
/// if the data directory was moved elsewhere.
async fn new_ingest(backends: &Backends, config: &AppConfig) -> Result<Ingest> {
    let ingest = Ingest::new(backends, config.node_id)
        .await?
        .with_max_following(config.limits.max_following)
        .with_max_backups(config.limits.max_backups)
        .with_budgets(config.auth.budgets)
        .with_freshness_target(config.limits.freshness_target)
        .with_reads_first(config.limits.reads_first);
    let moved = config
        .storage
        .embedded
        .data_dir
        .join(crate::transfer::MOVED);
    if backends.backup.is_some() && moved.exists() {
        let to = moved_to(&moved);
        tracing::warn!(marker = %moved.display(), to = %to, "this data directory was moved to another deployment: taking no writes");
        return Ok(ingest.moved_from_start(&to));
    }
    Ok(ingest)
}

/// What fails on the settings alone, checked before any backend opens: the
/// credentials (where an API is served) and the operators' own listener.
async fn credentials_and_ops(
    services: &[Service],
    config: &AppConfig,
) -> Result<(Option<Authenticator>, Option<TcpListener>)> {
    // A process that serves no API (a lone fanout worker) serves only the
    // operators' endpoints, on an address that is theirs alone.
    let serves_api = services.iter().any(|s| !s.grpc_names().is_empty());
    let auth = match serves_api {
        true => Some(Authenticator::new(config.auth.clone()).map_err(invalid_settings)?),
        false => None,
    };
    let ops = match config.ops_addr.filter(|_| serves_api) {
        Some(addr) => Some(TcpListener::bind(addr).await.map_err(|e| {
            invalid_settings(format!(
                "cannot listen for the operators' endpoints (--ops-addr) on {addr}: {e}"
            ))
        })?),
        None => None,
    };
    Ok((auth, ops))
}

/// The pipeline's loops the services run: the relay and the deletions
/// beside a producer, the watch on fanout's lag beside a producer (which
/// sheds by it) or a reader (which merges what fanout has not delivered),
/// the fanout worker.
fn start_pipeline(
    services: &[Service],
    backends: &Backends,
    config: &AppConfig,
    joined: &Joined,
    ingest: &Arc<Ingest>,
    shutdown: socialite_core::shutdown::Shutdown,
) -> Vec<JoinHandle<Result<()>>> {
    let mut tasks = Vec::new();
    // With the target off, the group's place is not read at all.
    let defends = !config.limits.freshness_target.is_zero();
    let watches = services.contains(&Service::Producer) || services.contains(&Service::TimelineApi);
    if watches && defends {
        let watch = ingest.load().clone().watch(
            backends.log.clone(),
            backends.outbox.clone(),
            config.worker.group.clone(),
            shutdown.clone(),
        );
        tasks.push(tokio::spawn(async move {
            watch.await;
            Ok(())
        }));
    }
    if services.contains(&Service::Producer) {
        tasks.push(tokio::spawn(run_relay(
            backends.outbox.clone(),
            backends.log.clone(),
            shutdown.clone(),
        )));
        tasks.push(tokio::spawn(run_deletions(
            backends.content.clone(),
            backends.epoch.clone(),
            shutdown.clone(),
        )));
        tasks.push(tokio::spawn(run_mute_ends(
            ingest.clone(),
            shutdown.clone(),
        )));
        tasks.push(tokio::spawn(crate::webhook_http::deliver(
            backends.clone(),
            config.webhooks.clone(),
            shutdown.clone(),
        )));
    }
    if services.contains(&Service::FanoutWorker) {
        let worker = run_worker(
            backends.stores(),
            backends.log.clone(),
            backends.applied.clone(),
            config.worker.clone(),
            joined.clone(),
            shutdown,
        );
        // Beside a request path, fanout yields to it; a process that only
        // fans out has nothing to yield to.
        let serves_requests = services.iter().any(|s| *s != Service::FanoutWorker);
        tasks.push(match serves_requests {
            true => crate::background::spawn_background("fanout", worker),
            false => tokio::spawn(worker),
        });
    }
    tasks
}

impl App {
    /// Ordered shutdown, within [`shutdown::GRACE`] whatever state the
    /// stores are in: gRPC health turns `NOT_SERVING`, the servers stop
    /// taking requests and finish those in flight (for at most
    /// [`shutdown::DRAIN`]), the relay moves what was acknowledged to the
    /// log, then the relay and the worker finish their batch and commit.
    /// A step that a store holds up past its share is cut short: what it
    /// had not done stays in the outbox or on the log for the next start.
    pub async fn shutdown(self) {
        let started = std::time::Instant::now();
        let left = || shutdown::GRACE.saturating_sub(started.elapsed() + SHUTDOWN_MARGIN);
        if let Some(reporter) = &self.grpc_health {
            let names = self.services.iter().flat_map(|s| s.grpc_names()).copied();
            for name in names.chain([""]) {
                reporter
                    .set_service_status(name, ServingStatus::NotServing)
                    .await;
            }
        }
        self.servers.trigger();
        for t in self.server_tasks {
            // The servers keep to DRAIN themselves; this bounds the rest.
            if tokio::time::timeout(left(), t).await.is_err() {
                tracing::warn!("a server did not stop in time");
            }
        }
        drop(self.writes);
        if self.services.contains(&Service::Producer) {
            // One last relay pass, so that what was just acknowledged is on
            // the log (the outbox is durable: the next start would relay it).
            let (outbox, log) = (&*self.backends.outbox, &*self.backends.log);
            let limit = left().min(LAST_RELAY);
            match tokio::time::timeout(limit, socialite_core::relay::relay_once(outbox, log)).await
            {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    tracing::warn!(error = %e.chain(), "final relay pass failed; the outbox keeps the events")
                }
                Err(_) => tracing::warn!("final relay pass cut short; the outbox keeps the events"),
            }
        }
        self.pipeline.trigger();
        for mut t in self.pipeline_tasks {
            match tokio::time::timeout(left(), &mut t).await {
                Ok(Ok(Err(e))) => {
                    tracing::warn!(error = %e.chain(), "pipeline task ended with an error")
                }
                Ok(Err(e)) => tracing::warn!(error = %e, "pipeline task panicked"),
                Ok(Ok(Ok(()))) => {}
                Err(_) => {
                    t.abort();
                    tracing::warn!("a pipeline task did not stop in time; what it had not committed is redone at the next start");
                }
            }
        }
        // Closing the backends: the embedded files close at once; Kafka's
        // clients wait for brokers that may be gone. Closed on a thread of
        // their own, waited for while the grace period lasts.
        let App {
            backends,
            ingest,
            reads,
            live,
            ..
        } = self;
        let (closed, done) = tokio::sync::oneshot::channel();
        let closing = std::thread::Builder::new()
            .name("closing".into())
            .spawn(move || {
                drop((live, reads, ingest, backends));
                let _ = closed.send(());
            });
        if closing.is_ok() && tokio::time::timeout(left(), done).await.is_err() {
            tracing::warn!("the backends did not close in time; exiting without waiting for them");
        }
        tracing::info!("stopped");
    }
}

/// Where the data directory whose marker is `marker` was moved, as the
/// marker says (`moved to ADDRESS at ...`, written by migrate).
fn moved_to(marker: &std::path::Path) -> String {
    let text = std::fs::read_to_string(marker).unwrap_or_default();
    let to = text
        .strip_prefix("moved to ")
        .and_then(|t| t.split(" at ").next());
    match to.filter(|t| !t.trim().is_empty()) {
        Some(to) => to.trim().to_owned(),
        None => format!("another deployment ({})", marker.display()),
    }
}
