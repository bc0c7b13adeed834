//! Lists on follow edges in the embedded store: an edge's lists (both
//! directions), each list's members and each user's lists with their sizes,
//! all written in the transaction that changes the edge.

use crate::store::{edges_of, to_user_ids};
use crate::tables::*;
use redb::{ReadableTable, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::{ListName, UserId};
use socialite_core::plan::Side;

/// Lists as stored: names joined by commas (no name holds one).
pub(crate) fn decode_lists(text: &str) -> Vec<ListName> {
    text.split(',')
        .filter(|s| !s.is_empty())
        .map(ListName::from_stored)
        .collect()
}

pub(crate) fn encode_lists(lists: &[ListName]) -> String {
    let names: Vec<&str> = lists.iter().map(ListName::as_str).collect();
    names.join(",")
}

/// The lists of the edge `follower → followee`, which exists.
pub(crate) fn edge_lists<T: ReadableTable<(&'static str, &'static str), &'static str>>(
    table: &T,
    follower: &str,
    followee: &str,
) -> Result<Vec<ListName>> {
    Ok(table
        .get((follower, followee))
        .store()?
        .map(|g| decode_lists(g.value()))
        .unwrap_or_default())
}

/// The user's lists and their sizes, in name order.
pub(crate) fn user_lists<T: ReadableTable<(&'static str, &'static str), u64>>(
    table: &T,
    user: &str,
) -> Result<Vec<(ListName, u64)>> {
    let mut out = Vec::new();
    for item in table.range((user, "")..).store()? {
        let (k, v) = item.store()?;
        let (u, list) = k.value();
        if u != user {
            break;
        }
        out.push((ListName::from_stored(list), v.value()));
    }
    Ok(out)
}

/// The followee joins the follower's lists `added` and leaves `removed`:
/// members and sizes (a list whose last member leaves is gone).
pub(crate) fn move_members(
    txn: &WriteTransaction,
    follower: &str,
    followee: &str,
    added: &[ListName],
    removed: &[ListName],
) -> Result<()> {
    let mut sizes = txn.open_table(USER_LISTS).store()?;
    let mut members = txn.open_table(LIST_MEMBERS).store()?;
    for l in added {
        members
            .insert((follower, l.as_str(), followee), ())
            .store()?;
        let n = sizes
            .get((follower, l.as_str()))
            .store()?
            .map_or(0, |g| g.value());
        sizes.insert((follower, l.as_str()), n + 1).store()?;
    }
    for l in removed {
        members.remove((follower, l.as_str(), followee)).store()?;
        let n = sizes
            .get((follower, l.as_str()))
            .store()?
            .map_or(0, |g| g.value());
        if n <= 1 {
            sizes.remove((follower, l.as_str())).store()?;
        } else {
            sizes.insert((follower, l.as_str()), n - 1).store()?;
        }
    }
    Ok(())
}

/// Files the edge under `lists` in both directions (none: no rows).
pub(crate) fn file_edge(
    txn: &WriteTransaction,
    follower: &str,
    followee: &str,
    lists: &[ListName],
) -> Result<()> {
    let mut forward = txn.open_table(EDGE_LISTS).store()?;
    let mut backward = txn.open_table(LISTED).store()?;
    if lists.is_empty() {
        forward.remove((follower, followee)).store()?;
        backward.remove((followee, follower)).store()?;
    } else {
        let text = encode_lists(lists);
        forward
            .insert((follower, followee), text.as_str())
            .store()?;
        backward
            .insert((followee, follower), text.as_str())
            .store()?;
    }
    Ok(())
}

/// Every (follower, list) that files `user`, in follower order.
pub(crate) fn listed_by<T: ReadableTable<(&'static str, &'static str), &'static str>>(
    table: &T,
    user: &str,
) -> Result<Vec<(UserId, ListName)>> {
    let mut out = Vec::new();
    for item in table.range((user, "")..).store()? {
        let (k, v) = item.store()?;
        let (u, follower) = k.value();
        if u != user {
            break;
        }
        let follower = UserId::from_stored(follower.to_owned());
        for l in decode_lists(v.value()) {
            out.push((follower.clone(), l));
        }
    }
    Ok(out)
}

/// Up to `limit` of the user's edges on `side`, in id order of the other
/// end, with the lists each is filed under.
pub(crate) fn edges_with_lists(
    txn: &WriteTransaction,
    user: &str,
    side: Side,
    limit: usize,
) -> Result<Vec<(UserId, Vec<ListName>)>> {
    let table = match side {
        Side::Followers => FOLLOWERS,
        Side::Following => FOLLOWING,
    };
    let others = edges_of(&txn.open_table(table).store()?, user, None, limit)?;
    let filed = txn.open_table(EDGE_LISTS).store()?;
    to_user_ids(others)?
        .into_iter()
        .map(|o| {
            let (f, t) = match side {
                Side::Followers => (o.as_str(), user),
                Side::Following => (user, o.as_str()),
            };
            let lists = edge_lists(&filed, f, t)?;
            Ok((o, lists))
        })
        .collect()
}
