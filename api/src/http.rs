//! The HTTP server loop: hyper's connection builder with a timer, so that a
//! connection that sends no complete request head within
//! [`HEADER_READ_TIMEOUT`] (a slow or partial header, or an idle keep-alive
//! connection) is closed, and a graceful shutdown that lets requests in
//! flight finish. (axum's own `serve` sets no timer, so it has no header
//! timeout.)

use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use socialite_core::shutdown::Shutdown;
use std::time::Duration;
use tokio::net::TcpListener;

/// How long a connection may take to send a request's head, and how long an
/// idle keep-alive connection stays open.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a shutdown waits for requests in flight.
const DRAIN_DEADLINE: Duration = Duration::from_secs(30);

pub async fn serve_http(
    listener: TcpListener,
    router: Router,
    mut shutdown: Shutdown,
) -> std::io::Result<()> {
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(Some(HEADER_READ_TIMEOUT));
    let graceful = GracefulShutdown::new();
    loop {
        let (stream, _) = tokio::select! {
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
        let _ = stream.set_nodelay(true);
        let service = TowerToHyperService::new(router.clone());
        let conn = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), service)
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
