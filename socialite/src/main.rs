//! `socialite`: the whole pipeline in one process (`up`, on the embedded
//! default unless URIs name MongoDB and Kafka), and the tools around it
//! (`load`, `bench`).

mod backup;

use clap::{Args, Parser, Subcommand};
use socialite_api::auth::keys::{new_key, parse_keys, StoredKey};
use socialite_api::auth::tokens::mint;
use socialite_api::auth::Source;
use socialite_bench::firehose::{run_firehose_bench, FirehoseBenchArgs};
use socialite_bench::live::{run_live_bench, LiveBenchArgs};
use socialite_bench::load::{run_load, LoadArgs};
use socialite_bench::webhooks::{run_webhook_bench, WebhookBenchArgs};
use socialite_bench::{run_bench, BenchArgs};
use socialite_domain::accounts::access::Scopes;
use socialite_runtime::credentials::{append_key, signing_secret, AuthArgs, DataDirCredentials};
use socialite_runtime::process::{run_main, serve_until_signal, Listen};
use socialite_runtime::settings::{FeedArgs, LogArgs, StorageArgs, WorkerArgs};
use socialite_runtime::settings_file::ConfigFileArg;
use socialite_runtime::transfer::{run_export, run_import, ExportArgs, ImportArgs};
use socialite_runtime::{AppConfig, Service};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

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
    Up(Box<UpArgs>),
    /// Fill a data directory with a generated network (Zipf-distributed
    /// follower counts) or an imported edge list, through the bulk paths.
    Load(LoadArgs),
    /// Drive Socialite with a realistic workload and report throughput,
    /// latency, fanout, freshness and memory (text, JSON and an SVG plot).
    Bench(BenchArgs),
    /// Hold many live timeline streams (SSE) open against a running server
    /// while authors post, and report post → pushed latency and memory per
    /// stream.
    BenchLive(LiveBenchArgs),
    /// Follow every post of a running server through many firehose
    /// readers (and one that reads nothing) while authors post, and report
    /// what each got, post → read latency, memory, and the stalled reader
    /// cut off.
    BenchFirehose(FirehoseBenchArgs),
    /// Receive every post of a running server (started with
    /// --webhook-allow-internal) at a good webhook endpoint, alone and then
    /// beside a slow and a dead one; reports event -> delivery latency.
    BenchWebhooks(WebhookBenchArgs),
    /// Back the embedded stores up into a new directory, consistently, while
    /// the server runs (it makes the copy) or while none does.
    Backup(backup::BackupArgs),
    /// Make a new data directory from a backup.
    Restore(backup::RestoreArgs),
    /// Write a store out as a versioned JSON Lines export (users, accounts,
    /// follows with their times and lists, mutes, blocks and priorities,
    /// group members, posts), from a consistent view on the embedded store.
    Export(ExportArgs),
    /// Read an export into a store: idempotent, so a rerun of an import cut
    /// short finishes it without doubling anything.
    Import(ImportArgs),
    /// Move an embedded deployment onto MongoDB and Kafka while it serves:
    /// copy, catch up from its log, stop its writes, catch up the rest and
    /// verify both sides; no acknowledged write is lost.
    Migrate(socialite_runtime::migrate::MigrateArgs),
    /// Print the REST contract: the OpenAPI 3.1 document of the whole API,
    /// as `socialite up` serves it at /openapi.json.
    Openapi,
    /// Mint a user token (a JWT signed with the first token secret), as a
    /// product's backend does for its apps; for development and scripts.
    Token(TokenArgs),
    /// Make a server API key: prints the key (shown once) and the line to
    /// add to a keys file, or appends that line with --append.
    Key(KeyArgs),
}

#[derive(Args)]
struct TokenArgs {
    /// The user the token acts as; or `revoke`, then the user whose tokens
    /// a running server refuses from now on (`socialite token revoke USER`).
    user: String,
    /// With `revoke`: the user whose tokens are revoked.
    revoked: Option<String>,
    /// With `revoke`: the server's REST address.
    #[arg(long, env = "SOCIALITE_URL", default_value = "http://127.0.0.1:8080")]
    url: String,
    /// With `revoke`: an API key with the `admin` scope (default: the one in
    /// DATA_DIR/auth/admin-key).
    #[arg(long, env = "SOCIALITE_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// Lifetime: seconds, or a number with s, m, h or d (at most 30 days).
    #[arg(long, default_value = "1h", value_parser = parse_ttl)]
    ttl: Duration,
    /// Data directory whose `auth/token-secrets` signs, when no secret is set.
    #[arg(long, env = "SOCIALITE_DATA_DIR", default_value = "./data")]
    data_dir: PathBuf,
    /// File of token secrets; the first signs.
    #[arg(long, env = "SOCIALITE_TOKEN_SECRETS_FILE")]
    token_secrets_file: Option<PathBuf>,
    /// Token secrets as text; the first signs.
    #[arg(long, env = "SOCIALITE_TOKEN_SECRETS", hide_env_values = true)]
    token_secrets: Option<String>,
}

#[derive(Args)]
struct KeyArgs {
    /// The key's name, as logs and rate limits show it: 1 to 64 characters
    /// of A-Z a-z 0-9 _ . -
    name: String,
    /// Its scopes: write, read, admin, comma-separated.
    #[arg(long, default_value = "write,read")]
    scopes: String,
    /// Append the stored line to this keys file; services reading it pick
    /// the key up within a second.
    #[arg(long)]
    append: Option<PathBuf>,
}

fn parse_ttl(s: &str) -> Result<Duration, String> {
    let (digits, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a duration such as 90, 15m, 1h or 7d"))?;
    let secs = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("{s:?}: the unit is one of s, m, h, d")),
    };
    Ok(Duration::from_secs(n.saturating_mul(secs)))
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
    auth: AuthArgs,
    #[command(flatten)]
    log: LogArgs,
    #[command(flatten)]
    config: ConfigFileArg,
}

fn main() -> ExitCode {
    run_main("socialite", |cli: Cli| async move {
        match cli.command {
            Command::Up(args) => up(*args).await,
            Command::Load(args) => load(args).await,
            Command::Bench(args) => run_bench(args).await,
            Command::BenchLive(args) => run_live_bench(args).await,
            Command::BenchFirehose(args) => run_firehose_bench(args).await,
            Command::BenchWebhooks(args) => run_webhook_bench(args).await,
            Command::Token(args) if args.user == "revoke" && args.revoked.is_some() => {
                revoke(args).await
            }
            Command::Token(args) => token(args),
            Command::Key(args) => key(args),
            Command::Backup(args) => backup::backup(args).await,
            Command::Restore(args) => backup::restore(args),
            Command::Export(args) => run_export(args).await,
            Command::Import(args) => run_import(args).await,
            Command::Migrate(args) => socialite_runtime::migrate::migrate(args).await.map(drop),
            Command::Openapi => {
                let doc = socialite_api::openapi::document();
                println!("{}", doc.to_pretty_json().map_err(|e| e.to_string())?);
                Ok(())
            }
        }
    })
}

async fn up(mut args: UpArgs) -> Result<(), String> {
    if args.auth.unconfigured() {
        let files = DataDirCredentials::of(&args.storage.data_dir);
        let verb = if files.ensure()? { "created" } else { "using" };
        files.apply(&mut args.auth);
        println!(
            "credentials: {verb} {dir}: the admin API key is in {key} (send it as \
             `Authorization: Bearer KEY`); `socialite token USER` mints user tokens; \
             {keys} lists the API keys (reread when it changes)",
            dir = files
                .admin_key
                .parent()
                .map_or(String::new(), |d| d.display().to_string()),
            key = files.admin_key.display(),
            keys = files.api_keys.display(),
        );
    }
    let listen = Listen {
        rest: args.rest_addr,
        rest_flag: "--rest-addr",
        grpc: Some(args.grpc_addr),
    };
    let config = AppConfig {
        storage: args.storage.backends(&args.feed),
        worker: args.worker.config(),
        node_id: args.node_id,
        auth: args.auth.config(),
        cors_origins: args.auth.cors_origins.clone(),
        ops_addr: args.auth.ops_addr,
        limits: args.auth.limits.config(),
        ranking: args.auth.rank.config(),
        webhooks: args.auth.webhooks.config(),
    };
    serve_until_signal("socialite", &Service::ALL, listen, config, &args.log).await
}

/// Revokes every token of a user issued up to now, through the running
/// server's admin route (every replica refuses them within a second).
async fn revoke(args: TokenArgs) -> Result<(), String> {
    let user = args.revoked.unwrap_or_default();
    let key = match args.api_key {
        Some(k) => k,
        None => {
            let path = DataDirCredentials::of(&args.data_dir).admin_key;
            std::fs::read_to_string(&path)
                .map_err(|e| format!("no --api-key, and cannot read {}: {e}", path.display()))?
                .trim()
                .to_owned()
        }
    };
    let url = format!("{}/users/{user}/tokens", args.url.trim_end_matches('/'));
    let resp = reqwest::Client::new()
        .delete(&url)
        .bearer_auth(key)
        .send()
        .await
        .map_err(|e| format!("{url}: {e}"))?;
    match resp.status().as_u16() {
        204 => {
            eprintln!("tokens of {user} issued up to now are revoked");
            Ok(())
        }
        status => Err(format!(
            "{url}: {status} {}",
            resp.text().await.unwrap_or_default()
        )),
    }
}

fn token(args: TokenArgs) -> Result<(), String> {
    let mut source = Source {
        file: args.token_secrets_file,
        text: args.token_secrets,
    };
    if source.file.is_none() && source.text.is_none() {
        source.file = Some(DataDirCredentials::of(&args.data_dir).token_secrets);
    }
    let secret = signing_secret(&source)?;
    let token = mint(&secret, &args.user, args.ttl).map_err(|e| e.to_string())?;
    println!("{token}");
    Ok(())
}

fn key(args: KeyArgs) -> Result<(), String> {
    let scopes = Scopes::parse(&args.scopes).map_err(|e| e.to_string())?;
    let key = new_key()?;
    let line = StoredKey::line(&args.name, scopes, &key);
    // The line must parse as the services will parse it.
    if let Some(problem) = parse_keys(&line).1.pop() {
        return Err(problem);
    }
    match &args.append {
        Some(path) => {
            append_key(path, &line)?;
            eprintln!("key {} ({scopes}) added to {}", args.name, path.display());
        }
        None => eprintln!("add this line to the keys file:\n{line}"),
    }
    println!("{key}");
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
