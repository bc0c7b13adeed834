//! Finishes users' deletions that a crash cut short. A deletion runs in
//! steps ([`crate::rules::cascade::DeletionStage`]) while its request waits;
//! if the process dies midway, the user stays marked as being deleted (gone
//! to readers and writers) and the producer finishes the deletion here, at
//! start-up and then every minute. Steps are idempotent, so a sweep that
//! meets a deletion still running beside it only repeats empty steps.

use crate::error::Result;
use crate::ports::ContentStore;
use crate::shutdown::Shutdown;
use std::sync::Arc;
use std::time::Duration;

const SWEEP_EVERY: Duration = Duration::from_secs(60);

pub async fn run_deletions(content: Arc<dyn ContentStore>, mut shutdown: Shutdown) -> Result<()> {
    loop {
        match content.resume_deletions().await {
            Ok(0) => {}
            Ok(n) => tracing::info!(users = n, "finished deletions a crash cut short"),
            Err(e) => tracing::warn!(error = %e.chain(), "finishing interrupted deletions failed"),
        }
        tokio::select! {
            _ = shutdown.wait() => return Ok(()),
            _ = tokio::time::sleep(SWEEP_EVERY) => {}
        }
    }
}
