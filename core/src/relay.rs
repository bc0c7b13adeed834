//! The outbox relay: moves queued events from the stores' outbox to the log, in
//! order. An event is forgotten by the outbox only after the log holds it, so
//! a log outage or a crash delays events but never loses one (a crash between
//! the two steps appends a batch twice; fanout is idempotent).

use crate::error::Result;
use crate::ports::{EventLog, Outbox};
use crate::shutdown::Shutdown;
use std::sync::Arc;
use std::time::Duration;

const BATCH: usize = 1000;
/// Wake up at least this often, in case a notification was missed.
const IDLE_POLL: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(5);

pub async fn run_relay(
    outbox: Arc<dyn Outbox>,
    log: Arc<dyn EventLog>,
    mut shutdown: Shutdown,
) -> Result<()> {
    let ready = outbox.notifier();
    let mut backoff = Duration::from_millis(50);
    loop {
        match relay_once(&*outbox, &*log).await {
            Ok(0) => {
                backoff = Duration::from_millis(50);
                tokio::select! {
                    _ = shutdown.wait() => return Ok(()),
                    _ = ready.notified() => {}
                    _ = tokio::time::sleep(IDLE_POLL) => {}
                }
            }
            Ok(_) => backoff = Duration::from_millis(50),
            Err(e) => {
                tracing::warn!(error = %e.chain(), retry_in_ms = backoff.as_millis() as u64, "relaying events to the log failed");
                tokio::select! {
                    _ = shutdown.wait() => return Ok(()),
                    _ = tokio::time::sleep(backoff) => {}
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Relays one batch; returns how many events it moved.
pub async fn relay_once(outbox: &dyn Outbox, log: &dyn EventLog) -> Result<usize> {
    let pending = outbox.pending(BATCH).await?;
    let Some(&(last, _)) = pending.last() else {
        return Ok(0);
    };
    let events: Vec<_> = pending.into_iter().map(|(_, e)| e).collect();
    log.append(&events).await?;
    outbox.ack(last).await?;
    Ok(events.len())
}
