//! Freshness has a bound, and the producer defends it: a post is visible
//! once fanout has applied it, so how long a new event would wait behind
//! the fanout group's backlog is how late its followers would see it. The
//! producer watches the group's place on the log ([`EventLog::position`]),
//! estimates that wait from the backlog and the rate the group has been
//! committing at, and sheds writes before their deliveries could be late.
//! Past the target (where shedding has not held the line: a stalled
//! worker, a failover, a catch-up), reads merge what fanout has not
//! delivered ([`crate::feed::late`]), found by the same watch.
//!
//! Shedding is gradual: past two fifths of the freshness target a share of
//! new writes is refused (503 `overloaded` with `Retry-After`), growing to
//! all of them at four fifths, so accepted writes arrive at about the rate
//! fanout delivers and each is delivered within the target. What is refused was
//! never acknowledged; what was acknowledged is on the log and delivered.
//! Deletions and account safety acts are never shed: they take content
//! away, and a reader must not keep seeing what its author removed.
//!
//! The estimate, every [`SAMPLE_EVERY`]: the backlog divided by the drain
//! rate, which is measured only while there was a backlog to drain (when
//! the group keeps up, its rate is the producers', not what it could do)
//! and the group committed something. While it commits nothing (between
//! commits, or a partition waiting for its consumer's failover) the rate
//! stands, so the lag grows with the writes taken meanwhile, not with the
//! clock: a stalled group with no writes coming needs none refused.

use crate::budgets::Cost;
use crate::error::{Error, ErrorKind, Result};
use crate::feed::late::{Cuts, Late};
use crate::metrics::metrics;
use crate::ports::{EventLog, LogPosition, Outbox};
use crate::shutdown::Shutdown;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the group's place is read.
pub const SAMPLE_EVERY: Duration = Duration::from_millis(250);
/// The default freshness target: post -> visible, at the 99th percentile.
pub const DEFAULT_FRESHNESS_TARGET: Duration = Duration::from_secs(5);
/// How much each new rate sample weighs in the drain rate.
const RATE_WEIGHT: f64 = 0.3;
/// Longest `Retry-After` a shed write is given.
const MAX_RETRY: u64 = 30;

/// Fanout's lag as this producer last saw it, and whether to shed.
pub struct Load {
    /// The freshness target; zero never sheds.
    target: Duration,
    /// Estimated wait of a new event, milliseconds.
    lag_ms: AtomicU64,
    /// Share of new writes refused, in millionths.
    shed_ppm: AtomicU64,
    /// Picks which writes are refused (a counter through a mixer: evenly
    /// spread, no randomness needed).
    draws: AtomicU64,
    /// Where reads merge what fanout has not delivered, set by the watch.
    late: Arc<Late>,
}

impl Load {
    pub fn new(target: Duration, late: Arc<Late>) -> Load {
        Load {
            target,
            lag_ms: AtomicU64::new(0),
            shed_ppm: AtomicU64::new(0),
            draws: AtomicU64::new(0),
            late,
        }
    }

    /// Where reads merge what fanout has not delivered.
    pub fn late(&self) -> &Arc<Late> {
        &self.late
    }

    pub fn target(&self) -> Duration {
        self.target
    }

    /// The estimated wait of an event appended now.
    pub fn lag(&self) -> Duration {
        Duration::from_millis(self.lag_ms.load(Relaxed))
    }

    /// Takes the write, or refuses it as its share of the shedding.
    pub fn admit(&self, cost: Cost) -> Result<()> {
        if cost == Cost::Delete {
            return Ok(());
        }
        let ppm = self.shed_ppm.load(Relaxed);
        if ppm == 0 {
            return Ok(());
        }
        let draw = mix(self.draws.fetch_add(1, Relaxed)) % 1_000_000;
        if draw >= ppm {
            return Ok(());
        }
        metrics()
            .writes_shed
            .get_or_create(&crate::reads_first::shed_for("lag"))
            .inc();
        let lag = self.lag();
        let retry = lag
            .saturating_sub(self.target.mul_f64(SHED_FROM))
            .as_secs()
            .clamp(1, MAX_RETRY);
        Err(Error::new(
            ErrorKind::Unavailable,
            "overloaded",
            format!(
                "writes come faster than fanout delivers them (a new post would be seen {:.1} s late; the target is {} s): this one was not taken; retry in {retry} s",
                lag.as_secs_f64(),
                self.target.as_secs_f64()
            ),
        )
        .retry_after(retry))
    }

    /// Sets the lag and the share shed from it.
    fn set_lag(&self, lag: Duration) {
        self.lag_ms.store(lag.as_millis() as u64, Relaxed);
        let ppm = shed_share(lag, self.target);
        self.shed_ppm.store(ppm, Relaxed);
        metrics().fanout_lag.set(lag.as_secs_f64());
        metrics().shed_share.set(ppm as f64 / 1e6);
    }

    /// Reads `group`'s place on `log` every [`SAMPLE_EVERY`] until
    /// `shutdown`, after the events waiting in `outbox`: the lag, and
    /// where reads merge what fanout has not delivered
    /// ([`crate::feed::late`]). A store or log that does not answer leaves
    /// the last estimate (its outbox holds the writes meanwhile; that is
    /// not fanout's lag).
    pub async fn watch(
        self: Arc<Self>,
        log: Arc<dyn EventLog>,
        outbox: Arc<dyn Outbox>,
        group: String,
        mut shutdown: Shutdown,
    ) {
        let (mut estimate, mut cuts) = (Estimate::default(), Cuts::default());
        let late_after = self.target.mul_f64(LATE_FROM);
        loop {
            let at_ms = unix_ms();
            let reading =
                async { Ok::<_, Error>((outbox.backlog().await?, log.position(&group).await?)) };
            match reading.await {
                Ok((pending, position)) => {
                    self.set_lag(estimate.next(&position, Instant::now()));
                    let behind = cuts.next(at_ms, pending, &position);
                    behind.report();
                    self.late.set(behind.merge_from(late_after));
                }
                Err(e) => {
                    tracing::debug!(error = %e.chain(), "reading fanout's place on the log failed")
                }
            }
            if !shutdown.pause(SAMPLE_EVERY).await {
                return;
            }
        }
    }
}

/// Milliseconds since the Unix epoch, as post ids count them.
fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// From this share of the target behind, reads merge what fanout has not
/// delivered: once the target itself is missed, where shedding every write
/// has not held the line (a stalled or failed-over worker, a catch-up).
/// Not sooner: a merge per read costs the CPU that fanout needs to catch
/// up, so merging while fanout is merely slow made it slower still (on
/// the overload row, reads went from cached to merged and fanout's lag
/// doubled).
const LATE_FROM: f64 = 1.0;

/// Where shedding starts and where it refuses everything, as shares of
/// the target: the lag then settles between them, and the fifth above
/// leaves room for how much a post's wait varies about the estimate.
const SHED_FROM: f64 = 0.4;
const SHED_ALL: f64 = 0.8;

/// The share of writes to refuse at `lag`, in millionths: none up to
/// [`SHED_FROM`] of the target, all from [`SHED_ALL`] of it, in proportion
/// between.
fn shed_share(lag: Duration, target: Duration) -> u64 {
    if target.is_zero() {
        return 0;
    }
    let (from, all) = (
        target.as_secs_f64() * SHED_FROM,
        target.as_secs_f64() * SHED_ALL,
    );
    let over = (lag.as_secs_f64() - from) / (all - from);
    (over.clamp(0.0, 1.0) * 1e6).round() as u64
}

/// A 64-bit mixer (SplitMix64's finaliser).
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

/// What successive readings of the group's place tell.
#[derive(Default)]
struct Estimate {
    last: Option<(LogPosition, Instant)>,
    /// The group's committed count when it last moved, and when: a drain
    /// rate spans from there, so a sample between two commits (a batch
    /// can take longer than a sample) neither counts as a stop nor leaves
    /// the rate reckoned from the busy samples alone.
    moved: Option<(u64, Instant)>,
    /// Events a second the group commits while it has a backlog.
    rate: Option<f64>,
    /// The most it committed in a second while keeping up: what it was
    /// given, so at most what it can do (a lag reckoned from it is not
    /// shorter than the true one). Used until `rate` is known.
    kept_up: f64,
}

impl Estimate {
    fn next(&mut self, now_at: &LogPosition, now: Instant) -> Duration {
        if let Some((before, then)) = self.last.take() {
            if before.backlog() == 0 {
                // A drain starts where the backlog did.
                self.moved = Some((before.committed(), then));
            }
            let done = now_at.committed().saturating_sub(before.committed());
            if done > 0 {
                self.sample(&before, then, now_at, now);
                self.moved = Some((now_at.committed(), now));
            }
        }
        self.last = Some((now_at.clone(), now));
        let rate = self.rate.unwrap_or(self.kept_up);
        if rate <= 0.0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64((now_at.backlog() as f64 / rate).min(86_400.0))
    }

    /// Takes the rate of a move from `before` to `now_at`.
    fn sample(&mut self, before: &LogPosition, then: Instant, now_at: &LogPosition, now: Instant) {
        if before.backlog() == 0 {
            let secs = now.duration_since(then).as_secs_f64();
            if secs > 0.0 {
                let done = now_at.committed() - before.committed();
                self.kept_up = self.kept_up.max(done as f64 / secs);
            }
            return;
        }
        let Some((from, since)) = self.moved else {
            return;
        };
        let secs = now.duration_since(since).as_secs_f64();
        if secs <= 0.0 {
            return;
        }
        let sample = now_at.committed().saturating_sub(from) as f64 / secs;
        self.rate = Some(match self.rate {
            Some(r) => r + RATE_WEIGHT * (sample - r),
            None => sample,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(committed: u64, end: u64) -> LogPosition {
        LogPosition::single(committed, end)
    }

    #[test]
    fn the_lag_is_the_backlog_over_the_rate_it_drains_at() {
        let mut e = Estimate::default();
        let t0 = Instant::now();
        let s = |n: u64| t0 + Duration::from_millis(250 * n);
        let ms = |d: Duration| d.as_millis();
        // Keeping up: no lag, whatever the rate.
        assert_eq!(e.next(&at(0, 0), s(0)), Duration::ZERO);
        assert_eq!(e.next(&at(100, 100), s(1)), Duration::ZERO);
        // A backlog builds: until the rate it drains at is known, the lag
        // is reckoned from what it kept up with (400 a second).
        assert_eq!(ms(e.next(&at(100, 2000), s(2))), 4750);
        // It drains 250 in the half second since it last moved: 500/s.
        assert_eq!(ms(e.next(&at(350, 4350), s(3))), 8000);
        // A batch takes longer than a sample: a sample with no commit
        // changes nothing, and the next commit counts over both.
        assert_eq!(ms(e.next(&at(350, 4350), s(4))), 8000);
        // 500 in the half second since: 1,000/s, weighed in (650/s).
        assert_eq!(ms(e.next(&at(850, 4850), s(5))), 6153);
        // The group stops committing: its rate stands, and the backlog
        // that grows with each write taken raises the lag; the clock alone
        // does not.
        for n in 6..=20 {
            assert_eq!(ms(e.next(&at(850, 4850), s(n))), 6153);
        }
        assert_eq!(ms(e.next(&at(850, 7350), s(40))), 10_000);
    }

    #[test]
    fn a_share_of_writes_is_shed_from_two_fifths_of_the_target_to_all_at_four() {
        let target = Duration::from_secs(4);
        assert_eq!(shed_share(Duration::from_secs(1), target), 0);
        assert_eq!(shed_share(Duration::from_millis(2400), target), 500_000);
        assert_eq!(shed_share(Duration::from_millis(3200), target), 1_000_000);
        assert_eq!(shed_share(Duration::from_secs(9), Duration::ZERO), 0);
        let load = Load::new(target, Arc::default());
        load.set_lag(Duration::from_millis(2400));
        let refused: Vec<Error> = (0..10_000)
            .filter_map(|_| load.admit(Cost::Create).err())
            .collect();
        assert!((4_500..5_500).contains(&refused.len()), "{}", refused.len());
        assert_eq!(refused[0].code(), "overloaded");
        assert_eq!(refused[0].retry_after_secs(), Some(1));
        load.set_lag(Duration::from_secs(60));
        assert!(load.admit(Cost::Update).is_err());
        assert!(load.admit(Cost::Delete).is_ok(), "deletions are never shed");
        assert_eq!(
            load.admit(Cost::Create).unwrap_err().retry_after_secs(),
            Some(MAX_RETRY)
        );
        load.set_lag(Duration::ZERO);
        assert!((0..1000).all(|_| load.admit(Cost::Create).is_ok()));
    }
}
