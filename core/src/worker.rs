//! The fanout worker loop: poll a batch from the log, apply it to the timeline
//! caches, and only then commit the group's offset (at least once; replays are
//! harmless because every write is idempotent).

use crate::error::Result;
use crate::feed::{fanout, Stores};
use crate::ports::EventLog;
use crate::shutdown::Shutdown;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Consumer group; workers in one group share the log.
    pub group: String,
    /// Most events per batch.
    pub batch: usize,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            group: "fanout".into(),
            batch: 1000,
        }
    }
}

const POLL_WAIT: Duration = Duration::from_millis(500);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

/// Runs until `shutdown` fires. A batch in progress is finished and committed
/// first; a failing batch is retried (never skipped) with backoff.
pub async fn run_worker(
    stores: Stores,
    log: Arc<dyn EventLog>,
    config: WorkerConfig,
    mut shutdown: Shutdown,
) -> Result<()> {
    let mut consumer = log.consumer(&config.group).await?;
    loop {
        let events = tokio::select! {
            _ = shutdown.wait() => break,
            polled = consumer.poll(config.batch, POLL_WAIT) => polled,
        };
        let events = match events {
            Ok(e) if e.is_empty() => continue,
            Ok(e) => e,
            Err(e) => {
                tracing::warn!(error = %e.chain(), "polling the log failed");
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let mut backoff = Duration::from_millis(50);
        loop {
            let started = std::time::Instant::now();
            match fanout::apply(&stores, &events).await {
                Ok(stats) => {
                    tracing::debug!(
                        events = stats.events,
                        candidates = stats.candidates,
                        delivered = stats.delivered,
                        micros = started.elapsed().as_micros() as u64,
                        "fanout batch applied"
                    );
                    break;
                }
                Err(e) => {
                    tracing::warn!(error = %e.chain(), retry_in_ms = backoff.as_millis() as u64, "fanout batch failed");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
        while let Err(e) = consumer.commit().await {
            tracing::warn!(error = %e.chain(), "committing the log offset failed");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    consumer.commit().await
}
