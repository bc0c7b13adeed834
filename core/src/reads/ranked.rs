//! The home timeline in an order the reader chooses: `latest` (newest
//! first, the default, served by [`Reads::timeline`]), `balanced` and
//! `catchup` ([`socialite_domain::feed::rank`] orders them).
//!
//! A ranked first page reads the candidates: what the latest order shows
//! over the window ([`Ranking::window`], at most
//! [`Ranking::max_candidates`]), read through the same path, so every rule
//! of what the reader sees holds (mutes, blocks, the replies rule, a post
//! once however often reposted, deleted posts gone). Then, in one call
//! each: the candidates' counts, and the reader's own recent posts (whom
//! they reply to and repost). The order is kept as a snapshot
//! ([`super::snapshots`]) that later pages continue; each page loads its
//! posts again, so what was deleted or hidden since is left out.
//!
//! Past [`Ranking::deadline`], or if ranking fails, or while as many
//! rankings run as the process allows (two per core), the first page is
//! served in latest order and says so (`fallback`); its cursor continues
//! in latest order.

use super::rank_bases::{read_again_from, Bases, Basis};
pub use super::reader_signals::SHOWN_LESS;
use super::snapshots::{Snapshot, SnapshotEntry, Snapshots};
use super::Reads;
use crate::error::{Error, Result};
use crate::feed::stamp::Stamp;
use crate::feed::timeline::{read_timeline_in, ReadSource};
use crate::feed::visible::{visible, Scope};
use crate::feed::Feed;
use crate::ids::{now_ms, ListName, PostId, UserId};
use crate::metrics::metrics;
use crate::model::filter::FilterContext;
use crate::model::marker::MarkerTimeline;
use crate::model::PostCounts;
use crate::model::{page_size, Entry, FeedItem};
use crate::ports::IdRange;
use socialite_domain::accounts::access::{check, Act, Caller};
use socialite_domain::feed::rank::{Parts, Ranked, Reason, Weights};
use socialite_domain::feed::rank_inputs::{Fresh, RankInputs};
use socialite_domain::graph::relations::Hidden;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The orders of a home timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Latest,
    Balanced,
    CatchUp,
}

impl Order {
    pub fn parse(s: &str) -> Result<Order> {
        match s {
            "latest" => Ok(Order::Latest),
            "balanced" => Ok(Order::Balanced),
            "catchup" => Ok(Order::CatchUp),
            other => Err(Error::invalid(
                "invalid_order",
                format!("order `{other}` is not one of latest, balanced, catchup"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Order::Latest => "latest",
            Order::Balanced => "balanced",
            Order::CatchUp => "catchup",
        }
    }
}

/// How ranked orders are made (the settings `rank-*`).
#[derive(Debug, Clone)]
pub struct Ranking {
    pub weights: Weights,
    /// How far back candidates go.
    pub window: Duration,
    /// Most candidates a ranked order reads.
    pub max_candidates: usize,
    /// Longest a ranked first page may take before latest order serves it.
    pub deadline: Duration,
    /// How long a ranked order's later pages can be read.
    pub snapshot_ttl: Duration,
}

impl Default for Ranking {
    fn default() -> Ranking {
        Ranking {
            weights: Weights::default(),
            window: Duration::from_secs(48 * 3600),
            max_candidates: 1200,
            deadline: Duration::from_millis(50),
            snapshot_ttl: Duration::from_secs(600),
        }
    }
}

/// Where ranked orders keep what they need between pages.
pub(crate) struct Ranker {
    pub(crate) settings: Ranking,
    pub(super) snapshots: Snapshots,
    /// What each reader's balanced order was last ranked from.
    bases: Bases,
    /// Rankings under way. A ranking is CPU work of some milliseconds: more
    /// at once than the cores run would only wait past the deadline while
    /// taking the CPU from every other read, so a first page that finds
    /// them all taken is served in latest order at once (`busy`).
    running: tokio::sync::Semaphore,
}

/// Rankings under way at once, per core.
const RANKINGS_PER_CORE: usize = 2;

impl Ranker {
    pub(crate) fn new(settings: Ranking) -> Ranker {
        let snapshots = Snapshots::new(settings.snapshot_ttl);
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Ranker {
            settings,
            snapshots,
            bases: Bases::default(),
            running: tokio::sync::Semaphore::new(cores * RANKINGS_PER_CORE),
        }
    }
}

/// An entry of a ranked page: the item, why it is there, and its score.
#[derive(Debug, Clone)]
pub struct RankedItem {
    pub item: FeedItem,
    pub reason: Reason,
    pub parts: Parts,
    /// In catch-up: how many more posts of the author since the marker.
    pub more: u64,
}

/// How a ranked first page was served: ranked in full, the same page
/// again (`kept`), ranked from what the reader's last ranking read with
/// only what arrived since read (`extended`), or in latest order past the
/// deadline, while every ranking slot was taken (`busy`), or after an
/// error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    Ranked,
    Kept,
    Extended,
    Deadline,
    Busy,
    Error,
}

impl Served {
    pub fn as_str(self) -> &'static str {
        match self {
            Served::Ranked => "ranked",
            Served::Kept => "kept",
            Served::Extended => "extended",
            Served::Deadline => "deadline",
            Served::Busy => "busy",
            Served::Error => "error",
        }
    }
}

/// A page of a ranked order.
#[derive(Debug, Clone)]
pub struct RankedPage {
    pub items: Vec<RankedItem>,
    pub next_cursor: Option<String>,
    /// Served in latest order: ranking missed its deadline or failed.
    pub fallback: bool,
    /// How a ranked order's first page was served (`None`: a later page,
    /// or the latest order).
    pub served: Option<Served>,
    pub source: ReadSource,
}

/// How long a balanced first page is served again while the reader's
/// timeline is unchanged; and after how long the counts and the reader's
/// signals a basis ranks with are read again (off the reader's path).
const REUSE_WITHIN: Duration = Duration::from_secs(30);

/// How long a basis extends first pages at most: past it (its refresh
/// could not run), a first page ranks in full.
const EXTEND_WITHIN: Duration = Duration::from_secs(120);

/// What a first page was asked for, as the snapshot it made remembers it.
fn asked_key(order: Order, since: Option<PostId>, limit: usize) -> u64 {
    let order = order as u64;
    let since = since.map_or(0, |s| s.0);
    since.rotate_left(17) ^ ((limit as u64) << 8) ^ order
}

/// Whose item placed `item` in the timeline: the newest reposter's, or
/// the author's own post.
fn placer(item: &FeedItem) -> &UserId {
    item.reposted_by.first().unwrap_or(&item.post.author)
}

/// Which of the reader's filters a ranked order of `feed` applies.
fn context_of(feed: &Feed) -> FilterContext {
    match feed {
        Feed::List(..) => FilterContext::Lists,
        _ => FilterContext::Home,
    }
}

/// The entries of a newest-first read as ranking takes them, with their
/// posts' `counts` (in the same order).
fn fresh(items: &[FeedItem], counts: Vec<PostCounts>) -> Vec<Fresh> {
    items
        .iter()
        .zip(counts)
        .map(|(i, counts)| Fresh {
            position: i.position,
            post: i.post.id,
            author: i.post.author.clone(),
            placer: placer(i).clone(),
            reposted_by: i.reposts_seen,
            counts,
        })
        .collect()
}

/// A cursor of a ranked order: `r` + the snapshot's id + `.` + the offset.
fn cursor(id: u64, offset: usize) -> String {
    format!("r{id:016x}.{offset}")
}

fn parse_cursor(c: &str) -> Result<(u64, usize)> {
    let bad = || Error::invalid("invalid_cursor", "the cursor is not one this order gave");
    let rest = c.strip_prefix('r').ok_or_else(bad)?;
    let (id, offset) = rest.split_once('.').ok_or_else(bad)?;
    let id = u64::from_str_radix(id, 16).map_err(|_| bad())?;
    let offset = offset.parse::<usize>().map_err(|_| bad())?;
    Ok((id, offset))
}

impl Reads {
    /// A page of the user's home timeline, or of their `list`, in
    /// `order`, below `cursor` (a ranked order's, or in latest order after
    /// a fallback); catch-up starts after `since`, or on the home timeline
    /// after the user's home marker (a list has no marker).
    #[allow(clippy::too_many_arguments)]
    pub async fn ranked_timeline(
        &self,
        caller: &Caller,
        id: &str,
        list: Option<&str>,
        order: Order,
        limit: Option<u64>,
        cursor: Option<&str>,
        since: Option<&str>,
    ) -> Result<RankedPage> {
        let user = UserId::parse(id)?;
        let list = list.map(ListName::parse).transpose()?;
        check(caller, Act::ReadOwn(&user))?;
        let limit = page_size(limit)?;
        let since = since.map(PostId::parse).transpose()?;
        let feed = match list {
            Some(list) => {
                self.existing_list(&user, &list).await?;
                Feed::List(user, list)
            }
            None => Feed::Home(self.existing(&user).await?.id),
        };
        if let (Order::CatchUp, Feed::List(..), None, None) = (order, &feed, since, cursor) {
            return Err(Error::invalid(
                "invalid_query",
                "catch-up on a list starts after `since` (a list has no marker); later pages follow `cursor`",
            ));
        }
        let user = feed.owner().expect("a reader's timeline").clone();
        let hidden = self.hidden_from(&user, context_of(&feed)).await?;
        if order == Order::Latest {
            return self
                .latest_as_ranked(&feed, &hidden, limit, cursor, false)
                .await;
        }
        if let Some(c) = cursor {
            if PostId::parse(c).is_ok() {
                // A fallback's page continues in latest order.
                return self
                    .latest_as_ranked(&feed, &hidden, limit, Some(c), true)
                    .await;
            }
            let (snapshot, offset) = parse_cursor(c)?;
            return self
                .snapshot_page(&feed, &hidden, snapshot, offset, limit)
                .await;
        }
        let page = self.first_page(&feed, &hidden, order, since, limit).await?;
        if let Some(served) = page.served {
            metrics().ranked_read(order.as_str(), served.as_str());
        }
        Ok(page)
    }

    /// A ranked order's first page, and how it was served.
    async fn first_page(
        &self,
        feed: &Feed,
        hidden: &Hidden,
        order: Order,
        since: Option<PostId>,
        limit: usize,
    ) -> Result<RankedPage> {
        let served = |mut page: RankedPage, how| {
            page.served = Some(how);
            Ok(page)
        };
        // The same first page asked again, with nothing changed since but
        // counts and the clock, is the order ranked then.
        let stamp = self.page_at(feed.clone(), None).await?.map(|at| at.stamp);
        let asked = asked_key(order, since, limit);
        if let (Order::Balanced, Some(stamp)) = (order, stamp) {
            let kept = self
                .ranker
                .snapshots
                .reusable(feed, asked, stamp, REUSE_WITHIN);
            if let Some(id) = kept {
                let page = self.snapshot_page(feed, hidden, id, 0, limit).await?;
                return served(page, Served::Kept);
            }
            match self.extend(feed, hidden, limit, asked, stamp).await {
                Ok(Some(page)) => return served(page, Served::Extended),
                Ok(None) => {}
                Err(e) if e.kind() == crate::error::ErrorKind::Invalid => return Err(e),
                Err(e) => {
                    tracing::warn!(error = %e.chain(), "extending a ranked order failed; ranked in full")
                }
            }
        }
        let Ok(_running) = self.ranker.running.try_acquire() else {
            let page = self.latest_as_ranked(feed, hidden, limit, None, true);
            return served(page.await?, Served::Busy);
        };
        let deadline = self.ranker.settings.deadline;
        let started = std::time::Instant::now();
        let reuse = stamp.map(|s| (asked, s));
        let ranking = self.rank(feed, hidden, order, since, limit, reuse);
        let why = match tokio::time::timeout(deadline, ranking).await {
            // A ranking whose reads never waited finishes within the
            // timer's first poll: late all the same.
            Ok(Ok(_)) if started.elapsed() > deadline => Served::Deadline,
            Ok(Ok((page, shared))) => {
                if let Some(snapshot) = shared {
                    self.share_snapshot(snapshot).await;
                }
                return served(page, Served::Ranked);
            }
            Ok(Err(e)) if e.kind() == crate::error::ErrorKind::Invalid => return Err(e),
            Ok(Err(e)) => {
                tracing::warn!(error = %e.chain(), "ranking failed; served in latest order");
                Served::Error
            }
            Err(_) => Served::Deadline,
        };
        let page = self.latest_as_ranked(feed, hidden, limit, None, true);
        served(page.await?, why)
    }

    /// A latest page, as a ranked page whose entries are there because the
    /// reader follows their accounts.
    async fn latest_as_ranked(
        &self,
        feed: &Feed,
        hidden: &Hidden,
        limit: usize,
        before: Option<&str>,
        fallback: bool,
    ) -> Result<RankedPage> {
        let (page, source) = self
            .feed_page(feed, hidden, Some(limit as u64), before)
            .await?;
        let items = page
            .items
            .into_iter()
            .map(|item| RankedItem {
                reason: match item.reposted_by.is_empty() {
                    true => Reason::Followed,
                    false => Reason::RepostedBy,
                },
                item,
                parts: Parts::unranked(),
                more: 0,
            })
            .collect();
        Ok(RankedPage {
            items,
            next_cursor: page.next_cursor.map(|p| p.to_string()),
            fallback,
            served: None,
            source,
        })
    }

    /// Ranks the candidates, keeps the order as a snapshot, and serves its
    /// first page, with the snapshot to share (see [`Self::share_snapshot`]).
    /// A balanced order read at a stamp keeps what it ranked from, for the
    /// reader's next first page ([`Self::extend`]).
    async fn rank(
        &self,
        feed: &Feed,
        hidden: &Hidden,
        order: Order,
        since: Option<PostId>,
        limit: usize,
        reuse: Option<(u64, Stamp)>,
    ) -> Result<(RankedPage, Option<Snapshot>)> {
        let settings = &self.ranker.settings;
        let started = Instant::now();
        let now = now_ms();
        let user = feed.owner().expect("a reader's timeline");
        let writes = self.stores.epoch.of_reader(user);
        let (items, inputs, source) = self.read_inputs(feed, hidden, now).await?;
        let ranked = match order {
            Order::CatchUp => {
                let after = match since {
                    Some(s) => Some(s),
                    None => self.home_marker(user).await?,
                };
                inputs.catch_up(after, &settings.weights)
            }
            _ => inputs.balanced(&settings.weights, now, limit),
        };
        let first: Vec<RankedItem> = ranked
            .iter()
            .take(limit)
            .map(|r| RankedItem {
                item: items[r.index].clone(),
                reason: r.reason,
                parts: r.parts,
                more: r.more,
            })
            .collect();
        let (id, more, shared) = self.keep_order(feed, &inputs, &ranked, limit, reuse);
        if let (Order::Balanced, Some(_)) = (order, reuse) {
            let basis = Basis {
                inputs: Arc::new(inputs),
                writes,
                counted: started,
                read_ms: now,
                refreshing: None,
            };
            self.ranker.bases.put(feed.id(), basis);
        }
        let page = RankedPage {
            items: first,
            next_cursor: more.then(|| cursor(id, limit)),
            fallback: false,
            served: None,
            source,
        };
        Ok((page, shared))
    }

    /// Keeps `ranked` (an order of `inputs`) as a snapshot of `feed`: its
    /// id, whether it goes past its first page, and the copy to share.
    fn keep_order(
        &self,
        feed: &Feed,
        inputs: &RankInputs,
        ranked: &[Ranked],
        limit: usize,
        reuse: Option<(u64, Stamp)>,
    ) -> (u64, bool, Option<Snapshot>) {
        let placed: Vec<SnapshotEntry> = ranked
            .iter()
            .map(|r| {
                let e = inputs.entry(r.index);
                SnapshotEntry {
                    post: e.post,
                    item: e.position,
                    author: e.placer.clone(),
                    reason: r.reason,
                    parts: r.parts,
                    more: r.more,
                }
            })
            .collect();
        // Kept even when one page holds it all, to be served again.
        let more = placed.len() > limit;
        let (id, shared) = self.keep_snapshot(feed, placed, reuse, more);
        (id, more, shared)
    }

    /// What a ranking of `feed` at `now` ranks: the candidates of the
    /// window (as the latest order shows them), their counts, and what
    /// the reader brings, read side by side.
    async fn read_inputs(
        &self,
        feed: &Feed,
        hidden: &Hidden,
        now: u64,
    ) -> Result<(Vec<FeedItem>, RankInputs, ReadSource)> {
        let floor = self.window_floor(now);
        let user = feed.owner().expect("a reader's timeline");
        let (items, source) = self.candidates(feed, hidden, floor).await?;
        let ids: Vec<PostId> = items.iter().map(|i| i.post.id).collect();
        let (counts, signals, less) = tokio::try_join!(
            self.stores.content.post_counts(&ids),
            self.signals(user, floor),
            self.shown_less(user)
        )?;
        let inputs = RankInputs::new(&fresh(&items, counts), signals, less);
        Ok((items, inputs, source))
    }

    /// The oldest post a ranking at `now` takes.
    fn window_floor(&self, now: u64) -> PostId {
        let window = self.ranker.settings.window.as_millis() as u64;
        PostId::first_at(now.saturating_sub(window))
    }

    /// A balanced first page from what the reader's order was last ranked
    /// from, with only the entries that arrived since read (and their
    /// counts): while no write that concerns the reader ended since it was
    /// read (their follow, mute, priority...; a block of them; a deletion,
    /// a repost: any reader's), within [`EXTEND_WITHIN`] of its counts. Counts older than [`REUSE_WITHIN`] are read again off
    /// the reader's path, for their next first page. `None`: no basis
    /// serves.
    async fn extend(
        &self,
        feed: &Feed,
        hidden: &Hidden,
        limit: usize,
        asked: u64,
        stamp: Stamp,
    ) -> Result<Option<RankedPage>> {
        let key = feed.id();
        let Some(basis) = self.ranker.bases.get(&key) else {
            return Ok(None);
        };
        let owner = feed.owner().expect("a reader's timeline");
        let writes = self.stores.epoch.of_reader(owner);
        if basis.writes != writes || basis.counted.elapsed() > EXTEND_WITHIN {
            tracing::debug!(
                writes,
                age_ms = basis.counted.elapsed().as_millis() as u64,
                "a balanced order's basis is stale: ranked in full"
            );
            return Ok(None);
        }
        let settings = &self.ranker.settings;
        let now = now_ms();
        let floor = self.window_floor(now);
        let from = read_again_from(&basis, floor);
        let window = IdRange {
            below: None,
            from: Some(from),
        };
        let max = settings.max_candidates;
        let since = read_timeline_in(&self.stores, feed, hidden, window, max).await?;
        let ids: Vec<PostId> = since.items.iter().map(|i| i.post.id).collect();
        let counts = self.stores.content.post_counts(&ids).await?;
        let inputs = basis
            .inputs
            .extended(from, &fresh(&since.items, counts), floor, max);
        let ranked = inputs.balanced(&settings.weights, now, limit);
        let reuse = Some((asked, stamp));
        let (id, _, shared) = self.keep_order(feed, &inputs, &ranked, limit, reuse);
        let refresh = basis.counted.elapsed() > REUSE_WITHIN;
        self.ranker.bases.put(
            key.clone(),
            Basis {
                inputs: Arc::new(inputs),
                read_ms: now,
                writes,
                ..basis
            },
        );
        if refresh && self.ranker.bases.start_refresh(&key) {
            let (reads, feed) = (self.clone(), feed.clone());
            tokio::spawn(async move { reads.refresh_basis(feed).await });
        }
        if let Some(snapshot) = shared {
            self.share_snapshot(snapshot).await;
        }
        Ok(Some(self.snapshot_page(feed, hidden, id, 0, limit).await?))
    }

    /// Reads `feed`'s basis again in full (counts, the reader's signals),
    /// when a ranking slot is free; else a later first page tries again.
    async fn refresh_basis(&self, feed: Feed) {
        let Ok(_running) = self.ranker.running.try_acquire() else {
            tracing::debug!("no ranking slot for a basis's refresh");
            return;
        };
        let user = feed.owner().expect("a reader's timeline").clone();
        let started = Instant::now();
        let read = async {
            if self.page_at(feed.clone(), None).await?.is_none() {
                return Ok(None);
            }
            let writes = self.stores.epoch.of_reader(&user);
            let hidden = self.hidden_from(&user, context_of(&feed)).await?;
            let now = now_ms();
            let (_, inputs, _) = self.read_inputs(&feed, &hidden, now).await?;
            Ok::<_, Error>(Some((writes, now, inputs)))
        };
        match read.await {
            Ok(Some((writes, read_ms, inputs))) => self.ranker.bases.put(
                feed.id(),
                Basis {
                    inputs: Arc::new(inputs),
                    writes,
                    counted: started,
                    read_ms,
                    refreshing: None,
                },
            ),
            Ok(None) => {}
            Err(e) => {
                tracing::debug!(error = %e.chain(), "a ranked order's basis was not refreshed")
            }
        }
    }

    /// A later page of a snapshot: its entries loaded again as the reader
    /// sees them now.
    async fn snapshot_page(
        &self,
        feed: &Feed,
        hidden: &Hidden,
        snapshot: u64,
        offset: usize,
        limit: usize,
    ) -> Result<RankedPage> {
        let Some((placed, more)) = self.snapshot_entries(feed, snapshot, offset, limit).await?
        else {
            return Err(Error::invalid(
                "cursor_expired",
                "this ranked order's snapshot expired (or another process ranked it and could not share it): read its first page again",
            ));
        };
        let raw: Vec<Entry> = placed
            .iter()
            .map(|p| Entry::linked(p.item, p.author.clone()))
            .collect();
        let shown = visible(&self.stores, Scope::Feed(feed), hidden, &raw).await?;
        let mut by_post: HashMap<PostId, FeedItem> =
            shown.into_iter().map(|i| (i.post.id, i)).collect();
        let items = placed
            .into_iter()
            .filter_map(|p| {
                by_post.remove(&p.post).map(|item| RankedItem {
                    item,
                    reason: p.reason,
                    parts: p.parts,
                    more: p.more,
                })
            })
            .collect();
        Ok(RankedPage {
            items,
            next_cursor: more.then(|| cursor(snapshot, offset + limit)),
            fallback: false,
            served: None,
            source: ReadSource::Cache,
        })
    }

    /// The user's home marker, if set.
    async fn home_marker(&self, user: &UserId) -> Result<Option<PostId>> {
        let markers = self.stores.content.markers(user).await?;
        Ok(markers
            .into_iter()
            .find(|m| m.timeline == MarkerTimeline::Home)
            .map(|m| m.last_read))
    }

    /// What the latest order shows from `floor` on, at most
    /// [`Ranking::max_candidates`]: one read, whose merges stop at the
    /// window's floor.
    async fn candidates(
        &self,
        feed: &Feed,
        hidden: &Hidden,
        floor: PostId,
    ) -> Result<(Vec<FeedItem>, ReadSource)> {
        let max = self.ranker.settings.max_candidates;
        let window = IdRange {
            below: None,
            from: Some(floor),
        };
        let page = read_timeline_in(&self.stores, feed, hidden, window, max).await?;
        metrics().timeline_read(page.source.as_str());
        Ok((page.items, page.source))
    }
}
