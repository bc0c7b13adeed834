//! `socialite up`: the whole pipeline in one process, on the embedded default.

use clap::{Args, Parser, Subcommand};
use socialite::bench::load::{run_load, LoadArgs};
use socialite::bench::{run_bench, BenchArgs};
use socialite::{start, AppConfig};
use socialite_fanout_worker::WorkerArgs;
use socialite_transport::config::{ConfigFileArg, FeedArgs, LogArgs, StorageArgs};
use socialite_transport::serve::{bind, run_main, shutdown_signal};
use std::net::SocketAddr;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "socialite",
    version,
    about = "Socialite: a timeline (news feed) service"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the whole pipeline (producer, fanout worker, timeline-api) in one
    /// process on the embedded, persistent stores.
    Up(UpArgs),
    /// Fill a data directory with a generated network (Zipf-distributed
    /// follower counts) or an imported edge list, through the bulk paths.
    Load(LoadArgs),
    /// Drive Socialite with a realistic workload and report throughput,
    /// latency, fanout, freshness and memory (text, JSON and an SVG plot).
    Bench(BenchArgs),
}

#[derive(Args)]
struct UpArgs {
    /// REST listen address.
    #[arg(long, env = "SOCIALITE_REST_ADDR", default_value = "127.0.0.1:8080")]
    rest_addr: SocketAddr,
    /// gRPC listen address.
    #[arg(long, env = "SOCIALITE_GRPC_ADDR", default_value = "127.0.0.1:50051")]
    grpc_addr: SocketAddr,
    /// Producer node id, part of every post id; distinct per producer process.
    #[arg(long, env = "SOCIALITE_NODE_ID", default_value_t = 0, value_parser = clap::value_parser!(u16).range(0..1024))]
    node_id: u16,
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
    run_main("socialite", |cli: Cli| async move {
        match cli.command {
            Command::Up(args) => up(args).await,
            Command::Load(args) => load(args).await,
            Command::Bench(args) => run_bench(args).await,
        }
    })
}

async fn up(args: UpArgs) -> Result<(), String> {
    socialite_transport::telemetry::init_logging(args.log.log_json);
    let rest = bind("REST (--rest-addr)", args.rest_addr).await?;
    let grpc = bind("gRPC (--grpc-addr)", args.grpc_addr).await?;
    let config = AppConfig {
        storage: args.storage.backends(&args.feed),
        worker: args.worker.config(),
        node_id: args.node_id,
    };
    let app = start(&config, rest, grpc).await.map_err(|e| e.chain())?;
    println!(
        "socialite is up: REST http://{} gRPC {} store {} event log {} (data directory {})",
        app.rest_addr,
        app.grpc_addr,
        config.storage.store,
        config.storage.event_log,
        config.storage.embedded.data_dir.display()
    );
    shutdown_signal().await;
    tracing::info!("shutting down");
    app.shutdown().await;
    Ok(())
}

async fn load(args: LoadArgs) -> Result<(), String> {
    let loaded = run_load(&args).await?;
    println!(
        "loaded {} users, {} follows, {} posts into {} in {:.1}s",
        loaded.users,
        loaded.edges,
        loaded.posts,
        args.data_dir.display(),
        loaded.seconds
    );
    Ok(())
}
