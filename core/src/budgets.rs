//! Write budgets: how much one account may write in an hour and in a day,
//! in points by kind of act (create 3, update 2, delete 1), beside the
//! per-second request rates of the API. A flood from one account, or from
//! a thousand, is held here before its deliveries pile up behind fanout.
//!
//! A user token spends its account's budget; a server key spends its own,
//! which is off unless configured (a backend acting for every user would
//! otherwise spend one user's budget for all). Each window is a bucket
//! that refills continuously (a quota of `q` points a window refills
//! `q / window` points a second): a refused act is told when enough points
//! are back, and the IETF `RateLimit` fields report what is left.
//!
//! Budgets are kept per process: with several producers, each meters the
//! writes it takes.

use crate::error::{Error, ErrorKind, Result};
use socialite_domain::accounts::access::Caller;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// What an act spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cost {
    /// A post, a follow, a like, a repost, a bookmark, a mute or block, a
    /// group joined.
    Create,
    /// A profile or a read marker changed.
    Update,
    /// Anything taken back or removed.
    Delete,
}

impl Cost {
    pub const fn points(self) -> u32 {
        match self {
            Cost::Create => 3,
            Cost::Update => 2,
            Cost::Delete => 1,
        }
    }

    /// A change that makes (`on`) or takes back something.
    pub const fn making(on: bool) -> Cost {
        match on {
            true => Cost::Create,
            false => Cost::Delete,
        }
    }
}

/// Points an hour and a day; 0 leaves that window unlimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Quota {
    pub per_hour: u32,
    pub per_day: u32,
}

/// A user's budget by default (as large networks meter accounts).
pub const DEFAULT_USER_QUOTA: Quota = Quota {
    per_hour: 5_000,
    per_day: 35_000,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetConfig {
    /// Each user token's account.
    pub user: Quota,
    /// Each server API key (off by default).
    pub key: Quota,
}

impl Default for BudgetConfig {
    fn default() -> Self {
        BudgetConfig {
            user: DEFAULT_USER_QUOTA,
            key: Quota::default(),
        }
    }
}

/// The windows, with their names in the `RateLimit` fields.
const WINDOWS: [(&str, f64); 2] = [("hour", 3600.0), ("day", 86_400.0)];
/// Accounts tracked before those with their buckets nearly full are
/// forgotten (a full bucket is as good as none).
const MAX_TRACKED: usize = 200_000;

/// One window of a holder's budget, as reported.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub name: &'static str,
    /// Its quota, points.
    pub quota: u32,
    /// Its length, seconds.
    pub seconds: u32,
    /// Points left now.
    pub remaining: u32,
    /// Seconds until it is full again.
    pub full_in: u64,
}

struct Spent {
    /// Points left in each window of [`WINDOWS`].
    left: [f64; 2],
    at: Instant,
}

type Holder = (bool, Arc<str>);

pub struct Budgets {
    config: BudgetConfig,
    spent: Mutex<HashMap<Holder, Spent>>,
}

impl Budgets {
    pub fn new(config: BudgetConfig) -> Budgets {
        Budgets {
            config,
            spent: Mutex::default(),
        }
    }

    pub fn config(&self) -> BudgetConfig {
        self.config
    }

    /// Whose budget the caller spends, and its quota; none for the
    /// operators and anonymous callers, or where the quota is off.
    fn holder(&self, caller: &Caller) -> Option<(Holder, Quota)> {
        let (holder, quota) = match caller {
            Caller::User { user, .. } => ((true, Arc::from(user.as_str())), self.config.user),
            Caller::Server { key, .. } => ((false, key.clone()), self.config.key),
            Caller::Trusted | Caller::Anonymous => return None,
        };
        (quota != Quota::default()).then_some((holder, quota))
    }

    /// Spends the act's points, or refuses it (429 `write_budget_exceeded`,
    /// with the seconds until enough points are back) and spends nothing.
    pub fn charge(&self, caller: &Caller, cost: Cost) -> Result<()> {
        let Some((holder, quota)) = self.holder(caller) else {
            return Ok(());
        };
        let now = Instant::now();
        let mut spent = self.spent.lock().expect("not poisoned");
        if spent.len() >= MAX_TRACKED {
            forget_nearly_full(&mut spent, quota, now);
        }
        let s = spent.entry(holder).or_insert_with(|| Spent {
            left: limits(quota),
            at: now,
        });
        refill(s, quota, now);
        let points = f64::from(cost.points());
        let short = windows(quota)
            .filter(|&(i, _, q)| s.left[i] < points && q > 0)
            .map(|(i, seconds, q)| (points - s.left[i]) * seconds / f64::from(q))
            .fold(None, |most: Option<f64>, wait| {
                Some(most.map_or(wait, |m| m.max(wait)))
            });
        if let Some(wait) = short {
            let wait = wait.ceil() as u64;
            return Err(Error::new(
                ErrorKind::RateLimited,
                "write_budget_exceeded",
                format!(
                    "this credential may write {} points an hour and {} a day (a create costs 3, an update 2, a delete 1; 0 is no limit); retry in {wait} s",
                    quota.per_hour, quota.per_day
                ),
            )
            .retry_after(wait));
        }
        for (i, _, q) in windows(quota) {
            if q > 0 {
                s.left[i] -= points;
            }
        }
        Ok(())
    }

    /// The caller's windows as they stand, for the `RateLimit` fields;
    /// empty where it has no budget.
    pub fn windows_of(&self, caller: &Caller) -> Vec<Window> {
        let Some((holder, quota)) = self.holder(caller) else {
            return Vec::new();
        };
        let now = Instant::now();
        let left = match self.spent.lock().expect("not poisoned").get_mut(&holder) {
            Some(s) => {
                refill(s, quota, now);
                s.left
            }
            None => limits(quota),
        };
        windows(quota)
            .filter(|&(_, _, q)| q > 0)
            .map(|(i, seconds, q)| {
                let missing = f64::from(q) - left[i];
                Window {
                    name: WINDOWS[i].0,
                    quota: q,
                    seconds: seconds as u32,
                    remaining: left[i].max(0.0) as u32,
                    full_in: (missing * seconds / f64::from(q)).ceil().max(0.0) as u64,
                }
            })
            .collect()
    }
}

/// Each window's index, length and quota.
fn windows(quota: Quota) -> impl Iterator<Item = (usize, f64, u32)> {
    let quotas = [quota.per_hour, quota.per_day];
    WINDOWS
        .iter()
        .enumerate()
        .map(move |(i, &(_, seconds))| (i, seconds, quotas[i]))
}

fn limits(quota: Quota) -> [f64; 2] {
    [f64::from(quota.per_hour), f64::from(quota.per_day)]
}

fn refill(s: &mut Spent, quota: Quota, now: Instant) {
    let elapsed = now.duration_since(s.at).as_secs_f64();
    for (i, seconds, q) in windows(quota) {
        let q = f64::from(q);
        s.left[i] = (s.left[i] + elapsed * q / seconds).min(q);
    }
    s.at = now;
}

/// Forgets the holders whose windows are at least nine tenths full (as if
/// full: a little leniency for the bound on memory); then, if that was not
/// enough, every holder with more than half left.
fn forget_nearly_full(spent: &mut HashMap<Holder, Spent>, quota: Quota, now: Instant) {
    for share in [0.9, 0.5] {
        spent.retain(|_, s| {
            refill(s, quota, now);
            windows(quota).any(|(i, _, q)| q > 0 && s.left[i] < share * f64::from(q))
        });
        if spent.len() < MAX_TRACKED {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::UserId;
    use socialite_domain::accounts::access::Scopes;

    fn user(id: &str) -> Caller {
        Caller::User {
            user: UserId::parse(id).unwrap(),
            public_reads: true,
        }
    }

    #[test]
    fn a_budget_refuses_past_its_points_and_names_when_to_retry() {
        let budgets = Budgets::new(BudgetConfig {
            user: Quota {
                per_hour: 30,
                per_day: 1000,
            },
            key: Quota::default(),
        });
        let alice = user("alice");
        for _ in 0..10 {
            budgets.charge(&alice, Cost::Create).unwrap();
        }
        let refused = budgets.charge(&alice, Cost::Delete).unwrap_err();
        assert_eq!(refused.code(), "write_budget_exceeded");
        assert_eq!(refused.kind(), ErrorKind::RateLimited);
        // One point refills in 3600 / 30 = 120 s.
        let wait = refused.retry_after_secs().unwrap();
        assert!((119..=121).contains(&wait), "{wait}");
        let hour = budgets.windows_of(&alice)[0];
        assert_eq!((hour.name, hour.quota, hour.remaining), ("hour", 30, 0));
        assert!((3599..=3601).contains(&hour.full_in), "{hour:?}");
        let day = budgets.windows_of(&alice)[1];
        assert_eq!((day.name, day.remaining), ("day", 970));
        assert!(
            budgets.charge(&user("bob"), Cost::Create).is_ok(),
            "another account has its own budget"
        );
    }

    #[test]
    fn a_budget_comes_back_as_time_passes() {
        let budgets = Budgets::new(BudgetConfig::default());
        let alice = user("alice");
        let holder = budgets.holder(&alice).unwrap().0;
        for _ in 0..5000 {
            budgets.charge(&alice, Cost::Delete).unwrap();
        }
        assert!(budgets.charge(&alice, Cost::Create).is_err());
        // An hour later the hour is full again and the day has refilled
        // a little.
        let earlier = Instant::now() - std::time::Duration::from_secs(3600);
        budgets.spent.lock().unwrap().get_mut(&holder).unwrap().at = earlier;
        budgets.charge(&alice, Cost::Create).unwrap();
        let left: Vec<u32> = budgets
            .windows_of(&alice)
            .iter()
            .map(|w| w.remaining)
            .collect();
        assert_eq!(left, [4997, 31_455]);
    }

    #[test]
    fn server_keys_and_operators_spend_nothing_unless_configured() {
        let key = Caller::Server {
            key: "backend".into(),
            scopes: Scopes::ALL,
        };
        let budgets = Budgets::new(BudgetConfig::default());
        for _ in 0..20_000 {
            budgets.charge(&key, Cost::Create).unwrap();
            budgets.charge(&Caller::Trusted, Cost::Create).unwrap();
        }
        assert!(budgets.windows_of(&key).is_empty());
        let budgets = Budgets::new(BudgetConfig {
            user: Quota::default(),
            key: Quota {
                per_hour: 0,
                per_day: 6,
            },
        });
        budgets.charge(&key, Cost::Create).unwrap();
        budgets.charge(&key, Cost::Create).unwrap();
        assert!(budgets.charge(&key, Cost::Delete).is_err());
        assert_eq!(budgets.windows_of(&key).len(), 1, "the day's only");
        for _ in 0..100 {
            budgets.charge(&user("alice"), Cost::Create).unwrap();
        }
    }

    #[test]
    fn the_tracked_accounts_are_bounded() {
        let budgets = Budgets::new(BudgetConfig::default());
        for i in 0..MAX_TRACKED + 10 {
            budgets
                .charge(&user(&format!("u{i}")), Cost::Delete)
                .unwrap();
        }
        assert!(budgets.spent.lock().unwrap().len() <= MAX_TRACKED);
    }
}
