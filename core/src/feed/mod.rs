//! What goes into whose timeline, decided once for every backend: the
//! timelines there are ([`Feed`]) and whose posts each holds
//! ([`Stores::authors`]), the read-time merge ([`merge`]), the read path with cache
//! activation ([`timeline`]), delivery of log events to stored timelines
//! ([`fanout`]) with the worker's follower index ([`followers`]), and the
//! feed model's settings ([`config`]). What a stored timeline accepts is in
//! [`socialite_domain::feed::accept`]; how a backend lays it out is the backend's.

pub mod config;
pub mod fanout;
pub mod filter_cache;
pub mod followers;
pub mod hybrid;
pub mod late;
pub mod merge;
pub mod notify;
pub mod stamp;
pub mod timeline;
pub mod visible;

use crate::error::Result;
use crate::ids::{GroupName, ListName, PostId, TimelineId, UserId};
use crate::model::Entry;
use crate::ports::{CacheRead, ContentStore, Coverage, GraphStore, TimelineStore};
use config::FeedConfig;
use socialite_domain::graph::relations::Relation;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// A timeline the feed logic builds. Every kind is the same machinery
/// (stored for readers who read it, merged at read time otherwise,
/// backfilled and purged as its authors change, retracted on delete); they
/// differ only in whose posts they hold ([`Stores::authors`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Feed {
    /// The accounts the user follows, and the user unless own posts are off.
    Home(UserId),
    /// The accounts the user filed under the list.
    List(UserId, ListName),
    /// The group's members while they are members: one timeline that all
    /// its readers share.
    Group(GroupName),
}

impl Feed {
    /// The key of the feed's stored timeline.
    pub fn id(&self) -> TimelineId {
        match self {
            Feed::Home(user) => TimelineId::home(user),
            Feed::List(user, list) => TimelineId::list(user, list),
            Feed::Group(group) => TimelineId::group(group),
        }
    }

    /// Whose timeline it is, if a user's: it goes with its owner.
    pub fn owner(&self) -> Option<&UserId> {
        match self {
            Feed::Home(user) | Feed::List(user, _) => Some(user),
            Feed::Group(_) => None,
        }
    }
}

/// The stores the feed logic reads and writes, and the model it follows.
#[derive(Clone)]
pub struct Stores {
    pub content: Arc<dyn ContentStore>,
    pub graph: Arc<dyn GraphStore>,
    pub timelines: Arc<dyn TimelineStore>,
    pub feed: FeedConfig,
    /// The authors marked for hybrid fanout, as this process knows them.
    pub marks: Arc<hybrid::Marks>,
    /// Account standings: suspended accounts are hidden from every read.
    pub accounts: Arc<crate::standings::Standings>,
    /// This process's writes that change pages beside their timelines.
    pub epoch: Arc<stamp::WriteEpoch>,
    /// Where fanout may not have delivered yet, as this process last saw.
    pub late: Arc<late::Late>,
    /// Readers' keyword filters, ready to match.
    pub filters: Arc<filter_cache::FilterCache>,
    /// Where ranked orders' snapshots are shared by several processes.
    pub snapshots: Option<Arc<dyn crate::ports::RankSnapshots>>,
}

impl Stores {
    /// Whether timelines are stored at all (every model but fanout on read).
    pub(crate) fn stores_timelines(&self) -> bool {
        self.feed.stores_timelines()
    }

    /// The authors whose posts `feed` holds: for a home timeline the accounts
    /// its user follows and, when own posts are shown, the user; for a list
    /// the accounts filed under it; either way without the accounts the user
    /// mutes ([`socialite_domain::graph::relations`]). For a group, its members (a
    /// group's timeline is shared: its readers' mutes apply when it is
    /// read). The one place that says whose posts a timeline holds; the
    /// merge reads it, and fanout delivers by the same edges, memberships
    /// and mutes ([`followers::FollowerIndex`]).
    pub async fn authors(&self, feed: &Feed) -> Result<Vec<UserId>> {
        let (user, mut authors) = match feed {
            Feed::Home(user) => {
                let mut authors = self.graph.all_following(user).await?;
                if self.feed.own_posts {
                    authors.push(user.clone());
                }
                (user, authors)
            }
            Feed::List(user, list) => (user, self.graph.all_list_members(user, list).await?),
            Feed::Group(group) => return self.graph.all_group_members(group).await,
        };
        let muted = self.graph.all_relations(user, Relation::Mute).await?;
        if !muted.is_empty() {
            let muted: HashSet<&UserId> = muted.iter().collect();
            authors.retain(|a| !muted.contains(a));
        }
        Ok(authors)
    }

    /// Whether an author's post also goes into the author's own timeline.
    pub(crate) fn to_own_timeline(&self) -> bool {
        self.feed.own_posts
    }

    /// With embedding, gives linked entries their posts' content (one batched
    /// read), leaving out posts deleted meanwhile; with linking, returns them
    /// as they are.
    pub(crate) async fn prepare(&self, entries: Vec<Entry>) -> Result<Vec<Entry>> {
        if !self.feed.embed || entries.iter().all(|e| e.body.is_some()) {
            return Ok(entries);
        }
        let ids: Vec<PostId> = entries.iter().map(|e| e.post).collect();
        let posts: HashMap<PostId, _> = self
            .content
            .get_posts(&ids)
            .await?
            .into_iter()
            .map(|p| (p.id, p))
            .collect();
        Ok(entries
            .iter()
            .filter_map(|e| posts.get(&e.post).map(Entry::embedded))
            .collect())
    }
}

/// The timeline store of fanout on read: nothing is stored and every user
/// stays dormant. The feed logic does not call it (it merges at read time);
/// it answers as an empty store would, should anything ask.
pub struct NoTimelines;

#[async_trait::async_trait]
impl TimelineStore for NoTimelines {
    fn capacity(&self) -> usize {
        0
    }
    async fn read(&self, _: &TimelineId, _: Option<PostId>, _: usize) -> Result<CacheRead> {
        Ok(CacheRead::Absent)
    }
    async fn create(&self, _: &TimelineId) -> Result<()> {
        Ok(())
    }
    async fn fill(&self, _: &TimelineId, _: Vec<Entry>, _: Coverage) -> Result<()> {
        Ok(())
    }
    async fn deliver(&self, _: &[crate::ports::Delivery]) -> Result<usize> {
        Ok(0)
    }
    async fn coverage(&self, _: &TimelineId) -> Result<Option<Coverage>> {
        Ok(None)
    }
    async fn backfill(&self, _: &TimelineId, _: &UserId, _: Vec<Entry>, _: Coverage) -> Result<()> {
        Ok(())
    }
    async fn purge_author(&self, _: &TimelineId, _: &UserId) -> Result<()> {
        Ok(())
    }
    async fn retract_post(&self, _: &[TimelineId], _: PostId) -> Result<()> {
        Ok(())
    }
    async fn drop_timeline(&self, _: &TimelineId) -> Result<()> {
        Ok(())
    }
    async fn footprint(&self) -> Result<crate::ports::Footprint> {
        Ok(Default::default())
    }
}
