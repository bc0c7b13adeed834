//! Hybrid fanout on the read path ([`socialite_domain::feed::hybrid`]): which authors
//! are marked, as this process knows them, and their part of a page.

use super::stamp::{UserClock, WriteEpoch};
use super::{Feed, Stores};
use crate::error::Result;
use crate::ids::UserId;
use crate::model::{newest, Entry};
use crate::ports::{GraphStore, IdRange};
use rustc_hash::{FxHashMap, FxHashSet};
use socialite_domain::feed::hybrid::Hybrid;
use socialite_domain::graph::relations::{Hidden, Relation};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a process trusts the marks it read. A worker of this process
/// changes them here at once; another process's worker is seen within this.
pub(crate) const MARKS_REFRESH: Duration = Duration::from_secs(1);

/// The authors marked for hybrid fanout, read from the graph store at most
/// once per [`MARKS_REFRESH`] (one read per second, not one per page).
/// Marked authors' posts are part of their followers' pages, so a change of
/// the marks advances the write epoch ([`crate::feed::stamp`]).
pub struct Marks {
    cached: Mutex<Option<(Arc<FxHashSet<UserId>>, Instant)>>,
    epoch: Arc<WriteEpoch>,
    /// When each marked author last posted.
    pub posted: UserClock,
    /// The marked authors each reader follows, with the epoch they were
    /// read at: good while it stands (a follow, an unfollow and a change of
    /// the marks advance it). Each read of a home page wants them, and
    /// reading them cost a read merging at read time an eighth of its time.
    followed: Mutex<Followed>,
    /// Whether `followed` is kept at all: only where every write that
    /// changes a reader's follows runs in this process and advances its
    /// epoch (the embedded default). Where several processes write, a
    /// follow made by another would not move it.
    keep_followed: bool,
}

/// By reader: the epoch read at, the marked authors they follow.
type Followed = FxHashMap<UserId, (u64, Arc<[UserId]>)>;

/// Readers whose followed marked authors are kept; past it the map starts
/// afresh.
const FOLLOWED_KEPT: usize = 1 << 17;

impl Marks {
    pub fn new(epoch: Arc<WriteEpoch>, keep_followed: bool) -> Marks {
        Marks {
            cached: Mutex::default(),
            epoch,
            posted: UserClock::default(),
            followed: Mutex::default(),
            keep_followed,
        }
    }

    /// The marked authors `owner` follows.
    pub async fn followed_by(
        &self,
        graph: &dyn GraphStore,
        owner: &UserId,
    ) -> Result<Arc<[UserId]>> {
        let marks = self.get(graph).await?;
        // The epoch before the read: a follow that the read misses ends
        // after it, and the entry is stale by then.
        let epoch = self.epoch.now();
        if let Some((at, authors)) = self.followed().get(owner) {
            if *at == epoch {
                return Ok(authors.clone());
            }
        }
        if marks.is_empty() {
            return Ok(Arc::from([]));
        }
        let marked: Vec<UserId> = marks.iter().cloned().collect();
        let authors: Arc<[UserId]> = graph.following_among(owner, &marked).await?.into();
        if !self.keep_followed {
            return Ok(authors);
        }
        let mut followed = self.followed();
        if followed.len() >= FOLLOWED_KEPT {
            followed.clear();
        }
        followed.insert(owner.clone(), (epoch, authors.clone()));
        Ok(authors)
    }

    fn followed(&self) -> std::sync::MutexGuard<'_, Followed> {
        self.followed.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub async fn get(&self, graph: &dyn GraphStore) -> Result<Arc<FxHashSet<UserId>>> {
        if let Some((marks, at)) = self.lock().as_ref() {
            if at.elapsed() < MARKS_REFRESH {
                return Ok(marks.clone());
            }
        }
        let loaded: Arc<FxHashSet<UserId>> =
            Arc::new(graph.hybrid_authors().await?.into_iter().collect());
        let before = self.lock().replace((loaded.clone(), Instant::now()));
        if before.is_none_or(|(marks, _)| marks != loaded) {
            self.epoch.advance();
        }
        Ok(loaded)
    }

    /// Whether the author may be marked as this process knows the marks: a
    /// process that has not read them yet cannot tell.
    pub fn may_hold(&self, author: &UserId) -> bool {
        self.lock()
            .as_ref()
            .is_none_or(|(marks, _)| marks.contains(author))
    }

    /// This process's worker marked (or unmarked) the author in the store.
    pub fn set(&self, author: &UserId, on: bool) {
        if let Some((marks, _)) = self.lock().as_mut() {
            let marks = Arc::make_mut(marks);
            match on {
                true => marks.insert(author.clone()),
                false => marks.remove(author),
            };
        }
        self.epoch.advance();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<(Arc<FxHashSet<UserId>>, Instant)>> {
        self.cached.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Hybrid fanout's part of a page: the newest `want` posts in `range` of
/// the marked authors whose posts `feed` holds (followed, or filed under the
/// list; not the owner, not muted, not `hidden`), which fanout may not have
/// delivered. Groups and a user's own posts are always delivered.
pub(crate) async fn merge_big(
    stores: &Stores,
    feed: &Feed,
    hidden: &Hidden,
    range: IdRange,
    want: usize,
) -> Result<Vec<Entry>> {
    let owner = match feed {
        Feed::Home(u) | Feed::List(u, _) => u,
        Feed::Group(_) => return Ok(Vec::new()),
    };
    if stores.feed.hybrid == Hybrid::Off {
        return Ok(Vec::new());
    }
    let marks = stores.marks.get(&*stores.graph).await?;
    if marks.is_empty() {
        return Ok(Vec::new());
    }
    let graph = &stores.graph;
    let mut authors = match feed {
        Feed::List(u, list) => {
            let mut members = graph.all_list_members(u, list).await?;
            members.retain(|m| marks.contains(m));
            members
        }
        _ => stores.marks.followed_by(&**graph, owner).await?.to_vec(),
    };
    authors.retain(|a| a != owner && !hidden.hides(a));
    if authors.is_empty() {
        return Ok(Vec::new());
    }
    let muted = graph.all_relations(owner, Relation::Mute).await?;
    authors.retain(|a| !muted.contains(a));
    let entries = stores.content.newest_by(&authors, range, want).await?;
    stores.prepare(newest(entries, want)).await
}
