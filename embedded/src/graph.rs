//! The follow graph of the embedded store: edge tables in both directions and
//! maintained counts, written through the same group-commit writer as the
//! content, with `Followed`/`Unfollowed` queued in the outbox.

use crate::store::{add_counts, edges_of, emit, stored_ids, user_exists, EmbeddedStore};
use crate::tables::*;
use async_trait::async_trait;
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_core::ports::GraphStore;
use socialite_core::rules::checks::EdgeChange;

type EdgeTable = redb::TableDefinition<'static, (&'static str, &'static str), ()>;

impl EmbeddedStore {
    /// One page of an edge table's second ids for `user`, after `after`.
    async fn edge_page(
        &self,
        table: EdgeTable,
        user: &UserId,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        let (u, after) = (user.clone(), after.cloned());
        let ids = self
            .read_blocking(move |txn| {
                let t = txn.open_table(table).store()?;
                edges_of(&t, u.as_str(), after.as_ref().map(|a| a.as_str()), limit)
            })
            .await?;
        Ok(stored_ids(ids))
    }
}

#[async_trait]
impl GraphStore for EmbeddedStore {
    async fn change_edge(&self, change: &EdgeChange) -> Result<bool> {
        let change = change.clone();
        self.writer
            .write(move |ctx| {
                change.check_users(|u| user_exists(ctx.txn, u.as_str()))?;
                let (f, t) = (change.follower().as_str(), change.followee().as_str());
                let mut following = ctx.txn.open_table(FOLLOWING).store()?;
                let mut followers = ctx.txn.open_table(FOLLOWERS).store()?;
                // The reverse edge is written only when the graph changes.
                let changed = if change.adds() {
                    let added = following.insert((f, t), ()).store()?.is_none();
                    if added {
                        followers.insert((t, f), ()).store()?;
                    }
                    added
                } else {
                    let removed = following.remove((f, t)).store()?.is_some();
                    if removed {
                        followers.remove((t, f)).store()?;
                    }
                    removed
                };
                drop((following, followers));
                if changed {
                    let step = change.count_step();
                    add_counts(ctx.txn, f, 0, step)?;
                    add_counts(ctx.txn, t, step, 0)?;
                    emit(ctx, &change.event())?;
                }
                Ok(changed)
            })
            .await
    }

    async fn followers(
        &self,
        user: &UserId,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        self.edge_page(FOLLOWERS, user, after, limit).await
    }

    async fn following(
        &self,
        user: &UserId,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        self.edge_page(FOLLOWING, user, after, limit).await
    }

    async fn is_following(&self, user: &UserId, target: &UserId) -> Result<bool> {
        let (u, t) = (user.clone(), target.clone());
        self.read_blocking(move |txn| {
            let table = txn.open_table(FOLLOWING).store()?;
            Ok(table.get((u.as_str(), t.as_str())).store()?.is_some())
        })
        .await
    }

    async fn followers_of(&self, users: &[UserId]) -> Result<Vec<Vec<UserId>>> {
        let users = users.to_vec();
        self.read_blocking(move |txn| {
            let table = txn.open_table(FOLLOWERS).store()?;
            users
                .iter()
                .map(|u| edges_of(&table, u.as_str(), None, usize::MAX).map(stored_ids))
                .collect()
        })
        .await
    }
}
