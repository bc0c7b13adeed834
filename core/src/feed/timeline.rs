//! The read path of every timeline: serve the cache; activate a dormant
//! timeline by building its cache from a read-time merge; continue past the
//! end of the cache with a merge below it.

use super::hybrid::merge_big;
use super::merge::{merge, newest_exact};
use super::{Feed, Stores};
use crate::error::Result;
use crate::ids::{PostId, TimelineId};
use crate::model::Entry;
use crate::ports::{CacheRead, Coverage, IdRange};
use crate::rules::relations::Hidden;

/// Where a page came from, for metrics and logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadSource {
    /// Entirely from the cache.
    Cache,
    /// The cache, continued by a read-time merge below its end.
    PastCache,
    /// A read-time merge (the user was dormant, or the cache is being built).
    Merge,
}

impl ReadSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ReadSource::Cache => "cache",
            ReadSource::PastCache => "past_cache",
            ReadSource::Merge => "merge",
        }
    }
}

/// Entries of a page, newest first, and the cursor of the next page.
pub struct EntryPage {
    pub entries: Vec<Entry>,
    pub next: Option<PostId>,
    pub source: ReadSource,
}

/// A page of `feed` as a reader sees it, without the posts of the authors
/// `hidden` from them, newest first, below `before`.
pub async fn read_timeline(
    stores: &Stores,
    feed: &Feed,
    hidden: &Hidden,
    before: Option<PostId>,
    limit: usize,
) -> Result<EntryPage> {
    // One more than the page tells whether another page follows.
    let want = limit + 1;
    if !stores.stores_timelines() {
        let range = IdRange {
            below: before,
            from: None,
        };
        let entries = merge(stores, feed, hidden, range, want).await?;
        return Ok(page(entries, limit, ReadSource::Merge));
    }
    let id = feed.id();
    let mut source = ReadSource::Cache;
    let mut read = read_visible(stores, &id, hidden, before, want).await?;
    if !matches!(read, CacheRead::Ready { .. }) {
        activate(stores, feed).await?;
        source = ReadSource::Merge;
        read = read_visible(stores, &id, hidden, before, want).await?;
    }
    let (mut entries, coverage) = match read {
        CacheRead::Ready { entries, coverage } => (entries, coverage),
        // The cache vanished meanwhile (its user was deleted): merge only.
        _ => {
            let range = IdRange {
                below: before,
                from: None,
            };
            let entries = merge(stores, feed, hidden, range, want).await?;
            return Ok(page(entries, limit, ReadSource::Merge));
        }
    };
    let range = IdRange {
        below: before,
        from: None,
    };
    let big = merge_big(stores, feed, hidden, range, want).await?;
    if let (true, Coverage::From(floor)) = (entries.len() < want, coverage) {
        if entries.len() == limit {
            // The page is full and older entries exist below the cache: the
            // next page will merge them, this one need not.
            let entries = newest_unique(entries, big, limit);
            let next = entries.last().map(|e| e.post);
            return Ok(EntryPage {
                entries,
                next,
                source,
            });
        }
        // Below the cache's floor only a merge knows the timeline.
        let below = before.map_or(floor, |b| b.min(floor));
        let range = IdRange {
            below: Some(below),
            from: None,
        };
        let more = merge(stores, feed, hidden, range, want - entries.len()).await?;
        if !more.is_empty() && source == ReadSource::Cache {
            source = ReadSource::PastCache;
        }
        entries.extend(more);
    }
    Ok(page(newest_unique(entries, big, want), limit, source))
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
/// reader sees. A group's timeline holds what its readers have hidden, and
/// any timeline may until the worker applies a new mute or block: such
/// entries are skipped, and the read goes on below them until `want` are
/// found or the stored timeline ends.
async fn read_visible(
    stores: &Stores,
    id: &TimelineId,
    hidden: &Hidden,
    before: Option<PostId>,
    want: usize,
) -> Result<CacheRead> {
    let mut read = stores.timelines.read(id, before, want).await?;
    if hidden.is_empty() {
        return Ok(read);
    }
    let mut seen = Vec::new();
    loop {
        let CacheRead::Ready { entries, coverage } = read else {
            return Ok(read);
        };
        let (ended, last) = (entries.len() < want, entries.last().map(|e| e.post));
        seen.extend(entries.into_iter().filter(|e| !hidden.hides(&e.author)));
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

/// Cuts up to `limit + 1` entries to a page of `limit`.
fn page(mut entries: Vec<Entry>, limit: usize, source: ReadSource) -> EntryPage {
    let next = (entries.len() > limit).then(|| entries[limit - 1].post);
    entries.truncate(limit);
    EntryPage {
        entries,
        next,
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
