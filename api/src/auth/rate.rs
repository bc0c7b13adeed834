//! Rate limits per credential: a token bucket per user token subject and per
//! API key, refilled continuously, holding up to two seconds' worth. A
//! caller over its rate gets 429 `rate_limited` with `Retry-After`.

use socialite_core::budgets::Window;
use socialite_core::{Error, ErrorKind};
use socialite_domain::accounts::access::Caller;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Requests per second per credential; 0 is no limit.
#[derive(Debug, Clone, Copy)]
pub struct Rates {
    pub per_user: u32,
    pub per_key: u32,
}

impl Default for Rates {
    fn default() -> Self {
        Rates {
            per_user: DEFAULT_USER_RATE,
            per_key: 0,
        }
    }
}

/// Requests per second a user token may make by default.
pub const DEFAULT_USER_RATE: u32 = 50;
/// Seconds of rate a bucket holds: the burst allowed after a quiet spell.
const BURST_SECONDS: f64 = 2.0;
/// Buckets kept before idle ones are dropped.
const MAX_BUCKETS: usize = 100_000;

struct Bucket {
    tokens: f64,
    at: Instant,
}

pub struct RateLimiter {
    rates: Rates,
    buckets: Mutex<HashMap<(bool, Arc<str>), Bucket>>,
}

impl RateLimiter {
    pub fn new(rates: Rates) -> RateLimiter {
        RateLimiter {
            rates,
            buckets: Mutex::default(),
        }
    }

    /// Whose bucket the caller takes from, at what rate; none for a caller
    /// with no limit.
    fn bucket_of(&self, caller: &Caller) -> Option<((bool, Arc<str>), u32)> {
        let (id, rate) = match caller {
            Caller::User { user, .. } => ((true, Arc::from(user.as_str())), self.rates.per_user),
            Caller::Server { key, .. } => ((false, key.clone()), self.rates.per_key),
            Caller::Trusted | Caller::Anonymous => return None,
        };
        (rate > 0).then_some((id, rate))
    }

    /// The caller's bucket as it stands, for the `RateLimit` fields.
    pub fn window(&self, caller: &Caller) -> Option<Window> {
        let (id, rate) = self.bucket_of(caller)?;
        let rate = f64::from(rate);
        let capacity = (rate * BURST_SECONDS).max(1.0);
        let tokens = match self.buckets.lock().expect("not poisoned").get(&id) {
            Some(b) => (b.tokens + b.at.elapsed().as_secs_f64() * rate).min(capacity),
            None => capacity,
        };
        Some(Window {
            name: "requests",
            quota: capacity as u32,
            seconds: BURST_SECONDS as u32,
            remaining: tokens as u32,
            full_in: ((capacity - tokens) / rate).ceil() as u64,
        })
    }

    /// Takes one request from the caller's bucket.
    pub fn admit(&self, caller: &Caller) -> Result<(), Error> {
        let Some((id, rate)) = self.bucket_of(caller) else {
            return Ok(());
        };
        let rate = f64::from(rate);
        let capacity = (rate * BURST_SECONDS).max(1.0);
        let now = Instant::now();
        let mut buckets = self.buckets.lock().expect("not poisoned");
        if buckets.len() >= MAX_BUCKETS {
            // A full bucket is as good as none.
            buckets.retain(|_, b| now.duration_since(b.at).as_secs_f64() * rate < capacity);
        }
        let bucket = buckets.entry(id).or_insert(Bucket {
            tokens: capacity,
            at: now,
        });
        let refill = now.duration_since(bucket.at).as_secs_f64() * rate;
        bucket.tokens = (bucket.tokens + refill).min(capacity);
        bucket.at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            return Ok(());
        }
        let wait = ((1.0 - bucket.tokens) / rate).ceil().max(1.0) as u64;
        Err(Error::new(
            ErrorKind::RateLimited,
            "rate_limited",
            format!("this credential is limited to {rate} requests per second; retry in {wait} s"),
        )
        .retry_after(wait))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use socialite_core::ids::UserId;
    use socialite_domain::accounts::access::Scopes;

    #[test]
    fn each_credential_has_its_own_bucket() {
        let limiter = RateLimiter::new(Rates {
            per_user: 5,
            per_key: 0,
        });
        let user = |id: &str| Caller::User {
            user: UserId::parse(id).unwrap(),
            public_reads: true,
        };
        let admitted = (0..100)
            .filter(|_| limiter.admit(&user("alice")).is_ok())
            .count();
        assert!(
            (10..=11).contains(&admitted),
            "a burst of two seconds' rate: {admitted}"
        );
        let refused = limiter.admit(&user("alice")).err().unwrap();
        assert_eq!(refused.code(), "rate_limited");
        assert_eq!(refused.retry_after_secs(), Some(1));
        assert!(
            limiter.admit(&user("bob")).is_ok(),
            "another user is not slowed"
        );
        let key = Caller::Server {
            key: "backend".into(),
            scopes: Scopes::ALL,
        };
        assert!(
            (0..1000).all(|_| limiter.admit(&key).is_ok()),
            "0 is no limit"
        );
    }
}
