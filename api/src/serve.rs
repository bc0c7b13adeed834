//! Serving REST and gRPC on given listeners until a shutdown signal.

use crate::auth::{Auth, Authenticator};
use crate::conn::Gate;
use crate::error::ApiError;
use crate::front::{Admit, FrontLayer};
use crate::observe::track_grpc;
use crate::schema::ApiDoc;
use crate::MAX_BODY_BYTES;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::{Extension, Json, Router};
use serde_json::json;
use socialite_core::health::Health;
use socialite_core::reads_first::ReadsFirst;
use socialite_core::shutdown::Shutdown;
use socialite_core::ErrorKind;
use socialite_domain::accounts::access::{self, Act, Caller};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tonic::service::Routes;
use tonic_health::server::HealthReporter;
use tonic_health::ServingStatus;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The probes and the contract: open to anyone, wherever they are served.
fn probe_router() -> OpenApiRouter<Health> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(openapi_json))
}

/// The operators' endpoints: metrics and the status page. On the API's
/// address they need an `admin` key; on an address of their own
/// (`--ops-addr`) they are open, and that address is the protection.
fn operator_router() -> OpenApiRouter<Health> {
    OpenApiRouter::new()
        .routes(routes!(prometheus))
        .routes(routes!(status_page))
        .routes(routes!(status_root))
}

/// Every operators' and contract route, for the whole API's document.
pub fn ops_router() -> OpenApiRouter<Health> {
    probe_router().merge(operator_router())
}

/// How a process serves its REST routes.
#[derive(Clone)]
pub struct Serving {
    pub auth: Arc<Authenticator>,
    /// Origins allowed by CORS (`*` for any); none turns CORS off.
    pub cors_origins: Vec<String>,
    /// The operators' endpoints are served on their own address, not here.
    pub ops_apart: bool,
    /// How long a request may take ([`crate::limits::Limits`]).
    pub request_timeout: Duration,
    /// Where write requests are handled, apart from reads (see
    /// [`crate::front`]); `None` handles them beside the reads.
    pub writes: Option<tokio::runtime::Handle>,
    /// Told of each read's time, where reads and writes share the process
    /// ([`socialite_core::reads_first`]).
    pub reads_first: Option<Arc<ReadsFirst>>,
}

/// Adds what every REST service has: `/healthz`, `/readyz`, `/openapi.json`
/// (the document of the routes this process serves), `/metrics` and the
/// status page (at `/` and `/status`) unless they are served apart,
/// authentication, CORS if configured, the body limit, JSON answers for
/// unknown routes and methods, and request telemetry.
pub fn finish_router(routes: OpenApiRouter, health: Health, serving: &Serving) -> Router {
    let mut routes = routes.merge(probe_router().with_state(health.clone()));
    if !serving.ops_apart {
        routes = routes.merge(operator_router().with_state(health));
    }
    let (router, served) = routes.split_for_parts();
    let mut doc = ApiDoc::openapi();
    doc.merge(served);
    crate::responses::with_common_refusals(&mut doc);
    let front = FrontLayer::new(
        Admit::Credential(serving.auth.clone()),
        serving.request_timeout,
    )
    .with_writes_on(serving.writes.clone(), serving.reads_first.clone());
    let router = with_front(router, doc, front);
    // Outside the front: preflights are answered before authentication (a
    // browser sends them without credentials), and refusals carry CORS
    // headers, so a page can read them.
    match crate::cors::layer(&serving.cors_origins) {
        Some(cors) => router.layer(cors),
        None => router,
    }
}

/// The operators' own address: probes, metrics, the status page and the
/// contract, without credentials (the address is the protection).
pub fn ops_only_router(health: Health, request_timeout: Duration) -> Router {
    let (router, served) = ops_router().with_state(health).split_for_parts();
    let mut doc = ApiDoc::openapi();
    doc.merge(served);
    with_front(
        router,
        doc,
        FrontLayer::new(Admit::Trusted, request_timeout),
    )
}

/// JSON answers for unknown routes and methods, then one layer around
/// every route: the front, the body limit and the served document. One
/// layer, since each layer of a router boxes every route once more.
fn with_front(router: Router, doc: utoipa::openapi::OpenApi, front: FrontLayer) -> Router {
    let doc = Arc::new(doc.to_json().expect("the document serializes"));
    router
        .fallback(|| async { ApiError::new(ErrorKind::NotFound, "no_such_route", "no such route") })
        .method_not_allowed_fallback(|| async {
            let body = json!({ "error": { "code": "method_not_allowed", "message": "this route does not accept that method" } });
            (StatusCode::METHOD_NOT_ALLOWED, Json(body))
        })
        .layer(
            tower::ServiceBuilder::new()
                .layer(front)
                .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
                .layer(Extension(Contract(doc))),
        )
}

/// The operators' endpoints answer only callers allowed to operate.
fn operator(caller: &Caller) -> Result<(), ApiError> {
    Ok(access::check(caller, Act::Operate)?)
}

/// The served document, rendered once.
#[derive(Clone)]
struct Contract(Arc<String>);

/// Liveness: 200 while the process serves or will recover by itself (a
/// store waiting for disk space or for its server is alive: restarting
/// would not help it); 503 when a store knows it cannot recover by itself
/// (a corrupt file, a writer that stopped). Asks no server.
#[utoipa::path(get, path = "/healthz", tag = "operations",
    responses(
        (status = 200, description = "`{\"status\":\"ok\"}`, or `{\"status\":\"recovering\",\"faults\":[...]}` while a store recovers by itself"),
        (status = 503, description = "`{\"status\":\"failing\",\"faults\":[...]}`: a store cannot recover without an operator"),
    ))]
async fn healthz(State(health): State<Health>) -> (StatusCode, Json<serde_json::Value>) {
    let (alive, faults) = health.alive();
    match (alive, faults.is_empty()) {
        (true, true) => (StatusCode::OK, Json(json!({ "status": "ok" }))),
        (true, false) => (
            StatusCode::OK,
            Json(json!({ "status": "recovering", "faults": faults })),
        ),
        (false, _) => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({ "status": "failing", "faults": faults })),
        ),
    }
}

/// 200 when every backend answers within 2 s and knows of no fault (and
/// the fanout worker, if any, has joined its group); 503 with the failing
/// checks otherwise, each naming its store, why (`reason`: `no_space`,
/// `io_error`, `unreachable`, `failing`) and whether it recovers by itself.
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
#[utoipa::path(get, path = "/metrics", tag = "operations", security(("api_key" = ["admin"]), ("operator_basic" = [])),
    responses((status = 200, description = "Prometheus text format", content_type = "text/plain")))]
async fn prometheus(Auth(caller): Auth) -> Result<Response, ApiError> {
    operator(&caller)?;
    let content_type = (
        header::CONTENT_TYPE,
        "text/plain; version=0.0.4; charset=utf-8",
    );
    Ok(([content_type], crate::metrics::render()).into_response())
}

/// A live page of throughput, lag, freshness and hit ratio, drawn in the
/// browser from `/metrics`; it loads nothing else.
#[utoipa::path(get, path = "/status", tag = "operations", security(("api_key" = ["admin"]), ("operator_basic" = [])),
    responses((status = 200, description = "The status page", content_type = "text/html")))]
async fn status_page(Auth(caller): Auth) -> Result<Html<&'static str>, ApiError> {
    operator(&caller)?;
    Ok(Html(include_str!("status.html")))
}

/// The status page, at the root.
#[utoipa::path(get, path = "/", tag = "operations", security(("api_key" = ["admin"]), ("operator_basic" = [])),
    responses((status = 200, description = "The status page", content_type = "text/html")))]
async fn status_root(Auth(caller): Auth) -> Result<Html<&'static str>, ApiError> {
    status_page(Auth(caller)).await
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
pub async fn grpc_routes(
    routes: Routes,
    services: &[&str],
    auth: Arc<Authenticator>,
    request_timeout: Duration,
    reads_first: Option<Arc<ReadsFirst>>,
) -> (Router, HealthReporter) {
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
        .layer(axum::middleware::from_fn_with_state(
            auth,
            crate::auth::authenticate_grpc,
        ))
        .layer(axum::middleware::from_fn_with_state(
            request_timeout,
            grpc_deadline,
        ))
        .layer(axum::middleware::from_fn_with_state(
            reads_first,
            track_grpc,
        ));
    (router, reporter)
}

/// The REST limit, for gRPC: a call must answer (its response head; a
/// stream's events may follow for longer) within the request timeout, or
/// ends with `DEADLINE_EXCEEDED`.
async fn grpc_deadline(
    State(request_timeout): State<Duration>,
    req: Request,
    next: Next,
) -> Response {
    let limit = crate::guard::time_limit(req.uri().path(), request_timeout);
    match tokio::time::timeout(limit, next.run(req)).await {
        Ok(resp) => resp,
        Err(_) => tonic::Status::deadline_exceeded(format!(
            "request_timeout: the call took longer than {} s",
            limit.as_secs()
        ))
        .into_http::<axum::body::Body>(),
    }
}

pub use crate::http::serve_http;

/// gRPC is served by the same loop as REST (HTTP/2 with prior knowledge),
/// under the same connection caps.
pub async fn serve_grpc(
    listener: TcpListener,
    router: Router,
    gate: Arc<Gate>,
    shutdown: Shutdown,
) -> std::io::Result<()> {
    serve_http(listener, router, gate, shutdown).await
}
