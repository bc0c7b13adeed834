//! Every REST request's way in, as one service around each route: its
//! request id, the guard's checks ([`crate::guard`]) and the in-flight cap,
//! the caller (a credential verified by [`crate::auth`], or trusted on the
//! operators' own address), the time limit, and its telemetry: the request
//! metrics, a log line for a server failure, and a span.
//!
//! Writes can be handled on a runtime of their own ([`FrontLayer::with_writes_on`]),
//! whose threads run at a lower priority than the reads': a write flood
//! then takes the CPU the reads leave, not the reads' own. The connection,
//! its parsing and the in-flight cap stay shared.
//!
//! One service rather than a layer per concern, because each layer of a
//! router costs a boxed clone of the route and a boxed future per request,
//! which on a cached page were a large share of the request's CPU.
//!
//! The span (`http_request`, with the method, route, path and request id)
//! is made when traces are exported or `socialite_api` logs at `debug`; at
//! the default `info` level a request makes none, and a failure's log line
//! carries those fields itself.

use crate::auth::Authenticator;
use crate::error::Failure;
use crate::guard::{
    body_timed_out, overloaded, precheck, request_id, time_limit, timed_out, with_request_id,
    Paced, MAX_IN_FLIGHT,
};
use crate::metrics::RouteLabel;
use crate::observe::{join_trace, method_label};
use axum::extract::{MatchedPath, Request};
use axum::http::{HeaderValue, Method};
use axum::response::{IntoResponse, Response};
use socialite_core::reads_first::ReadsFirst;
use socialite_domain::accounts::access::Caller;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;
use tower::ServiceExt;
use tracing::Instrument;

/// How the front establishes the caller.
#[derive(Clone)]
pub enum Admit {
    /// By the request's credential.
    Credential(Arc<Authenticator>),
    /// Every caller is trusted: the operators' own address, whose address
    /// is the protection.
    Trusted,
}

struct Shared {
    admit: Admit,
    /// How long a request may take (see [`time_limit`]).
    request_timeout: Duration,
    /// Requests handled at once; more are refused, not queued.
    in_flight: Semaphore,
    /// Where writes are handled, if apart from reads.
    writes: Option<tokio::runtime::Handle>,
    /// Told of each read's time, where it guards the reads' latency.
    reads_first: Option<Arc<ReadsFirst>>,
}

/// The layer that puts a [`Front`] around each route of a router.
#[derive(Clone)]
pub struct FrontLayer(Arc<Shared>);

impl FrontLayer {
    pub fn new(admit: Admit, request_timeout: Duration) -> FrontLayer {
        FrontLayer(Arc::new(Shared {
            admit,
            request_timeout,
            in_flight: Semaphore::new(MAX_IN_FLIGHT),
            writes: None,
            reads_first: None,
        }))
    }

    /// Handles write requests (any method but GET, HEAD and OPTIONS) on
    /// `writes`, apart from the reads, and tells `reads_first` how long
    /// each read took ([`socialite_core::reads_first`]).
    pub fn with_writes_on(
        self,
        writes: Option<tokio::runtime::Handle>,
        reads_first: Option<Arc<ReadsFirst>>,
    ) -> FrontLayer {
        let Shared {
            admit,
            request_timeout,
            in_flight,
            ..
        } = Arc::try_unwrap(self.0).unwrap_or_else(|_| unreachable!("not yet shared"));
        FrontLayer(Arc::new(Shared {
            admit,
            request_timeout,
            in_flight,
            writes,
            reads_first,
        }))
    }
}

impl<S> tower_layer::Layer<S> for FrontLayer {
    type Service = Front<S>;

    fn layer(&self, inner: S) -> Front<S> {
        Front {
            inner,
            shared: self.0.clone(),
        }
    }
}

/// See the module's overview.
#[derive(Clone)]
pub struct Front<S> {
    inner: S,
    shared: Arc<Shared>,
}

type Answer = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl<S> tower_service::Service<Request> for Front<S>
where
    S: tower_service::Service<Request, Response = Response, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        // The front is always ready (the cap on requests is the semaphore's);
        // the route's own readiness is awaited per request, by `oneshot`.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request) -> Answer {
        let inner = self.inner.clone();
        let shared = self.shared.clone();
        Box::pin(async move { Ok(handle(shared, inner, req).await) })
    }
}

async fn handle<S>(shared: Arc<Shared>, inner: S, req: Request) -> Response
where
    S: tower_service::Service<Request, Response = Response, Error = Infallible> + Send + 'static,
    S::Future: Send + 'static,
{
    let route = match req.extensions().get::<MatchedPath>() {
        Some(m) => RouteLabel::Matched(m.clone()),
        None => RouteLabel::Fixed("unmatched"),
    };
    let method = method_label(req.method());
    let id = request_id(&req);
    let span = request_span(&req, method, &route, &id);
    let path = req.uri().clone();
    let reads_first = shared.reads_first.clone().filter(|_| is_read(req.method()));
    let start = Instant::now();
    let resp = admitted(shared, inner, req).instrument(span.clone()).await;
    let took = start.elapsed();
    let status = resp.status().as_u16();
    if let Some(guard) = reads_first.filter(|_| status < 500) {
        guard.observe(took);
    }
    crate::metrics::transport().observe_http(route.clone(), method, status, took);
    if let Some(failure) = resp.extensions().get::<Failure>() {
        tracing::error!(
            request_id = %String::from_utf8_lossy(id.as_bytes()),
            %method,
            route = route.as_str(),
            path = path.path(),
            code = failure.code,
            error = %failure.chain,
            "request failed"
        );
    }
    span.in_scope(|| tracing::debug!(status, micros = took.as_micros() as u64, "request finished"));
    with_request_id(resp, &id).await
}

/// The request after the checks, the cap and the caller, within its time
/// limit; or the refusal. A write is handled where writes are.
async fn admitted<S>(shared: Arc<Shared>, inner: S, req: Request) -> Response
where
    S: tower_service::Service<Request, Response = Response, Error = Infallible> + Send + 'static,
    S::Future: Send + 'static,
{
    if let Some(refused) = precheck(&req) {
        return refused;
    }
    if let Some(refused) = shared
        .reads_first
        .as_ref()
        .and_then(|g| crate::guard::refused_early(g, &req))
    {
        tokio::time::sleep(crate::guard::REFUSAL_PACE).await;
        return crate::ApiError::from(refused).into_response();
    }
    let Ok(_permit) = shared.in_flight.try_acquire() else {
        return overloaded();
    };
    let _counted = InFlight::counted();
    let reads = is_read(req.method());
    match shared.writes.clone().filter(|_| !reads) {
        Some(writes) => {
            let span = tracing::Span::current();
            let shared = shared.clone();
            let handled =
                writes.spawn(async move { limited(&shared, inner, req).instrument(span).await });
            handled.await.unwrap_or_else(|e| {
                tracing::error!(error = %e, "a write's handler failed");
                crate::ApiError::new(
                    socialite_core::ErrorKind::Internal,
                    "internal",
                    "the write's handler failed",
                )
                .into_response()
            })
        }
        None => limited(&shared, inner, req).await,
    }
}

/// The caller and the route's answer, within the request's time limit.
async fn limited<S>(shared: &Shared, inner: S, req: Request) -> Response
where
    S: tower_service::Service<Request, Response = Response, Error = Infallible>,
{
    let (mut req, waiting) = Paced::watch(req);
    // The limit covers the credential check too: a token's check reads its
    // account's standing from the store, which may be slow or down.
    let limit = time_limit(req.uri().path(), shared.request_timeout);
    let run = async move {
        let auth = match &shared.admit {
            Admit::Credential(auth) => auth,
            Admit::Trusted => {
                req.extensions_mut().insert(Caller::Trusted);
                return answer(inner, req).await;
            }
        };
        let admitted = auth.admit_into(&mut req).await;
        let caller = req.extensions().get::<Caller>().cloned();
        let resp = match admitted {
            Ok(()) => answer(inner, req).await,
            Err(refused) => crate::ApiError::from(refused).into_response(),
        };
        auth.with_limit_fields(resp, caller.as_ref())
    };
    tokio::time::timeout(limit, run).await.unwrap_or_else(|_| {
        // The client's slowness, or the server's.
        match waiting.load(std::sync::atomic::Ordering::Relaxed) {
            true => body_timed_out(limit),
            false => timed_out(limit),
        }
    })
}

/// A request that only reads.
fn is_read(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// A request counted in `socialite_requests_in_flight` until dropped.
struct InFlight;

impl InFlight {
    fn counted() -> InFlight {
        crate::metrics::transport().requests_in_flight.inc();
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        crate::metrics::transport().requests_in_flight.dec();
    }
}

async fn answer<S>(inner: S, req: Request) -> Response
where
    S: tower_service::Service<Request, Response = Response, Error = Infallible>,
{
    match inner.oneshot(req).await {
        Ok(resp) => resp,
        Err(never) => match never {},
    }
}

/// The request's span, when anything would record it (see the module's
/// overview); otherwise a disabled one, which costs nothing to enter.
fn request_span(
    req: &Request,
    method: &'static str,
    route: &RouteLabel,
    id: &HeaderValue,
) -> tracing::Span {
    // Field values are worked out only when the span is enabled.
    let path = req.uri().path();
    let span = match socialite_core::trace::hooks() {
        Some(_) => tracing::info_span!(
            "http_request",
            %method,
            route = route.as_str(),
            path,
            request_id = %String::from_utf8_lossy(id.as_bytes()),
            trace_id = tracing::field::Empty
        ),
        None => tracing::debug_span!(
            "http_request",
            %method,
            route = route.as_str(),
            path,
            request_id = %String::from_utf8_lossy(id.as_bytes())
        ),
    };
    join_trace(&span, req.headers());
    span
}

#[cfg(test)]
mod tests {
    use super::{Admit, FrontLayer};
    use crate::ApiError;
    use axum::body::Body;
    use axum::http::{Request, StatusCode};
    use axum::routing::get;
    use axum::Router;
    use socialite_core::ErrorKind;
    use std::io::Write;
    use std::sync::{Arc, Mutex};
    use tower::ServiceExt;

    /// Log lines, as the test's subscriber writes them.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl Write for Lines {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    async fn call(router: &Router, path: &str) -> (StatusCode, serde_json::Value) {
        let req = Request::get(path)
            .header("x-request-id", "req-7")
            .body(Body::empty())
            .unwrap();
        let resp = router.clone().oneshot(req).await.unwrap();
        assert_eq!(resp.headers()["x-request-id"], "req-7");
        let status = resp.status();
        let body = axum::body::to_bytes(resp.into_body(), 1 << 16)
            .await
            .unwrap();
        (status, serde_json::from_slice(&body).unwrap())
    }

    async fn boom() -> ApiError {
        ApiError::new(ErrorKind::Internal, "store_failed", "it broke")
    }

    async fn missing() -> ApiError {
        ApiError::new(ErrorKind::NotFound, "no_such_user", "none")
    }

    /// At the default level a request makes no span, so the front itself
    /// must put the request's id, route and path on a failure's log line.
    #[tokio::test]
    async fn a_server_failure_is_logged_with_its_request_id_and_route() {
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        let _default = tracing::subscriber::set_default(subscriber);
        // A test's router, outside the contract, so not with `.route(`,
        // which the contract's check of this crate's sources refuses.
        let router = Router::route(Router::new(), "/boom/{n}", get(boom));
        let router = Router::route(router, "/missing", get(missing));
        let router = router.layer(FrontLayer::new(
            Admit::Trusted,
            crate::guard::REQUEST_TIMEOUT,
        ));

        let (status, body) = call(&router, "/missing").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["error"]["request_id"], "req-7");
        assert!(
            lines.0.lock().unwrap().is_empty(),
            "a client's error is not a failure"
        );

        let (status, body) = call(&router, "/boom/1").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body["error"]["request_id"], "req-7");
        let logged = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        assert!(logged.contains("request failed"), "{logged}");
        for field in [
            "request_id=req-7",
            "route=\"/boom/{n}\"",
            "path=\"/boom/1\"",
            "code=\"store_failed\"",
            "it broke",
        ] {
            assert!(logged.contains(field), "{field} is not in {logged}");
        }
    }

    async fn read_body(body: axum::body::Body) -> StatusCode {
        match axum::body::to_bytes(body, 1 << 20).await {
            Ok(_) => StatusCode::OK,
            Err(_) => StatusCode::BAD_REQUEST,
        }
    }

    async fn stuck() -> StatusCode {
        std::future::pending().await
    }

    /// A client whose body does not come within the request's time is
    /// answered 408 and never logged as the server's failure (many of them
    /// make one line); a request the server itself takes too long over is
    /// 503 and logged.
    #[tokio::test(start_paused = true)]
    async fn a_slow_body_is_the_clients_and_a_slow_server_its_own() {
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        let _default = tracing::subscriber::set_default(subscriber);
        let router = Router::route(Router::new(), "/upload", axum::routing::post(read_body));
        let router = Router::route(router, "/stuck", get(stuck));
        let router = router.layer(FrontLayer::new(
            Admit::Trusted,
            crate::guard::REQUEST_TIMEOUT,
        ));
        for _ in 0..5 {
            // A body that sends a few bytes and then nothing.
            use tokio_stream::StreamExt;
            let first = tokio_stream::iter([Ok::<_, std::io::Error>(
                axum::body::Bytes::from_static(b"{\"message\":"),
            )]);
            let stalled = first.chain(tokio_stream::pending());
            let req = Request::post("/upload")
                .body(Body::from_stream(stalled))
                .unwrap();
            let resp = router.clone().oneshot(req).await.unwrap();
            assert_eq!(resp.status(), StatusCode::REQUEST_TIMEOUT);
            assert_eq!(resp.headers()["connection"], "close");
            let body = axum::body::to_bytes(resp.into_body(), 1 << 16)
                .await
                .unwrap();
            let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
            assert_eq!(body["error"]["code"], "body_timeout");
        }
        let logged = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        assert!(!logged.contains("ERROR"), "{logged}");
        assert!(
            logged.matches("too slowly").count() <= 1,
            "one line for many: {logged}"
        );

        let req = Request::get("/stuck").body(Body::empty()).unwrap();
        let resp = router.clone().oneshot(req).await.unwrap();
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
        let logged = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        assert!(logged.contains("request failed"), "{logged}");
    }
}
