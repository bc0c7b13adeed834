//! The fanout worker's follower index: each author's followers, loaded from
//! the graph store the first time the author is fanned out, then kept in step
//! by the follow events the worker applies in log order. It spares every post
//! a scan of the graph store; for the log position being processed it holds
//! what reading the store would (loading may see edges that later events
//! repeat, and every update is idempotent).

use crate::error::Result;
use crate::ids::UserId;
use crate::ports::GraphStore;
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex};

#[derive(Default)]
pub struct FollowerIndex {
    /// Author → followers, sorted by id.
    lists: Mutex<FxHashMap<UserId, Arc<Vec<UserId>>>>,
}

impl FollowerIndex {
    pub fn new() -> FollowerIndex {
        FollowerIndex::default()
    }

    fn lists(&self) -> std::sync::MutexGuard<'_, FxHashMap<UserId, Arc<Vec<UserId>>>> {
        self.lists.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The author's followers, loading them on first use.
    pub async fn followers(
        &self,
        graph: &dyn GraphStore,
        author: &UserId,
    ) -> Result<Arc<Vec<UserId>>> {
        if let Some(list) = self.lists().get(author) {
            return Ok(list.clone());
        }
        let mut loaded = graph.all_followers(author).await?;
        loaded.sort_unstable();
        Ok(self
            .lists()
            .entry(author.clone())
            .or_insert_with(|| Arc::new(loaded))
            .clone())
    }

    /// Loads, in one store call, the lists of the `authors` not yet known.
    pub async fn preload(&self, graph: &dyn GraphStore, authors: &[&UserId]) -> Result<()> {
        let mut missing: Vec<UserId> = {
            let lists = self.lists();
            authors
                .iter()
                .filter(|a| !lists.contains_key(**a))
                .map(|a| (*a).clone())
                .collect()
        };
        missing.sort_unstable();
        missing.dedup();
        if missing.is_empty() {
            return Ok(());
        }
        let loaded = graph.followers_of(&missing).await?;
        let mut lists = self.lists();
        for (author, mut list) in missing.into_iter().zip(loaded) {
            list.sort_unstable();
            lists.entry(author).or_insert_with(|| Arc::new(list));
        }
        Ok(())
    }

    pub fn followed(&self, follower: &UserId, followee: &UserId) {
        if let Some(list) = self.lists().get_mut(followee) {
            if let Err(at) = list.binary_search(follower) {
                Arc::make_mut(list).insert(at, follower.clone());
            }
        }
    }

    pub fn unfollowed(&self, follower: &UserId, followee: &UserId) {
        if let Some(list) = self.lists().get_mut(followee) {
            if let Ok(at) = list.binary_search(follower) {
                Arc::make_mut(list).remove(at);
            }
        }
    }

    /// Forgets every list, after the worker's share of the log changed.
    pub fn clear(&self) {
        self.lists().clear();
    }

    /// Forgets a deleted author's list.
    pub fn forget(&self, author: &UserId) {
        self.lists().remove(author);
    }
}
