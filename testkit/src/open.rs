//! What a suite is given to open a backend, and waiting for it.

use socialite_core::backends::Backends;
use socialite_core::feed::config::FeedConfig;
use std::future::Future;
use std::pin::Pin;
use std::time::{Duration, Instant};

/// A backend opened for one test, with whatever keeps it alive (a
/// temporary directory, a database to drop).
pub struct Opened {
    pub backends: Backends,
    _keep: Box<dyn Send + Sync>,
}

impl Opened {
    pub fn new(backends: Backends, keep: impl Send + Sync + 'static) -> Opened {
        Opened {
            backends,
            _keep: Box::new(keep),
        }
    }
}

/// What an [`Opener`] returns.
pub type Opening = Pin<Box<dyn Future<Output = Option<Opened>> + Send>>;

/// Opens a fresh backend with `feed` for the test named (storage of its
/// own); `None` skips the test, as when a server the backend needs is not
/// given. The differential test needs a log that rewinds (its replays).
pub type Opener = fn(FeedConfig, &'static str) -> Opening;

/// How long [`eventually`] waits.
const DEADLINE: Duration = Duration::from_secs(20);

/// Polls `check` until it holds; fails the test past a deadline.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let start = Instant::now();
    loop {
        if check().await {
            return;
        }
        assert!(start.elapsed() < DEADLINE, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
