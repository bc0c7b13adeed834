//! Account standings as this process knows them: each read through the
//! [`Accounts`] port and kept for at most [`FRESH`], so a revocation, a
//! deletion or a suspension made by any replica is in force everywhere
//! within that time, while a busy credential costs one store read a second.
//! Changes this process makes are in force here at once.

use crate::error::Result;
use crate::ids::{now_ms, UserId};
use crate::ports::{Accounts, Standing};
use socialite_domain::accounts::lifecycle::may_act;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// How long a standing read from the store is used.
pub(crate) const FRESH: Duration = Duration::from_secs(1);
/// Most standings kept; past it the stale ones go, then all.
const MAX_KEPT: usize = 65_536;

type Suspended = Arc<HashSet<UserId>>;

pub struct Standings {
    store: Arc<dyn Accounts>,
    kept: RwLock<HashMap<UserId, (Standing, Instant)>>,
    suspended: RwLock<Option<(Suspended, Instant)>>,
    /// One reload of the suspended set at a time.
    reloading: tokio::sync::Mutex<()>,
}

impl Standings {
    pub fn new(store: Arc<dyn Accounts>) -> Standings {
        Standings {
            store,
            kept: RwLock::default(),
            suspended: RwLock::default(),
            reloading: tokio::sync::Mutex::new(()),
        }
    }

    /// The id's standing, at most [`FRESH`] old.
    pub async fn of(&self, id: &UserId) -> Result<Standing> {
        if let Some((s, at)) = self.kept.read().expect("not poisoned").get(id) {
            if at.elapsed() < FRESH {
                return Ok(*s);
            }
        }
        let standing = self.store.standing(id).await?;
        let mut kept = self.kept.write().expect("not poisoned");
        if kept.len() >= MAX_KEPT {
            kept.retain(|_, (_, at)| at.elapsed() < FRESH);
            if kept.len() >= MAX_KEPT {
                kept.clear();
            }
        }
        kept.insert(id.clone(), (standing, Instant::now()));
        Ok(standing)
    }

    /// Refuses acting as `id` while it is suspended.
    pub(crate) async fn may_act(&self, id: &UserId) -> Result<()> {
        may_act(id, &self.of(id).await?)
    }

    /// Whether the id is suspended (hidden from readers).
    pub(crate) async fn is_suspended(&self, id: &UserId) -> Result<bool> {
        Ok(self.suspended_ids().await?.contains(id))
    }

    /// Refuses `id` to readers while it is suspended, as if it did not exist.
    pub async fn visible(&self, id: &UserId) -> Result<()> {
        match self.is_suspended(id).await? {
            true => Err(crate::checks::user_not_found(id)),
            false => Ok(()),
        }
    }

    /// Every suspended id, at most [`FRESH`] old: what every read hides.
    pub(crate) async fn suspended_ids(&self) -> Result<Suspended> {
        if let Some(set) = self.current() {
            return Ok(set);
        }
        let _one = self.reloading.lock().await;
        if let Some(set) = self.current() {
            return Ok(set);
        }
        let set: Suspended = Arc::new(self.store.suspended().await?.into_iter().collect());
        *self.suspended.write().expect("not poisoned") = Some((set.clone(), Instant::now()));
        Ok(set)
    }

    fn current(&self) -> Option<Suspended> {
        let guard = self.suspended.read().expect("not poisoned");
        guard
            .as_ref()
            .filter(|(_, at)| at.elapsed() < FRESH)
            .map(|(s, _)| s.clone())
    }

    /// Refuses every token of `id` issued up to now.
    pub async fn revoke_tokens(&self, id: &UserId) -> Result<()> {
        self.store.revoke_tokens(id, now_ms()).await?;
        self.forget(id);
        Ok(())
    }

    /// Suspends or lifts; returns whether anything changed.
    pub async fn set_suspended(&self, id: &UserId, on: bool) -> Result<bool> {
        let changed = self.store.set_suspended(id, on, now_ms()).await?;
        self.forget(id);
        *self.suspended.write().expect("not poisoned") = None;
        Ok(changed)
    }

    fn forget(&self, id: &UserId) {
        self.kept.write().expect("not poisoned").remove(id);
    }
}
