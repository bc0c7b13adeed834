//! `socialite-fanout-worker`: one fanout worker on its own, a member of the
//! consumer group; it serves only the operators' endpoints. Run as many as
//! the log has partitions. The embedded stores belong to one process at a
//! time: with them, run the pipeline with `socialite up`.

use clap::Parser;
use socialite_runtime::process::{run_main, serve_until_signal, Listen};
use socialite_runtime::settings::{FeedArgs, LogArgs, StorageArgs, WorkerArgs};
use socialite_runtime::settings_file::ConfigFileArg;
use socialite_runtime::{AppConfig, AuthConfig, Service};
use std::net::SocketAddr;
use std::process::ExitCode;

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
    run_main("socialite-fanout-worker", |cli: Cli| async move {
        let listen = Listen {
            rest: cli.ops_addr,
            rest_flag: "--ops-addr",
            grpc: None,
        };
        let config = AppConfig {
            storage: cli.storage.backends(&cli.feed),
            worker: cli.worker.config(),
            node_id: 0,
            // It serves no API: its one address is the operators'.
            auth: AuthConfig::none(),
            cors_origins: Vec::new(),
            ops_addr: None,
            limits: Default::default(),
            ranking: Default::default(),
            webhooks: Default::default(),
        };
        let services = [Service::FanoutWorker];
        serve_until_signal(
            "socialite-fanout-worker",
            &services,
            listen,
            config,
            &cli.log,
        )
        .await
    })
}
