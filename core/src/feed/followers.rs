//! The fanout worker's follower index: for each author, the timelines their
//! posts go to (their followers' home timelines, the lists those followers
//! filed them under, and the timelines of the groups they are in), loaded from the graph store the first time
//! the author is fanned out, then kept in step by the follow events the
//! worker applies in log order. It spares every post a scan of the graph
//! store; for the log position being processed it holds what reading the
//! store would (loading may see edges that later events repeat, and every
//! update is idempotent).

use crate::error::Result;
use crate::ids::{GroupName, ListName, TimelineId, UserId};
use crate::ports::GraphStore;
use rustc_hash::FxHashMap;
use std::sync::{Arc, Mutex};

/// Author → the timelines their posts go to, sorted.
type Targets = FxHashMap<UserId, Arc<Vec<TimelineId>>>;

#[derive(Default)]
pub struct FollowerIndex {
    lists: Mutex<Targets>,
}

/// The timelines one edge feeds: the follower's home and each list it is
/// filed under.
pub fn edge_targets<'a>(
    follower: &'a UserId,
    lists: &'a [ListName],
) -> impl Iterator<Item = TimelineId> + 'a {
    std::iter::once(TimelineId::home(follower))
        .chain(lists.iter().map(|l| TimelineId::list(follower, l)))
}

fn targets_of(
    followers: Vec<UserId>,
    listed: Vec<(UserId, ListName)>,
    groups: Vec<GroupName>,
) -> Arc<Vec<TimelineId>> {
    let mut all: Vec<TimelineId> = followers.iter().map(TimelineId::home).collect();
    all.extend(listed.iter().map(|(f, l)| TimelineId::list(f, l)));
    all.extend(groups.iter().map(TimelineId::group));
    all.sort_unstable();
    all.dedup();
    Arc::new(all)
}

impl FollowerIndex {
    pub fn new() -> FollowerIndex {
        FollowerIndex::default()
    }

    fn lists(&self) -> std::sync::MutexGuard<'_, Targets> {
        self.lists.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The timelines the author's posts go to, loading them on first use.
    pub async fn followers(
        &self,
        graph: &dyn GraphStore,
        author: &UserId,
    ) -> Result<Arc<Vec<TimelineId>>> {
        if let Some(list) = self.lists().get(author) {
            return Ok(list.clone());
        }
        let one = std::slice::from_ref(author);
        let followers = graph.all_followers(author).await?;
        let listed = graph.listed_by(one).await?.pop().unwrap_or_default();
        let groups = graph.groups_of(one).await?.pop().unwrap_or_default();
        let loaded = targets_of(followers, listed, groups);
        Ok(self.lists().entry(author.clone()).or_insert(loaded).clone())
    }

    /// Loads, in one store call each for followers, lists and groups, the
    /// targets of the `authors` not yet known.
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
        let followers = graph.followers_of(&missing).await?;
        let listed = graph.listed_by(&missing).await?;
        let groups = graph.groups_of(&missing).await?;
        let mut lists = self.lists();
        for (((author, f), l), g) in missing.into_iter().zip(followers).zip(listed).zip(groups) {
            lists.entry(author).or_insert_with(|| targets_of(f, l, g));
        }
        Ok(())
    }

    /// Changes a known author's targets: adds `add`, removes `remove`.
    fn update(
        &self,
        author: &UserId,
        add: impl Iterator<Item = TimelineId>,
        remove: impl Iterator<Item = TimelineId>,
    ) {
        let mut lists = self.lists();
        let Some(list) = lists.get_mut(author) else {
            return;
        };
        let list = Arc::make_mut(list);
        for t in remove {
            if let Ok(at) = list.binary_search(&t) {
                list.remove(at);
            }
        }
        for t in add {
            if let Err(at) = list.binary_search(&t) {
                list.insert(at, t);
            }
        }
    }

    pub fn followed(&self, follower: &UserId, followee: &UserId, lists: &[ListName]) {
        self.update(followee, edge_targets(follower, lists), std::iter::empty());
    }

    pub fn unfollowed(&self, follower: &UserId, followee: &UserId, lists: &[ListName]) {
        self.update(followee, std::iter::empty(), edge_targets(follower, lists));
    }

    pub fn relisted(
        &self,
        follower: &UserId,
        followee: &UserId,
        added: &[ListName],
        removed: &[ListName],
    ) {
        self.update(
            followee,
            added.iter().map(|l| TimelineId::list(follower, l)),
            removed.iter().map(|l| TimelineId::list(follower, l)),
        );
    }

    /// The member's posts now go to the group's timeline.
    pub fn joined(&self, group: &GroupName, user: &UserId) {
        let t = std::iter::once(TimelineId::group(group));
        self.update(user, t, std::iter::empty());
    }

    pub fn left(&self, group: &GroupName, user: &UserId) {
        let t = std::iter::once(TimelineId::group(group));
        self.update(user, std::iter::empty(), t);
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
