//! Muted threads in `content.redb`: (user, first post) rows, a user's in id
//! order. The rules are `socialite_domain::notifications::thread_mutes`'.

use crate::tables::*;
use redb::{ReadableTable, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::PostId;

/// Up to `limit` of the user's muted threads after `after`, in id order.
pub(crate) fn of<T: ReadableTable<(&'static str, u64), ()>>(
    table: &T,
    user: &str,
    after: Option<PostId>,
    limit: usize,
) -> Result<Vec<PostId>> {
    let from = after.map_or(0, |p| p.0.saturating_add(1));
    if after.is_some_and(|p| p.0 == u64::MAX) {
        return Ok(Vec::new());
    }
    let mut out = Vec::new();
    for item in table.range((user, from)..=(user, u64::MAX)).store()? {
        if out.len() >= limit {
            break;
        }
        out.push(PostId(item.store()?.0.value().1));
    }
    Ok(out)
}

pub(crate) fn put(txn: &WriteTransaction, user: &str, post: PostId, active: bool) -> Result<()> {
    let mut table = txn.open_table(THREAD_MUTES).store()?;
    match active {
        true => table.insert((user, post.0), ()).store()?,
        false => table.remove((user, post.0)).store()?,
    };
    Ok(())
}

/// Forgets a deleted user's muted threads.
pub(crate) fn forget(txn: &WriteTransaction, user: &str) -> Result<()> {
    let mut table = txn.open_table(THREAD_MUTES).store()?;
    table
        .retain_in((user, 0)..=(user, u64::MAX), |_, _| false)
        .store()?;
    Ok(())
}
