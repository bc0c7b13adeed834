//! What goes into whose timeline, decided once for every backend: the
//! read-time merge ([`merge`]), the home timeline read path with cache
//! activation ([`timeline`]), delivery of log events to stored timelines
//! ([`fanout`]) with the worker's follower index ([`followers`]), and the
//! feed model's settings ([`config`]). What a stored timeline accepts is in
//! [`crate::rules::accept`]; how a backend lays it out is the backend's.

pub mod config;
pub mod fanout;
pub mod followers;
pub mod merge;
pub mod timeline;

use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::model::Entry;
use crate::ports::{CacheRead, ContentStore, Coverage, GraphStore, TimelineStore};
use config::FeedConfig;
use std::collections::HashMap;
use std::sync::Arc;

/// The stores the feed logic reads and writes, and the model it follows.
#[derive(Clone)]
pub struct Stores {
    pub content: Arc<dyn ContentStore>,
    pub graph: Arc<dyn GraphStore>,
    pub timelines: Arc<dyn TimelineStore>,
    pub feed: FeedConfig,
}

impl Stores {
    /// Whether timelines are stored at all (every model but fanout on read).
    pub fn stores_timelines(&self) -> bool {
        self.feed.stores_timelines()
    }

    /// The authors of `user`'s home timeline: the accounts they follow and,
    /// when own posts are shown, themselves. The one place that says whose
    /// posts a home timeline holds; merge, fanout and retraction follow it.
    pub fn home_authors(&self, user: &UserId, mut followees: Vec<UserId>) -> Vec<UserId> {
        if self.feed.own_posts {
            followees.push(user.clone());
        }
        followees
    }

    /// Whether an author's post also goes into the author's own timeline.
    pub fn to_own_timeline(&self) -> bool {
        self.feed.own_posts
    }

    /// With embedding, gives linked entries their posts' content (one batched
    /// read), leaving out posts deleted meanwhile; with linking, returns them
    /// as they are.
    pub async fn prepare(&self, entries: Vec<Entry>) -> Result<Vec<Entry>> {
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
    async fn read(&self, _: &UserId, _: Option<PostId>, _: usize) -> Result<CacheRead> {
        Ok(CacheRead::Absent)
    }
    async fn create(&self, _: &UserId) -> Result<()> {
        Ok(())
    }
    async fn fill(&self, _: &UserId, _: Vec<Entry>, _: Coverage) -> Result<()> {
        Ok(())
    }
    async fn deliver(&self, _: &[crate::ports::Delivery]) -> Result<usize> {
        Ok(0)
    }
    async fn coverage(&self, _: &UserId) -> Result<Option<Coverage>> {
        Ok(None)
    }
    async fn backfill(&self, _: &UserId, _: &UserId, _: Vec<Entry>, _: Coverage) -> Result<()> {
        Ok(())
    }
    async fn purge_author(&self, _: &UserId, _: &UserId) -> Result<()> {
        Ok(())
    }
    async fn retract_post(&self, _: &[UserId], _: PostId) -> Result<()> {
        Ok(())
    }
    async fn drop_timeline(&self, _: &UserId) -> Result<()> {
        Ok(())
    }
    async fn footprint(&self) -> Result<crate::ports::Footprint> {
        Ok(Default::default())
    }
}
