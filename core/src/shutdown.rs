//! A shutdown signal passed to every long-running task, so that tests and
//! binaries decide when to stop, and the time a process has to stop.
//!
//! Every loop that waits or retries (the relay, the fanout worker, the
//! deletions, the servers) waits through [`Shutdown`], so a store that keeps
//! failing never holds a process past its grace period.

use std::time::Duration;
use tokio::sync::watch;

/// How long a process takes at most from SIGTERM (or SIGINT) to its exit,
/// whatever state its stores are in: requests in flight get [`DRAIN`], the
/// relay's last pass and the fanout worker's last commit share the rest, and
/// a watchdog ends the process when the grace period is over. Below the
/// 30 s that Kubernetes gives by default.
pub const GRACE: Duration = Duration::from_secs(25);

/// How long the servers wait for requests in flight once shutdown began.
pub const DRAIN: Duration = Duration::from_secs(15);

/// Fires the signal; all [`Shutdown`] handles made from it observe it.
#[derive(Clone)]
pub struct ShutdownTrigger(watch::Sender<bool>);

#[derive(Clone)]
pub struct Shutdown(watch::Receiver<bool>);

pub fn channel() -> (ShutdownTrigger, Shutdown) {
    let (tx, rx) = watch::channel(false);
    (ShutdownTrigger(tx), Shutdown(rx))
}

impl ShutdownTrigger {
    pub fn trigger(&self) {
        self.0.send_replace(true);
    }

    pub fn subscribe(&self) -> Shutdown {
        Shutdown(self.0.subscribe())
    }
}

impl Shutdown {
    /// Completes once the signal fired (at once if it already has, and also if
    /// the trigger was dropped).
    pub async fn wait(&mut self) {
        let _ = self.0.wait_for(|v| *v).await;
    }

    /// Whether the signal fired (or the trigger was dropped).
    pub fn fired(&self) -> bool {
        *self.0.borrow() || self.0.has_changed().is_err()
    }

    /// Sleeps for `pause` unless the signal fires first: true if the whole
    /// pause passed, false on shutdown. What a retry loop waits with.
    pub async fn pause(&mut self, pause: Duration) -> bool {
        tokio::select! {
            _ = self.wait() => false,
            _ = tokio::time::sleep(pause) => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_pause_ends_early_on_shutdown() {
        let (trigger, mut shutdown) = channel();
        assert!(!shutdown.fired());
        assert!(shutdown.pause(Duration::from_millis(1)).await);
        trigger.trigger();
        assert!(shutdown.fired());
        // Would take an hour if the signal were not observed.
        assert!(!shutdown.pause(Duration::from_secs(3600)).await);
    }

    #[tokio::test]
    async fn a_dropped_trigger_counts_as_fired() {
        let (trigger, mut shutdown) = channel();
        drop(trigger);
        assert!(shutdown.fired());
        assert!(!shutdown.pause(Duration::from_secs(3600)).await);
    }
}
