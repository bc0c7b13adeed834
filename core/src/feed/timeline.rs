//! The home timeline read path: serve the cache; activate a dormant user by
//! building their cache from a read-time merge; continue past the end of the
//! cache with a merge below it.

use super::merge::{merge, newest_exact};
use super::Stores;
use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::model::Entry;
use crate::ports::{CacheRead, Coverage, IdRange};


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

/// Entries of a page, newest first: up to `limit + 1`, the extra one telling
/// that another page follows.
pub struct EntryPage {
    pub entries: Vec<Entry>,
    pub source: ReadSource,
}

pub async fn read_home(stores: &Stores, user: &UserId, before: Option<PostId>, limit: usize) -> Result<EntryPage> {
    let want = limit + 1;
    let mut source = ReadSource::Cache;
    let mut read = stores.timelines.read(user, before, want).await?;
    if !matches!(read, CacheRead::Ready { .. }) {
        activate(stores, user).await?;
        source = ReadSource::Merge;
        read = stores.timelines.read(user, before, want).await?;
    }
    let CacheRead::Ready { mut entries, coverage } = read else {
        // The cache vanished meanwhile (its user was deleted): merge only.
        let entries = merge(stores, user, IdRange { below: before, from: None }, want).await?;
        return Ok(EntryPage { entries, source: ReadSource::Merge });
    };
    if entries.len() < want {
        if let Coverage::From(floor) = coverage {
            // Below the cache's floor only a merge knows the timeline.
            let below = before.map_or(floor, |b| b.min(floor));
            let more = merge(stores, user, IdRange { below: Some(below), from: None }, want - entries.len()).await?;
            if !more.is_empty() && source == ReadSource::Cache {
                source = ReadSource::PastCache;
            }
            entries.extend(more);
        }
    }
    Ok(EntryPage { entries, source })
}

/// Builds a dormant user's cache. The cache is created (warming) *before* the
/// merge reads anything, so every post or follow that the merge misses is
/// delivered to the cache by fanout, and every unfollow or deletion that the
/// merge still saw is remembered by the warming cache and kept out of the fill.
pub async fn activate(stores: &Stores, user: &UserId) -> Result<()> {
    let cap = stores.timelines.capacity();
    stores.timelines.create(user).await?;
    let merged = merge(stores, user, IdRange::default(), cap + 1).await?;
    let (entries, coverage) = newest_exact(merged, cap);
    stores.timelines.fill(user, entries, coverage).await
}
