//! Settings shared by the binaries, as flags with `SOCIALITE_*` environment
//! variables and documented defaults (`--help` lists them).

use crate::backends::BackendConfig;
use clap::Args;
use socialite_core::backends::EmbeddedConfig;
use socialite_core::embedded::DEFAULT_RETENTION;
use socialite_core::feed::config::{FeedConfig, FeedModel};
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct StorageArgs {
    /// Directory of the embedded stores (content.redb, log.redb); created if missing.
    #[arg(long, env = "SOCIALITE_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Events the log keeps behind its slowest consumer group, for replays.
    #[arg(long, env = "SOCIALITE_LOG_RETENTION", default_value_t = DEFAULT_RETENTION)]
    pub log_retention: u64,
    /// Store of users, graph, posts, outbox and timeline caches:
    /// `embedded://[PATH]` (PATH defaults to --data-dir) or `mongodb://HOST:PORT[/DB][?OPTIONS]`.
    #[arg(long, env = "SOCIALITE_STORE", default_value = "embedded://")]
    pub store: String,
    /// Event log: `embedded://[PATH]` or
    /// `kafka://HOST:PORT[,HOST:PORT][?partitions=8&replication=1&topic_prefix=socialite]`.
    #[arg(long, env = "SOCIALITE_EVENT_LOG", default_value = "embedded://")]
    pub event_log: String,
}

/// The feed model and its parameters (see docs/feed-models.md).
#[derive(Debug, Clone, Args)]
pub struct FeedArgs {
    /// Feed model: read (fanout on read), time-buckets, sized-buckets or cache.
    #[arg(long, env = "SOCIALITE_FEED_MODEL", default_value = "cache")]
    pub feed_model: FeedModel,
    /// Cache model: entries in each active user's cache. Every stored model:
    /// entries copied in by a dormant user's first read and by a follow.
    #[arg(long, env = "SOCIALITE_CACHE_SIZE", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub cache_size: u64,
    /// Time-buckets model: seconds of post time per bucket.
    #[arg(long, env = "SOCIALITE_TIME_BUCKET_SECS", default_value_t = 86_400, value_parser = clap::value_parser!(u64).range(1..=31_536_000))]
    pub time_bucket_secs: u64,
    /// Sized-buckets model: entries per bucket.
    #[arg(long, env = "SOCIALITE_BUCKET_SIZE", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub bucket_size: u64,
    /// Bucket models: buckets kept per user; older posts are served by merge.
    #[arg(long, env = "SOCIALITE_BUCKET_RETENTION", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub bucket_retention: u64,
    /// Embed the message and data in timeline entries instead of linking to the post.
    #[arg(long, env = "SOCIALITE_EMBED")]
    pub embed: bool,
}

impl FeedArgs {
    pub fn config(&self) -> FeedConfig {
        FeedConfig {
            model: self.feed_model,
            cache_size: self.cache_size as usize,
            time_bucket_ms: self.time_bucket_secs * 1000,
            bucket_size: self.bucket_size as usize,
            bucket_retention: self.bucket_retention as usize,
            embed: self.embed,
        }
    }
}

impl StorageArgs {
    pub fn backends(&self, feed: &FeedArgs) -> BackendConfig {
        BackendConfig {
            embedded: EmbeddedConfig {
                data_dir: self.data_dir.clone(),
                log_retention: self.log_retention,
                feed: feed.config(),
            },
            store: self.store.clone(),
            event_log: self.event_log.clone(),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct LogArgs {
    /// Log as JSON lines instead of text.
    #[arg(long, env = "SOCIALITE_LOG_JSON")]
    pub log_json: bool,
}

/// The optional settings file: `--config FILE` or `SOCIALITE_CONFIG`.
#[derive(Debug, Clone, Args)]
pub struct ConfigFileArg {
    /// Settings file: one `name = value` per line (names as the flags without
    /// `--`, `#` starts a comment). Flags and environment variables override it.
    #[arg(long = "config", env = "SOCIALITE_CONFIG", value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Reads the settings file, if one is named, into `SOCIALITE_*` environment
/// variables that are not already set, so that clap applies the precedence
/// flags > environment > file > defaults and validates every value, naming
/// the setting. Call before parsing the command line.
pub fn load_settings_file<C: clap::CommandFactory>() -> Result<(), String> {
    let Some(path) = settings_path() else {
        return Ok(());
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read settings file {}: {e}", path.display()))?;
    let known = env_names(&C::command());
    let mut settings = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line
            .split_once('#')
            .map_or(line, |(before, _)| before)
            .trim();
        if line.is_empty() {
            continue;
        }
        let at = || format!("{}:{}", path.display(), n + 1);
        let (name, value) = line
            .split_once('=')
            .ok_or_else(|| format!("{}: expected `name = value`", at()))?;
        let name = name.trim();
        let env = format!("SOCIALITE_{}", name.replace('-', "_").to_uppercase());
        if !known.contains(&env) || env == "SOCIALITE_CONFIG" {
            return Err(format!("{}: unknown setting `{name}`", at()));
        }
        let value = value.trim();
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        settings.push((env, value.to_owned()));
    }
    for (env, value) in settings {
        if std::env::var_os(&env).is_none() {
            // Safe in practice: this runs first thing in main, before any thread starts.
            std::env::set_var(env, value);
        }
    }
    Ok(())
}

fn settings_path() -> Option<PathBuf> {
    let mut args = std::env::args_os().skip(1);
    while let Some(a) = args.next() {
        let a = a.to_string_lossy().into_owned();
        if a == "--config" {
            return args.next().map(PathBuf::from);
        }
        if let Some(p) = a.strip_prefix("--config=") {
            return Some(PathBuf::from(p));
        }
    }
    std::env::var_os("SOCIALITE_CONFIG").map(PathBuf::from)
}

/// The environment variable of every argument of the command and its subcommands.
fn env_names(cmd: &clap::Command) -> std::collections::HashSet<String> {
    let mut out: std::collections::HashSet<String> = cmd
        .get_arguments()
        .filter_map(|a| a.get_env())
        .map(|e| e.to_string_lossy().into_owned())
        .collect();
    for sub in cmd.get_subcommands() {
        out.extend(env_names(sub));
    }
    out
}
