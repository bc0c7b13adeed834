//! The server loop of REST and gRPC: each accepted connection passes the
//! [`Gate`] (caps per process and per address, an idle timeout that starts
//! at accept), is served by hyper with HTTP/1 and HTTP/2 (gRPC is HTTP/2),
//! and a shutdown lets requests in flight finish. A connection over the caps
//! is answered only `/healthz` or 503 `too_many_connections` (gRPC:
//! `UNAVAILABLE`), then closed. (axum's own `serve` has no timers.)

use crate::conn::{Activity, Admission, Busy, Gate, Tracked, OVERFLOW_IDLE};
use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use socialite_core::shutdown::Shutdown;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::net::TcpListener;

/// How long a connection may take to send a request's head once it began.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a shutdown waits for requests in flight: its share of the
/// process's grace period.
const DRAIN_DEADLINE: Duration = socialite_core::shutdown::DRAIN;

fn builder(idle: Duration, keep_alive: bool) -> Builder<TokioExecutor> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT.min(idle.max(Duration::from_secs(1))))
        .keep_alive(keep_alive);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(HEADER_READ_TIMEOUT))
        .keep_alive_timeout(HEADER_READ_TIMEOUT);
    builder
}

pub async fn serve_http(
    listener: TcpListener,
    router: Router,
    gate: Arc<Gate>,
    mut shutdown: Shutdown,
) -> std::io::Result<()> {
    let served = builder(gate.idle, true);
    let spilled = builder(OVERFLOW_IDLE, false);
    let overflow = overflow_router();
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors, say: back off instead of spinning.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = shutdown.wait() => break,
        };
        let (permit, router, builder, idle) = match gate.admit(peer.ip()) {
            Admission::Serve(p) => (p, &router, &served, gate.idle),
            Admission::Overflow(p) => (p, &overflow, &spilled, OVERFLOW_IDLE),
            Admission::Close => continue,
        };
        let _ = stream.set_nodelay(true);
        let io = Tracked::new(stream, permit, idle);
        let service = PerConnection {
            router: router.clone(),
            activity: io.activity.clone(),
        };
        let conn = builder
            .serve_connection_with_upgrades(TokioIo::new(io), service)
            .into_owned();
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::trace!(error = %e, "connection ended with an error");
            }
        });
    }
    drop(listener);
    if tokio::time::timeout(DRAIN_DEADLINE, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("requests still in flight after the shutdown deadline");
    }
    Ok(())
}

/// What an overflow connection is answered: `/healthz`, or a refusal in
/// the caller's protocol.
fn overflow_router() -> Router {
    Router::new().fallback(|req: Request| async move {
        if req.uri().path() == "/healthz" {
            return axum::Json(serde_json::json!({ "status": "ok" })).into_response();
        }
        let error = socialite_core::Error::new(
            socialite_core::ErrorKind::Unavailable,
            "too_many_connections",
            "the server holds as many connections as it takes; retry shortly",
        );
        let grpc = req
            .headers()
            .get(header::CONTENT_TYPE)
            .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"));
        let mut resp = match grpc {
            true => crate::error::to_status(error).into_http::<Body>(),
            false => crate::ApiError::from(error).into_response(),
        };
        resp.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
        resp.headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        if !grpc {
            *resp.status_mut() = StatusCode::SERVICE_UNAVAILABLE;
        }
        resp
    })
}

/// The router, for one connection: each request counts as in flight on the
/// connection until its response body ends.
#[derive(Clone)]
struct PerConnection {
    router: Router,
    activity: Arc<Activity>,
}

type Answer = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

impl hyper::service::Service<hyper::Request<hyper::body::Incoming>> for PerConnection {
    type Response = Response;
    type Error = Infallible;
    type Future = Answer;

    fn call(&self, req: hyper::Request<hyper::body::Incoming>) -> Self::Future {
        let busy = self.activity.begin();
        let mut router = self.router.clone();
        Box::pin(async move {
            let resp = tower_service::Service::call(&mut router, req.map(Body::new)).await?;
            Ok(resp.map(|body| Body::new(Counted { body, _busy: busy })))
        })
    }
}

/// A response body that keeps its request in flight until it ends.
struct Counted {
    body: Body,
    _busy: Busy,
}

impl http_body::Body for Counted {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
