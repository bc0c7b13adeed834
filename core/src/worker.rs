//! The fanout worker loop: poll a batch from the log, apply it to the timeline
//! caches, and only then commit the group's offset (at least once; replays are
//! harmless because every write is idempotent). Commits are spaced: see
//! [`COMMIT_EVERY`].

use crate::error::Result;
use crate::event::Event;
use crate::feed::followers::FollowerIndex;
use crate::feed::{fanout, Stores};
use crate::health::Joined;
use crate::live::concerns_home;
use crate::metrics::metrics;
use crate::ports::{AppliedFeed, EventLog, LogConsumer};
use crate::shutdown::Shutdown;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument;

#[derive(Debug, Clone)]
pub struct WorkerConfig {
    /// Consumer group; workers in one group share the log.
    pub group: String,
    /// Most events per batch.
    pub batch: usize,
    /// How long a batch that has events waits for more to fill it.
    pub linger: Duration,
    /// Most targets the follower index holds ([`FollowerIndex::new`]).
    pub follower_index_targets: usize,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            group: "fanout".into(),
            batch: 1000,
            linger: Duration::from_millis(2),
            follower_index_targets: crate::feed::followers::DEFAULT_TARGETS,
        }
    }
}

const POLL_WAIT: Duration = Duration::from_millis(500);
/// Applied batches' offsets are committed once the log has nothing more
/// waiting, and under a steady load at least this often, not after every
/// batch: a commit waits behind the log's own writes (on the embedded log,
/// behind the relay's synced append), and the events arriving meanwhile
/// would wait with it. What a crash replays is harmless (at least once).
const COMMIT_EVERY: Duration = Duration::from_millis(100);
/// How long a poll waits for more events while a commit is owed.
const OWED_WAIT: Duration = Duration::from_millis(5);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long a batch being applied when shutdown begins may still take; a
/// batch held up longer (by a store that does not answer) is left to the
/// log, which delivers it again.
const FINISH_ON_SHUTDOWN: Duration = Duration::from_secs(3);

/// Completes [`FINISH_ON_SHUTDOWN`] after shutdown begins.
async fn finish_window(mut shutdown: Shutdown) {
    shutdown.wait().await;
    tokio::time::sleep(FINISH_ON_SHUTDOWN).await;
}

/// Runs until `shutdown` fires. A batch in progress is finished and committed
/// first, unless its store holds it up past [`FINISH_ON_SHUTDOWN`]; a
/// failing batch is retried (never skipped) with backoff until it applies
/// or shutdown begins (it then stays on the log, uncommitted). `joined`
/// tells readiness probes that the worker holds its place in the group.
pub async fn run_worker(
    stores: Stores,
    log: Arc<dyn EventLog>,
    applied: Arc<dyn AppliedFeed>,
    config: WorkerConfig,
    joined: Joined,
    mut shutdown: Shutdown,
) -> Result<()> {
    let mut consumer = log.consumer(&config.group).await?;
    let followers = FollowerIndex::new(config.follower_index_targets);
    load_ahead(&stores, &followers).await;
    let mut applied_since_load = false;
    joined.set(true);
    tracing::info!(group = %config.group, batch = config.batch, "fanout worker joined its group");
    // Expired timelines are swept between batches, at most this often.
    let sweep_every = Duration::from_millis(
        stores
            .feed
            .freshness()
            .refresh_every_ms()
            .clamp(1000, 60_000),
    );
    let mut swept = Instant::now();
    // When the oldest applied batch not yet committed was applied.
    let mut owed: Option<Instant> = None;
    loop {
        let wait = if owed.is_some() { OWED_WAIT } else { POLL_WAIT };
        let polled = tokio::select! {
            _ = shutdown.wait() => break,
            polled = consumer.poll(config.batch, wait, config.linger) => polled,
        };
        // Lists of authors on partitions this worker did not hold may have
        // missed follow events: reload them from the graph store. Lists
        // loaded since the last event applied are as fresh as a reload (the
        // first assignment comes right after the load at start).
        if consumer.reassigned() && applied_since_load {
            followers.clear();
            tracing::info!(group = %config.group, "partitions reassigned; follower index cleared");
            load_ahead(&stores, &followers).await;
            applied_since_load = false;
        }
        let events = match polled {
            Ok(events) => events,
            Err(e) => {
                tracing::warn!(error = %e.chain(), "polling the log failed");
                if !shutdown.pause(Duration::from_millis(200)).await {
                    break;
                }
                continue;
            }
        };
        if !events.is_empty() {
            applied_since_load = true;
            observe_taken(&events);
            if !apply_until_done(&stores, &followers, &events, &mut shutdown).await {
                // Committing now would skip the batch: it stays on the log,
                // with whatever was applied but not committed before it.
                joined.set(false);
                tracing::info!(group = %config.group, "fanout worker stopped before its batch applied; the log delivers it again");
                return Ok(());
            }
            publish_applied(&*applied, &events).await;
            owed.get_or_insert_with(Instant::now);
        }
        if owed.is_some_and(|since| events.is_empty() || since.elapsed() >= COMMIT_EVERY) {
            if !commit_until_done(&mut *consumer, &mut shutdown).await {
                joined.set(false);
                tracing::info!(group = %config.group, "fanout worker stopped before its offset was committed; the log delivers those events again");
                return Ok(());
            }
            owed = None;
        }
        if let Ok(backlog) = consumer.backlog().await {
            metrics().log_backlog.set(backlog as i64);
            followers.note_backlog(backlog / config.batch.max(1) as u64);
        }
        if swept.elapsed() >= sweep_every {
            swept = Instant::now();
            match stores.timelines.expire().await {
                Ok(0) => {}
                Ok(n) => tracing::info!(dropped = n, "expired timelines dropped"),
                Err(e) => tracing::warn!(error = %e.chain(), "dropping expired timelines failed"),
            }
        }
    }
    joined.set(false);
    // Everything polled was applied: one try to record it (a failure only
    // means those events are delivered again).
    if let Err(e) = consumer.commit().await {
        tracing::warn!(error = %e.chain(), "the last offset commit failed; the log delivers those events again");
    }
    Ok(())
}

/// Commits the consumer's offset, retrying with backoff until it succeeds
/// or `shutdown` fires (false: not committed).
async fn commit_until_done(consumer: &mut dyn LogConsumer, shutdown: &mut Shutdown) -> bool {
    let mut backoff = Duration::from_millis(200);
    loop {
        match consumer.commit().await {
            Ok(()) => return true,
            Err(e) => {
                tracing::warn!(error = %e.chain(), retry_in_ms = backoff.as_millis() as u64, "committing the log offset failed");
                if !shutdown.pause(backoff).await {
                    return false;
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}

/// Loads the most followed accounts' follower lists into the empty index,
/// before any event is applied (so no follow event can pass a list being
/// loaded). Failing only costs their first posts the load: it is logged.
async fn load_ahead(stores: &Stores, followers: &FollowerIndex) {
    if !stores.stores_timelines() {
        return;
    }
    let started = Instant::now();
    let threshold = followers.hybrid_threshold(stores.feed.hybrid);
    match followers.load_ahead(stores, threshold).await {
        Ok(0) => {}
        Ok(n) => tracing::info!(
            accounts = n,
            ms = started.elapsed().as_millis() as u64,
            "follower lists of the most followed accounts loaded"
        ),
        Err(e) => tracing::warn!(error = %e.chain(), "loading the largest follower lists failed"),
    }
}

/// Records how long the batch's posts waited before fanout took them: with
/// `post_visible`, it tells the log's share of freshness from fanout's.
fn observe_taken(events: &[Event]) {
    let now = crate::ids::now_ms();
    for e in events {
        if let Event::PostCreated { post, .. } = e {
            metrics()
                .post_taken
                .observe(now.saturating_sub(post.id.unix_ms()) as f64 / 1000.0);
        }
    }
}

/// Tells the processes that push live timelines what is now in the
/// timelines. Best effort: a stream that misses it resumes from the
/// timeline itself.
async fn publish_applied(applied: &dyn AppliedFeed, events: &[Event]) {
    let live: Vec<Event> = events
        .iter()
        .filter(|e| concerns_home(e))
        .cloned()
        .collect();
    if live.is_empty() {
        return;
    }
    if let Err(e) = applied.publish(&live).await {
        tracing::warn!(error = %e.chain(), "publishing applied events for live timelines failed");
    }
}

/// With traces exported: links the batch's span to every post it carries
/// and opens, in each post's own trace, the span of its delivery.
fn delivery_spans(batch: &tracing::Span, events: &[Event]) -> Vec<tracing::Span> {
    let Some(hooks) = crate::trace::hooks() else {
        return Vec::new();
    };
    if let Some(id) = (hooks.trace_id)(batch) {
        batch.record("trace_id", tracing::field::display(id));
    }
    events
        .iter()
        .filter_map(|e| match e {
            Event::PostCreated { post, trace } => Some((post, trace.parent()?)),
            _ => None,
        })
        .map(|(post, parent)| {
            (hooks.link)(batch, parent);
            let span = tracing::info_span!(parent: None, "fanout.deliver", post = %post.id, author = %post.author);
            (hooks.set_parent)(&span, parent);
            span
        })
        .collect()
}

/// Applies a batch, retrying with backoff until it succeeds (true) or
/// `shutdown` fires (false): skipping it would lose deliveries, and every
/// write in it is idempotent.
async fn apply_until_done(
    stores: &Stores,
    followers: &FollowerIndex,
    events: &[Event],
    shutdown: &mut Shutdown,
) -> bool {
    let span = tracing::info_span!(
        "fanout_batch",
        events = events.len(),
        first_key = %events[0].key(),
        trace_id = tracing::field::Empty
    );
    // Ended when the batch is applied.
    let _deliveries = delivery_spans(&span, events);
    let mut backoff = Duration::from_millis(50);
    loop {
        let started = Instant::now();
        let attempt = fanout::apply(stores, followers, events).instrument(span.clone());
        let outcome = tokio::select! {
            outcome = attempt => outcome,
            _ = finish_window(shutdown.clone()) => return false,
        };
        match outcome {
            Ok(stats) => {
                let m = metrics();
                m.fanout_batches.inc();
                m.fanout_events.inc_by(stats.events as u64);
                m.fanout_deliveries.inc_by(stats.delivered as u64);
                m.fanout_skipped_dormant
                    .inc_by((stats.candidates - stats.delivered) as u64);
                m.fanout_hybrid_skipped.inc_by(stats.hybrid_skipped as u64);
                m.fanout_batch_duration
                    .observe(started.elapsed().as_secs_f64());
                span.in_scope(|| {
                    tracing::debug!(
                        candidates = stats.candidates,
                        delivered = stats.delivered,
                        micros = started.elapsed().as_micros() as u64,
                        "fanout batch applied"
                    )
                });
                return true;
            }
            Err(e) => {
                span.in_scope(|| {
                    tracing::warn!(error = %e.chain(), retry_in_ms = backoff.as_millis() as u64, "fanout batch failed")
                });
                if !shutdown.pause(backoff).await {
                    return false;
                }
                backoff = (backoff * 2).min(MAX_BACKOFF);
            }
        }
    }
}
