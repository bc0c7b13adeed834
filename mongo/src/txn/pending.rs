//! A run's new posts held back, to be written in one command: an import's
//! run of posts is read ahead ([`super::ahead`]), so its posts' reads need
//! no round trip, and each post's insert would be the run's only one.

use super::MongoTxn;
use crate::db::TxnError;
use socialite_core::plan::Step;

impl MongoTxn<'_> {
    /// Writes `steps`, holding back the posts of a run read ahead: its
    /// counts are written now (no read of the run's needs them, and no
    /// read of them needs the post).
    pub(super) async fn write_or_hold(&mut self, steps: &[Step]) -> Result<(), TxnError> {
        let held = |s: &Step| matches!(s, Step::PutPost(_) | Step::Tally { .. });
        if self.ahead.posts.is_empty() || !steps.iter().all(held) {
            self.flush_posts().await?;
            return self.apply_runs(steps).await;
        }
        let mut counts = Vec::new();
        for step in steps {
            match step {
                Step::PutPost(p) => self.pending.push(p.clone()),
                other => counts.push(other.clone()),
            }
        }
        self.apply_runs(&counts).await
    }

    /// Writes the posts held back: before any read the read-ahead does not
    /// answer, any other write, and the commit, so that every read and
    /// write meets the store as it would have had they been written at
    /// once.
    pub(super) async fn flush_posts(&mut self) -> Result<(), TxnError> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let posts = std::mem::take(&mut self.pending);
        self.store.put_posts(self.s, &posts).await
    }
}
