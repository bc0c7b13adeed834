//! Request telemetry for REST and gRPC: a span per request and the request
//! metrics, with labels from fixed sets (route templates, gRPC method names,
//! status codes).

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use socialite_core::metrics::metrics;
use std::time::Instant;
use tracing::Instrument;

/// REST: labels by route template (`/users/{id}/timeline`), never by path.
pub async fn track_http(matched: Option<MatchedPath>, req: Request, next: Next) -> Response {
    let route = matched.map_or_else(|| "unmatched".to_owned(), |m| m.as_str().to_owned());
    let method = req.method().clone();
    let span = tracing::info_span!("http_request", %method, %route, path = %req.uri().path());
    let start = Instant::now();
    let resp = next.run(req).instrument(span.clone()).await;
    let status = resp.status().as_u16();
    metrics().observe_http(route, method.as_str(), status, start.elapsed());
    span.in_scope(|| {
        tracing::debug!(
            status,
            micros = start.elapsed().as_micros() as u64,
            "request finished"
        )
    });
    resp
}

/// gRPC: labels by method; the code is the trailers-only `grpc-status` of a
/// failed call, `0` otherwise.
pub async fn track_grpc(req: Request, next: Next) -> Response {
    let path = req.uri().path();
    let method = if path.starts_with("/socialite.v1.") || path.starts_with("/grpc.health.v1.") {
        path.to_owned()
    } else {
        "other".to_owned()
    };
    let span = tracing::info_span!("grpc_request", %method);
    let start = Instant::now();
    let resp = next.run(req).instrument(span.clone()).await;
    let code = resp
        .headers()
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("0")
        .to_owned();
    metrics().observe_grpc(method, &code, start.elapsed());
    span.in_scope(
        || tracing::debug!(%code, micros = start.elapsed().as_micros() as u64, "request finished"),
    );
    resp
}
