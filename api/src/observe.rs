//! Request telemetry for REST and gRPC: a span per request and the request
//! metrics, with labels from fixed sets (route templates, gRPC method names,
//! status codes).

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use socialite_core::metrics::metrics;
use std::time::Instant;
use tracing::Instrument;

/// REST: labels by route template (`/users/{id}/timeline`), never by path.
pub async fn track_http(matched: Option<MatchedPath>, req: Request, next: Next) -> Response {
    let route = matched.map_or_else(|| "unmatched".to_owned(), |m| m.as_str().to_owned());
    let method = method_label(req.method());
    // `request_id` is recorded by `crate::guard`, which runs inside this span.
    let span = tracing::info_span!(
        "http_request",
        %method,
        %route,
        path = %req.uri().path(),
        request_id = tracing::field::Empty
    );
    let start = Instant::now();
    let resp = next.run(req).instrument(span.clone()).await;
    let status = resp.status().as_u16();
    metrics().observe_http(route, method, status, start.elapsed());
    span.in_scope(|| {
        tracing::debug!(
            status,
            micros = start.elapsed().as_micros() as u64,
            "request finished"
        )
    });
    resp
}

/// The method label: a client may send any method token, so anything but the
/// standard methods is `other`, keeping the series bounded.
fn method_label(method: &Method) -> &'static str {
    const KNOWN: [Method; 7] = [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::PATCH,
        Method::OPTIONS,
    ];
    KNOWN
        .iter()
        .find(|m| *m == method)
        .map_or("other", Method::as_str)
}

/// gRPC: labels by method; the code is the trailers-only `grpc-status` of a
/// failed call, `0` otherwise. A path is a label only when a service of ours
/// implements it (any other answers `UNIMPLEMENTED`, 12): clients choose
/// paths, and labels must come from a fixed set.
pub async fn track_grpc(req: Request, next: Next) -> Response {
    let path = req.uri().path().to_owned();
    let ours = ["/socialite.v1.", "/grpc.health.v1.", "/grpc.reflection.v1."]
        .iter()
        .any(|p| path.starts_with(p));
    let span = tracing::info_span!("grpc_request", method = %path);
    let start = Instant::now();
    let resp = next.run(req).instrument(span.clone()).await;
    let code = match resp
        .headers()
        .get("grpc-status")
        .and_then(|v| v.to_str().ok())
        .map(str::parse::<u8>)
    {
        None => 0,
        Some(Ok(c)) if c <= 16 => c,
        Some(_) => 2, // UNKNOWN
    };
    let method = if ours && code != 12 {
        path
    } else {
        "other".to_owned()
    };
    metrics().observe_grpc(method, &code.to_string(), start.elapsed());
    span.in_scope(
        || tracing::debug!(%code, micros = start.elapsed().as_micros() as u64, "request finished"),
    );
    resp
}
