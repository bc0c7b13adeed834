//! The fanout worker's follower index: for each author, the timelines their
//! posts go to (their followers' home timelines, the lists those followers
//! filed them under, and the timelines of the groups they are in, leaving
//! out the timelines of followers who mute them), loaded from the graph
//! store the first time
//! the author is fanned out, then kept in step by the follow events the
//! worker applies in log order. It spares every post a scan of the graph
//! store; for the log position being processed it holds what reading the
//! store would (loading may see edges that later events repeat, and every
//! update is idempotent).

use super::Stores;
use crate::error::Result;
use crate::ids::{GroupName, ListName, TimelineId, UserId};
use crate::numbers::Targets;
use crate::ports::GraphStore;
use rustc_hash::FxHashSet;
use socialite_domain::feed::hybrid::{catching_up, is_big, Hybrid};
use socialite_domain::graph::relations::Relation;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

mod by_count;
mod held;

/// Targets the index holds by default: about 20 bytes each (a timeline's id,
/// shared with the process's numbering, and its number), some 200 MB.
pub const DEFAULT_TARGETS: usize = 10_000_000;

/// What the index knows of one author.
#[derive(Clone)]
struct Known {
    /// The timelines their posts go to, sorted.
    timelines: Arc<Targets>,
    /// Who mutes them: their timelines get none of the author's posts.
    muters: FxHashSet<UserId>,
    /// How many home timelines are among `timelines`: the follower count
    /// hybrid fanout compares with its threshold.
    homes: usize,
    /// The group timelines among `timelines`, which a big author's posts
    /// still go to (hybrid fanout skips only followers' timelines).
    groups: Arc<Targets>,
    /// False for an author found big by the follower count their record
    /// keeps, before their list was ever loaded: `timelines` holds only
    /// their groups (all a big author's posts go to), and `homes` is the
    /// stored count, moved by the follow events applied since. Loading a
    /// million followers took the first post of such an author over a
    /// second; the whole list is loaded only when it is needed (the author
    /// turns small, or a post of theirs is deleted). Moved by events rather
    /// than recounted, `homes` may drift by the follows in flight when it was
    /// read; it only decides big or small, with the rule's hysteresis.
    whole: bool,
}

pub struct FollowerIndex {
    lists: Mutex<held::Held>,
    /// The authors marked for hybrid fanout, loaded from the graph store on
    /// first use.
    hybrid: Mutex<Option<FxHashSet<UserId>>>,
    /// Seconds per delivery, a moving average of the worker's flushes.
    cost: Mutex<Option<f64>>,
    /// The lowest threshold `auto` has chosen.
    lowest: Mutex<Option<u64>>,
    /// Whether the worker is catching up on a backlog
    /// ([`socialite_domain::feed::hybrid::catching_up`]).
    behind: AtomicBool,
}

/// Where one post goes, as the index and the hybrid rule decide.
pub struct PostTargets {
    /// Every timeline the author's posts go to.
    pub all: Arc<Targets>,
    /// Of those, the groups' timelines.
    pub groups: Arc<Targets>,
    /// Home timelines among them: the follower count.
    pub homes: usize,
    /// Whether the author is marked for hybrid fanout.
    pub marked: bool,
    /// False when `all` holds only the groups of an author known by their
    /// stored follower count.
    pub whole: bool,
}

/// The timelines one edge feeds: the follower's home and each list it is
/// filed under.
pub(crate) fn edge_targets<'a>(
    follower: &'a UserId,
    lists: &'a [ListName],
) -> impl Iterator<Item = TimelineId> + 'a {
    std::iter::once(TimelineId::home(follower))
        .chain(lists.iter().map(|l| TimelineId::list(follower, l)))
}

fn known(
    followers: Vec<UserId>,
    listed: Vec<(UserId, ListName)>,
    groups: Vec<GroupName>,
    muters: Vec<UserId>,
) -> Known {
    let muters: FxHashSet<UserId> = muters.into_iter().collect();
    let mut all: Vec<TimelineId> = followers
        .iter()
        .filter(|f| !muters.contains(*f))
        .map(TimelineId::home)
        .collect();
    let homes = all.len();
    all.extend(
        listed
            .iter()
            .filter(|(f, _)| !muters.contains(f))
            .map(|(f, l)| TimelineId::list(f, l)),
    );
    let mut groups: Vec<TimelineId> = groups.iter().map(TimelineId::group).collect();
    groups.sort_unstable();
    groups.dedup();
    all.extend(groups.iter().cloned());
    all.sort_unstable();
    all.dedup();
    Known {
        timelines: Arc::new(Targets::from(all)),
        muters,
        homes,
        groups: Arc::new(Targets::from(groups)),
        whole: true,
    }
}

impl Known {
    /// Adds `add` (unless `by`, whose timelines they are, mutes the author)
    /// and removes `remove`. For an author known by their count, only groups
    /// are kept and home timelines move the count.
    fn update(
        &mut self,
        by: Option<&UserId>,
        add: impl Iterator<Item = TimelineId>,
        remove: impl Iterator<Item = TimelineId>,
    ) {
        let muted = by.is_some_and(|u| self.muters.contains(u));
        if !self.whole {
            self.move_count(add, remove);
            return;
        }
        let list = Arc::make_mut(&mut self.timelines);
        let mut changed_groups = false;
        for t in remove {
            if let Ok(at) = list.binary_search(&t) {
                self.homes -= usize::from(t.is_home());
                changed_groups |= t.is_group();
                list.remove(at);
            }
        }
        for t in add.filter(|_| !muted) {
            if let Err(at) = list.binary_search(&t) {
                self.homes += usize::from(t.is_home());
                changed_groups |= t.is_group();
                list.insert(at, t);
            }
        }
        if changed_groups {
            self.groups = Arc::new(list.iter().filter(|t| t.is_group()).cloned().collect());
        }
    }
}

impl Default for FollowerIndex {
    fn default() -> FollowerIndex {
        FollowerIndex::new(DEFAULT_TARGETS)
    }
}

impl FollowerIndex {
    /// An index holding at most about `targets` timelines and muters.
    pub fn new(targets: usize) -> FollowerIndex {
        FollowerIndex {
            lists: Mutex::new(held::Held::new(targets)),
            hybrid: Mutex::default(),
            cost: Mutex::default(),
            lowest: Mutex::default(),
            behind: AtomicBool::default(),
        }
    }

    fn lists(&self) -> std::sync::MutexGuard<'_, held::Held> {
        self.lists.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The timelines the author's posts go to, loading them on first use.
    pub async fn followers(&self, graph: &dyn GraphStore, author: &UserId) -> Result<Arc<Targets>> {
        if let Some(k) = self.lists().get(author).filter(|k| k.whole) {
            return Ok(k.timelines.clone());
        }
        let one = std::slice::from_ref(author);
        let followers = graph.all_followers(author).await?;
        let listed = graph.listed_by(one).await?.pop().unwrap_or_default();
        let groups = graph.groups_of(one).await?.pop().unwrap_or_default();
        let muters = graph
            .related_to_each(one, Relation::Mute)
            .await?
            .pop()
            .unwrap_or_default();
        let loaded = known(followers, listed, groups, muters);
        // New, or known only by their count until now.
        let mut lists = self.lists();
        Ok(lists.put(author.clone(), loaded).timelines.clone())
    }

    /// Loads, in one store call each for followers, lists and groups, the
    /// targets of the `authors` not yet known. With hybrid fanout on
    /// (`threshold`), an author whose stored follower count makes them big
    /// is known by that count and their groups instead.
    pub(crate) async fn preload(
        &self,
        stores: &Stores,
        authors: &[&UserId],
        threshold: Option<u64>,
    ) -> Result<()> {
        let graph = &*stores.graph;
        let mut missing: Vec<UserId> = {
            let lists = self.lists();
            authors
                .iter()
                .filter(|a| !lists.contains(a))
                .map(|a| (*a).clone())
                .collect()
        };
        missing.sort_unstable();
        missing.dedup();
        if threshold.is_some() && !missing.is_empty() {
            missing = self.count_big(stores, missing, threshold).await?;
        }
        if missing.is_empty() {
            return Ok(());
        }
        let followers = graph.followers_of(&missing).await?;
        let listed = graph.listed_by(&missing).await?;
        let groups = graph.groups_of(&missing).await?;
        let muters = graph.related_to_each(&missing, Relation::Mute).await?;
        let mut lists = self.lists();
        let loaded = followers.into_iter().zip(listed).zip(groups).zip(muters);
        for (author, (((f, l), g), m)) in missing.into_iter().zip(loaded) {
            lists.put_absent(author, known(f, l, g, m));
        }
        Ok(())
    }

    /// Changes a known author's targets ([`Known::update`]).
    fn update(
        &self,
        author: &UserId,
        by: Option<&UserId>,
        add: impl Iterator<Item = TimelineId>,
        remove: impl Iterator<Item = TimelineId>,
    ) {
        self.lists()
            .change(author, |known| known.update(by, add, remove));
    }

    /// Where a post of `author` goes, loading what the index lacks: for an
    /// author known by their count, the whole list only once the hybrid rule
    /// (`threshold`) finds them small.
    pub(crate) async fn post_targets(
        &self,
        stores: &Stores,
        author: &UserId,
        threshold: Option<u64>,
    ) -> Result<PostTargets> {
        let graph = &*stores.graph;
        let marked = self.is_marked(graph, author).await?;
        if let Some(k) = self.lists().get(author).filter(|k| !k.whole) {
            if is_big(threshold, k.homes as u64, marked) {
                return Ok(PostTargets {
                    all: k.timelines.clone(),
                    groups: k.groups.clone(),
                    homes: k.homes,
                    marked,
                    whole: false,
                });
            }
        }
        let all = self.followers(graph, author).await?;
        let mut lists = self.lists();
        let (homes, groups) = match lists.get(author) {
            Some(k) => (k.homes, k.groups.clone()),
            None => (all.iter().filter(|t| t.is_home()).count(), Arc::default()),
        };
        Ok(PostTargets {
            all,
            groups,
            homes,
            marked,
            whole: true,
        })
    }

    /// Whether the author is marked for hybrid fanout, as this index knows.
    async fn is_marked(&self, graph: &dyn GraphStore, author: &UserId) -> Result<bool> {
        if let Some(marks) = self
            .hybrid
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_ref()
        {
            return Ok(marks.contains(author));
        }
        let loaded: FxHashSet<UserId> = graph.hybrid_authors().await?.into_iter().collect();
        let mut marks = self.hybrid.lock().unwrap_or_else(|p| p.into_inner());
        Ok(marks.get_or_insert(loaded).contains(author))
    }

    /// Folds a measured delivery cost (seconds for `deliveries`) into the
    /// running estimate that `auto` hybrid fanout reads.
    pub(crate) fn observe_delivery_cost(&self, secs: f64, deliveries: usize) {
        if deliveries < 100 {
            return; // too few to tell the cost of one from the batch's overhead
        }
        let sample = secs / deliveries as f64;
        let mut cost = self.cost.lock().unwrap_or_else(|p| p.into_inner());
        *cost = Some(cost.map_or(sample, |c| c * 0.9 + sample * 0.1));
    }

    /// Seconds one delivery takes, as measured so far.
    pub(crate) fn secs_per_delivery(&self) -> Option<f64> {
        *self.cost.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Hybrid fanout's threshold now. `auto` only ever lowers it while the
    /// worker runs: the measured cost swings with the load on the machine
    /// (a batch the request path preempts looks slow), and a threshold that
    /// rose again would unmark authors, each unmark backfilling every active
    /// follower's timeline, only to mark them again at the next slow batch.
    /// While the worker catches up on a backlog, it is lower still.
    pub(crate) fn hybrid_threshold(&self, setting: Hybrid) -> Option<u64> {
        let threshold = self.steady_threshold(setting);
        match self.behind.load(Relaxed) {
            true => catching_up(threshold),
            false => threshold,
        }
    }

    fn steady_threshold(&self, setting: Hybrid) -> Option<u64> {
        let now = setting.threshold(self.secs_per_delivery());
        if setting != Hybrid::Auto {
            return now;
        }
        let mut lowest = self.lowest.lock().unwrap_or_else(|p| p.into_inner());
        *lowest = match (*lowest, now) {
            (Some(l), Some(n)) => Some(l.min(n)),
            (l, n) => n.or(l),
        };
        *lowest
    }

    /// The worker's backlog, in batches: past
    /// [`socialite_domain::feed::hybrid::CATCH_UP_BATCHES`] it is catching
    /// up, until no more than `CAUGHT_UP_BATCHES` wait.
    pub(crate) fn note_backlog(&self, batches: u64) {
        use socialite_domain::feed::hybrid::{CATCH_UP_BATCHES, CAUGHT_UP_BATCHES};
        let limit = match self.behind.load(Relaxed) {
            true => CAUGHT_UP_BATCHES,
            false => CATCH_UP_BATCHES,
        };
        let behind = batches > limit;
        match (self.behind.swap(behind, Relaxed), behind) {
            (false, true) => tracing::info!(
                batches,
                "fanout is catching up: authors with more than {} followers are merged at read time until it has",
                socialite_domain::feed::hybrid::CATCH_UP_THRESHOLD
            ),
            (true, false) => tracing::info!("fanout has caught up"),
            _ => {}
        }
    }

    /// Records that the author is now marked (or unmarked) in the store.
    pub(crate) fn set_marked(&self, author: &UserId, on: bool) {
        if let Some(marks) = self
            .hybrid
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            match on {
                true => marks.insert(author.clone()),
                false => marks.remove(author),
            };
        }
    }

    /// Records a mute or its lifting, and moves the muter's timelines
    /// (`edge`: the lists of their follow edge to the author, if any).
    fn remute(&self, user: &UserId, target: &UserId, edge: Option<&[ListName]>, mute: bool) {
        self.lists().change(target, |known| match mute {
            true => known.muters.insert(user.clone()),
            false => known.muters.remove(user),
        });
        let Some(lists) = edge else {
            return;
        };
        let (add, remove) = match mute {
            true => (None, Some(edge_targets(user, lists))),
            false => (Some(edge_targets(user, lists)), None),
        };
        let (add, remove) = (add.into_iter().flatten(), remove.into_iter().flatten());
        self.update(target, Some(user), add, remove);
    }

    pub fn muted(&self, user: &UserId, target: &UserId, edge: Option<&[ListName]>) {
        self.remute(user, target, edge, true);
    }

    pub fn unmuted(&self, user: &UserId, target: &UserId, edge: Option<&[ListName]>) {
        self.remute(user, target, edge, false);
    }

    pub fn followed(&self, follower: &UserId, followee: &UserId, lists: &[ListName]) {
        let add = edge_targets(follower, lists);
        self.update(followee, Some(follower), add, std::iter::empty());
    }

    pub fn unfollowed(&self, follower: &UserId, followee: &UserId, lists: &[ListName]) {
        let remove = edge_targets(follower, lists);
        self.update(followee, None, std::iter::empty(), remove);
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
            Some(follower),
            added.iter().map(|l| TimelineId::list(follower, l)),
            removed.iter().map(|l| TimelineId::list(follower, l)),
        );
    }

    /// The member's posts now go to the group's timeline.
    pub fn joined(&self, group: &GroupName, user: &UserId) {
        let t = std::iter::once(TimelineId::group(group));
        self.update(user, None, t, std::iter::empty());
    }

    pub fn left(&self, group: &GroupName, user: &UserId) {
        let t = std::iter::once(TimelineId::group(group));
        self.update(user, None, std::iter::empty(), t);
    }

    /// Forgets every list, after the worker's share of the log changed.
    pub fn clear(&self) {
        self.lists().clear();
        *self.hybrid.lock().unwrap_or_else(|p| p.into_inner()) = None;
    }

    /// Forgets a deleted author's list.
    pub fn forget(&self, author: &UserId) {
        self.lists().remove(author);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_threshold_only_falls() {
        let index = FollowerIndex::default();
        assert_eq!(
            index.hybrid_threshold(Hybrid::Auto),
            Some(socialite_domain::feed::hybrid::AUTO_START)
        );
        // 1 µs a delivery: 20,000 deliveries fill the 20 ms budget.
        index.observe_delivery_cost(0.1, 100_000);
        assert_eq!(index.hybrid_threshold(Hybrid::Auto), Some(20_000));
        // Cheaper batches do not raise it again.
        for _ in 0..100 {
            index.observe_delivery_cost(0.001, 100_000);
        }
        assert_eq!(index.hybrid_threshold(Hybrid::Auto), Some(20_000));
        // A fixed setting is what it says.
        assert_eq!(index.hybrid_threshold(Hybrid::Above(7)), Some(7));
        assert_eq!(index.hybrid_threshold(Hybrid::Off), None);
        // Catching up on a backlog lowers it while it lasts, and only then.
        index.note_backlog(socialite_domain::feed::hybrid::CATCH_UP_BATCHES + 1);
        assert_eq!(index.hybrid_threshold(Hybrid::Auto), Some(1_000));
        assert_eq!(index.hybrid_threshold(Hybrid::Above(50_000)), Some(1_000));
        assert_eq!(index.hybrid_threshold(Hybrid::Off), None);
        index.note_backlog(socialite_domain::feed::hybrid::CATCH_UP_BATCHES);
        assert_eq!(index.hybrid_threshold(Hybrid::Auto), Some(1_000));
        index.note_backlog(socialite_domain::feed::hybrid::CAUGHT_UP_BATCHES);
        assert_eq!(index.hybrid_threshold(Hybrid::Auto), Some(20_000));
    }
}
