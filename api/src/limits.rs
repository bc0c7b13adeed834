//! What one process lets clients hold: connections (globally and per client
//! address, and how long one may stay without a request), live streams
//! (per process, per timeline user, per API key, and how long one lives),
//! firehose connections (per process and per API key),
//! and follows per user. Each is a setting (`socialite up --help`); the
//! defaults suit one process on one machine.

use socialite_core::reads_first::ReadsFirstConfig;
use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Limits {
    /// Most accounts one user may follow (`too_many_following` past it).
    pub max_following: u64,
    /// Open connections, REST and gRPC together; past it a connection is
    /// answered only `/healthz` or 503 `too_many_connections`, then closed.
    /// 0: derived from the process's file-descriptor limit.
    pub max_connections: usize,
    /// Open connections from one client address.
    pub max_connections_per_ip: usize,
    /// How long a connection may go without a request in flight: from its
    /// start (so one that never sends a complete request head is closed) and
    /// between requests.
    pub idle_timeout: Duration,
    /// Live streams open in the process (503 `too_many_streams` past it).
    pub max_streams: usize,
    /// Live streams of one user's timeline (429 `too_many_streams`).
    pub max_streams_per_user: usize,
    /// Live streams opened with one API key (429 `too_many_streams`).
    pub max_streams_per_key: usize,
    /// How long a live stream (or a firehose connection) lives before it
    /// ends with `stream_lifetime`.
    pub stream_lifetime: Duration,
    /// Firehose connections open in the process (503 `too_many_firehoses`
    /// past it); each on Kafka is a client of its own.
    pub max_firehoses: usize,
    /// Firehose connections opened with one API key (429).
    pub max_firehoses_per_key: usize,
    /// A firehose client that reads nothing for this long is cut off
    /// (`slow_reader`). Not a setting of the binaries, which keep
    /// [`DEFAULT_FIREHOSE_STALL`]: a field so that a test need not wait.
    pub firehose_stall: Duration,
    /// Backups kept in the data directory's backup directory, the oldest
    /// removed past it; 0 keeps them all (`socialite_domain::transfer::backups`).
    pub max_backups: usize,
    /// How long a REST or gRPC request may take, reading its body included
    /// (a backup excepted: [`crate::guard::BACKUP_TIMEOUT`]). Not a setting
    /// of the binaries, which keep [`crate::guard::REQUEST_TIMEOUT`]: a
    /// field so that a test of what the limit does need not wait 30 s.
    pub request_timeout: Duration,
    /// Post -> visible that the producer defends: past two fifths of it,
    /// fanout's lag sheds a share of new writes (503 `overloaded`), all of
    /// them at four fifths (`socialite_core::load`). Zero never sheds.
    pub freshness_target: Duration,
    /// Where one process serves reads and takes writes: the multiple of
    /// the reads' quiet p99 they are held to by admitting fewer writes,
    /// and the writes a second never refused (`socialite_core::reads_first`).
    pub reads_first: ReadsFirstConfig,
}

/// A firehose client that reads none of its queued acts for this long is
/// cut off (`slow_reader`) and resumes from its cursor.
pub const DEFAULT_FIREHOSE_STALL: Duration = Duration::from_secs(10);

pub const DEFAULT_MAX_FOLLOWING: u64 = socialite_core::ingest::DEFAULT_MAX_FOLLOWING;

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_following: DEFAULT_MAX_FOLLOWING,
            max_connections: 0,
            max_connections_per_ip: 1_000,
            idle_timeout: Duration::from_secs(5),
            max_streams: 10_000,
            max_streams_per_user: 8,
            max_streams_per_key: 5_000,
            stream_lifetime: Duration::from_secs(3_600),
            max_firehoses: 256,
            max_firehoses_per_key: 64,
            firehose_stall: DEFAULT_FIREHOSE_STALL,
            max_backups: socialite_domain::transfer::backups::DEFAULT_MAX_BACKUPS,
            request_timeout: crate::guard::REQUEST_TIMEOUT,
            freshness_target: socialite_core::load::DEFAULT_FRESHNESS_TARGET,
            reads_first: ReadsFirstConfig::default(),
        }
    }
}
