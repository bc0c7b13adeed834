//! `socialite-producer`: the ingestion service on its own (writes over REST
//! and gRPC, the outbox relay). The embedded stores belong to one process at
//! a time: run the services apart on MongoDB and Kafka, or all of them with
//! `socialite up`.

use clap::Parser;
use socialite_runtime::credentials::AuthArgs;
use socialite_runtime::process::{run_main, serve_until_signal, Listen};
use socialite_runtime::settings::{FeedArgs, GroupArgs, LogArgs, StorageArgs};
use socialite_runtime::settings_file::ConfigFileArg;
use socialite_runtime::{AppConfig, Service};
use std::net::SocketAddr;
use std::process::ExitCode;

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
    group: GroupArgs,
    #[command(flatten)]
    auth: AuthArgs,
    #[command(flatten)]
    log: LogArgs,
    #[command(flatten)]
    config: ConfigFileArg,
}

fn main() -> ExitCode {
    run_main("socialite-producer", |cli: Cli| async move {
        let listen = Listen {
            rest: cli.rest_addr,
            rest_flag: "--rest-addr",
            grpc: Some(cli.grpc_addr),
        };
        let config = AppConfig {
            storage: cli.storage.backends(&cli.feed),
            worker: cli.group.watching(),
            node_id: cli.node_id,
            auth: cli.auth.config(),
            cors_origins: cli.auth.cors_origins.clone(),
            ops_addr: cli.auth.ops_addr,
            limits: cli.auth.limits.config(),
            ranking: Default::default(),
            webhooks: cli.auth.webhooks.config(),
        };
        let services = [Service::Producer];
        serve_until_signal("socialite-producer", &services, listen, config, &cli.log).await
    })
}
