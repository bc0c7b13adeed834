//! The catch-up run (`--fanout-stopped SECS`, in-process target): the
//! pipeline starts without its fanout worker, the run's writes pile up on
//! the log, and after SECS a worker starts (at the background priority
//! `socialite up` gives it) while the writes go on. What it reports: the
//! backlog the worker found, how long it took to bring the backlog down to
//! one batch, and its drain rate as a multiple of the ingest rate that
//! piled the backlog up.

use serde_json::{json, Value};
use socialite_core::health::Joined;
use socialite_core::shutdown::{self, ShutdownTrigger};
use socialite_core::worker::run_worker;
use socialite_runtime::App;
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;

/// A worker that starts late, and what it found and did.
pub struct CatchUp {
    stop: ShutdownTrigger,
    measured: JoinHandle<Value>,
}

/// How often the group's place is read while the worker catches up.
const EVERY: Duration = Duration::from_millis(100);

impl CatchUp {
    /// Starts the worker `after` from now, in the app's process.
    pub fn start(app: &App, config: &socialite_runtime::AppConfig, after: Duration) -> CatchUp {
        let (stop, stopped) = shutdown::channel();
        let (stores, log, applied) = (
            app.backends.stores(),
            app.backends.log.clone(),
            app.backends.applied.clone(),
        );
        let worker = config.worker.clone();
        let measured = tokio::spawn(async move {
            let group = worker.group.clone();
            let begun = log.position(&group).await.map(|p| p.end()).unwrap_or(0);
            tokio::time::sleep(after).await;
            let batch = worker.batch as u64;
            let at_start = log.position(&group).await.map_err(|e| e.chain());
            let started = Instant::now();
            let running = socialite_runtime::background::spawn_background(
                "fanout",
                run_worker(
                    stores,
                    log.clone(),
                    applied,
                    worker,
                    Joined::default(),
                    stopped,
                ),
            );
            let at_start = match at_start {
                Ok(p) => p,
                Err(e) => return json!({ "error": e }),
            };
            let drained = loop {
                match log.position(&group).await {
                    Ok(p) if p.backlog() <= batch => break p,
                    Ok(_) => {}
                    Err(e) => return json!({ "error": e.chain() }),
                }
                if running.is_finished() || started.elapsed() > Duration::from_secs(3600) {
                    return json!({ "error": "the worker stopped before it caught up" });
                }
                tokio::time::sleep(EVERY).await;
            };
            let secs = started.elapsed().as_secs_f64();
            let applied = drained.committed() - at_start.committed();
            let ingested = drained.end() - at_start.end();
            let (drain, ingest) = (applied as f64 / secs, ingested as f64 / secs);
            // The ingest rate the outage piled up: the writes go on at it
            // until the run ends, which may come before the drain does.
            let piled = at_start.end().saturating_sub(begun) as f64 / after.as_secs_f64();
            json!({
                "ingest_per_s_while_stopped": piled.round(),
                "stopped_s": after.as_secs_f64(),
                "backlog_at_start": at_start.backlog(),
                "drain_s": (secs * 100.0).round() / 100.0,
                "applied": applied,
                "drain_per_s": drain.round(),
                "ingest_per_s_while_draining": ingest.round(),
                "multiple_of_ingest": if piled > 0.0 { json!((drain / piled * 100.0).round() / 100.0) } else { Value::Null },
            })
        });
        CatchUp { stop, measured }
    }

    /// What the worker found and did; stops it.
    pub async fn finish(self) -> Value {
        let measured = self
            .measured
            .await
            .unwrap_or_else(|e| json!({ "error": e.to_string() }));
        self.stop.trigger();
        measured
    }
}
