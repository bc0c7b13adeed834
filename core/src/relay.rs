//! The outbox relay: moves queued events from the stores' outbox to the log, in
//! order. An event is forgotten by the outbox only after the log holds it, so
//! a log outage or a crash delays events but never loses one (a crash between
//! the two steps appends a batch twice; fanout is idempotent).

use crate::error::Result;
use crate::event::Event;
use crate::metrics::metrics;
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
        // A store or log that does not answer never holds up a shutdown:
        // a pass cut short is redone (the outbox forgets an event only
        // once the log has it, and fanout is idempotent).
        let leased = tokio::select! {
            _ = shutdown.wait() => return Ok(()),
            leased = outbox.lease() => leased,
        };
        match leased {
            Ok(true) => {}
            held_or_failed => {
                if let Err(e) = held_or_failed {
                    tracing::warn!(error = %e.chain(), "taking the relay lease failed");
                }
                // Another producer's relay holds the lease: stand by.
                tokio::select! {
                    _ = shutdown.wait() => return Ok(()),
                    _ = tokio::time::sleep(IDLE_POLL) => {}
                }
                continue;
            }
        }
        let moved = tokio::select! {
            _ = shutdown.wait() => return Ok(()),
            moved = relay_once(&*outbox, &*log) => moved,
        };
        if moved.is_err() {
            metrics().event_publish_failures.inc();
        }
        match moved {
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
    if pending.is_empty() {
        metrics().outbox_pending.set(0);
        return Ok(0);
    }
    let (seqs, events): (Vec<u64>, Vec<Event>) = pending.into_iter().unzip();
    log.append(&events).await?;
    outbox.ack(&seqs).await?;
    metrics().events_published.inc_by(events.len() as u64);
    metrics().outbox_pending.set(outbox.backlog().await? as i64);
    Ok(events.len())
}
