//! The fanout worker: a consumer-group member that applies log events to
//! followers' timeline caches. The logic is `socialite_core::feed::fanout` and
//! `socialite_core::worker`; this crate is configuration and wiring.

use clap::Args;
use socialite_core::feed::Stores;
use socialite_core::ports::EventLog;
use socialite_core::shutdown::Shutdown;
use socialite_core::worker::{run_worker, WorkerConfig};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    /// Most log events a fanout batch takes.
    #[arg(long, env = "SOCIALITE_FANOUT_BATCH", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..=100_000))]
    pub fanout_batch: u64,
    /// Consumer group of the fanout workers.
    #[arg(long, env = "SOCIALITE_FANOUT_GROUP", default_value = "fanout")]
    pub fanout_group: String,
    /// Milliseconds a batch that has events waits for more to fill it.
    #[arg(long, env = "SOCIALITE_FANOUT_LINGER_MS", default_value_t = 2, value_parser = clap::value_parser!(u64).range(0..=10_000))]
    pub fanout_linger_ms: u64,
}

impl WorkerArgs {
    pub fn config(&self) -> WorkerConfig {
        WorkerConfig {
            group: self.fanout_group.clone(),
            batch: self.fanout_batch as usize,
            linger: std::time::Duration::from_millis(self.fanout_linger_ms),
        }
    }
}

/// Starts a fanout worker; `assigned` turns true once it has joined its group.
pub fn spawn_worker(
    stores: Stores,
    log: Arc<dyn EventLog>,
    config: WorkerConfig,
    assigned: Arc<AtomicBool>,
    shutdown: Shutdown,
) -> tokio::task::JoinHandle<socialite_core::Result<()>> {
    tokio::spawn(run_worker(stores, log, config, assigned, shutdown))
}
