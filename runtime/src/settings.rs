//! Settings shared by the binaries, as flags with `SOCIALITE_*` environment
//! variables and documented defaults (`--help` lists them). A settings file
//! fills in what neither sets (see [`crate::settings_file`]).

use crate::backends::BackendConfig;
use clap::Args;
use socialite_api::limits::Limits;
use socialite_core::feed::config::{FeedConfig, FeedModel};
use socialite_core::worker::WorkerConfig;
use socialite_domain::feed::hybrid::Hybrid;
use socialite_embedded::{EmbeddedConfig, DEFAULT_RETENTION};
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
    /// `embedded://[PATH]` (PATH defaults to --data-dir), `mongodb://HOST:PORT[/DB][?OPTIONS]`
    /// or `mongodb+srv://NAME[/DB][?OPTIONS]`.
    #[arg(
        long,
        env = "SOCIALITE_STORE",
        default_value = "embedded://",
        hide_env_values = true
    )]
    pub store: String,
    /// Event log: `embedded://[PATH]` or
    /// `kafka://HOST:PORT[,HOST:PORT][?partitions=8&replication=1&topic_prefix=socialite]`.
    #[arg(
        long,
        env = "SOCIALITE_EVENT_LOG",
        default_value = "embedded://",
        hide_env_values = true
    )]
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
    /// Show users their own posts in their home timeline.
    #[arg(long, env = "SOCIALITE_OWN_POSTS", default_value_t = true, action = clap::ArgAction::Set)]
    pub own_posts: bool,
    /// Drop a stored timeline not read for this long (its user is dormant
    /// again until they read): a number with s, m, h or d (seconds without).
    #[arg(long, env = "SOCIALITE_CACHE_TTL", default_value = "30d", value_parser = parse_duration_secs)]
    pub cache_ttl: u64,
    /// Hybrid fanout: authors with at least this many followers are not
    /// fanned out; their recent posts are merged into their followers'
    /// pages at read time. `auto` chooses the count from the measured cost
    /// of a delivery (the count whose fanout takes 20 ms of worker time,
    /// between 1,000 and 1,000,000); `off` fans every post out.
    #[arg(long, env = "SOCIALITE_HYBRID", default_value = "auto")]
    pub hybrid: Hybrid,
}

/// Seconds of a duration written `30d`, `12h`, `90m`, `45s` or `45`.
pub(crate) fn parse_duration_secs(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let (number, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => t.split_at(at),
        None => (t, "s"),
    };
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a duration such as 30d, 12h, 90m or 45s"))?;
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("`{text}`: the unit is one of s, m, h, d")),
    };
    match n.checked_mul(scale) {
        Some(secs) if secs > 0 && secs <= 10 * 365 * 86_400 => Ok(secs),
        _ => Err(format!("`{text}` must be between 1 second and 10 years")),
    }
}

/// [`parse_duration_secs`], or `0` for off.
fn parse_duration_or_off(text: &str) -> Result<u64, String> {
    match text.trim() {
        "0" | "off" => Ok(0),
        _ => parse_duration_secs(text),
    }
}

/// A multiple above 1, or `0`/`off`.
fn parse_factor_or_off(text: &str) -> Result<f64, String> {
    match text.trim() {
        "0" | "off" => Ok(0.0),
        t => match t.parse::<f64>() {
            Ok(f) if (1.05..=100.0).contains(&f) => Ok(f),
            _ => Err(format!(
                "`{t}` is not a multiple from 1.05 to 100, nor `off`"
            )),
        },
    }
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
            own_posts: self.own_posts,
            cache_ttl_secs: self.cache_ttl,
            hybrid: self.hybrid,
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
                bulk: false,
            },
            store: self.store.clone(),
            event_log: self.event_log.clone(),
        }
    }
}

/// What one process lets clients hold (see `socialite_api::limits`).
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Most accounts one user may follow.
    #[arg(long, env = "SOCIALITE_MAX_FOLLOWING", default_value_t = Limits::default().max_following, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_following: u64,
    /// Open connections, REST and gRPC together; 0 takes three quarters of
    /// the process's file-descriptor limit.
    #[arg(long, env = "SOCIALITE_MAX_CONNECTIONS", default_value_t = 0)]
    pub max_connections: usize,
    /// Open connections from one client address.
    #[arg(long, env = "SOCIALITE_MAX_CONNECTIONS_PER_IP", default_value_t = Limits::default().max_connections_per_ip, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_connections_per_ip: usize,
    /// Seconds a connection may stay without a request in flight, from its
    /// start (a client that sends no complete request head) and between
    /// requests.
    #[arg(long, env = "SOCIALITE_IDLE_TIMEOUT", default_value = "5s", value_parser = parse_duration_secs)]
    pub idle_timeout: u64,
    /// Live streams open in the process.
    #[arg(long, env = "SOCIALITE_MAX_STREAMS", default_value_t = Limits::default().max_streams, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_streams: usize,
    /// Live streams of one user's timeline.
    #[arg(long, env = "SOCIALITE_MAX_STREAMS_PER_USER", default_value_t = Limits::default().max_streams_per_user, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_streams_per_user: usize,
    /// Live streams opened with one API key.
    #[arg(long, env = "SOCIALITE_MAX_STREAMS_PER_KEY", default_value_t = Limits::default().max_streams_per_key, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1_000_000))]
    pub max_streams_per_key: usize,
    /// How long a live stream lives before it asks its client to reconnect.
    #[arg(long, env = "SOCIALITE_STREAM_LIFETIME", default_value = "1h", value_parser = parse_duration_secs)]
    pub stream_lifetime: u64,
    /// Firehose connections open in the process (`GET /firehose`,
    /// `Firehose.Subscribe`).
    /// At most 400: on Kafka each connection's reads take a thread of the
    /// process's pool of blocking threads (512).
    #[arg(long, env = "SOCIALITE_MAX_FIREHOSES", default_value_t = Limits::default().max_firehoses, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=400))]
    pub max_firehoses: usize,
    /// Firehose connections opened with one API key.
    #[arg(long, env = "SOCIALITE_MAX_FIREHOSES_PER_KEY", default_value_t = Limits::default().max_firehoses_per_key, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=400))]
    pub max_firehoses_per_key: usize,
    /// Backups kept in DATA_DIR/backups (made by POST /admin/backup, one at
    /// a time): after each, the oldest past this many are removed; 0 keeps
    /// them all. `socialite backup` moves its copy out; migrate removes its
    /// own (`migrate-…`), which are not counted.
    #[arg(long, env = "SOCIALITE_MAX_BACKUPS", default_value_t = Limits::default().max_backups, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(0..=10_000))]
    pub max_backups: usize,
    /// Post -> visible that producers defend: past two fifths of it,
    /// fanout's lag sheds a share of new writes with 503 `overloaded` and
    /// `Retry-After`, all of them at four fifths (deletions and safety acts pass); `0` or `off`
    /// never sheds, and the fanout group's place is then not read.
    #[arg(long, env = "SOCIALITE_FRESHNESS_TARGET", default_value = "5s", value_parser = parse_duration_or_off)]
    pub freshness_target: u64,
    /// Where one process serves reads and takes writes (`socialite up`,
    /// `--services` naming both): reads' p99 is held to this multiple of
    /// what it is while writes are quiet, by admitting fewer writes (503
    /// `overloaded` with `Retry-After` beyond; deletions and safety acts
    /// pass); `0` or `off` never refuses for it.
    #[arg(long, env = "SOCIALITE_READ_GUARD", default_value = "1.25", value_parser = parse_factor_or_off)]
    pub read_guard: f64,
    /// Writes a second the read guard never refuses; seconds with no more
    /// writes than this teach it what reads cost when writes are quiet.
    #[arg(long, env = "SOCIALITE_READ_GUARD_FLOOR", default_value_t = socialite_core::reads_first::DEFAULT_FLOOR, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub read_guard_floor: u32,
}

impl LimitArgs {
    pub fn config(&self) -> Limits {
        Limits {
            max_following: self.max_following,
            max_connections: self.max_connections,
            max_connections_per_ip: self.max_connections_per_ip,
            idle_timeout: std::time::Duration::from_secs(self.idle_timeout),
            max_streams: self.max_streams,
            max_streams_per_user: self.max_streams_per_user,
            max_streams_per_key: self.max_streams_per_key,
            stream_lifetime: std::time::Duration::from_secs(self.stream_lifetime),
            max_firehoses: self.max_firehoses,
            max_firehoses_per_key: self.max_firehoses_per_key,
            // Not a setting: the default (see the field).
            firehose_stall: Limits::default().firehose_stall,
            max_backups: self.max_backups,
            // Not a setting: the default (see the field).
            request_timeout: Limits::default().request_timeout,
            freshness_target: std::time::Duration::from_secs(self.freshness_target),
            reads_first: socialite_core::reads_first::ReadsFirstConfig {
                factor: self.read_guard,
                floor: self.read_guard_floor,
            },
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct LogArgs {
    /// Log as JSON lines instead of text.
    #[arg(long, env = "SOCIALITE_LOG_JSON")]
    pub log_json: bool,
    /// Export traces over OTLP/gRPC to this receiver (`http://HOST:4317`: an
    /// OpenTelemetry collector, Jaeger or Tempo, beside the process; plain
    /// gRPC). Off when unset.
    #[arg(long, env = "SOCIALITE_OTLP_ENDPOINT", value_parser = otlp_endpoint)]
    pub otlp_endpoint: Option<String>,
}

fn otlp_endpoint(value: &str) -> Result<String, String> {
    // Plain gRPC: the receiver is a collector beside the process.
    let shape = "expected http://HOST:PORT (an OTLP/gRPC receiver; TLS is not built in)";
    let rest = value.strip_prefix("http://").ok_or(shape)?;
    if rest.is_empty() || rest.contains(char::is_whitespace) {
        return Err(shape.into());
    }
    Ok(value.to_owned())
}

/// The fanout worker's settings.
#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    /// Most log events a fanout batch takes.
    #[arg(long, env = "SOCIALITE_FANOUT_BATCH", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub fanout_batch: u64,
    #[command(flatten)]
    pub group: GroupArgs,
    /// Milliseconds a batch that has events waits for more to fill it.
    #[arg(long, env = "SOCIALITE_FANOUT_LINGER_MS", default_value_t = 2, value_parser = clap::value_parser!(u64).range(0..=10_000))]
    pub fanout_linger_ms: u64,
    /// Most targets (followers' timelines and muters) the worker's follower
    /// index holds, about 20 bytes each; the lists of the authors who posted
    /// longest ago are dropped past it, and loaded again on their next post.
    #[arg(long, env = "SOCIALITE_FOLLOWER_INDEX_TARGETS", default_value_t = socialite_core::feed::followers::DEFAULT_TARGETS as u64, value_parser = clap::value_parser!(u64).range(1_000..=1_000_000_000))]
    pub follower_index_targets: u64,
}

/// The fanout workers' consumer group: the workers join it, and the
/// producers and timeline APIs watch its place on the log (to shed writes,
/// and to merge what it has not delivered).
#[derive(Debug, Clone, Args)]
pub struct GroupArgs {
    /// Consumer group of the fanout workers (the producers and timeline
    /// APIs watch it: give them the workers' group).
    #[arg(long, env = "SOCIALITE_FANOUT_GROUP", default_value = "fanout")]
    pub fanout_group: String,
}

impl GroupArgs {
    /// The worker settings of a process that only watches the group.
    pub fn watching(&self) -> WorkerConfig {
        WorkerConfig {
            group: self.fanout_group.clone(),
            ..WorkerConfig::default()
        }
    }
}

impl WorkerArgs {
    pub fn config(&self) -> WorkerConfig {
        WorkerConfig {
            group: self.group.fanout_group.clone(),
            batch: self.fanout_batch as usize,
            linger: std::time::Duration::from_millis(self.fanout_linger_ms),
            follower_index_targets: self.follower_index_targets as usize,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_duration_secs;

    #[test]
    fn durations_take_units() {
        assert_eq!(parse_duration_secs("30d"), Ok(30 * 86_400));
        assert_eq!(parse_duration_secs("12h"), Ok(43_200));
        assert_eq!(parse_duration_secs("90m"), Ok(5_400));
        assert_eq!(parse_duration_secs("45"), Ok(45));
        for bad in ["0", "1w", "d", "-3s", "99999999999d"] {
            assert!(parse_duration_secs(bad).is_err(), "{bad}");
        }
    }
}
