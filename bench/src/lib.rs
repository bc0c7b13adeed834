//! `socialite load` and `socialite bench`: generate or import a network, then
//! drive Socialite with a realistic workload and report what it achieved;
//! `socialite bench-live` holds live streams open under posting load;
//! `socialite bench-firehose` follows every post through firehose readers.
//! `socialite bench-webhooks` receives every post through webhook endpoints.
//! It drives the pipeline from outside (in-process through the use cases, or
//! over REST and gRPC) and must not reach into a backend's internals, save
//! the embedded store's bulk import that `load` uses.

mod catch_up;
pub mod firehose;
mod latency;
pub mod live;
pub mod load;
mod load_filters;
mod plot;
mod plot_lines;
mod progress;
pub mod report;
pub mod run;
mod scrape;
pub mod target;
pub mod webhooks;
pub mod workload;

use catch_up::CatchUp;
use clap::{Args, ValueEnum};
use load::{run_load, LoadArgs, NetworkArgs};
use run::{active_users, warm_up, Plan};
use serde_json::{json, Value};
use socialite_core::worker::WorkerConfig;
use socialite_runtime::settings::FeedArgs;
use socialite_runtime::{start, App, AppConfig, Service};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use target::{Grpc, InProcess, Rest, Target};
use workload::Mix;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TargetKind {
    /// The engine in this process, no network: measures the core.
    Inprocess,
    /// A running server's REST API: measures the service.
    Rest,
    /// A running server's gRPC API.
    Grpc,
}

#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// What to drive.
    #[arg(long, value_enum, default_value = "inprocess")]
    pub target: TargetKind,
    /// REST base URL of the server (rest and grpc targets; metrics come from it).
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub url: String,
    /// gRPC URL of the server (grpc target).
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    pub grpc_url: String,
    /// Server API key for the rest and grpc targets (scopes write and read;
    /// admin too for the server's metrics), e.g. `$(cat data/auth/admin-key)`.
    #[arg(long, env = "SOCIALITE_API_KEY", hide_env_values = true)]
    pub api_key: Option<String>,
    /// In-process target: data directory; a network is loaded into it first
    /// if it holds none.
    #[arg(long, default_value = "./bench-data")]
    pub data_dir: PathBuf,
    /// The network (must match what was loaded for rest and grpc targets).
    #[command(flatten)]
    pub network: NetworkArgs,
    /// In-process target: the feed model and its parameters.
    #[command(flatten)]
    pub feed: FeedArgs,
    /// In-process target: log events per fanout batch.
    #[arg(long, default_value_t = 1000)]
    pub fanout_batch: usize,
    /// Seconds to run.
    #[arg(long, default_value_t = 30.0)]
    pub duration: f64,
    /// Stop after this many operations (whichever comes first with --duration).
    #[arg(long)]
    pub ops: Option<u64>,
    /// Target operations per second over all workers; 0 runs flat out.
    #[arg(long, default_value_t = 0.0)]
    pub rate: f64,
    /// Concurrent workers.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// Operation mix in percent: post, read, scroll, follow, unfollow, list
    /// (a list timeline), group (a group timeline), mention (mentions).
    #[arg(long, default_value = "post=10,read=80,scroll=5,follow=3,unfollow=2")]
    pub mix: Mix,
    /// Share of users that read (activated before measuring).
    #[arg(long, default_value_t = 0.5)]
    pub active: f64,
    /// Timeline page size.
    #[arg(long, default_value_t = 50)]
    pub page: usize,
    /// Milliseconds between freshness probes by the most followed account.
    #[arg(long, default_value_t = 200)]
    pub probe_interval_ms: u64,
    /// In-process target: the freshness target whose lag sheds writes
    /// (seconds; 0, the default here, never sheds, so the engine is
    /// measured flat out; `socialite up` defends 5 s).
    #[arg(long, default_value_t = 0)]
    pub freshness_target: u64,
    /// In-process target: start without the fanout worker and start it
    /// after this many seconds of the run, then report how fast it caught
    /// up (0: the worker runs throughout).
    #[arg(long, default_value_t = 0.0)]
    pub fanout_stopped: f64,
    /// Write the report to PATH.json, PATH.txt and PATH.svg.
    #[arg(long, default_value = "bench-report")]
    pub report: PathBuf,
}

pub async fn run_bench(args: BenchArgs) -> Result<(), String> {
    if !(0.0..=1.0).contains(&args.active) || args.active == 0.0 {
        return Err("--active must be in (0, 1]".into());
    }
    let (target, config, app) = open_target(&args).await?;
    let app_config = app.as_ref().map(|_| in_process_config(&args));
    let plan = Plan {
        users: args.network.users,
        zipf: args.network.zipf,
        seed: args.network.seed,
        mix: args.mix,
        concurrency: args.concurrency,
        duration: Duration::from_secs_f64(args.duration),
        ops: args.ops,
        rate: args.rate,
        active: args.active,
        page: args.page,
        probe_interval: Duration::from_millis(args.probe_interval_ms),
        groups: load::groups_for(args.network.users),
    };
    let active = active_users(&plan);
    eprintln!("activating {} users", active.len());
    let resident = |text: &str| scrape::metric_sum(text, "socialite_process_resident_memory_bytes");
    // Activated in two halves: the growth over the whole counts what the
    // first users fill once (the stores' fixed-size page caches, pools); the
    // second half's growth is what one more user costs.
    let half = active.len() / 2;
    let cold = resident(&target.metrics().await?);
    warm_up(target.clone(), &active[..half], args.concurrency).await?;
    let midway = resident(&target.metrics().await?);
    warm_up(target.clone(), &active[half..], args.concurrency).await?;
    let warm = resident(&target.metrics().await?);
    let second = (active.len() - half).max(1) as f64;
    let warm_up_memory = json!({
        "activated_users": active.len(),
        "resident_before_bytes": cold,
        "resident_midway_bytes": midway,
        "resident_after_bytes": warm,
        "bytes_per_activated_user": ((warm - cold) / active.len() as f64).round(),
        "marginal_bytes_per_user": ((warm - midway) / second).round(),
    });
    // The probe follows the most followed account and is active.
    let probe = format!("bench-probe-{}", plan.seed);
    until_taken(|| target.put_user(&probe)).await?;
    let most_followed = load::user_name(0);
    until_taken(|| target.follow(&probe, &most_followed)).await?;
    target.timeline(&probe, 1, None).await?;
    let before = target.metrics().await?;
    eprintln!("running {} for {:.0}s", plan.mix, args.duration);
    let catch_up = app
        .as_ref()
        .zip(app_config.as_ref())
        .filter(|_| args.fanout_stopped > 0.0)
        .map(|(a, c)| CatchUp::start(a, c, Duration::from_secs_f64(args.fanout_stopped)));
    let recorded = run::run(target.clone(), plan.clone(), active, probe).await;
    let caught_up = match catch_up {
        Some(c) => Some(c.finish().await),
        None => None,
    };
    let metrics = report::Snapshots {
        end: recorded.metrics_at_end.clone()?,
        settled: settled(&*target).await?,
        before,
    };
    let stored = match &app {
        Some(a) => Some(
            a.backends
                .timelines
                .footprint()
                .await
                .map_err(|e| e.chain())?,
        ),
        None => None,
    };
    let mut report = report::build(&plan, &recorded, &metrics, config, stored);
    report["warm_up_memory"] = warm_up_memory;
    let mut text = report::text(&report);
    if let Some(c) = caught_up {
        text.push_str(&format!("catch-up: {c}\n"));
        report["catch_up"] = c;
    }
    print!("{text}");
    write_report(&args.report, &report, &text, &recorded, &plan)?;
    if let Some(app) = app {
        app.shutdown().await;
    }
    Ok(())
}

/// The longest a report waits for the run's posts to be delivered before
/// it reads their latencies: a saturated run's backlog takes longer, and
/// its latencies are off the histograms' scale anyway.
const SETTLE: Duration = Duration::from_secs(5);

/// The target's metrics once the log's backlog is empty, or after
/// [`SETTLE`].
async fn settled(target: &dyn Target) -> Result<String, String> {
    let until = std::time::Instant::now() + SETTLE;
    loop {
        let text = target.metrics().await?;
        let backlog = scrape::metric_sum(&text, "socialite_log_backlog_events");
        if backlog == 0.0 || std::time::Instant::now() >= until {
            return Ok(text);
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Writes the report to PATH.json, PATH.txt and PATH.svg.
fn write_report(
    path: &std::path::Path,
    report: &Value,
    text: &str,
    recorded: &run::Recorded,
    plan: &Plan,
) -> Result<(), String> {
    let write = |ext: &str, body: &str| {
        let path = path.with_extension(ext);
        std::fs::write(&path, body).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    write("json", &serde_json::to_string_pretty(report).expect("json"))?;
    write("txt", text)?;
    write(
        "svg",
        &plot::svg(recorded, &format!("socialite bench: {}", plan.mix)),
    )?;
    eprintln!("report written to {}.{{json,txt,svg}}", path.display());
    Ok(())
}

/// What the benchmark drives, the settings its report names, and the app
/// when it runs in this process.
async fn open_target(args: &BenchArgs) -> Result<(Arc<dyn Target>, Value, Option<App>), String> {
    match args.target {
        TargetKind::Inprocess => start_in_process(args).await,
        TargetKind::Rest => Ok((
            Arc::new(Rest::new(&args.url, args.api_key.as_deref())?) as Arc<dyn Target>,
            json!({ "target": "rest", "url": args.url }),
            None,
        )),
        TargetKind::Grpc => {
            let g = Grpc::connect(&args.grpc_url, &args.url, args.api_key.as_deref()).await?;
            Ok((
                Arc::new(g) as Arc<dyn Target>,
                json!({ "target": "grpc", "url": args.grpc_url }),
                None,
            ))
        }
    }
}

/// Loads the network if the data directory has none, and starts the whole
/// pipeline in this process.
async fn start_in_process(
    args: &BenchArgs,
) -> Result<(Arc<dyn Target>, Value, Option<App>), String> {
    if !args.data_dir.join("content.redb").exists() {
        eprintln!(
            "loading a network of {} users into {}",
            args.network.users,
            args.data_dir.display()
        );
        let load = LoadArgs {
            data_dir: args.data_dir.clone(),
            network: args.network.clone(),
            posts_per_user: 1,
            edges: None,
            follow_options: Vec::new(),
            options_percent: 0,
            filters: 0,
        };
        let loaded = run_load(&load).await?;
        eprintln!(
            "loaded {} users, {} follows, {} posts in {:.1}s",
            loaded.users, loaded.edges, loaded.posts, loaded.seconds
        );
    }
    let config = in_process_config(args);
    let rest = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let grpc = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let services = match args.fanout_stopped > 0.0 {
        true => &[Service::Producer, Service::TimelineApi][..],
        false => &Service::ALL[..],
    };
    let a = start(services, &config, rest, Some(grpc))
        .await
        .map_err(|e| e.chain())?;
    let target = Arc::new(InProcess {
        ingest: a.ingest.clone(),
        reads: a.reads.clone(),
    });
    let f = args.feed.config();
    let config = json!({ "target": "inprocess", "feed_model": f.model.as_str(), "embed": f.embed, "cache_size": f.cache_size, "fanout_batch": args.fanout_batch });
    Ok((target, config, Some(a)))
}

/// The pipeline the in-process target runs.
fn in_process_config(args: &BenchArgs) -> AppConfig {
    AppConfig {
        storage: socialite_runtime::backends::BackendConfig::embedded(
            socialite_embedded::EmbeddedConfig {
                data_dir: args.data_dir.clone(),
                log_retention: socialite_embedded::DEFAULT_RETENTION,
                feed: args.feed.config(),
                bulk: false,
            },
        ),
        worker: WorkerConfig {
            group: "fanout".into(),
            batch: args.fanout_batch,
            ..WorkerConfig::default()
        },
        node_id: 7,
        // Driven through the use cases, not its listeners.
        auth: socialite_runtime::AuthConfig::none(),
        cors_origins: Vec::new(),
        ops_addr: None,
        limits: socialite_runtime::Limits {
            freshness_target: Duration::from_secs(args.freshness_target),
            ..Default::default()
        },
        ranking: Default::default(),
        webhooks: Default::default(),
    }
}

/// Runs the write `act` until the server takes it: a refusal under load
/// (429 or 503 with `Retry-After`, [`target::REFUSED`]) is asked again a
/// second later, for a minute at most, as a well-behaved client would. A
/// run beside another that floods the server starts all the same.
async fn until_taken<T, F, Fut>(act: F) -> target::OpResult<T>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = target::OpResult<T>>,
{
    let mut tries = 60;
    loop {
        match act().await {
            Err(e) if e.starts_with(target::REFUSED) && tries > 0 => {
                tries -= 1;
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            done => return done,
        }
    }
}
