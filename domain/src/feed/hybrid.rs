//! Hybrid fanout: an author with more followers than a threshold is not
//! fanned out. Their posts stay out of followers' stored home and list
//! timelines, and every read of such a timeline merges in the recent posts of
//! the big authors it follows. A post to a million followers then costs
//! nothing at write time, instead of starving everything else on the
//! machine.
//!
//! The worker decides per post, with hysteresis: an author becomes big at the
//! threshold and small again below half of it. The decision is recorded in the
//! graph store before the first post is skipped. Before the mark is lifted,
//! the author's recent posts are backfilled into the active followers'
//! timelines. So a reader that merges the marked authors never misses a post
//! that fanout skipped. Merging an author whose posts were delivered anyway
//! only finds them twice, and the merge keeps each post once.

use crate::error::{Error, Result};
use std::fmt;
use std::str::FromStr;

/// The lowest threshold `auto` chooses, and the highest.
pub const AUTO_MIN: u64 = 1_000;
pub const AUTO_MAX: u64 = 1_000_000;
/// `auto`: worker time one post may take to fan out. The threshold is the
/// follower count whose fanout, at the measured cost of a delivery, takes
/// this long.
pub const AUTO_POST_BUDGET_SECS: f64 = 0.02;
/// `auto` before anything is measured.
pub const AUTO_START: u64 = 100_000;
/// While fanout catches up on a backlog, the threshold is at most this:
/// an author followed by more is merged at read time instead of fanned
/// out, so the backlog drains at the rate of its small authors' posts,
/// not its big ones'. Once caught up, the threshold is what it was, and
/// each author marked meanwhile turns small again at their next post
/// (backfilled, then unmarked).
pub const CATCH_UP_THRESHOLD: u64 = AUTO_MIN;
/// The worker starts catching up when more than this many batches wait,
/// and has caught up when no more than [`CAUGHT_UP_BATCHES`] do (apart,
/// so that a backlog about one of them does not mark and unmark authors
/// by turns).
pub const CATCH_UP_BATCHES: u64 = 20;
pub const CAUGHT_UP_BATCHES: u64 = 2;

/// The threshold while fanout catches up, from the one it would be.
pub fn catching_up(threshold: Option<u64>) -> Option<u64> {
    threshold.map(|t| t.min(CATCH_UP_THRESHOLD))
}

/// The setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hybrid {
    /// Every post is fanned out.
    Off,
    /// Authors with at least this many followers are not fanned out.
    Above(u64),
    /// The threshold follows the measured cost of a delivery.
    Auto,
}

impl fmt::Display for Hybrid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Hybrid::Off => f.write_str("off"),
            Hybrid::Above(n) => write!(f, "{n}"),
            Hybrid::Auto => f.write_str("auto"),
        }
    }
}

impl FromStr for Hybrid {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Hybrid, String> {
        match s {
            "off" => Ok(Hybrid::Off),
            "auto" => Ok(Hybrid::Auto),
            n => match n.parse::<u64>() {
                Ok(n) if n >= 2 => Ok(Hybrid::Above(n)),
                _ => Err(format!(
                    "hybrid fanout is off, auto, or a follower count of at least 2, not {s:?}"
                )),
            },
        }
    }
}

impl Hybrid {
    pub fn validate(&self) -> Result<()> {
        match self {
            Hybrid::Above(n) if *n < 2 => Err(Error::invalid(
                "invalid_config",
                "the hybrid fanout threshold must be at least 2 followers",
            )),
            _ => Ok(()),
        }
    }

    /// The threshold now: `None` when off; for `auto`, from the measured
    /// seconds per delivery (`None`: nothing measured yet).
    pub fn threshold(&self, secs_per_delivery: Option<f64>) -> Option<u64> {
        match *self {
            Hybrid::Off => None,
            Hybrid::Above(n) => Some(n),
            Hybrid::Auto => Some(match secs_per_delivery {
                Some(s) if s > 0.0 => {
                    ((AUTO_POST_BUDGET_SECS / s) as u64).clamp(AUTO_MIN, AUTO_MAX)
                }
                _ => AUTO_START,
            }),
        }
    }
}

/// Whether an author with `followers`, `marked` big now, is big for their
/// next post: big from the threshold up, small again below half of it, so an
/// account hovering at the threshold does not flip on every follow.
pub fn is_big(threshold: Option<u64>, followers: u64, marked: bool) -> bool {
    match threshold {
        None => false,
        Some(t) if marked => followers * 2 >= t,
        Some(t) => followers >= t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_setting_parses_and_auto_follows_the_cost() {
        assert_eq!("off".parse::<Hybrid>().unwrap(), Hybrid::Off);
        assert_eq!("auto".parse::<Hybrid>().unwrap(), Hybrid::Auto);
        assert_eq!("5000".parse::<Hybrid>().unwrap(), Hybrid::Above(5000));
        assert!("1".parse::<Hybrid>().is_err() && "x".parse::<Hybrid>().is_err());
        assert_eq!(Hybrid::Off.threshold(Some(1e-6)), None);
        assert_eq!(Hybrid::Auto.threshold(None), Some(AUTO_START));
        // 0.2 µs a delivery: 100,000 deliveries in 20 ms.
        assert_eq!(Hybrid::Auto.threshold(Some(2e-7)), Some(100_000));
        assert_eq!(Hybrid::Auto.threshold(Some(1.0)), Some(AUTO_MIN));
        assert_eq!(Hybrid::Auto.threshold(Some(1e-12)), Some(AUTO_MAX));
        // Catching up lowers it; hybrid off stays off.
        assert_eq!(catching_up(Some(AUTO_MAX)), Some(CATCH_UP_THRESHOLD));
        assert_eq!(catching_up(Some(7)), Some(7));
        assert_eq!(catching_up(None), None);
    }

    #[test]
    fn big_and_small_again_with_hysteresis() {
        let t = Some(10);
        assert!(!is_big(t, 9, false) && is_big(t, 10, false));
        assert!(is_big(t, 5, true), "stays big down to half");
        assert!(!is_big(t, 4, true));
        assert!(!is_big(None, 1_000_000, true));
    }
}
