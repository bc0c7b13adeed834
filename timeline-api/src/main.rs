//! `socialite-timeline-api`: the read service on its own. The embedded stores
//! belong to one process at a time; to run the services apart, give each its
//! own data directory, or run them all with `socialite up`.

use clap::Parser;
use socialite_core::health::Health;
use socialite_core::reads::Reads;
use socialite_transport::backends::open_backends;
use socialite_transport::config::{ConfigFileArg, FeedArgs, LogArgs, StorageArgs};
use socialite_transport::serve::{run_main, run_until_signal};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "socialite-timeline-api",
    version,
    about = "Socialite reads: profiles, graph, posts, timelines"
)]
struct Cli {
    /// REST listen address.
    #[arg(long, env = "SOCIALITE_REST_ADDR", default_value = "127.0.0.1:8082")]
    rest_addr: SocketAddr,
    /// gRPC listen address.
    #[arg(long, env = "SOCIALITE_GRPC_ADDR", default_value = "127.0.0.1:50053")]
    grpc_addr: SocketAddr,
    #[command(flatten)]
    storage: StorageArgs,
    #[command(flatten)]
    feed: FeedArgs,
    #[command(flatten)]
    log: LogArgs,
    #[command(flatten)]
    config: ConfigFileArg,
}

fn main() -> ExitCode {
    run_main("socialite-timeline-api", run)
}

async fn run(cli: Cli) -> Result<(), String> {
    socialite_transport::telemetry::init_logging(cli.log.log_json);
    let backends = open_backends(&cli.storage.backends(&cli.feed))
        .await
        .map_err(|e| e.chain())?;
    let reads = Arc::new(Reads::new(backends.stores()));
    let (stop, _) = socialite_core::shutdown::channel();
    let grpc = tonic::service::Routes::new(socialite_timeline_api::grpc_service(reads.clone()));
    let health = Health::new(backends.content.clone(), backends.log.clone(), None);
    run_until_signal(
        (cli.rest_addr, socialite_timeline_api::rest_routes(reads)),
        (cli.grpc_addr, grpc, &[socialite_timeline_api::GRPC_NAME]),
        health,
        stop,
    )
    .await
}
