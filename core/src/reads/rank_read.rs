//! What a ranked order reads: the candidates of the window (as the latest
//! order shows them), their counts and what the reader brings, made into
//! the inputs a ranking ranks ([`RankInputs`]); and how an order is kept
//! as a snapshot for its later pages.

use super::rank_types::{RankedItem, RankedPage};
use super::reader_signals::Acts;
use super::snapshots::{entries_of, Rest, Snapshot};
use super::Reads;
use crate::error::{Error, Result};
use crate::feed::stamp::Stamp;
use crate::feed::timeline::{read_timeline_in, ReadSource};
use crate::feed::visible::{visible, Scope};
use crate::feed::Feed;
use crate::ids::{PostId, UserId};
use crate::metrics::metrics;
use crate::model::filter::FilterContext;
use crate::model::{Entry, FeedItem, PostCounts};
use crate::ports::IdRange;
use socialite_domain::feed::rank::Ranked;
use socialite_domain::feed::rank_inputs::{Fresh, RankInputs};
use socialite_domain::graph::relations::Hidden;
use std::collections::HashMap;
use std::sync::Arc;

/// Whose item placed `item` in the timeline: the newest reposter's, or
/// the author's own post.
pub(super) fn placer(item: &FeedItem) -> &UserId {
    item.reposted_by.first().unwrap_or(&item.post.author)
}
/// Which of the reader's filters a ranked order of `feed` applies.
pub(super) fn context_of(feed: &Feed) -> FilterContext {
    match feed {
        Feed::List(..) => FilterContext::Lists,
        _ => FilterContext::Home,
    }
}
/// The entries of a newest-first read as ranking takes them, with their
/// posts' `counts` (in the same order).
pub(super) fn fresh(items: &[FeedItem], counts: Vec<PostCounts>) -> Vec<Fresh> {
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
pub(super) fn cursor(id: u64, offset: usize) -> String {
    format!("r{id:016x}.{offset}")
}

impl Reads {
    /// What a ranking of `feed` at `now` ranks: the candidates of the
    /// window (as the latest order shows them), their counts, and what
    /// the reader brings, read side by side.
    pub(super) async fn read_inputs(
        &self,
        feed: &Feed,
        hidden: &Hidden,
        now: u64,
    ) -> Result<(Vec<FeedItem>, RankInputs, ReadSource, Acts)> {
        let floor = self.window_floor(now);
        let user = feed.owner().expect("a reader's timeline");
        let (items, source) = self.candidates(feed, hidden, floor).await?;
        let ids: Vec<PostId> = items.iter().map(|i| i.post.id).collect();
        let (counts, signals, less) = tokio::try_join!(
            self.stores.content.post_counts(&ids),
            self.signals(user, floor),
            self.shown_less(user)
        )?;
        let (signals, acts) = signals;
        let inputs = RankInputs::new(&fresh(&items, counts), signals, less);
        Ok((items, inputs, source, acts))
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
    /// The oldest post a ranking at `now` takes.
    pub(super) fn window_floor(&self, now: u64) -> PostId {
        let window = self.ranker.settings.window.as_millis() as u64;
        PostId::first_at(now.saturating_sub(window))
    }
    /// Keeps `ranked` (an order of `inputs`) as a snapshot of `feed`: its
    /// id, whether it goes past its first page, and the copy to share.
    pub(super) fn keep_order(
        &self,
        feed: &Feed,
        inputs: &RankInputs,
        ranked: &[Ranked],
        limit: usize,
        reuse: Option<(u64, Stamp)>,
    ) -> (u64, bool, Option<Snapshot>) {
        let placed = entries_of(inputs, ranked);
        // Kept even when one page holds it all, to be served again.
        let more = placed.len() > limit;
        let (id, shared) = self.keep_snapshot(feed, placed, reuse, more, None);
        (id, more, shared)
    }
    /// The balanced order of `inputs` at `now`, kept as a snapshot of
    /// `feed`: in whole where processes share snapshots (another may be
    /// asked its later pages), else its first page, the rest ranked when
    /// a later page is first asked. Its first page, the snapshot's id,
    /// whether more follow, and the copy to share.
    pub(super) fn keep_balanced(
        &self,
        feed: &Feed,
        inputs: &Arc<RankInputs>,
        now: u64,
        limit: usize,
        reuse: Option<(u64, Stamp)>,
    ) -> (Vec<Ranked>, u64, bool, Option<Snapshot>) {
        let weights = &self.ranker.settings.weights;
        if self.stores.snapshots.is_some() {
            let mut ranked = inputs.balanced(weights, now, limit);
            let (id, more, shared) = self.keep_order(feed, inputs, &ranked, limit, reuse);
            ranked.truncate(limit);
            return (ranked, id, more, shared);
        }
        let (first, all) = inputs.balanced_first(weights, now, limit);
        let rest = (all > first.len()).then(|| Rest {
            inputs: inputs.clone(),
            weights: weights.clone(),
            now_ms: now,
            page: limit,
            first: first.iter().map(|r| r.index).collect(),
            left: all - first.len(),
        });
        let more = rest.is_some();
        let entries = entries_of(inputs, &first);
        let (id, shared) = self.keep_snapshot(feed, entries, reuse, more, rest);
        (first, id, more, shared)
    }
    /// A later page of a snapshot: its entries loaded again as the reader
    /// sees them now.
    pub(super) async fn snapshot_page(
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
}
