//! `socialite-fanout-worker`: one fanout worker on its own. The embedded stores
//! belong to one process at a time; with them, run the pipeline with
//! `socialite up`.

use clap::Parser;
use socialite_core::backends::Backends;
use socialite_fanout_worker::{spawn_worker, WorkerArgs};
use socialite_transport::config::{LogArgs, StorageArgs};
use socialite_transport::serve::{exit_code, shutdown_signal};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "socialite-fanout-worker",
    version,
    about = "Socialite fanout: log events into timeline caches"
)]
struct Cli {
    #[command(flatten)]
    storage: StorageArgs,
    #[command(flatten)]
    worker: WorkerArgs,
    #[command(flatten)]
    log: LogArgs,
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    socialite_transport::telemetry::init_logging(cli.log.log_json);
    exit_code("socialite-fanout-worker", run(cli).await)
}

async fn run(cli: Cli) -> Result<(), String> {
    let backends = Backends::embedded(&cli.storage.embedded()).map_err(|e| e.chain())?;
    let (stop, stopped) = socialite_core::shutdown::channel();
    let worker = spawn_worker(
        backends.stores(),
        backends.log.clone(),
        cli.worker.config(),
        stopped,
    );
    tracing::info!(group = %cli.worker.fanout_group, "fanout worker running");
    shutdown_signal().await;
    stop.trigger();
    worker
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.chain())
}
