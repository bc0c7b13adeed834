//! `socialite-producer`: the ingestion service on its own. The embedded stores
//! belong to one process at a time; to run the services apart, give each its
//! own data directory, or run them all with `socialite up`.

use clap::Parser;
use socialite_core::health::Health;
use socialite_core::ingest::Ingest;
use socialite_transport::backends::open_backends;
use socialite_transport::config::{ConfigFileArg, FeedArgs, LogArgs, StorageArgs};
use socialite_transport::serve::{run_main, run_until_signal};
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Parser)]
#[command(
    name = "socialite-producer",
    version,
    about = "Socialite ingestion: users, follows, posts"
)]
struct Cli {
    /// REST listen address.
    #[arg(long, env = "SOCIALITE_REST_ADDR", default_value = "127.0.0.1:8081")]
    rest_addr: SocketAddr,
    /// gRPC listen address.
    #[arg(long, env = "SOCIALITE_GRPC_ADDR", default_value = "127.0.0.1:50052")]
    grpc_addr: SocketAddr,
    /// Producer node id, part of every post id; distinct per producer process.
    #[arg(long, env = "SOCIALITE_NODE_ID", default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..1024))]
    node_id: u16,
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
    run_main("socialite-producer", run)
}

async fn run(cli: Cli) -> Result<(), String> {
    socialite_transport::telemetry::init_logging(cli.log.log_json);
    let backends = open_backends(&cli.storage.backends(&cli.feed))
        .await
        .map_err(|e| e.chain())?;
    let ingest = Arc::new(
        Ingest::new(
            backends.content.clone(),
            backends.graph.clone(),
            cli.node_id,
        )
        .await
        .map_err(|e| e.chain())?,
    );
    let (stop, stopped) = socialite_core::shutdown::channel();
    let relay =
        socialite_producer::spawn_relay(backends.outbox.clone(), backends.log.clone(), stopped);
    let grpc = tonic::service::Routes::new(socialite_producer::grpc_service(ingest.clone()));
    let health = Health::new(backends.content.clone(), backends.log.clone(), None);
    run_until_signal(
        (cli.rest_addr, socialite_producer::rest_routes(ingest)),
        (cli.grpc_addr, grpc, &[socialite_producer::GRPC_NAME]),
        health,
        stop,
    )
    .await?;
    relay
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.chain())
}
