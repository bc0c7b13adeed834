//! Serving REST and gRPC on given listeners until a shutdown signal.

use crate::error::ApiError;
use crate::guard::{guard, InFlight};
use crate::observe::{track_grpc, track_http};
use crate::schema::ApiDoc;
use crate::MAX_BODY_BYTES;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse};
use axum::{Extension, Json, Router};
use serde_json::json;
use socialite_core::health::Health;
use socialite_core::metrics::metrics;
use socialite_core::shutdown::Shutdown;
use socialite_core::ErrorKind;
use std::sync::Arc;
use tokio::net::TcpListener;
use tonic::service::Routes;
use tonic_health::server::HealthReporter;
use tonic_health::ServingStatus;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The operators' endpoints and the contract, as documented routes.
pub fn ops_router() -> OpenApiRouter<Health> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(prometheus))
        .routes(routes!(status_page))
        .routes(routes!(status_root))
        .routes(routes!(openapi_json))
}

/// Adds what every REST service has: `/healthz`, `/readyz`, `/metrics`, the
/// status page at `/` and `/status`, `/openapi.json` (the document of the
/// routes this process serves), the body limit, JSON answers for unknown
/// routes and methods, and request telemetry.
pub fn finish_router(routes: OpenApiRouter, health: Health) -> Router {
    let (router, served) = routes
        .merge(ops_router().with_state(health))
        .split_for_parts();
    let mut doc = ApiDoc::openapi();
    doc.merge(served);
    crate::schema::with_common_refusals(&mut doc);
    let doc = Arc::new(doc.to_json().expect("the document serializes"));
    router
        .layer(Extension(Contract(doc)))
        .fallback(|| async { ApiError::new(ErrorKind::NotFound, "no_such_route", "no such route") })
        .method_not_allowed_fallback(|| async {
            let body = json!({ "error": { "code": "method_not_allowed", "message": "this route does not accept that method" } });
            (StatusCode::METHOD_NOT_ALLOWED, Json(body))
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn_with_state(InFlight::default(), guard))
        .layer(axum::middleware::from_fn(track_http))
}

/// The served document, rendered once.
#[derive(Clone)]
struct Contract(Arc<String>);

/// The process is alive.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses((status = 200, description = "`{\"status\":\"ok\"}`")))]
async fn healthz() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok" }))
}

/// 200 when every backend answers (and the fanout worker, if any, has joined
/// its group); 503 with the failing checks otherwise.
#[utoipa::path(get, path = "/readyz", tag = "operations",
    responses(
        (status = 200, description = "`{\"ready\":true,\"checks\":{...}}`"),
        (status = 503, description = "Not ready, with the failing checks"),
    ))]
async fn readyz(State(health): State<Health>) -> (StatusCode, Json<serde_json::Value>) {
    let (ready, checks) = health.ready().await;
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(json!({ "ready": ready, "checks": checks })))
}

/// Prometheus metrics, all named `socialite_*`.
#[utoipa::path(get, path = "/metrics", tag = "operations",
    responses((status = 200, description = "Prometheus text format", content_type = "text/plain")))]
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
#[utoipa::path(get, path = "/status", tag = "operations",
    responses((status = 200, description = "The status page", content_type = "text/html")))]
async fn status_page() -> Html<&'static str> {
    Html(include_str!("status.html"))
}

/// The status page, at the root.
#[utoipa::path(get, path = "/", tag = "operations",
    responses((status = 200, description = "The status page", content_type = "text/html")))]
async fn status_root() -> Html<&'static str> {
    Html(include_str!("status.html"))
}

/// This document: the REST contract of the routes this process serves.
#[utoipa::path(get, path = "/openapi.json", tag = "operations",
    responses((status = 200, description = "OpenAPI 3.1", content_type = "application/json")))]
async fn openapi_json(Extension(Contract(doc)): Extension<Contract>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "application/json")],
        doc.as_str().to_owned(),
    )
}

/// The gRPC routes with request telemetry, the standard health service
/// (`grpc.health.v1.Health`) reporting `services` as serving, and server
/// reflection (`grpc.reflection.v1`), so clients such as grpcurl discover
/// the services without the `.proto` files.
pub async fn grpc_routes(routes: Routes, services: &[&str]) -> (Routes, HealthReporter) {
    let (reporter, health_service) = tonic_health::server::health_reporter();
    for name in services.iter().copied().chain([""]) {
        reporter
            .set_service_status(name, ServingStatus::Serving)
            .await;
    }
    // Reflection lists the services this process serves, not every one the
    // descriptors define.
    let reflection = services
        .iter()
        .fold(
            tonic_reflection::server::Builder::configure()
                .register_encoded_file_descriptor_set(socialite_proto::FILE_DESCRIPTOR_SET),
            |b, name| b.with_service_name(*name),
        )
        .build_v1()
        .expect("the compiled descriptors are valid");
    let router = routes
        .add_service(health_service)
        .add_service(reflection)
        .into_axum_router()
        .layer(axum::middleware::from_fn(track_grpc));
    (Routes::from(router), reporter)
}

pub use crate::http::serve_http;

pub async fn serve_grpc(
    listener: TcpListener,
    routes: Routes,
    mut shutdown: Shutdown,
) -> Result<(), tonic::transport::Error> {
    let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
    tonic::transport::Server::builder()
        // The REST limits, for gRPC: a deadline per call (DEADLINE_EXCEEDED
        // past it) and idle connections probed and closed.
        .timeout(crate::guard::REQUEST_TIMEOUT)
        .http2_keepalive_interval(Some(crate::http::HEADER_READ_TIMEOUT))
        .http2_keepalive_timeout(Some(crate::http::HEADER_READ_TIMEOUT))
        .add_routes(routes)
        .serve_with_incoming_shutdown(incoming, async move { shutdown.wait().await })
        .await
}
