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

use super::rank_bases::Basis;
use super::rank_extend::REUSE_WITHIN;
use super::rank_read::{context_of, cursor};
pub use super::rank_types::{Order, RankedItem, RankedPage, Ranking, Served};
pub use super::reader_signals::SHOWN_LESS;
use super::snapshots::Snapshot;
use super::Reads;
use crate::error::{Error, Result};
use crate::feed::stamp::Stamp;
use crate::feed::Feed;
use crate::ids::{now_ms, ListName, PostId, UserId};
use crate::metrics::metrics;
use crate::model::marker::MarkerTimeline;
use crate::model::page_size;
use socialite_domain::accounts::access::{check, Act, Caller};
use socialite_domain::feed::rank::{Parts, Reason};
use socialite_domain::graph::relations::Hidden;
use std::sync::Arc;
use std::time::Instant;

/// What a first page was asked for, as the snapshot it made remembers it.
fn asked_key(order: Order, since: Option<PostId>, limit: usize) -> u64 {
    let order = order as u64;
    let since = since.map_or(0, |s| s.0);
    since.rotate_left(17) ^ ((limit as u64) << 8) ^ order
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
            Some(list) => Feed::List(user, list),
            None => Feed::Home(user),
        };
        let owner = feed.owner().expect("a reader's timeline");
        let hidden = self.reader_hidden(owner, context_of(&feed)).await?;
        if let Feed::List(user, list) = &feed {
            self.has_list(user, list).await?;
        }
        if let (Order::CatchUp, Feed::List(..), None, None) = (order, &feed, since, cursor) {
            return Err(Error::invalid(
                "invalid_query",
                "catch-up on a list starts after `since` (a list has no marker); later pages follow `cursor`",
            ));
        }
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
        let (items, inputs, source, acts) = self.read_inputs(feed, hidden, now).await?;
        let inputs = Arc::new(inputs);
        let (ranked, id, more, shared) = match order {
            Order::CatchUp => {
                let after = match since {
                    Some(s) => Some(s),
                    None => self.home_marker(user).await?,
                };
                let ranked = inputs.catch_up(after, &settings.weights);
                let (id, more, shared) = self.keep_order(feed, &inputs, &ranked, limit, reuse);
                (ranked, id, more, shared)
            }
            _ => self.keep_balanced(feed, &inputs, now, limit, reuse),
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
        if let (Order::Balanced, Some(_)) = (order, reuse) {
            let basis = Basis::read_in_full(inputs, Arc::new(acts), writes, started, now);
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

    /// The user's home marker, if set.
    async fn home_marker(&self, user: &UserId) -> Result<Option<PostId>> {
        let markers = self.stores.content.markers(user).await?;
        Ok(markers
            .into_iter()
            .find(|m| m.timeline == MarkerTimeline::Home)
            .map(|m| m.last_read))
    }
}
