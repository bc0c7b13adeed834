//! When each follow was made, and the follow lists newest first: an edge's
//! time, and both directions keyed by (user, newness, other end), written in
//! the transaction that adds or removes the edge.

use crate::tables::*;
use redb::{ReadableTable, ReadableTableMetadata, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::UserId;

/// Keys sort ascending; newness sorts the newest follow first.
pub(crate) fn newness(at_ms: u64) -> u64 {
    u64::MAX - at_ms
}

/// Records the edges `follower → followee`, made at `at_ms`.
pub(crate) fn add(txn: &WriteTransaction, edges: &[(&str, &str)], at_ms: u64) -> Result<()> {
    let mut times = txn.open_table(EDGE_TIMES).store()?;
    let mut following = txn.open_table(FOLLOWING_BY_TIME).store()?;
    let mut followers = txn.open_table(FOLLOWERS_BY_TIME).store()?;
    let n = newness(at_ms);
    for &(follower, followee) in edges {
        times.insert((follower, followee), at_ms).store()?;
        following.insert((follower, n, followee), ()).store()?;
        followers.insert((followee, n, follower), ()).store()?;
    }
    Ok(())
}

/// Gives edges stored before follow times were kept the time 0, once: they
/// come last in the time-ordered lists, in id order.
pub(crate) fn backfill_untimed(txn: &WriteTransaction) -> Result<()> {
    if !txn.open_table(EDGE_TIMES).store()?.is_empty().store()? {
        return Ok(());
    }
    let edges: Vec<(String, String)> = txn
        .open_table(FOLLOWING)
        .store()?
        .iter()
        .store()?
        .map(|r| {
            r.map(|(k, _)| {
                let (f, t) = k.value();
                (f.to_owned(), t.to_owned())
            })
        })
        .collect::<std::result::Result<_, _>>()
        .store()?;
    let refs: Vec<(&str, &str)> = edges
        .iter()
        .map(|(f, t)| (f.as_str(), t.as_str()))
        .collect();
    add(txn, &refs, 0)
}

/// Forgets the edge `follower → followee`.
pub(crate) fn remove(txn: &WriteTransaction, follower: &str, followee: &str) -> Result<()> {
    let at = txn
        .open_table(EDGE_TIMES)
        .store()?
        .remove((follower, followee))
        .store()?
        .map(|g| g.value());
    if let Some(at) = at {
        let n = newness(at);
        txn.open_table(FOLLOWING_BY_TIME)
            .store()?
            .remove((follower, n, followee))
            .store()?;
        txn.open_table(FOLLOWERS_BY_TIME)
            .store()?
            .remove((followee, n, follower))
            .store()?;
    }
    Ok(())
}

/// One page of a time-ordered edge table for `user`: the other ends with
/// their follow times, newest first (ties in id order), after `after`.
pub(crate) fn page<T: ReadableTable<(&'static str, u64, &'static str), ()>>(
    table: &T,
    user: &str,
    after: Option<&(u64, UserId)>,
    limit: usize,
) -> Result<Vec<(UserId, u64)>> {
    let start = after.map_or((user, 0, ""), |(at, id)| (user, newness(*at), id.as_str()));
    let mut out = Vec::new();
    for item in table.range(start..).store()? {
        let (k, _) = item.store()?;
        let (u, n, other) = k.value();
        if u != user || out.len() >= limit {
            break;
        }
        if after.is_some_and(|(at, id)| newness(*at) == n && id.as_str() == other) {
            continue;
        }
        out.push((UserId::from_stored(other.to_owned()), u64::MAX - n));
    }
    Ok(out)
}
