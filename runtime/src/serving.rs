//! Serving the APIs a process runs: their REST routes and gRPC services,
//! the listeners, the connection caps, and where write requests are
//! handled (see [`crate::background::writes_runtime`]).

use crate::services::{AppConfig, Service};
use socialite_api::auth::Authenticator;
use socialite_api::conn::Gate;
use socialite_api::firehose::Firehose;
use socialite_api::live::Live;
use socialite_api::serve::{
    finish_router, grpc_routes, ops_only_router, serve_grpc, serve_http, Serving,
};
use socialite_core::backends::Backends;
use socialite_core::health::Health;
use socialite_core::ingest::Ingest;
use socialite_core::live::hub::LiveHub;
use socialite_core::reads::Reads;
use socialite_core::reads_first::ReadsFirst;
use socialite_core::webhooks::WebhookAdmin;
use socialite_core::{Error, Result};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tonic_health::server::HealthReporter;
use utoipa_axum::router::OpenApiRouter;

/// How often the key and secret files are checked for changes.
const CREDENTIALS_POLL: Duration = Duration::from_secs(1);

fn spawn_http(
    what: &'static str,
    listener: TcpListener,
    router: axum::Router,
    gate: &Arc<Gate>,
    shutdown: &socialite_core::shutdown::Shutdown,
) -> JoinHandle<()> {
    let (shutdown, gate) = (shutdown.clone(), gate.clone());
    tokio::spawn(async move {
        if let Err(e) = serve_http(listener, router, gate, shutdown).await {
            tracing::error!(error = %e, "{what} server failed");
        }
    })
}

pub(crate) fn local_addr(l: &TcpListener) -> Result<SocketAddr> {
    l.local_addr().map_err(|e| Error::internal(e.to_string()))
}
/// The REST routes and gRPC services of the APIs a process runs, and the
/// tasks they need (the live hub's).
pub(crate) struct Apis {
    pub(crate) router: OpenApiRouter,
    pub(crate) routes: tonic::service::Routes,
    pub(crate) grpc_names: Vec<&'static str>,
    pub(crate) live: Option<Arc<LiveHub>>,
    pub(crate) tasks: Vec<JoinHandle<()>>,
    /// Where reads and writes share the process: the guard of the reads'
    /// latency, told of each read ([`socialite_core::reads_first`]).
    pub(crate) reads_first: Option<Arc<ReadsFirst>>,
}

impl Apis {
    pub(crate) fn build(
        services: &[Service],
        backends: &Backends,
        ingest: &Arc<Ingest>,
        reads: &Arc<Reads>,
        config: &AppConfig,
        shutdown: &socialite_core::shutdown::Shutdown,
    ) -> Apis {
        let mut apis = Apis {
            router: OpenApiRouter::new(),
            routes: tonic::service::Routes::default(),
            grpc_names: services
                .iter()
                .flat_map(|s| s.grpc_names())
                .copied()
                .collect(),
            live: None,
            tasks: Vec::new(),
            reads_first: None,
        };
        if services.contains(&Service::Producer) {
            let router = std::mem::take(&mut apis.router);
            apis.router = router.merge(socialite_api::ingest::rest_routes(ingest.clone()));
            apis.routes = apis
                .routes
                .add_service(socialite_api::ingest::grpc_service(ingest.clone()));
            let admin = WebhookAdmin::new(
                backends.webhooks.clone(),
                backends.log.clone(),
                config.webhooks.clone(),
            );
            let router = std::mem::take(&mut apis.router);
            apis.router = router.merge(socialite_api::webhooks::rest_routes(admin.clone()));
            let routes = std::mem::take(&mut apis.routes);
            apis.routes = routes.add_service(socialite_api::webhooks::grpc_service(admin));
        }
        if services.contains(&Service::TimelineApi) {
            let router = std::mem::take(&mut apis.router);
            let mut router = router.merge(socialite_api::reads::rest_routes(reads.clone()));
            let routes = std::mem::take(&mut apis.routes);
            let mut routes = routes.add_service(socialite_api::reads::grpc_service(reads.clone()));
            let hub = LiveHub::new(backends.stores());
            let feed = backends.applied.clone();
            apis.tasks
                .push(tokio::spawn(hub.clone().run(feed, shutdown.clone())));
            apis.live = Some(hub.clone());
            let live = Live::new(reads.clone(), hub, &config.limits);
            router = router.merge(socialite_api::live::rest_routes(live.clone()));
            routes = routes.add_service(socialite_api::live::grpc_service(live));
            let firehose = Firehose::new(backends.log.clone(), &config.limits);
            router = router.merge(socialite_api::firehose::rest_routes(firehose.clone()));
            routes = routes.add_service(socialite_api::firehose::grpc_service(firehose));
            (apis.router, apis.routes) = (router, routes);
        }
        let guard = ingest.reads_first();
        if shares_reads_and_writes(services) && guard.on() {
            apis.tasks
                .push(tokio::spawn(guard.clone().watch(shutdown.clone())));
            apis.reads_first = Some(guard.clone());
        }
        apis
    }
}

/// Whether one process serves reads and takes writes: the writes then go
/// apart, and the reads' latency guards them.
fn shares_reads_and_writes(services: &[Service]) -> bool {
    services.contains(&Service::Producer) && services.contains(&Service::TimelineApi)
}

/// The listeners a process was given.
pub(crate) struct Listening {
    pub(crate) rest: TcpListener,
    pub(crate) grpc: Option<TcpListener>,
    pub(crate) ops: Option<TcpListener>,
}

/// What serving the APIs started.
pub(crate) struct Served {
    pub(crate) rest_addr: SocketAddr,
    pub(crate) grpc_addr: Option<SocketAddr>,
    pub(crate) ops_addr: Option<SocketAddr>,
    pub(crate) grpc_health: Option<HealthReporter>,
    pub(crate) tasks: Vec<JoinHandle<()>>,
    /// The runtime write requests are handled on, where they are apart.
    pub(crate) writes: Option<crate::background::Apart>,
}

/// Serves the APIs on their listeners: REST (with the operators'
/// endpoints, unless they have their own), gRPC, and the operators'.
pub(crate) async fn serve(
    services: &[Service],
    apis: Apis,
    listening: Listening,
    auth: Option<&Arc<Authenticator>>,
    health: Health,
    config: &AppConfig,
    shutdown: socialite_core::shutdown::Shutdown,
) -> Result<Served> {
    let limits = &config.limits;
    // One set of connection caps for the REST and gRPC ports together.
    let gate = Gate::new(
        limits.max_connections,
        limits.max_connections_per_ip,
        limits.idle_timeout,
    );
    let mut tasks = apis.tasks;
    let ops_addr = listening.ops.as_ref().map(local_addr).transpose()?;
    if let Some(listener) = listening.ops {
        let router = ops_only_router(health.clone(), limits.request_timeout);
        // The operators' address has caps of its own, so a flood of the
        // API's never keeps an operator out.
        let ops_gate = Gate::new(0, limits.max_connections_per_ip, limits.idle_timeout);
        tasks.push(spawn_http(
            "operators'",
            listener,
            router,
            &ops_gate,
            &shutdown,
        ));
    }
    // Where reads and writes share the process, writes are handled apart.
    let writes = match shares_reads_and_writes(services) {
        true => crate::background::writes_runtime(),
        false => None,
    };
    let router = match auth {
        Some(auth) => {
            let serving = Serving {
                auth: auth.clone(),
                cors_origins: config.cors_origins.clone(),
                ops_apart: ops_addr.is_some(),
                request_timeout: limits.request_timeout,
                writes: writes.as_ref().map(|(h, _)| h.clone()),
                reads_first: apis.reads_first.clone(),
            };
            tasks.push(tokio::spawn(
                auth.clone().watch(CREDENTIALS_POLL, shutdown.clone()),
            ));
            finish_router(apis.router, health, &serving)
        }
        None => ops_only_router(health, limits.request_timeout),
    };
    let rest_addr = local_addr(&listening.rest)?;
    tasks.push(spawn_http("REST", listening.rest, router, &gate, &shutdown));
    let (mut grpc_addr, mut grpc_health) = (None, None);
    if let (Some(listener), Some(auth)) = (listening.grpc, auth) {
        grpc_addr = Some(local_addr(&listener)?);
        let (routes, reporter) = grpc_routes(
            apis.routes,
            &apis.grpc_names,
            auth.clone(),
            limits.request_timeout,
            apis.reads_first.clone(),
        )
        .await;
        grpc_health = Some(reporter);
        tasks.push(tokio::spawn(async move {
            if let Err(e) = serve_grpc(listener, routes, gate, shutdown).await {
                tracing::error!(error = %e, "gRPC server failed");
            }
        }));
    }
    Ok(Served {
        rest_addr,
        grpc_addr,
        ops_addr,
        grpc_health,
        tasks,
        writes: writes.map(|(_, apart)| apart),
    })
}
