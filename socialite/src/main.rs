//! `socialite`: the whole pipeline in one process (`up`, on the embedded
//! default unless URIs name MongoDB and Kafka), and the tools around it
//! (`load`, `bench`).

use clap::{Args, Parser, Subcommand};
use socialite_bench::load::{run_load, LoadArgs};
use socialite_bench::{run_bench, BenchArgs};
use socialite_runtime::process::{run_main, serve_until_signal, Listen};
use socialite_runtime::settings::{FeedArgs, LogArgs, StorageArgs, WorkerArgs};
use socialite_runtime::settings_file::ConfigFileArg;
use socialite_runtime::{AppConfig, Service};
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
    /// Print the REST contract: the OpenAPI 3.1 document of the whole API,
    /// as `socialite up` serves it at /openapi.json.
    Openapi,
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
            Command::Openapi => {
                let doc = socialite_api::openapi::document();
                println!("{}", doc.to_pretty_json().map_err(|e| e.to_string())?);
                Ok(())
            }
        }
    })
}

async fn up(args: UpArgs) -> Result<(), String> {
    let listen = Listen {
        rest: args.rest_addr,
        rest_flag: "--rest-addr",
        grpc: Some(args.grpc_addr),
    };
    let config = AppConfig {
        storage: args.storage.backends(&args.feed),
        worker: args.worker.config(),
        node_id: args.node_id,
    };
    serve_until_signal(
        "socialite",
        &Service::ALL,
        listen,
        config,
        args.log.log_json,
    )
    .await
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
