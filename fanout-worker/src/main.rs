//! `socialite-fanout-worker`: one fanout worker on its own. The embedded stores
//! belong to one process at a time; with them, run the pipeline with
//! `socialite up`.

use axum::Router;
use clap::Parser;
use socialite_core::health::Health;
use socialite_fanout_worker::{spawn_worker, WorkerArgs};
use socialite_transport::backends::open_backends;
use socialite_transport::config::{ConfigFileArg, FeedArgs, LogArgs, StorageArgs};
use socialite_transport::serve::{bind, finish_router, run_main, serve_http, shutdown_signal};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "socialite-fanout-worker",
    version,
    about = "Socialite fanout: log events into timeline caches"
)]
struct Cli {
    /// Listen address of /healthz, /readyz, /metrics and the status page.
    #[arg(long, env = "SOCIALITE_OPS_ADDR", default_value = "127.0.0.1:8083")]
    ops_addr: SocketAddr,
    #[command(flatten)]
    storage: StorageArgs,
    #[command(flatten)]
    feed: FeedArgs,
    #[command(flatten)]
    worker: WorkerArgs,
    #[command(flatten)]
    log: LogArgs,
    #[command(flatten)]
    config: ConfigFileArg,
}

fn main() -> ExitCode {
    run_main("socialite-fanout-worker", run)
}

async fn run(cli: Cli) -> Result<(), String> {
    socialite_transport::telemetry::init_logging(cli.log.log_json);
    let backends = open_backends(&cli.storage.backends(&cli.feed))
        .await
        .map_err(|e| e.chain())?;
    let listener = bind("operations HTTP (--ops-addr)", cli.ops_addr).await?;
    let (stop, stopped) = socialite_core::shutdown::channel();
    let assigned = Arc::new(AtomicBool::new(false));
    let health = Health::new(
        backends.content.clone(),
        backends.log.clone(),
        Some(assigned.clone()),
    );
    let ops = tokio::spawn(serve_http(
        listener,
        finish_router(Router::new(), health),
        stopped.clone(),
    ));
    let worker = spawn_worker(
        backends.stores(),
        backends.log.clone(),
        cli.worker.config(),
        assigned,
        stopped,
    );
    tracing::info!(ops = %cli.ops_addr, group = %cli.worker.fanout_group, "fanout worker running");
    shutdown_signal().await;
    stop.trigger();
    let _ = ops.await;
    worker
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.chain())
}
