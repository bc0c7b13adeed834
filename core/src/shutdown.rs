//! A shutdown signal passed to every long-running task, so that tests and
//! binaries decide when to stop.

use tokio::sync::watch;

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
}
