//! Readers' matchers, built once per revision of their filters: a page
//! read asks the store for the revision only ([`Filters::filters_rev`]),
//! and reads and builds the set again only when it moved, so a change
//! made through any process holds at the next read.
//!
//! A page a transport keeps whole ([`crate::feed::stamp`]) was read with
//! the filters of its time: when a filter this process applied expires,
//! the write epoch advances ([`FilterCache::expire_due`]) and such pages
//! are read again.

use crate::error::Result;
use crate::feed::stamp::WriteEpoch;
use crate::ids::{now_ms, UserId};
use crate::model::filter::FilterSet;
use crate::ports::ContentStore;
use socialite_domain::filters::matcher::Matcher;
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Most memory the readers' matchers kept take (as
/// `Matcher::memory_usage` estimates it); past it the cache starts afresh
/// (a reader's next page builds theirs again). A reader at every limit
/// (100 filters of 20 phrases of 64 characters) takes a few MB; one with
/// a few short phrases, a few KB.
const BUDGET_BYTES: usize = 256 << 20;
/// Most expiry times watched; past it the latest are let go (kept pages
/// that applied those filters may outlive them until the next write).
const MAX_EXPIRIES: usize = 65_536;

pub struct FilterCache {
    matchers: Mutex<Matchers>,
    /// When filters this process built matchers of expire, from now on.
    expiries: Mutex<BTreeSet<u64>>,
    /// The first of `expiries` (`u64::MAX`: none), read without a lock.
    next_expiry: AtomicU64,
    epoch: Arc<WriteEpoch>,
}

/// The kept matchers, by reader: each with its set's revision and size.
#[derive(Default)]
struct Matchers {
    by_user: HashMap<UserId, (u64, Arc<Matcher>, usize)>,
    bytes: usize,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl FilterCache {
    pub fn new(epoch: Arc<WriteEpoch>) -> FilterCache {
        FilterCache {
            matchers: Mutex::default(),
            expiries: Mutex::default(),
            next_expiry: AtomicU64::new(u64::MAX),
            epoch,
        }
    }

    /// The user's matcher as their filters are now; `None` when they never
    /// made one.
    pub async fn matcher(
        &self,
        content: &dyn ContentStore,
        user: &UserId,
    ) -> Result<Option<Arc<Matcher>>> {
        let Some(rev) = content.filters_rev(user).await? else {
            return Ok(None);
        };
        if let Some((held, m, _)) = lock(&self.matchers).by_user.get(user) {
            if *held == rev {
                return Ok(Some(m.clone()));
            }
        }
        let Some(set) = content.filters(user).await? else {
            return Ok(None);
        };
        let m = Arc::new(Matcher::new(&set));
        self.watch(&set);
        let size = m.memory_usage();
        let mut matchers = lock(&self.matchers);
        if matchers.bytes + size > BUDGET_BYTES {
            *matchers = Matchers::default();
        }
        matchers.bytes += size;
        if let Some((_, _, was)) = matchers
            .by_user
            .insert(user.clone(), (set.rev, m.clone(), size))
        {
            matchers.bytes -= was;
        }
        Ok(Some(m))
    }

    fn watch(&self, set: &FilterSet) {
        let now = now_ms();
        let mut expiries = lock(&self.expiries);
        let coming = set.filters.iter().filter_map(|f| f.expires_at_ms);
        expiries.extend(coming.filter(|at| *at > now));
        while expiries.len() > MAX_EXPIRIES {
            expiries.pop_last();
        }
        let first = expiries.first().copied().unwrap_or(u64::MAX);
        self.next_expiry.store(first, Ordering::Release);
    }

    /// Advances the write epoch if a watched filter expired since the last
    /// call: what a transport asks before it serves a kept page.
    pub fn expire_due(&self) {
        let now = now_ms();
        if now < self.next_expiry.load(Ordering::Acquire) {
            return;
        }
        let mut expiries = lock(&self.expiries);
        while expiries.first().is_some_and(|at| *at <= now) {
            expiries.pop_first();
        }
        let first = expiries.first().copied().unwrap_or(u64::MAX);
        self.next_expiry.store(first, Ordering::Release);
        self.epoch.advance();
    }
}
