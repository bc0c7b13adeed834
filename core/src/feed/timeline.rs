//! The read path of every timeline: serve the cache; activate a dormant
//! timeline by building its cache from a read-time merge; continue past the
//! end of the cache with a merge below it.

use super::hybrid::merge_big;
use super::late::Undelivered;
use super::merge::{merge, newest_exact};
use super::visible::{visible, Scope};
use super::{Feed, Stores};
use crate::error::Result;
use crate::ids::{PostId, TimelineId};
use crate::model::{Entry, FeedItem};
use crate::ports::{CacheRead, Coverage, IdRange};
use socialite_domain::graph::relations::Hidden;
use std::collections::HashSet;

/// Where a page came from, for metrics and logs (ordered by cost: a page
/// read in several parts names the costliest).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReadSource {
    /// Entirely from the cache.
    Cache,
    /// The cache, continued by a read-time merge below its end.
    PastCache,
    /// The cache, joined with a read-time merge of what fanout has not
    /// delivered yet ([`super::late`]).
    Late,
    /// A read-time merge (the user was dormant, or the cache is being built).
    Merge,
}

impl ReadSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ReadSource::Cache => "cache",
            ReadSource::PastCache => "past_cache",
            ReadSource::Late => "late",
            ReadSource::Merge => "merge",
        }
    }
}

/// A page of a timeline as its reader sees it, newest first, and the
/// cursor of the next page (the position of the last entry).
pub struct FeedPage {
    pub items: Vec<FeedItem>,
    pub next: Option<PostId>,
    pub source: ReadSource,
}

/// A page of `feed` as a reader sees it, without the posts of the authors
/// `hidden` from them, newest first, below the position `before`: the
/// timeline's raw items ([`read_raw`]) as [`visible`] shows them, read on
/// below what it leaves out until the page is full.
pub async fn read_timeline(
    stores: &Stores,
    feed: &Feed,
    hidden: &Hidden,
    before: Option<PostId>,
    limit: usize,
) -> Result<FeedPage> {
    let range = IdRange {
        below: before,
        from: None,
    };
    read_timeline_in(stores, feed, hidden, range, limit).await
}

/// [`read_timeline`] within `range`: its items from `range.from` on only,
/// read no further down (a ranked order's window).
pub async fn read_timeline_in(
    stores: &Stores,
    feed: &Feed,
    hidden: &Hidden,
    range: IdRange,
    limit: usize,
) -> Result<FeedPage> {
    read_timeline_except(stores, feed, hidden, range, limit, &HashSet::new()).await
}

/// [`read_timeline_in`] without the entries at the positions `held` (a
/// caller has them already): neither loaded nor counted in `limit`.
pub async fn read_timeline_except(
    stores: &Stores,
    feed: &Feed,
    hidden: &Hidden,
    mut range: IdRange,
    limit: usize,
    held: &HashSet<PostId>,
) -> Result<FeedPage> {
    // One more than the page tells whether another page follows.
    let want = limit + 1;
    let (mut items, mut source) = (Vec::new(), ReadSource::Cache);
    let mut full_at_floor = false;
    loop {
        let raw = read_raw(stores, feed, hidden, range, want).await?;
        source = source.max(raw.source);
        let short = raw.entries.len() < want;
        range.below = raw.entries.last().map(|e| e.post);
        let mut entries = raw.entries;
        entries.retain(|e| !held.contains(&e.post));
        items.extend(visible(stores, Scope::Feed(feed), hidden, &entries).await?);
        if raw.ended || items.len() >= want {
            break;
        }
        if short && items.len() == limit {
            // A full page at the end of the cache: the next page merges
            // what lies below it, this one need not.
            full_at_floor = true;
            break;
        }
    }
    let next = match items.len() > limit {
        true => Some(items[limit - 1].position),
        false => items.last().filter(|_| full_at_floor).map(|i| i.position),
    };
    items.truncate(limit);
    Ok(FeedPage {
        items,
        next,
        source,
    })
}

/// Raw items of a page, newest first: `want` of them unless the timeline
/// ends sooner (`ended`), or the page stops at the end of a cache with
/// one fewer (the page is full; a merge below it is the next page's).
struct RawPage {
    entries: Vec<Entry>,
    ended: bool,
    source: ReadSource,
}

/// Up to `want` raw items of `feed` in `range`, newest first, without
/// those of the authors `hidden` from the reader.
async fn read_raw(
    stores: &Stores,
    feed: &Feed,
    hidden: &Hidden,
    range: IdRange,
    want: usize,
) -> Result<RawPage> {
    let mut page = read_raw_below(stores, feed, hidden, range, want).await?;
    if let Some(from) = range.from {
        // What the cache holds below the window: the window ends there.
        if let Some(cut) = page.entries.iter().position(|e| e.post < from) {
            page.entries.truncate(cut);
            page.ended = true;
        }
    }
    Ok(page)
}

/// [`read_raw`] below `range.below`; the merges stop at `range.from`, the
/// cache's entries may go below it.
async fn read_raw_below(
    stores: &Stores,
    feed: &Feed,
    hidden: &Hidden,
    range: IdRange,
    want: usize,
) -> Result<RawPage> {
    let before = range.below;
    if !stores.stores_timelines() {
        let entries = merge(stores, feed, hidden, range, want).await?;
        return Ok(raw(entries, want, ReadSource::Merge));
    }
    let id = feed.id();
    let mut source = ReadSource::Cache;
    let late = Undelivered::of(stores, feed).await?;
    let keep = |e: &Entry| !hidden.hides(&e.author) && late.as_ref().is_none_or(|l| l.keeps(e));
    let mut read = read_visible(stores, &id, &keep, before, want).await?;
    if !matches!(read, CacheRead::Ready { .. }) {
        activate(stores, feed).await?;
        source = ReadSource::Merge;
        read = read_visible(stores, &id, &keep, before, want).await?;
    }
    let (mut entries, coverage) = match read {
        CacheRead::Ready { entries, coverage } => (entries, coverage),
        // The cache vanished meanwhile (its user was deleted): merge only.
        _ => {
            let entries = merge(stores, feed, hidden, range, want).await?;
            return Ok(raw(entries, want, ReadSource::Merge));
        }
    };
    let mut big = merge_big(stores, feed, hidden, range, want).await?;
    if let Some(late) = &late {
        // What is stored may be older than its posts (an edit or a
        // deletion not yet applied): the read loads each post as it is.
        entries = entries
            .into_iter()
            .map(|e| Entry::linked(e.post, e.author))
            .collect();
        let undelivered = late.merge(stores, hidden, before, want).await?;
        if !undelivered.is_empty() {
            source = source.max(ReadSource::Late);
            big = newest_unique(big, undelivered, want);
        }
    }
    if let (true, Coverage::From(floor)) = (entries.len() < want, coverage) {
        if entries.len() == want - 1 {
            let entries = newest_unique(entries, big, want - 1);
            return Ok(RawPage {
                entries,
                ended: false,
                source,
            });
        }
        // Below the cache's floor only a merge knows the timeline.
        let below = before.map_or(floor, |b| b.min(floor));
        let range = IdRange {
            below: Some(below),
            from: range.from,
        };
        let more = merge(stores, feed, hidden, range, want - entries.len()).await?;
        if !more.is_empty() && source == ReadSource::Cache {
            source = ReadSource::PastCache;
        }
        entries.extend(more);
    }
    Ok(raw(newest_unique(entries, big, want), want, source))
}

/// The newest `limit` of two lists of entries, newest first, each post once.
fn newest_unique(mut entries: Vec<Entry>, more: Vec<Entry>, limit: usize) -> Vec<Entry> {
    if more.is_empty() {
        return entries;
    }
    entries.extend(more);
    entries.sort_unstable_by_key(|e| std::cmp::Reverse(e.post));
    entries.dedup_by_key(|e| e.post);
    entries.truncate(limit);
    entries
}

/// Up to `want` entries of the stored timeline below `before` that the
/// reader sees (`keep`). A group's timeline holds what its readers have
/// hidden, and any timeline may until the worker applies a new mute,
/// block or unfollow: such entries are skipped, and the read goes on below
/// them until `want` are found or the stored timeline ends.
async fn read_visible(
    stores: &Stores,
    id: &TimelineId,
    keep: &(dyn Fn(&Entry) -> bool + Sync),
    before: Option<PostId>,
    want: usize,
) -> Result<CacheRead> {
    let mut read = stores.timelines.read(id, before, want).await?;
    let mut seen = Vec::new();
    loop {
        let CacheRead::Ready { entries, coverage } = read else {
            return Ok(read);
        };
        let (ended, last) = (entries.len() < want, entries.last().map(|e| e.post));
        if seen.is_empty() && entries.iter().all(keep) {
            return Ok(CacheRead::Ready { entries, coverage });
        }
        seen.extend(entries.into_iter().filter(|e| keep(e)));
        if ended || seen.len() >= want {
            seen.truncate(want);
            return Ok(CacheRead::Ready {
                entries: seen,
                coverage,
            });
        }
        read = stores.timelines.read(id, last, want).await?;
    }
}

/// At most `want` entries, as a raw page: fewer end the timeline.
fn raw(mut entries: Vec<Entry>, want: usize, source: ReadSource) -> RawPage {
    entries.truncate(want);
    RawPage {
        ended: entries.len() < want,
        entries,
        source,
    }
}

/// Builds a dormant timeline's cache. The cache is created (warming) *before* the
/// merge reads anything, so every post or follow that the merge misses is
/// delivered to the cache by fanout, and every unfollow or deletion that the
/// merge still saw is remembered by the warming cache and kept out of the fill.
///
/// A reader may have found the owner just before the owner was deleted, and
/// create the cache after the worker dropped the deleted user's timelines:
/// nothing would ever drop that one, and a user created again under the same
/// id would inherit it. So once filled, the cache stays only if the owner
/// still exists; if the owner is gone it is dropped here. (If the deletion
/// commits after this check, its `TimelineDropped` event comes later and
/// drops the cache.)
pub async fn activate(stores: &Stores, feed: &Feed) -> Result<()> {
    let id = feed.id();
    let cap = stores.timelines.capacity();
    stores.timelines.create(&id).await?;
    // A stored timeline holds what its feed holds ([`Stores::authors`]);
    // what one reader hides is left out when it is read.
    let nothing = Hidden::default();
    let merged = merge(stores, feed, &nothing, IdRange::default(), cap + 1).await?;
    let (entries, coverage) = newest_exact(merged, cap);
    let entries = stores.prepare(entries).await?;
    stores.timelines.fill(&id, entries, coverage).await?;
    if let Some(owner) = feed.owner() {
        if stores.content.get_user(owner).await?.is_none() {
            stores.timelines.drop_timeline(&id).await?;
        }
    }
    Ok(())
}
