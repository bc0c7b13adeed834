//! `socialite export` and `socialite import`: a store written out as the
//! export format (`socialite_core::transfer`), and read into any store.
//! Only the store is opened, never the log: timelines are rebuilt from the
//! graph and the posts, on each user's first read.

use crate::backends::{open_backends, open_transfer, BackendConfig};
use crate::settings::FeedArgs;
use clap::Args;
use socialite_core::ids::now_ms;
use socialite_core::ingest::DEFAULT_MAX_FOLLOWING;
use socialite_core::transfer::warm::warm;
use socialite_core::transfer::{export::export, import::import};
use socialite_domain::transfer::import::Caps;
use socialite_embedded::{EmbeddedConfig, DEFAULT_RETENTION};
use std::io::{BufReader, BufWriter, Write};
use std::path::PathBuf;

/// The file `socialite migrate` leaves in a data directory it moved to
/// another deployment: a server started on it takes no writes.
pub const MOVED: &str = "MOVED";

/// Which store, as `--store` and `--data-dir` name it elsewhere.
#[derive(Debug, Clone, Args)]
pub struct StoreArg {
    /// The store: `embedded://[PATH]` (PATH defaults to --data-dir; no
    /// server may be using it), `mongodb://HOST:PORT[/DB][?OPTIONS]` or
    /// `mongodb+srv://NAME[/DB][?OPTIONS]`.
    #[arg(
        long,
        env = "SOCIALITE_STORE",
        default_value = "embedded://",
        hide_env_values = true
    )]
    pub store: String,
    /// Directory of the embedded stores.
    #[arg(long, env = "SOCIALITE_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
}

impl StoreArg {
    fn embedded(&self) -> EmbeddedConfig {
        embedded_config(&self.data_dir)
    }
}

/// The embedded stores in `data_dir`, with the default settings.
pub fn embedded_config(data_dir: &std::path::Path) -> EmbeddedConfig {
    EmbeddedConfig {
        data_dir: data_dir.to_owned(),
        log_retention: DEFAULT_RETENTION,
        feed: Default::default(),
        bulk: true,
    }
}

/// What an import holds records to beyond the write path's fixed limits:
/// the deployment's own settings, as its services run them.
#[derive(Debug, Clone, Args)]
pub struct CapsArgs {
    /// Most accounts one user may follow (the services' setting of the
    /// same name): a user of the stream who follows more is refused.
    #[arg(long, env = "SOCIALITE_MAX_FOLLOWING", default_value_t = DEFAULT_MAX_FOLLOWING, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_following: u64,
}

impl CapsArgs {
    pub fn caps(&self) -> Caps {
        Caps {
            max_following: self.max_following,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    #[command(flatten)]
    pub store: StoreArg,
    /// Write to this file (made readable by its owner only) instead of
    /// standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    #[command(flatten)]
    pub store: StoreArg,
    /// The export to read; standard input when absent.
    pub input: Option<PathBuf>,
    /// Records per transaction [default: 50000 into the embedded store,
    /// 500 into MongoDB].
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub batch: Option<u64>,
    #[command(flatten)]
    pub caps: CapsArgs,
    /// Then build the home timelines of this many users, those who posted
    /// last (where the feed model stores timelines; the others warm on
    /// their first read). Embedded timelines live in the server's memory:
    /// for them this is for MongoDB.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u64).range(0..=1_000_000))]
    pub warm: u64,
    /// With --warm: the deployment's event log, whose fanout keeps the
    /// warmed timelines.
    #[arg(
        long,
        env = "SOCIALITE_EVENT_LOG",
        default_value = "embedded://",
        hide_env_values = true
    )]
    pub event_log: String,
    /// With --warm: the feed model and cache settings the services run.
    #[command(flatten)]
    pub feed: FeedArgs,
}

/// Writes the store out; a line on standard error says how much.
pub async fn run_export(args: ExportArgs) -> Result<(), String> {
    let transfer = open_transfer(&args.store.store, &args.store.embedded())
        .await
        .map_err(|e| e.chain())?;
    let mut out: Box<dyn Write> = match &args.out {
        Some(path) => Box::new(BufWriter::new(private_file(path)?)),
        None => Box::new(BufWriter::new(std::io::stdout().lock())),
    };
    let records = export(&*transfer, &mut out, now_ms())
        .await
        .map_err(|e| e.chain())?;
    eprintln!("exported {records} records");
    Ok(())
}

/// Reads an export into the store; a line on standard error says how much.
pub async fn run_import(args: ImportArgs) -> Result<(), String> {
    let transfer = open_transfer(&args.store.store, &args.store.embedded())
        .await
        .map_err(|e| e.chain())?;
    let batch = batch_into(&args.store.store, args.batch);
    let caps = args.caps.caps();
    let done = match &args.input {
        Some(path) => {
            let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
            import(&*transfer, BufReader::new(file), batch, &caps).await
        }
        None => import(&*transfer, std::io::stdin().lock(), batch, &caps).await,
    };
    let done = done.map_err(|e| e.chain())?;
    eprintln!(
        "imported {} records ({} new to the store)",
        done.records, done.changed
    );
    if args.warm > 0 {
        drop(transfer);
        let mut embedded = args.store.embedded();
        embedded.feed = args.feed.config();
        let config = BackendConfig {
            embedded,
            store: args.store.store.clone(),
            event_log: args.event_log.clone(),
        };
        let backends = open_backends(&config).await.map_err(|e| e.chain())?;
        let users = done.posters.recent(args.warm as usize);
        let warmed = warm(&backends.stores(), &users)
            .await
            .map_err(|e| e.chain())?;
        eprintln!(
            "warmed the home timelines of {} users who posted last",
            warmed.len()
        );
    }
    Ok(())
}

/// Records per transaction of an import into `store`: `given`, or else
/// 50,000 into the embedded store, whose B-trees copy each page a
/// transaction changes and write it at the commit, so a page that takes
/// many rows over several small transactions is written as many times (an
/// import took 1.6 to 1.8 times as long at 10,000; see BENCHMARKS.md "Imports in
/// larger transactions"), and 500 into MongoDB, where a transaction must end
/// within the server's transaction lifetime (60 s by default) and be
/// retried whole.
pub fn batch_into(store: &str, given: Option<u64>) -> usize {
    match given {
        Some(n) => n as usize,
        None if store.starts_with("embedded:") => 50_000,
        None => 500,
    }
}

/// A new file only its owner reads: an export holds every profile and post.
fn private_file(path: &std::path::Path) -> Result<std::fs::File, String> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
        .open(path)
        .map_err(|e| format!("{}: {e}", path.display()))
}
