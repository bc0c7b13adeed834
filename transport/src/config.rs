//! Settings shared by the binaries, as flags with `SOCIALITE_*` environment
//! variables and documented defaults (`--help` lists them).

use clap::Args;
use socialite_core::backends::EmbeddedConfig;
use socialite_core::embedded::DEFAULT_RETENTION;
use std::path::PathBuf;

#[derive(Debug, Clone, Args)]
pub struct StorageArgs {
    /// Directory of the embedded stores (content.redb, log.redb); created if missing.
    #[arg(long, env = "SOCIALITE_DATA_DIR", default_value = "./data")]
    pub data_dir: PathBuf,
    /// Entries kept in each active user's timeline cache.
    #[arg(long, env = "SOCIALITE_CACHE_SIZE", default_value_t = 50, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    pub cache_size: u64,
    /// Events the log keeps behind its slowest consumer group, for replays.
    #[arg(long, env = "SOCIALITE_LOG_RETENTION", default_value_t = DEFAULT_RETENTION)]
    pub log_retention: u64,
}

impl StorageArgs {
    pub fn embedded(&self) -> EmbeddedConfig {
        EmbeddedConfig {
            data_dir: self.data_dir.clone(),
            cache_size: self.cache_size as usize,
            log_retention: self.log_retention,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct LogArgs {
    /// Log as JSON lines instead of text.
    #[arg(long, env = "SOCIALITE_LOG_JSON")]
    pub log_json: bool,
}
