//! A user's deletion on the embedded store, begun and stepped as
//! `socialite_core::plan::deletion` plans it (its facts and steps are in
//! `txn`). Its mark is a `DELETING` row (with the user's lists at the
//! start), which every existence check reads as absent and which
//! `pending_deletions` finds after a crash.

use crate::store::EmbeddedStore;
use crate::tables::*;
use redb::ReadableTable;
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_core::plan::deletion::{begin_deletion, deletion_step};
use socialite_core::plan::run_ready;
use socialite_core::rules::cascade::DeletionStage;

impl EmbeddedStore {
    pub(crate) async fn begin_deletion_of(&self, id: &UserId) -> Result<bool> {
        let user = id.clone();
        self.writer
            .write(move |ctx| run_ready(begin_deletion(ctx, &user)))
            .await
    }

    pub(crate) fn pending_deletion_list(&self) -> Result<Vec<UserId>> {
        self.read(|txn| {
            let table = txn.open_table(DELETING).store()?;
            let mut out = Vec::new();
            for item in table.iter().store()? {
                let (k, _) = item.store()?;
                out.push(UserId::from_stored(k.value().to_owned()));
            }
            Ok(out)
        })
    }

    pub(crate) async fn deletion_step_of(
        &self,
        id: &UserId,
        stage: DeletionStage,
        limit: usize,
    ) -> Result<bool> {
        let user = id.clone();
        let done = self
            .writer
            .write(move |ctx| run_ready(deletion_step(ctx, &user, stage, limit)))
            .await?;
        // Posts removed or rewritten leave the post caches.
        if matches!(stage, DeletionStage::Posts | DeletionStage::Reposts) {
            self.recent.forget(id);
        }
        for p in done.posts {
            self.posts.remove(p);
        }
        Ok(done.more)
    }
}
