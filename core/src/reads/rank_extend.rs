//! A balanced first page after new posts: ranked from what the reader's
//! last ranking read ([`super::rank_bases`]), with only the entries that
//! arrived since read, as docs/ranking.md tells ("A first page after new
//! posts").

use super::rank_bases::{read_again_from, Basis};
use super::rank_read::{context_of, fresh};
use super::rank_types::RankedPage;
use super::Reads;
use crate::error::{Error, Result};
use crate::feed::stamp::Stamp;
use crate::feed::timeline::read_timeline_except;
use crate::feed::Feed;
use crate::ids::{now_ms, PostId};
use crate::ports::IdRange;
use socialite_domain::graph::relations::Hidden;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a balanced first page is served again while the reader's
/// timeline is unchanged; and after how long the counts and the reader's
/// signals a basis ranks with are read again (off the reader's path).
pub(super) const REUSE_WITHIN: Duration = Duration::from_secs(30);

/// How often a basis's candidates are all read again (off the reader's
/// path), not only those that arrived: what a read since could not see (a
/// delivery later than [`super::rank_bases::LATE`]) joins then.
const READ_IN_FULL: Duration = Duration::from_secs(600);

/// How long a basis extends first pages at most: past it (its refresh
/// could not run), a first page ranks in full.
const EXTEND_WITHIN: Duration = Duration::from_secs(120);

impl Reads {
    /// A balanced first page from what the reader's order was last ranked
    /// from, with only the entries that arrived since read (and their
    /// counts): while no write that concerns the reader ended since it was
    /// read (their follow, mute, priority...; a block of them; a deletion,
    /// a repost: any reader's), within [`EXTEND_WITHIN`] of its counts. Counts older than [`REUSE_WITHIN`] are read again off
    /// the reader's path, for their next first page. `None`: no basis
    /// serves.
    pub(super) async fn extend(
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
        // What it holds there already is neither loaded nor counted again.
        let held = basis.inputs.positions_from(from);
        let since = read_timeline_except(&self.stores, feed, hidden, window, max, &held).await?;
        let ids: Vec<PostId> = since.items.iter().map(|i| i.post.id).collect();
        let counts = self.stores.content.post_counts(&ids).await?;
        let inputs = basis
            .inputs
            .extended(&fresh(&since.items, counts), floor, max);
        let inputs = Arc::new(inputs);
        let reuse = Some((asked, stamp));
        let (_, id, _, shared) = self.keep_balanced(feed, &inputs, now, limit, reuse);
        let refresh = basis.counted.elapsed() > REUSE_WITHIN;
        self.ranker.bases.put(
            key.clone(),
            Basis {
                inputs,
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
    /// Reads the counts of `feed`'s basis and whom its reader interacts
    /// with again (its candidates too, once they were last all read [`READ_IN_FULL`]
    /// ago), when a ranking slot is free; else a later first page tries
    /// again.
    async fn refresh_basis(&self, feed: Feed) {
        let Ok(_running) = self.ranker.running.try_acquire() else {
            tracing::debug!("no ranking slot for a basis's refresh");
            return;
        };
        let Some(basis) = self.ranker.bases.get(&feed.id()) else {
            return;
        };
        let user = feed.owner().expect("a reader's timeline").clone();
        let started = Instant::now();
        let read = async {
            if basis.read_in_full.elapsed() < READ_IN_FULL {
                let floor = self.window_floor(now_ms());
                let posts = basis.inputs.posts();
                // The reader's priorities and "show less" posts change only
                // by their own writes, which end the basis: kept.
                let (counts, (signals, acts)) = tokio::try_join!(
                    self.stores.content.post_counts(&posts),
                    self.interactions(&user, floor, &basis.acts),
                )?;
                let inputs = basis.inputs.recounted(&counts, signals.interactions);
                return Ok(Some(Basis {
                    inputs: Arc::new(inputs),
                    acts: Arc::new(acts),
                    counted: started,
                    refreshing: None,
                    ..basis
                }));
            }
            if self.page_at(feed.clone(), None).await?.is_none() {
                return Ok(None);
            }
            let writes = self.stores.epoch.of_reader(&user);
            let hidden = self.hidden_from(&user, context_of(&feed)).await?;
            let now = now_ms();
            let (_, inputs, _, acts) = self.read_inputs(&feed, &hidden, now).await?;
            let (inputs, acts) = (Arc::new(inputs), Arc::new(acts));
            Ok::<_, Error>(Some(Basis::read_in_full(
                inputs, acts, writes, started, now,
            )))
        };
        match read.await {
            Ok(Some(basis)) => self.ranker.bases.put(feed.id(), basis),
            Ok(None) => {}
            Err(e) => {
                tracing::debug!(error = %e.chain(), "a ranked order's basis was not refreshed")
            }
        }
    }
}
