//! Ends the mutes made to end by themselves: every process that takes
//! writes looks, once a second, for the mutes whose end has come
//! ([`crate::ports::Mutes::mutes_due`]) and lifts each as an unmute is
//! lifted (`Unmuted` on the log: fanout refills the timelines), unless it
//! was made again since (the rule is `socialite_domain::graph::mute_ends`'
//! and holds in the lifting transaction, so two processes sweeping at once
//! lift each mute once). While writes are stopped for a move, nothing is
//! lifted: the mute's end travels with it, and the new home lifts it.

use crate::error::Result;
use crate::ingest::Ingest;
use crate::shutdown::Shutdown;
use socialite_domain::graph::relations::RelationChange;
use socialite_domain::ids::now_ms;
use std::sync::Arc;
use std::time::Duration;

/// How often the sweep looks: a mute ends within about this of its time.
const SWEEP_EVERY: Duration = Duration::from_secs(1);
/// Mutes lifted in one read of those due.
const PAGE: usize = 256;

impl Ingest {
    /// Lifts every mute whose end has come by `now_ms`; how many it lifted.
    pub async fn end_mutes(&self, now_ms: u64) -> Result<usize> {
        let mut lifted = 0;
        loop {
            let Ok(_passed) = self.gate.enter() else {
                return Ok(lifted);
            };
            let due = self.graph.mutes_due(now_ms, PAGE).await?;
            // Kept first pages are rebuilt only when a mute is lifted (the
            // sweep runs every second).
            let muters = due.iter().map(|(user, _)| user.clone()).collect();
            let _advance = (!due.is_empty()).then(|| self.epoch.advancing_for(muters));
            let mut lifted_here = 0;
            for (user, target) in &due {
                let change = RelationChange::lift_ended_mute(user.clone(), target.clone(), now_ms);
                // One pair that cannot be lifted now (its keeper being
                // deleted, whose deletion takes the end) holds up no other.
                match self.graph.change_relation(&change).await {
                    Ok(t) => lifted_here += usize::from(t.changed),
                    Err(e) => {
                        tracing::debug!(error = %e.chain(), %user, %target, "a mute's end was not lifted")
                    }
                }
            }
            lifted += lifted_here;
            // A page none of which was lifted (each made again, or raced by
            // another process) would be read again: stop.
            if due.len() < PAGE || lifted_here == 0 {
                return Ok(lifted);
            }
        }
    }
}

/// Runs the sweep until `shutdown` fires.
pub async fn run_mute_ends(ingest: Arc<Ingest>, mut shutdown: Shutdown) -> Result<()> {
    loop {
        match ingest.end_mutes(now_ms()).await {
            Ok(0) => {}
            Ok(n) => tracing::info!(mutes = n, "mutes ended"),
            Err(e) => tracing::warn!(error = %e.chain(), "ending mutes failed"),
        }
        if !shutdown.pause(SWEEP_EVERY).await {
            return Ok(());
        }
    }
}
