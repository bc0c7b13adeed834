//! The follow graph of the embedded store: edge tables in both directions and
//! maintained counts, written through the same group-commit writer as the
//! content, with `Followed`/`Unfollowed` queued in the outbox.

use super::content::{emit, require_user, EmbeddedStore};
use super::tables::*;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::ids::UserId;
use crate::ports::GraphStore;
use async_trait::async_trait;
use redb::{ReadableTable, WriteTransaction};

pub(super) fn add_counts(
    txn: &WriteTransaction,
    id: &str,
    followers: i64,
    following: i64,
) -> Result<()> {
    let mut counts = txn.open_table(COUNTS).store()?;
    let (a, b) = counts.get(id).store()?.map(|g| g.value()).unwrap_or((0, 0));
    let (a, b) = (
        a.saturating_add_signed(followers),
        b.saturating_add_signed(following),
    );
    counts.insert(id, (a, b)).store()?;
    Ok(())
}

/// The second members of the tuple keys that start with `first`.
pub(super) fn edges_of<T: ReadableTable<(&'static str, &'static str), ()>>(
    table: &T,
    first: &str,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<String>> {
    let start = (first, after.unwrap_or(""));
    let mut out = Vec::new();
    for item in table.range(start..).store()? {
        let (k, _) = item.store()?;
        let (a, b) = k.value();
        if a != first || out.len() >= limit {
            break;
        }
        if Some(b) == after {
            continue;
        }
        out.push(b.to_owned());
    }
    Ok(out)
}

/// Ids read back from the store, validated when they were written.
fn stored_ids(ids: Vec<String>) -> Vec<UserId> {
    ids.into_iter().map(UserId::from_stored).collect()
}

pub(super) fn to_user_ids(ids: Vec<String>) -> Result<Vec<UserId>> {
    ids.iter()
        .map(|s| UserId::parse(s).map_err(|e| Error::internal(format!("stored id: {e}"))))
        .collect()
}

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
    async fn follow(&self, follower: &UserId, followee: &UserId) -> Result<bool> {
        if follower == followee {
            return Err(Error::conflict(
                "cannot_follow_self",
                "a user cannot follow themselves",
            ));
        }
        let (f, t) = (follower.clone(), followee.clone());
        self.writer
            .write(move |ctx| {
                require_user(ctx.txn, &f)?;
                require_user(ctx.txn, &t)?;
                let mut following = ctx.txn.open_table(FOLLOWING).store()?;
                if following.get((f.as_str(), t.as_str())).store()?.is_some() {
                    return Ok(false);
                }
                following.insert((f.as_str(), t.as_str()), ()).store()?;
                drop(following);
                ctx.txn
                    .open_table(FOLLOWERS)
                    .store()?
                    .insert((t.as_str(), f.as_str()), ())
                    .store()?;
                add_counts(ctx.txn, f.as_str(), 0, 1)?;
                add_counts(ctx.txn, t.as_str(), 1, 0)?;
                emit(
                    ctx,
                    &Event::Followed {
                        follower: f,
                        followee: t,
                    },
                )?;
                Ok(true)
            })
            .await
    }

    async fn unfollow(&self, follower: &UserId, followee: &UserId) -> Result<bool> {
        let (f, t) = (follower.clone(), followee.clone());
        self.writer
            .write(move |ctx| {
                require_user(ctx.txn, &f)?;
                require_user(ctx.txn, &t)?;
                let mut following = ctx.txn.open_table(FOLLOWING).store()?;
                if following
                    .remove((f.as_str(), t.as_str()))
                    .store()?
                    .is_none()
                {
                    return Ok(false);
                }
                drop(following);
                ctx.txn
                    .open_table(FOLLOWERS)
                    .store()?
                    .remove((t.as_str(), f.as_str()))
                    .store()?;
                add_counts(ctx.txn, f.as_str(), 0, -1)?;
                add_counts(ctx.txn, t.as_str(), -1, 0)?;
                emit(
                    ctx,
                    &Event::Unfollowed {
                        follower: f,
                        followee: t,
                    },
                )?;
                Ok(true)
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
