//! Reads before writes, where one process serves both: the reads' latency
//! is measured, and when their 99th percentile passes a multiple of what it
//! is while writes are quiet, new writes are admitted at a lower rate
//! (refused beyond it with 503 `overloaded` and `Retry-After`), until the
//! reads are back within it. Writes cost the process far more than what
//! their requests take: the commit, and fanout's deliveries to every
//! follower; on a machine the reads share, that CPU is the reads' tail.
//! The priorities ([`crate::priority`]) decide who waits; this decides how
//! much work is let in to wait for.
//!
//! A window of [`TICK`]: every read's time (REST `GET`, gRPC `Reads`) falls
//! into a histogram, read and cleared each tick; the writes offered and
//! admitted in it are counted. A window whose writes were admitted at no
//! more than the floor (writes a second the guard never refuses) teaches
//! the **baseline**: what reads cost with writes at the floor, the median
//! p99 of the latest such windows. Quiet windows are such windows, and so
//! are windows where the guard already held writes at the floor: what
//! reads cost then (the refusals, other requests, other processes) is not
//! the guard's to remove, only what the writes above the floor add. A
//! window whose p99 is past `factor` times the baseline cuts the **write
//! allowance** (a rate) to three quarters of what was admitted, never below
//! the floor; any other window raises it by a tenth, and once it is well
//! above what comes, it is lifted. So the rate taken settles near the most
//! the reads allow, and moves with what else takes the CPU; while writes
//! are held back, a window at the floor now and then ([`Probe`]) keeps the
//! baseline current.
//!
//! A process that serves no reads (or too few in a window to tell) refuses
//! nothing for them. Deletions and account safety acts are never refused
//! (as by [`crate::load`]).

use crate::budgets::Cost;
use crate::error::{Error, ErrorKind, Result};
use crate::metrics::metrics;
use crate::shutdown::Shutdown;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use window::{bucket, p99, BUCKETS};

mod window;

/// How long a window of reads is: long enough that its p99 is not one
/// preemption's (on a busy machine, a quarter second's p99 of the same
/// reads alone varied from 0.2 to 7 ms).
pub const TICK: Duration = Duration::from_secs(1);
/// The default multiple of the quiet p99 that reads are held to.
pub const DEFAULT_FACTOR: f64 = 1.25;
/// The default floor: writes a second the guard never refuses.
pub const DEFAULT_FLOOR: u32 = 100;
/// The baseline is the median of this many of the latest windows with
/// writes at the floor.
const BASELINE_WINDOWS: usize = 9;
/// While writes are held back, a window at the floor this often.
const PROBE_EVERY: u32 = 30;
/// How far ahead of its rate the allowance lets writes come at once.
const BURST: Duration = Duration::from_millis(50);

/// The guard's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReadsFirstConfig {
    /// Reads' p99 is held to this multiple of their quiet p99; 0: off.
    pub factor: f64,
    /// Writes a second never refused, and the most a quiet window has.
    pub floor: u32,
}

impl Default for ReadsFirstConfig {
    fn default() -> ReadsFirstConfig {
        ReadsFirstConfig {
            factor: DEFAULT_FACTOR,
            floor: DEFAULT_FLOOR,
        }
    }
}

impl ReadsFirstConfig {
    /// Never refuses a write.
    pub const OFF: ReadsFirstConfig = ReadsFirstConfig {
        factor: 0.0,
        floor: DEFAULT_FLOOR,
    };
}

/// See the module's overview.
pub struct ReadsFirst {
    config: ReadsFirstConfig,
    /// The window's reads, by [`bucket`] of their microseconds.
    reads: [AtomicU64; BUCKETS],
    /// Writes offered in the window (admitted or refused), and admitted.
    offered: AtomicU64,
    admitted: AtomicU64,
    /// Nanoseconds between admitted writes at the allowance; 0: no limit.
    interval_ns: AtomicU64,
    /// When the next write is due at the allowance (nanoseconds since
    /// `start`): a generic cell rate, so the allowance is spread evenly.
    due_ns: AtomicU64,
    start: Instant,
    control: Mutex<Control>,
}

/// What the ticks keep.
#[derive(Debug, Default)]
struct Control {
    /// Reads' p99 in the latest windows with writes at the floor, seconds.
    floor_p99s: std::collections::VecDeque<f64>,
    /// Their median.
    baseline: Option<f64>,
    probe: Probe,
    /// Writes a second admitted; `None`: no limit.
    allowance: Option<f64>,
    /// The last window's p99, seconds.
    p99: Option<f64>,
}

impl ReadsFirst {
    pub fn new(config: ReadsFirstConfig) -> ReadsFirst {
        ReadsFirst {
            config,
            reads: std::array::from_fn(|_| AtomicU64::new(0)),
            offered: AtomicU64::new(0),
            admitted: AtomicU64::new(0),
            interval_ns: AtomicU64::new(0),
            due_ns: AtomicU64::new(0),
            start: Instant::now(),
            control: Mutex::new(Control::default()),
        }
    }

    /// Whether the guard acts at all.
    pub fn on(&self) -> bool {
        self.config.factor > 0.0
    }

    /// What reads cost with writes at the floor, once learned: the p99 the
    /// guard holds reads to a multiple of.
    pub fn baseline(&self) -> Option<Duration> {
        let control = self.control.lock().expect("not poisoned");
        control.baseline.map(Duration::from_secs_f64)
    }

    /// Counts a read that took `took`.
    pub fn observe(&self, took: Duration) {
        if self.on() {
            self.reads[bucket(took.as_micros() as u64)].fetch_add(1, Relaxed);
        }
    }

    /// Takes the write, or refuses it beyond the allowance.
    pub fn admit(&self, cost: Cost) -> Result<()> {
        if cost == Cost::Delete || !self.on() {
            return Ok(());
        }
        self.offered.fetch_add(1, Relaxed);
        let interval = self.interval_ns.load(Relaxed);
        if interval == 0 || self.take(interval) {
            self.admitted.fetch_add(1, Relaxed);
            return Ok(());
        }
        Err(self.refusal())
    }

    /// Whether a write of [`Cost::Create`] would be refused now: for the
    /// APIs to answer a flood of creates before reading their bodies and
    /// credentials (a refusal is then nearly free). Claims nothing: a write
    /// let through is admitted or refused by [`Self::admit`] as any other.
    pub fn refuses_creates(&self) -> Option<Error> {
        let interval = self.interval_ns.load(Relaxed);
        if interval == 0 || !self.on() {
            return None;
        }
        let now = self.start.elapsed().as_nanos() as u64;
        let ahead = self.due_ns.load(Relaxed).saturating_sub(now);
        if ahead <= BURST.as_nanos() as u64 {
            return None;
        }
        self.offered.fetch_add(1, Relaxed);
        Some(self.refusal())
    }

    /// A write refused, counted.
    fn refusal(&self) -> Error {
        metrics()
            .writes_shed
            .get_or_create(&shed_for("reads"))
            .inc();
        let control = self.control.lock().expect("not poisoned");
        let (p99, baseline) = (control.p99.unwrap_or(0.0), control.baseline.unwrap_or(0.0));
        drop(control);
        Error::new(
            ErrorKind::Unavailable,
            "overloaded",
            format!(
                "reads are slower than this process allows beside writes (p99 {:.2} ms against {:.2} ms when writes are quiet): this write was not taken; retry in 1 s",
                p99 * 1e3,
                baseline * 1e3,
            ),
        )
        .retry_after(1)
    }

    /// Whether a write is due at the allowance (one `interval` apart, at
    /// most [`BURST`] ahead), claiming its slot if so.
    fn take(&self, interval: u64) -> bool {
        let now = self.start.elapsed().as_nanos() as u64;
        let mut due = self.due_ns.load(Relaxed);
        loop {
            let from = due.max(now);
            if from - now > BURST.as_nanos() as u64 {
                return false;
            }
            match self
                .due_ns
                .compare_exchange_weak(due, from + interval, Relaxed, Relaxed)
            {
                Ok(_) => return true,
                Err(seen) => due = seen,
            }
        }
    }

    /// Reads and clears the window, and sets the allowance from it.
    fn tick(&self, window: Duration) {
        let counts: Vec<u64> = self.reads.iter().map(|c| c.swap(0, Relaxed)).collect();
        let secs = window.as_secs_f64();
        let offered = self.offered.swap(0, Relaxed) as f64 / secs;
        let admitted = self.admitted.swap(0, Relaxed) as f64 / secs;
        let mut control = self.control.lock().expect("not poisoned");
        control.next(&self.config, p99(&counts), offered, admitted);
        let interval = match control.allowance {
            Some(rate) => (1e9 / rate.max(1.0)) as u64,
            None => 0,
        };
        self.interval_ns.store(interval, Relaxed);
        let m = metrics();
        m.read_p99.set(control.p99.unwrap_or(0.0));
        m.read_baseline.set(control.baseline.unwrap_or(0.0));
        m.write_allowance.set(control.allowance.unwrap_or(0.0));
    }

    /// Ticks every [`TICK`] until `shutdown`.
    pub async fn watch(self: std::sync::Arc<Self>, mut shutdown: Shutdown) {
        if !self.on() {
            return;
        }
        let mut last = Instant::now();
        while shutdown.pause(TICK).await {
            let now = Instant::now();
            self.tick(now - last);
            last = now;
        }
    }
}

impl Control {
    /// One window's step: its reads' p99 (if it had enough reads), and the
    /// writes a second offered and admitted in it.
    fn next(&mut self, config: &ReadsFirstConfig, p99: Option<f64>, offered: f64, admitted: f64) {
        let floor = f64::from(config.floor.max(1));
        self.p99 = p99;
        let Some(p99) = p99 else {
            // No reads to speak of: none to keep waiting for writes.
            (self.allowance, self.probe) = (None, Probe::default());
            return;
        };
        // At the floor (its rate spread over a window of its own length
        // may show a little more).
        if admitted <= floor * 1.1 && self.probe.settling == 0 {
            self.learn(p99);
        }
        if let Some(held) = self.probe.next(self.allowance) {
            self.allowance = held;
            return;
        }
        match self.baseline {
            Some(b) if p99 > config.factor * b => {
                let from = self.allowance.unwrap_or(f64::INFINITY).min(admitted);
                self.allowance = Some((from * 0.75).max(floor));
            }
            _ => self.relax(floor, offered),
        }
        if self.probe.due(self.allowance) {
            self.probe.hold(self.allowance);
            self.allowance = Some(floor);
        }
    }

    /// Takes the p99 of a window with writes at the floor into the
    /// baseline.
    fn learn(&mut self, p99: f64) {
        if self.floor_p99s.len() == BASELINE_WINDOWS {
            self.floor_p99s.pop_front();
        }
        self.floor_p99s.push_back(p99);
        let mut sorted: Vec<f64> = self.floor_p99s.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        self.baseline = Some(sorted[sorted.len() / 2]);
    }

    /// Raises the allowance, and lifts it once it is well above what comes.
    fn relax(&mut self, floor: f64, offered: f64) {
        if let Some(a) = self.allowance {
            let raised = a * 1.1 + floor * 0.1;
            self.allowance = (raised < 4.0 * offered.max(floor)).then_some(raised);
        }
    }
}

/// Now and then, while writes are held back, one window at the floor
/// after one to settle in: what reads cost with writes at the floor moves
/// with everything else on the machine (the other requests, the refusals
/// themselves, other processes), and only the writes above the floor are
/// the guard's to hold back.
#[derive(Debug, Default)]
struct Probe {
    /// Windows since the last probe while writes were held back.
    since: u32,
    /// Windows of the probe left to settle in before its measure.
    settling: u8,
    /// The allowance to go back to once measured.
    after: Option<Option<f64>>,
}

impl Probe {
    /// While a probe lasts: the allowance it holds (the floor), or, at
    /// its end, the one from before.
    fn next(&mut self, allowance: Option<f64>) -> Option<Option<f64>> {
        match self.settling {
            0 => self.after.take(),
            _ => {
                self.settling -= 1;
                Some(allowance)
            }
        }
    }

    /// Whether a probe is due: the allowance has held writes back for
    /// [`PROBE_EVERY`] windows.
    fn due(&mut self, allowance: Option<f64>) -> bool {
        match allowance {
            Some(_) => self.since += 1,
            None => self.since = 0,
        }
        self.since >= PROBE_EVERY
    }

    /// Starts a probe, to go back to `allowance` after.
    fn hold(&mut self, allowance: Option<f64>) {
        self.since = 0;
        self.settling = 1;
        self.after = Some(allowance);
    }
}

/// The labels of `socialite_writes_shed_total` for a reason.
pub(crate) fn shed_for(reason: &'static str) -> crate::metrics::Labels {
    vec![("reason", reason.to_owned())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_cut_while_reads_are_slow_and_let_back_after() {
        let config = ReadsFirstConfig {
            factor: 1.5,
            floor: 100,
        };
        let mut c = Control::default();
        // No baseline yet: nothing is refused, however slow the reads.
        c.next(&config, Some(0.050), 5_000.0, 5_000.0);
        assert_eq!(c.allowance, None);
        // Quiet windows teach the baseline: their median, so one slow
        // window does not move it.
        for p99 in [0.004, 0.030, 0.004] {
            c.next(&config, Some(p99), 20.0, 20.0);
        }
        assert_eq!(c.baseline, Some(0.004));
        assert_eq!(c.allowance, None);
        // Writes at 3,000 a second slow the reads: cut to three quarters
        // of what was admitted, then again, never below the floor.
        c.next(&config, Some(0.010), 3_000.0, 3_000.0);
        assert_eq!(c.allowance, Some(2_250.0));
        c.next(&config, Some(0.010), 9_000.0, 2_250.0);
        assert_eq!(c.allowance, Some(1_687.5));
        for _ in 0..12 {
            c.next(&config, Some(0.010), 9_000.0, 1_000.0);
        }
        assert_eq!(c.allowance, Some(100.0));
        assert_eq!(
            c.baseline,
            Some(0.004),
            "writes above the floor teach nothing"
        );
        // With writes at the floor the reads stay slow: it is not the
        // writes above it, so the windows at the floor become the
        // baseline, and the allowance rises again.
        for _ in 0..5 {
            c.next(&config, Some(0.010), 9_000.0, 100.0);
        }
        assert_eq!(c.baseline, Some(0.010));
        assert!(c.allowance.unwrap() > 200.0, "{:?}", c.allowance);
        // Held back for a while: a probe at the floor, a window to settle
        // and one measured (its p99 learned), then the allowance it left.
        let mut seen = Vec::new();
        for _ in 0..40 {
            c.next(&config, Some(0.012), 9_000.0, 500.0);
            seen.push(c.allowance.unwrap());
        }
        let at = seen.iter().position(|a| *a == 100.0).expect("a probe");
        assert_eq!(seen[at + 1], 100.0, "a window to settle");
        assert!(seen[at + 2] > seen[at - 1], "back where it was: {seen:?}");
        // Reads within the multiple, fewer writes: lifted once the
        // allowance is well above what comes.
        for _ in 0..100 {
            c.next(&config, Some(0.005), 30.0, 30.0);
        }
        assert_eq!(c.allowance, None);
        // Cut again, then a window with too few reads to tell: lifted.
        c.next(&config, Some(0.050), 3_000.0, 3_000.0);
        assert!(c.allowance.is_some());
        c.next(&config, None, 3_000.0, 3_000.0);
        assert_eq!(c.allowance, None);
    }

    #[test]
    fn the_allowance_spreads_writes_and_spares_deletions() {
        let guard = ReadsFirst::new(ReadsFirstConfig::default());
        // A second of 1,000 writes a second admitted, its reads slow
        // against a quiet baseline.
        guard.control.lock().unwrap().baseline = Some(0.001);
        for _ in 0..1_000 {
            guard.admit(Cost::Create).unwrap();
        }
        for _ in 0..200 {
            guard.observe(Duration::from_millis(10));
        }
        guard.tick(Duration::from_secs(1));
        // 750 a second: a burst of 50 ms' worth passes at once, no more.
        let passed = (0..1_000)
            .filter(|_| guard.admit(Cost::Create).is_ok())
            .count();
        assert!((36..=40).contains(&passed), "{passed}");
        // Past the burst (a slow machine may have earned a write or two
        // back since: the allowance refills as time passes).
        let refused = (0..100)
            .find_map(|_| guard.admit(Cost::Update).err())
            .expect("refused past the burst");
        assert_eq!(refused.code(), "overloaded");
        assert_eq!(refused.retry_after_secs(), Some(1));
        assert!(guard.admit(Cost::Delete).is_ok(), "deletions pass");
        assert!(guard.refuses_creates().is_some());
        // Off: nothing is refused.
        let off = ReadsFirst::new(ReadsFirstConfig::OFF);
        off.control.lock().unwrap().allowance = Some(1.0);
        off.interval_ns.store(1_000_000_000, Relaxed);
        assert!((0..100).all(|_| off.admit(Cost::Create).is_ok()));
        assert!(off.refuses_creates().is_none());
    }
}
