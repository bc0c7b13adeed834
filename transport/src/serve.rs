//! Serving REST and gRPC on given listeners until a shutdown signal.

use crate::error::ApiError;
use crate::observe::{track_grpc, track_http};
use crate::MAX_BODY_BYTES;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, StatusCode};
use axum::response::Html;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;
use socialite_core::health::Health;
use socialite_core::metrics::metrics;
use socialite_core::shutdown::Shutdown;
use socialite_core::ErrorKind;
use tokio::net::TcpListener;
use tonic::service::Routes;
use tonic_health::server::HealthReporter;
use tonic_health::ServingStatus;

/// Adds what every REST service has: `/healthz`, `/readyz`, `/metrics`, the
/// status page at `/` and `/status`, the body limit, JSON answers for unknown
/// routes and methods, and request telemetry.
pub fn finish_router(routes: Router, health: Health) -> Router {
    routes
        .route("/healthz", get(|| async { Json(json!({ "status": "ok" })) }))
        .route("/readyz", get(readyz).with_state(health))
        .route("/metrics", get(prometheus))
        .route("/", get(status_page))
        .route("/status", get(status_page))
        .fallback(|| async { ApiError::new(ErrorKind::NotFound, "no_such_route", "no such route") })
        .method_not_allowed_fallback(|| async {
            let body = json!({ "error": { "code": "method_not_allowed", "message": "this route does not accept that method" } });
            (StatusCode::METHOD_NOT_ALLOWED, Json(body))
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(track_http))
}

/// 200 when every backend answers (and the fanout worker, if any, has joined
/// its group); 503 with the failing checks otherwise.
async fn readyz(State(health): State<Health>) -> (StatusCode, Json<serde_json::Value>) {
    let (ready, checks) = health.ready().await;
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(json!({ "ready": ready, "checks": checks })))
}

async fn prometheus() -> ([(header::HeaderName, &'static str); 1], String) {
    (
        [(
            header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        metrics().render(),
    )
}

/// A live page of throughput, lag, freshness and hit ratio, drawn in the
/// browser from `/metrics`; it loads nothing else.
async fn status_page() -> Html<&'static str> {
    Html(include_str!("status.html"))
}

/// The gRPC routes with request telemetry and the standard health service
/// (`grpc.health.v1.Health`) reporting `services` as serving.
pub async fn grpc_routes(routes: Routes, services: &[&str]) -> (Routes, HealthReporter) {
    let (reporter, health_service) = tonic_health::server::health_reporter();
    for name in services.iter().copied().chain([""]) {
        reporter
            .set_service_status(name, ServingStatus::Serving)
            .await;
    }
    let router = routes
        .add_service(health_service)
        .into_axum_router()
        .layer(axum::middleware::from_fn(track_grpc));
    (Routes::from(router), reporter)
}

pub async fn serve_http(
    listener: TcpListener,
    router: Router,
    mut shutdown: Shutdown,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(async move { shutdown.wait().await })
        .await
}

pub async fn serve_grpc(
    listener: TcpListener,
    routes: Routes,
    mut shutdown: Shutdown,
) -> Result<(), tonic::transport::Error> {
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    tonic::transport::Server::builder()
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming, async move { shutdown.wait().await })
        .await
}

/// Completes on SIGINT (Ctrl-C) or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {}
        _ = term => {}
    }
}

/// Binds a listener, naming the setting in the error.
pub async fn bind(what: &str, addr: std::net::SocketAddr) -> Result<TcpListener, String> {
    TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen for {what} on {addr}: {e}"))
}

/// Serves REST and gRPC until SIGINT/SIGTERM, then reports not serving,
/// stops taking requests, finishes those in flight, and fires `on_stop` for
/// the caller's own tasks.
pub async fn run_until_signal(
    rest: (std::net::SocketAddr, Router),
    grpc: (std::net::SocketAddr, Routes, &[&str]),
    health: Health,
    on_stop: socialite_core::shutdown::ShutdownTrigger,
) -> Result<(), String> {
    let rest_listener = bind("REST (--rest-addr)", rest.0).await?;
    let grpc_listener = bind("gRPC (--grpc-addr)", grpc.0).await?;
    let (routes, reporter) = grpc_routes(grpc.1, grpc.2).await;
    let (trigger, shutdown) = socialite_core::shutdown::channel();
    let http = tokio::spawn(serve_http(
        rest_listener,
        finish_router(rest.1, health),
        shutdown.clone(),
    ));
    let rpc = tokio::spawn(serve_grpc(grpc_listener, routes, shutdown));
    tracing::info!(rest = %rest.0, grpc = %grpc.0, "serving");
    shutdown_signal().await;
    tracing::info!("shutting down");
    for name in grpc.2.iter().copied().chain([""]) {
        reporter
            .set_service_status(name, ServingStatus::NotServing)
            .await;
    }
    trigger.trigger();
    let _ = http.await;
    let _ = rpc.await;
    on_stop.trigger();
    Ok(())
}

/// A binary's exit: success, or the error on stderr and a failure code.
pub fn exit_code(binary: &str, result: Result<(), String>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{binary}: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// The `main` of every binary: applies the settings file, parses the command
/// line, then runs `body` on a multi-threaded runtime and turns its result
/// into the exit code.
pub fn run_main<C, F, Fut>(binary: &str, body: F) -> std::process::ExitCode
where
    C: clap::Parser,
    F: FnOnce(C) -> Fut,
    Fut: std::future::Future<Output = Result<(), String>>,
{
    // Before any thread exists: the file's values become environment variables.
    if let Err(e) = crate::config::load_settings_file::<C>() {
        return exit_code(binary, Err(e));
    }
    let cli = C::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return exit_code(binary, Err(format!("cannot start the runtime: {e}"))),
    };
    exit_code(binary, runtime.block_on(body(cli)))
}
