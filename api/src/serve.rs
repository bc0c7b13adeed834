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
