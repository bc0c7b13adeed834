//! Ranked orders page over a snapshot: the order as the first page ranked
//! it, kept for [`Ranking::snapshot_ttl`](super::ranked::Ranking) so that
//! page two neither repeats an entry of page one nor skips one while
//! posts arrive and counts move. A snapshot holds each entry's post, the
//! item that placed it and why it is there (not the post: each page loads
//! its posts, so a post deleted or an author muted since is left out).
//!
//! The process that ranked an order keeps it in memory. Where several
//! processes serve the same readers, the store keeps it as well
//! ([`crate::ports::RankSnapshots`]), and a process asked for a page of an
//! order it does not hold reads it from there once.
//! Bounded: each reader holds at most [`PER_READER`] snapshots (their
//! newest), and all together at most [`MAX_ENTRIES`] entries (the oldest
//! go first).

use super::Reads;
use crate::error::Result;
use crate::feed::stamp::Stamp;
use crate::feed::Feed;
use crate::ids::{now_ms, TimelineId, UserId};
use socialite_domain::feed::rank::{Ranked, Weights};
use socialite_domain::feed::rank_inputs::RankInputs;
pub use socialite_domain::feed::snapshot::{Snapshot, SnapshotEntry, PER_READER};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Entries all snapshots of a process hold together.
pub const MAX_ENTRIES: usize = 1_000_000;

struct Kept {
    /// The timeline ranked (a reader's home or one of their lists).
    feed: Feed,
    made: Instant,
    snapshot: Snapshot,
    /// What its first page answered, and the stamp the reader's timeline
    /// had when it was ranked: while both hold, the same first page asked
    /// again is this one ([`Snapshots::reusable`]).
    reuse: Option<(u64, Stamp)>,
    /// What ranks the entries after those held, until a later page asks.
    rest: Option<Rest>,
    /// Entries it counts toward [`MAX_ENTRIES`]: those held and those
    /// its rest will rank.
    counted: usize,
}

impl Kept {
    fn page(
        &self,
        timeline: &TimelineId,
        offset: usize,
        limit: usize,
    ) -> Option<(Vec<SnapshotEntry>, bool)> {
        let (entries, more) = self
            .snapshot
            .page(timeline, crate::ids::now_ms(), offset, limit)?;
        Some((entries, more || self.rest.is_some()))
    }
}

/// The rest of a balanced order kept with its first page only: most
/// readers never ask a later page, so the order past the first is ranked
/// when one first does, from the same inputs at the same time (which
/// gives the entries the whole order would: each page starts the authors
/// afresh).
#[derive(Clone)]
pub(super) struct Rest {
    pub inputs: Arc<RankInputs>,
    pub weights: Weights,
    pub now_ms: u64,
    pub page: usize,
    /// The first page's candidates.
    pub first: Vec<usize>,
    /// How many entries follow the first page.
    pub left: usize,
}

impl Rest {
    fn entries(&self) -> Vec<SnapshotEntry> {
        let ranked =
            (self.inputs).balanced_after(&self.weights, self.now_ms, self.page, &self.first);
        entries_of(&self.inputs, &ranked)
    }
}

/// The snapshot entries of `ranked`, an order of `inputs`.
pub(super) fn entries_of(inputs: &RankInputs, ranked: &[Ranked]) -> Vec<SnapshotEntry> {
    ranked
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
        .collect()
}

#[derive(Default)]
struct Held {
    by_id: HashMap<u64, Kept>,
    /// Each reader's snapshot ids, oldest first (at most [`PER_READER`]).
    by_reader: HashMap<UserId, Vec<u64>>,
    /// Ids, oldest first; some may be gone already (a reader's newer
    /// snapshots replaced them), and are skipped when met.
    order: VecDeque<u64>,
    entries: usize,
}

/// The snapshots one process holds.
pub struct Snapshots {
    ttl: Duration,
    held: Mutex<Held>,
}

/// A new snapshot id: random, so that ids are not guessable from one
/// another (a snapshot is served only to its reader anyway) and no two
/// processes make the same.
pub fn new_id() -> u64 {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness: distinct within the process still.
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return mix(n ^ crate::ids::now_ms().rotate_left(20));
    }
    u64::from_le_bytes(bytes)
}

impl Snapshots {
    pub fn new(ttl: Duration) -> Snapshots {
        Snapshots {
            ttl,
            held: Mutex::default(),
        }
    }

    /// How long a snapshot serves pages.
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// Holds `snapshot` as the order of `feed` (a reader's home or list),
    /// ranked for the request `asked` at `stamp` (if its timeline has one).
    /// Its id.
    pub fn keep(&self, feed: &Feed, snapshot: Snapshot, reuse: Option<(u64, Stamp)>) -> u64 {
        self.keep_with(feed, snapshot, reuse, None)
    }

    /// [`Self::keep`] of a snapshot whose entries past those it holds are
    /// ranked by `rest` when a page first asks for them.
    pub(super) fn keep_with(
        &self,
        feed: &Feed,
        snapshot: Snapshot,
        reuse: Option<(u64, Stamp)>,
        rest: Option<Rest>,
    ) -> u64 {
        let reader = feed.owner().expect("a reader's timeline").clone();
        let id = snapshot.id;
        let mut h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        if h.by_id.contains_key(&id) {
            return id;
        }
        let mine = h.by_reader.get(&reader).cloned().unwrap_or_default();
        for old in mine
            .iter()
            .take((mine.len() + 1).saturating_sub(PER_READER))
        {
            h.remove(*old);
        }
        h.by_reader.entry(reader).or_default().push(id);
        let counted = snapshot.entries.len() + rest.as_ref().map_or(0, |r| r.left);
        h.entries += counted;
        h.by_id.insert(
            id,
            Kept {
                feed: feed.clone(),
                made: Instant::now(),
                snapshot,
                reuse,
                rest,
                counted,
            },
        );
        h.order.push_back(id);
        let now = Instant::now();
        while let Some(&oldest) = h.order.front() {
            let stale = h
                .by_id
                .get(&oldest)
                .is_none_or(|s| now.duration_since(s.made) > self.ttl);
            if !stale && h.entries <= MAX_ENTRIES {
                break;
            }
            h.order.pop_front();
            h.remove(oldest);
        }
        if h.order.len() > 2 * h.by_id.len() + 1024 {
            // Mostly ids already gone: keep the queue to what is held.
            let Held { order, by_id, .. } = &mut *h;
            order.retain(|i| by_id.contains_key(i));
        }
        id
    }

    /// The entries of `feed`'s snapshot `id` from `offset`, at most
    /// `limit`, and whether more follow; `None` if this process does not
    /// hold it, it expired, or it is not that timeline's.
    pub fn page(
        &self,
        feed: &Feed,
        id: u64,
        offset: usize,
        limit: usize,
    ) -> Option<(Vec<SnapshotEntry>, bool)> {
        let rest = {
            let h = self.held.lock().unwrap_or_else(|p| p.into_inner());
            let s = h.by_id.get(&id)?;
            if s.made.elapsed() > self.ttl || s.snapshot.timeline != feed.id() {
                return None;
            }
            match &s.rest {
                Some(rest) if offset.saturating_add(limit) > s.snapshot.entries.len() => {
                    rest.clone()
                }
                _ => return s.page(&feed.id(), offset, limit),
            }
        };
        // Ranked outside the lock: other readers' pages need not wait.
        let entries = rest.entries();
        let mut h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let s = h.by_id.get_mut(&id)?;
        if s.rest.take().is_some() {
            s.snapshot.entries.extend(entries);
        }
        s.page(&feed.id(), offset, limit)
    }
}

impl Snapshots {
    /// The newest of `feed`'s snapshots ranked for `asked` at `stamp`,
    /// if it is younger than `within`: nothing its order depends on has
    /// changed since but the posts' counts and the clock, which move a
    /// ranked order little in that time.
    pub fn reusable(&self, feed: &Feed, asked: u64, stamp: Stamp, within: Duration) -> Option<u64> {
        let h = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let mine = h.by_reader.get(feed.owner()?)?;
        mine.iter().rev().copied().find(|id| {
            h.by_id.get(id).is_some_and(|s| {
                &s.feed == feed
                    && s.reuse == Some((asked, stamp))
                    && s.made.elapsed() < within.min(self.ttl)
            })
        })
    }
}

impl Held {
    /// Forgets snapshot `id` (its id stays in `order` until met there).
    fn remove(&mut self, id: u64) {
        let Some(s) = self.by_id.remove(&id) else {
            return;
        };
        self.entries -= s.counted;
        if let Some(reader) = s.feed.owner() {
            if let Some(ids) = self.by_reader.get_mut(reader) {
                ids.retain(|i| *i != id);
                if ids.is_empty() {
                    self.by_reader.remove(reader);
                }
            }
        }
    }
}

/// How a ranked read keeps its order, shares it, and finds it again.
impl Reads {
    /// Keeps `entries` as a new snapshot of `feed` in this process; its
    /// id, and a copy to share where processes share snapshots and a
    /// later page will be asked (`more`).
    pub(super) fn keep_snapshot(
        &self,
        feed: &Feed,
        entries: Vec<SnapshotEntry>,
        reuse: Option<(u64, Stamp)>,
        more: bool,
        rest: Option<Rest>,
    ) -> (u64, Option<Snapshot>) {
        let local = &self.ranker.snapshots;
        let snapshot = Snapshot {
            id: new_id(),
            reader: feed.owner().expect("a reader's timeline").clone(),
            timeline: feed.id(),
            expires_ms: now_ms() + local.ttl().as_millis() as u64,
            entries,
        };
        let shared = (more && self.stores.snapshots.is_some()).then(|| snapshot.clone());
        (local.keep_with(feed, snapshot, reuse, rest), shared)
    }

    /// Writes a ranked first page's snapshot to the store processes share,
    /// before the page is answered, so its next page may be asked of any
    /// of them. Outside the ranking's deadline: the order is ranked
    /// already. A store that fails to keep it fails no read: this process
    /// still serves its pages.
    pub(super) async fn share_snapshot(&self, snapshot: Snapshot) {
        if let Some(shared) = &self.stores.snapshots {
            if let Err(e) = shared.keep_snapshot(&snapshot).await {
                tracing::warn!(error = %e, "a ranked order's snapshot was not stored: only this process serves its later pages");
            }
        }
    }

    /// Entries of `feed`'s snapshot `id` from `offset` (at most `limit`),
    /// and whether more follow: from this process's memory, or read once
    /// from the store where processes share snapshots. `None`: expired, or
    /// not this timeline's.
    pub(super) async fn snapshot_entries(
        &self,
        feed: &Feed,
        id: u64,
        offset: usize,
        limit: usize,
    ) -> Result<Option<(Vec<SnapshotEntry>, bool)>> {
        let local = &self.ranker.snapshots;
        if let Some(page) = local.page(feed, id, offset, limit) {
            return Ok(Some(page));
        }
        let (Some(shared), Some(reader)) = (&self.stores.snapshots, feed.owner()) else {
            return Ok(None);
        };
        let Some(snapshot) = shared.snapshot(reader, id).await? else {
            return Ok(None);
        };
        let page = snapshot.page(&feed.id(), now_ms(), offset, limit);
        if page.is_some() {
            // Its further pages from memory.
            local.keep(feed, snapshot, None);
        }
        Ok(page)
    }
}

/// A 64-bit mixer (SplitMix64's finaliser): distinct inputs, distinct ids.
fn mix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
}

#[cfg(test)]
#[path = "snapshots_tests.rs"]
mod tests;
