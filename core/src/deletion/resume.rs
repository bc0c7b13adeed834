//! Finishes users' deletions that a crash cut short. A deletion runs in
//! steps ([`socialite_domain::deletion::cascade::DeletionStage`]) while its request waits;
//! if the process dies midway, the user stays marked as being deleted (gone
//! to readers and writers) and the producer finishes the deletion here, at
//! start-up and then every minute. Steps are idempotent, so a sweep that
//! meets a deletion still running beside it only repeats empty steps.

use crate::error::Result;
use crate::feed::stamp::WriteEpoch;
use crate::ports::ContentStore;
use crate::shutdown::Shutdown;
use std::sync::Arc;
use std::time::Duration;

const SWEEP_EVERY: Duration = Duration::from_secs(60);

/// `epoch` advances after a sweep that deleted anything (or failed partway):
/// the users' posts and edges are gone from pages.
pub async fn run_deletions(
    content: Arc<dyn ContentStore>,
    epoch: Arc<WriteEpoch>,
    mut shutdown: Shutdown,
) -> Result<()> {
    loop {
        // Cut short by a shutdown, a sweep resumes at the next start
        // (its steps are idempotent).
        let swept = tokio::select! {
            _ = shutdown.wait() => return Ok(()),
            swept = content.resume_deletions() => swept,
        };
        if !matches!(swept, Ok(0)) {
            epoch.advance();
        }
        match swept {
            Ok(0) => {}
            Ok(n) => tracing::info!(users = n, "finished deletions a crash cut short"),
            Err(e) => tracing::warn!(error = %e.chain(), "finishing interrupted deletions failed"),
        }
        if !shutdown.pause(SWEEP_EVERY).await {
            return Ok(());
        }
    }
}
