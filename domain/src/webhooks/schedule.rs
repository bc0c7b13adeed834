//! When a failed delivery is tried again: a list of delays, one per retry,
//! each with jitter; after the last, the batch's tries have run out. The
//! default spreads nine retries over about three days.

use std::time::Duration;

/// The default schedule (about 2.7 days in all).
pub const DEFAULT: &str = "5s,5m,30m,2h,5h,10h,10h,14h,24h";

/// Longest wait a `Retry-After` may ask for.
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(6 * 3600);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule(Vec<Duration>);

impl Schedule {
    /// Delays separated by commas, each a number with `ms`, `s`, `m`, `h`
    /// or `d`; 1 to 50 of them, none over 7 days.
    pub fn parse(s: &str) -> Result<Schedule, String> {
        let delays = s
            .split(',')
            .map(|d| parse_delay(d.trim()))
            .collect::<Result<Vec<_>, String>>()?;
        if delays.is_empty() || delays.len() > 50 {
            return Err("a retry schedule has 1 to 50 delays".into());
        }
        Ok(Schedule(delays))
    }

    /// The wait before try `failed + 1`, after `failed` failed tries, with
    /// `jitter` (0 to 1) spreading it over 80 to 120 %; `None` once the
    /// schedule's tries have run out.
    pub fn delay(&self, failed: u32, jitter: f64) -> Option<Duration> {
        let base = self.0.get(failed.checked_sub(1)? as usize)?;
        Some(base.mul_f64(0.8 + 0.4 * jitter.clamp(0.0, 1.0)))
    }

    /// Tries in all: the first and one per delay.
    pub fn tries(&self) -> u32 {
        self.0.len() as u32 + 1
    }
}

impl Default for Schedule {
    fn default() -> Schedule {
        Schedule::parse(DEFAULT).expect("the default schedule parses")
    }
}

fn parse_delay(d: &str) -> Result<Duration, String> {
    let split = d.find(|c: char| !c.is_ascii_digit()).unwrap_or(d.len());
    let (n, unit) = d.split_at(split);
    let n: u64 = n
        .parse()
        .map_err(|_| format!("{d:?} is not a delay like 5s, 10m or 2h"))?;
    let ms = match unit {
        "ms" => n,
        "s" => n.saturating_mul(1_000),
        "m" => n.saturating_mul(60_000),
        "h" => n.saturating_mul(3_600_000),
        "d" => n.saturating_mul(86_400_000),
        _ => return Err(format!("{d:?} is not a delay like 5s, 10m or 2h")),
    };
    if ms == 0 || ms > 7 * 86_400_000 {
        return Err(format!("{d:?}: a delay is over 0 and at most 7 days"));
    }
    Ok(Duration::from_millis(ms))
}
