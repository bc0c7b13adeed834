//! `socialite-timeline-api`: the read service on its own. The embedded stores
//! belong to one process at a time: run the services apart on MongoDB and
//! Kafka, or all of them with `socialite up`.

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
    group: GroupArgs,
    #[command(flatten)]
    auth: AuthArgs,
    #[command(flatten)]
    log: LogArgs,
    #[command(flatten)]
    config: ConfigFileArg,
}

fn main() -> ExitCode {
    run_main("socialite-timeline-api", |cli: Cli| async move {
        let listen = Listen {
            rest: cli.rest_addr,
            rest_flag: "--rest-addr",
            grpc: Some(cli.grpc_addr),
        };
        let config = AppConfig {
            storage: cli.storage.backends(&cli.feed),
            worker: cli.group.watching(),
            node_id: 0,
            auth: cli.auth.config(),
            cors_origins: cli.auth.cors_origins.clone(),
            ops_addr: cli.auth.ops_addr,
            limits: cli.auth.limits.config(),
            ranking: cli.auth.rank.config(),
            // Webhooks are delivered by the producers.
            webhooks: Default::default(),
        };
        let services = [Service::TimelineApi];
        serve_until_signal(
            "socialite-timeline-api",
            &services,
            listen,
            config,
            &cli.log,
        )
        .await
    })
}
