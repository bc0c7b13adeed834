//! Serving REST and gRPC on given listeners until a shutdown signal.

use crate::error::ApiError;
use crate::MAX_BODY_BYTES;
use axum::extract::DefaultBodyLimit;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::json;
use socialite_core::shutdown::Shutdown;
use socialite_core::ErrorKind;
use tokio::net::TcpListener;

/// Adds what every REST service has: health endpoints, the body limit, and
/// JSON answers for unknown routes and methods.
pub fn finish_router(routes: Router) -> Router {
    routes
        .route("/healthz", get(|| async { Json(json!({ "status": "ok" })) }))
        .fallback(|| async { ApiError::new(ErrorKind::NotFound, "no_such_route", "no such route") })
        .method_not_allowed_fallback(|| async {
            let body = json!({ "error": { "code": "method_not_allowed", "message": "this route does not accept that method" } });
            (axum::http::StatusCode::METHOD_NOT_ALLOWED, Json(body))
        })
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
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
    routes: tonic::service::Routes,
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

/// Serves REST and gRPC until SIGINT/SIGTERM, then stops taking requests,
/// finishes those in flight, and fires `on_stop` for the caller's own tasks.
pub async fn run_until_signal(
    rest: (std::net::SocketAddr, Router),
    grpc: (std::net::SocketAddr, tonic::service::Routes),
    on_stop: socialite_core::shutdown::ShutdownTrigger,
) -> Result<(), String> {
    let rest_listener = bind("REST (--rest-addr)", rest.0).await?;
    let grpc_listener = bind("gRPC (--grpc-addr)", grpc.0).await?;
    let (trigger, shutdown) = socialite_core::shutdown::channel();
    let http = tokio::spawn(serve_http(
        rest_listener,
        finish_router(rest.1),
        shutdown.clone(),
    ));
    let rpc = tokio::spawn(serve_grpc(grpc_listener, grpc.1, shutdown));
    tracing::info!(rest = %rest.0, grpc = %grpc.0, "serving");
    shutdown_signal().await;
    tracing::info!("shutting down");
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
