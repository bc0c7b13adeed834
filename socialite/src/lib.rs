//! The whole Socialite pipeline in one process: the producer (REST and gRPC
//! writes, outbox relay), a fanout worker and the timeline-api (REST and gRPC
//! reads), on the embedded backends. REST routes of both services share one
//! listener, gRPC services the other.

pub mod bench;

use axum::Router;
use socialite_core::backends::Backends;
use socialite_core::health::Health;
use socialite_core::ingest::Ingest;
use socialite_core::reads::Reads;
use socialite_core::shutdown::{self, ShutdownTrigger};
use socialite_core::worker::WorkerConfig;
use socialite_transport::backends::{open_backends, BackendConfig};
use socialite_transport::serve::{finish_router, grpc_routes, serve_grpc, serve_http};
use std::sync::atomic::AtomicBool;
use tonic_health::server::HealthReporter;
use tonic_health::ServingStatus;

/// The gRPC services this process serves, as health checks name them.
const GRPC_SERVICES: [&str; 2] = [
    socialite_producer::GRPC_NAME,
    socialite_timeline_api::GRPC_NAME,
];
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

#[derive(Debug, Clone)]
pub struct AppConfig {
    pub storage: BackendConfig,
    pub worker: WorkerConfig,
    /// Producer node id, part of every post id (0..1024).
    pub node_id: u16,
}

/// A running pipeline.
pub struct App {
    pub rest_addr: SocketAddr,
    pub grpc_addr: SocketAddr,
    pub backends: Backends,
    /// The services the APIs call, for in-process callers (the benchmark).
    pub ingest: Arc<Ingest>,
    pub reads: Arc<Reads>,
    grpc_health: HealthReporter,
    servers: ShutdownTrigger,
    pipeline: ShutdownTrigger,
    server_tasks: Vec<JoinHandle<()>>,
    pipeline_tasks: Vec<JoinHandle<socialite_core::Result<()>>>,
}

/// Opens the backends and starts every part on the given listeners.
pub async fn start(
    config: &AppConfig,
    rest: TcpListener,
    grpc: TcpListener,
) -> socialite_core::Result<App> {
    let backends = open_backends(&config.storage).await?;
    let ingest = Arc::new(
        Ingest::new(
            backends.content.clone(),
            backends.graph.clone(),
            config.node_id,
        )
        .await?,
    );
    let reads = Arc::new(Reads::new(backends.stores()));

    let (servers, server_shutdown) = shutdown::channel();
    let (pipeline, pipeline_shutdown) = shutdown::channel();

    let rest_addr = rest
        .local_addr()
        .map_err(|e| socialite_core::Error::internal(e.to_string()))?;
    let grpc_addr = grpc
        .local_addr()
        .map_err(|e| socialite_core::Error::internal(e.to_string()))?;
    let assigned = Arc::new(AtomicBool::new(false));
    let health = Health::new(
        backends.content.clone(),
        backends.log.clone(),
        Some(assigned.clone()),
    );
    let router = finish_router(
        Router::new()
            .merge(socialite_producer::rest_routes(ingest.clone()))
            .merge(socialite_timeline_api::rest_routes(reads.clone())),
        health,
    );
    let routes = tonic::service::Routes::new(socialite_producer::grpc_service(ingest.clone()))
        .add_service(socialite_timeline_api::grpc_service(reads.clone()));
    let (grpc_routes, grpc_health) = grpc_routes(routes, &GRPC_SERVICES).await;

    let http_shutdown = server_shutdown.clone();
    let server_tasks = vec![
        tokio::spawn(async move {
            if let Err(e) = serve_http(rest, router, http_shutdown).await {
                tracing::error!(error = %e, "REST server failed");
            }
        }),
        tokio::spawn(async move {
            if let Err(e) = serve_grpc(grpc, grpc_routes, server_shutdown).await {
                tracing::error!(error = %e, "gRPC server failed");
            }
        }),
    ];
    let pipeline_tasks = vec![
        socialite_producer::spawn_relay(
            backends.outbox.clone(),
            backends.log.clone(),
            pipeline_shutdown.clone(),
        ),
        socialite_fanout_worker::spawn_worker(
            backends.stores(),
            backends.log.clone(),
            config.worker.clone(),
            assigned,
            pipeline_shutdown,
        ),
    ];
    tracing::info!(%rest_addr, %grpc_addr, store = %config.storage.store, event_log = %config.storage.event_log, "socialite is up");
    Ok(App {
        rest_addr,
        grpc_addr,
        backends,
        ingest,
        reads,
        grpc_health,
        servers,
        pipeline,
        server_tasks,
        pipeline_tasks,
    })
}

impl App {
    /// Ordered shutdown: stop taking requests and finish those in flight, then
    /// let the relay and the worker finish their batch and commit.
    pub async fn shutdown(self) {
        for name in GRPC_SERVICES.iter().copied().chain([""]) {
            self.grpc_health
                .set_service_status(name, ServingStatus::NotServing)
                .await;
        }
        self.servers.trigger();
        for t in self.server_tasks {
            let _ = t.await;
        }
        // One last relay pass, so that what was just acknowledged is on the log
        // (it would be relayed at the next start anyway: the outbox is durable).
        if let Err(e) =
            socialite_core::relay::relay_once(&*self.backends.outbox, &*self.backends.log).await
        {
            tracing::warn!(error = %e.chain(), "final relay pass failed; the outbox keeps the events");
        }
        self.pipeline.trigger();
        for t in self.pipeline_tasks {
            match t.await {
                Ok(Err(e)) => {
                    tracing::warn!(error = %e.chain(), "pipeline task ended with an error")
                }
                Err(e) => tracing::warn!(error = %e, "pipeline task panicked"),
                Ok(Ok(())) => {}
            }
        }
        tracing::info!("socialite stopped");
    }
}
