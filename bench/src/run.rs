//! The benchmark driver: warms up a share of active users, then runs the
//! operation mix with a given concurrency, flat out or at a target rate, for a
//! duration or an operation count, recording every latency in HDR histograms,
//! while a probe measures how long a post by the most followed account takes
//! to become readable by a follower.

use crate::load::user_name;
use crate::progress::Progress;
use crate::scrape::metric_sum;
use crate::target::Target;
use crate::workload::{Kind, Mix, KINDS, KIND_COUNT};
use hdrhistogram::Histogram;
use socialite_core::sim::{Rng, Zipf};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How a run is shaped.
#[derive(Debug, Clone)]
pub struct Plan {
    pub users: usize,
    pub zipf: f64,
    pub seed: u64,
    pub mix: Mix,
    pub concurrency: usize,
    pub duration: Duration,
    /// Stop after this many operations, if set.
    pub ops: Option<u64>,
    /// Operations per second over all workers; 0 runs flat out.
    pub rate: f64,
    /// Share of users activated (read once) before measuring.
    pub active: f64,
    pub page: usize,
    pub probe_interval: Duration,
    /// Groups of the network (`g0` ...), for group reads.
    pub groups: usize,
}

/// Latencies in microseconds, overall and per second of the run.
pub struct Recorded {
    pub overall: Vec<Histogram<u64>>,
    pub per_second: Vec<Vec<Histogram<u64>>>,
    pub errors: [u64; KIND_COUNT],
    /// Refused as the server should under load (429 or 503 with
    /// `Retry-After`: see [`crate::target::REFUSED`]), not errors.
    pub refused: [u64; KIND_COUNT],
    pub first_errors: Vec<String>,
    pub elapsed: Duration,
    pub probe: Histogram<u64>,
    pub probe_timeouts: u64,
    /// The target's metrics when the measured run ended, before the probe
    /// and the reporter are joined: the server's counters over `elapsed`.
    pub metrics_at_end: Result<String, String>,
}

fn histogram(sigfig: u8) -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000, sigfig).expect("valid bounds")
}

fn histograms(sigfig: u8) -> Vec<Histogram<u64>> {
    KINDS.iter().map(|_| histogram(sigfig)).collect()
}

/// Every worker's latencies, in one set of histograms. A set per worker
/// would cost each of them 2 MiB of counters (eleven kinds, three
/// significant figures, up to an hour), which 64 workers zeroed in the
/// run's first second, on the cores that an in-process target shares:
/// that stalled the engine and showed as the run's worst latencies.
#[derive(Default)]
struct Latencies {
    overall: Vec<Histogram<u64>>,
    per_second: Vec<Vec<Histogram<u64>>>,
}

impl Latencies {
    fn record(&mut self, kind: Kind, second: usize, micros: u64) {
        while self.per_second.len() <= second {
            self.per_second.push(histograms(2));
        }
        self.overall[kind.index()].saturating_record(micros);
        self.per_second[second][kind.index()].saturating_record(micros);
    }
}

/// Users that read: a seeded sample of `share` of all users.
pub fn active_users(plan: &Plan) -> Vec<String> {
    let mut rng = Rng::new(plan.seed ^ 0xAC7);
    let want = ((plan.users as f64) * plan.active).round() as usize;
    let mut picked: Vec<usize> = (0..plan.users)
        .filter(|_| rng.unit() < plan.active)
        .collect();
    picked.truncate(want.max(1));
    picked.into_iter().map(user_name).collect()
}

/// Reads each active user's timeline once, so that they have a stored timeline.
pub async fn warm_up(
    target: Arc<dyn Target>,
    active: &[String],
    concurrency: usize,
) -> Result<(), String> {
    let next = Arc::new(AtomicU64::new(0));
    let users = Arc::new(active.to_vec());
    let progress = Arc::new(Mutex::new(Progress::new("activate", active.len() as u64)));
    let mut tasks = Vec::new();
    for _ in 0..concurrency.max(1) {
        let (t, next, users, progress) = (
            target.clone(),
            next.clone(),
            users.clone(),
            progress.clone(),
        );
        tasks.push(tokio::spawn(async move {
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed) as usize;
                let Some(u) = users.get(i) else {
                    return Ok::<_, String>(());
                };
                t.timeline(u, 1, None)
                    .await
                    .map_err(|e| format!("activating {u}: {e}"))?;
                progress.lock().unwrap().add(1);
            }
        }));
    }
    for t in tasks {
        t.await.map_err(|e| e.to_string())??;
    }
    if let Ok(p) = Arc::try_unwrap(progress) {
        p.into_inner().unwrap_or_else(|e| e.into_inner()).finish();
    }
    Ok(())
}

struct Shared {
    plan: Plan,
    target: Arc<dyn Target>,
    active: Vec<String>,
    zipf: Zipf,
    start: Instant,
    tickets: AtomicU64,
    done: AtomicU64,
    stop: AtomicBool,
    latencies: Mutex<Latencies>,
    /// The latest posts of the run (at most [`RECENT_POSTS`]), which likes
    /// pick from.
    recent: Mutex<VecDeque<String>>,
}

/// How many of the run's latest posts likes pick from.
const RECENT_POSTS: usize = 1024;

pub async fn run(
    target: Arc<dyn Target>,
    plan: Plan,
    active: Vec<String>,
    probe_user: String,
) -> Recorded {
    // Allocated before the clock starts: the first seconds' histograms too.
    let latencies = Latencies {
        overall: histograms(3),
        per_second: (0..2).map(|_| histograms(2)).collect(),
    };
    let shared = Arc::new(Shared {
        zipf: Zipf::new(plan.users, plan.zipf),
        target: target.clone(),
        active,
        start: Instant::now(),
        tickets: AtomicU64::new(0),
        done: AtomicU64::new(0),
        stop: AtomicBool::new(false),
        latencies: Mutex::new(latencies),
        recent: Mutex::new(VecDeque::with_capacity(RECENT_POSTS)),
        plan: plan.clone(),
    });
    let probe = tokio::spawn(probe_loop(shared.clone(), probe_user));
    let reporter = tokio::spawn(report_progress(shared.clone()));
    let mut workers = Vec::new();
    for w in 0..plan.concurrency.max(1) {
        workers.push(tokio::spawn(worker(shared.clone(), w as u64)));
    }
    let mut errors = [0u64; KIND_COUNT];
    let mut refused = [0u64; KIND_COUNT];
    let mut first_errors = Vec::new();
    for w in workers {
        let counts = w.await.expect("a worker panicked");
        for i in 0..KIND_COUNT {
            errors[i] += counts.errors[i];
            refused[i] += counts.refused[i];
        }
        first_errors.extend(counts.messages);
    }
    let elapsed = shared.start.elapsed();
    // Fanout goes on draining its backlog after the clients stop; what it
    // does then is not the run's.
    let metrics_at_end = target.metrics().await;
    shared.stop.store(true, Ordering::Relaxed);
    let _ = reporter.await;
    let (probe, probe_timeouts) = probe.await.expect("the probe panicked");
    first_errors.truncate(5);
    let Latencies {
        overall,
        mut per_second,
    } = std::mem::take(&mut *shared.latencies.lock().unwrap());
    // The seconds allocated ahead that the run did not reach.
    let reached = elapsed.as_secs_f64().ceil() as usize;
    per_second.truncate(reached.max(1));
    Recorded {
        overall,
        per_second,
        errors,
        refused,
        first_errors,
        elapsed,
        probe,
        probe_timeouts,
        metrics_at_end,
    }
}

/// A worker's failures: errors, refusals under load, the first messages.
#[derive(Default)]
struct Failures {
    errors: [u64; KIND_COUNT],
    refused: [u64; KIND_COUNT],
    messages: Vec<String>,
}

async fn worker(s: Arc<Shared>, id: u64) -> Failures {
    let mut rng = Rng::new(s.plan.seed.wrapping_mul(1_000_003).wrapping_add(id));
    let mut f = Failures::default();
    loop {
        let ticket = s.tickets.fetch_add(1, Ordering::Relaxed);
        if s.plan.ops.is_some_and(|n| ticket >= n) || s.start.elapsed() >= s.plan.duration {
            break;
        }
        // At a target rate each operation has its slot; latency counts from
        // the slot, so a slow server cannot hide queueing (coordinated omission).
        let intended = if s.plan.rate > 0.0 {
            let at = s.start + Duration::from_secs_f64(ticket as f64 / s.plan.rate);
            tokio::time::sleep_until(at.into()).await;
            at
        } else {
            Instant::now()
        };
        let kind = s.plan.mix.kind(rng.below(100) as u32);
        let outcome = operate(&s, kind, &mut rng).await;
        let micros = intended.elapsed().as_micros().max(1) as u64;
        match outcome {
            Ok(()) => {
                let second = s.start.elapsed().as_secs() as usize;
                s.latencies.lock().unwrap().record(kind, second, micros);
            }
            Err(e) if e.starts_with(crate::target::REFUSED) => f.refused[kind.index()] += 1,
            Err(e) => {
                f.errors[kind.index()] += 1;
                if f.messages.len() < 5 {
                    f.messages.push(format!("{}: {e}", kind.name()));
                }
            }
        }
        s.done.fetch_add(1, Ordering::Relaxed);
    }
    f
}

async fn operate(s: &Shared, kind: Kind, rng: &mut Rng) -> Result<(), String> {
    let t = &s.target;
    let mut reader = || s.active[rng.below(s.active.len())].clone();
    match kind {
        Kind::Post => {
            let author = user_name(s.zipf.pick(rng));
            let id = t
                .post(
                    &author,
                    "a benchmark post of an ordinary length, about eighty characters",
                )
                .await?;
            let mut recent = s.recent.lock().unwrap();
            if recent.len() == RECENT_POSTS {
                recent.pop_front();
            }
            recent.push_back(id);
            Ok(())
        }
        Kind::Like => {
            let user = reader();
            // No post made yet in this run: nothing to like.
            let Some(post) = recent_post(s, rng) else {
                return Ok(());
            };
            t.like(&user, &post).await
        }
        Kind::Repost => {
            let user = user_name(s.zipf.pick(rng));
            let Some(post) = recent_post(s, rng) else {
                return Ok(());
            };
            // Reposting one's own post is refused: an answer, not a failure.
            match t.repost(&user, &post).await {
                Err(e) if e.contains("cannot_repost_own") => Ok(()),
                other => other,
            }
        }
        // The accounts the run's acts are addressed to are the ones posts
        // pick (likes and reposts of their posts, follows of them): their
        // pages are full, where a reader picked at random has none.
        Kind::Notifications => {
            let user = user_name(s.zipf.pick(rng));
            t.notifications(&user, s.plan.page).await.map(|_| ())
        }
        Kind::Read => t.timeline(&reader(), s.plan.page, None).await.map(|_| ()),
        Kind::Balanced => t.balanced(&reader(), s.plan.page).await.map(|_| ()),
        // The workload's unfollows may empty a reader's list: reading a list
        // that no longer exists is an answer, not a failure.
        Kind::List => match t
            .list_timeline(&reader(), crate::load::BENCH_LIST, s.plan.page)
            .await
        {
            Err(e) if e.contains("list_not_found") => Ok(()),
            other => other.map(|_| ()),
        },
        Kind::Group => {
            let group = crate::load::group_name(rng.below(s.plan.groups));
            t.group_timeline(&group, s.plan.page).await.map(|_| ())
        }
        Kind::Mention => t.mentions(&reader(), s.plan.page).await.map(|_| ()),
        Kind::Scroll => {
            let user = reader();
            let (_, next) = t.timeline(&user, s.plan.page, None).await?;
            match next {
                Some(cursor) => t
                    .timeline(&user, s.plan.page, Some(&cursor))
                    .await
                    .map(|_| ()),
                None => Ok(()),
            }
        }
        Kind::Follow | Kind::Unfollow => {
            let user = reader();
            let other = user_name(s.zipf.pick(rng));
            if user == other {
                return Ok(());
            }
            if kind == Kind::Follow {
                t.follow(&user, &other).await
            } else {
                t.unfollow(&user, &other).await
            }
        }
    }
}

/// One of the run's latest posts, if it made any.
fn recent_post(s: &Shared, rng: &mut Rng) -> Option<String> {
    let pick = rng.below(RECENT_POSTS);
    let recent = s.recent.lock().unwrap();
    recent.get(pick % recent.len().max(1)).cloned()
}

/// Posts as the most followed account (u0) and polls a follower's first page
/// until the post shows: time from acknowledgement to readable.
async fn probe_loop(s: Arc<Shared>, probe_user: String) -> (Histogram<u64>, u64) {
    let mut h = histogram(3);
    let mut timeouts = 0;
    while !s.stop.load(Ordering::Relaxed) && s.start.elapsed() < s.plan.duration {
        tokio::time::sleep(s.plan.probe_interval).await;
        let Ok(id) = s.target.post(&user_name(0), "probe").await else {
            continue;
        };
        let acked = Instant::now();
        loop {
            if shows(&*s.target, &probe_user, &id).await {
                h.saturating_record(acked.elapsed().as_micros().max(1) as u64);
                break;
            }
            if acked.elapsed() > Duration::from_secs(30) {
                timeouts += 1;
                break;
            }
            // A probe still waiting when the run ends is neither seen nor
            // timed out.
            if s.stop.load(Ordering::Relaxed) {
                break;
            }
            tokio::time::sleep(Duration::from_micros(500)).await;
        }
    }
    (h, timeouts)
}

/// Whether the post shows in the user's timeline: pages through it down to
/// the post's place (the account keeps posting, so it may be below the first
/// page by the time it is delivered).
async fn shows(target: &dyn Target, user: &str, id: &str) -> bool {
    let mut before: Option<String> = None;
    for _ in 0..20 {
        let Ok((ids, next)) = target.timeline(user, 50, before.as_deref()).await else {
            return false;
        };
        // Post ids are fixed-width hex: text order is id order.
        if ids.iter().any(|i| i == id) {
            return true;
        }
        // The cursor is the last entry's position (a repost may show an
        // older post above it): fixed-width hex, compared as text.
        match next {
            Some(n) if n.as_str() > id => before = Some(n),
            _ => return false,
        }
    }
    false
}

async fn report_progress(s: Arc<Shared>) {
    let mut last = 0;
    let mut fanned = fanout_counts(&s).await;
    while !s.stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        let done = s.done.load(Ordering::Relaxed);
        // The server's side of the same second: what fanout delivered and
        // how far the log is behind, so a run shows when its rate moves.
        let now = fanout_counts(&s).await;
        let fanout = match (fanned, now) {
            (Some((d0, e0, _)), Some((d1, e1, backlog))) if d1 > 0.0 => format!(
                "  {:>10} deliveries/s  {:>6} events/s  backlog {backlog}",
                d1 - d0,
                e1 - e0
            ),
            _ => String::new(),
        };
        fanned = now;
        eprintln!(
            "  {:>5.1}s  {:>9} ops  {:>8} ops/s{fanout}",
            s.start.elapsed().as_secs_f64(),
            done,
            done - last
        );
        last = done;
    }
}

/// Fanout's deliveries and events so far and the log's backlog, from the
/// target's metrics (none if they cannot be read).
async fn fanout_counts(s: &Shared) -> Option<(f64, f64, f64)> {
    let text = s.target.metrics().await.ok()?;
    Some((
        metric_sum(&text, "socialite_fanout_deliveries_total"),
        metric_sum(&text, "socialite_fanout_events_total"),
        metric_sum(&text, "socialite_log_backlog_events"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latencies_count_each_operation_once_overall_and_once_in_its_second() {
        let mut l = Latencies {
            overall: histograms(3),
            per_second: vec![histograms(2)],
        };
        l.record(Kind::Post, 0, 1_500);
        l.record(Kind::Read, 0, 300);
        l.record(Kind::Read, 3, 40_000);
        // Seconds not reached yet are added on the way, empty.
        assert_eq!(l.per_second.len(), 4);
        let (post, read) = (Kind::Post.index(), Kind::Read.index());
        assert_eq!(l.overall[post].len(), 1);
        assert_eq!(l.overall[read].len(), 2);
        assert_eq!(l.per_second[0][read].len(), 1);
        assert_eq!(l.per_second[0][post].len(), 1);
        assert!(l.per_second[1..3].iter().flatten().all(|h| h.is_empty()));
        assert_eq!(l.per_second[3][read].len(), 1);
        assert!(l.per_second[3][read].max() >= 39_000);
        // Beyond the histograms' hour, a latency is kept at their top.
        l.record(Kind::Post, 3, u64::MAX);
        assert_eq!(l.overall[post].len(), 2);
    }
}
