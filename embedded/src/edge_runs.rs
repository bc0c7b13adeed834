//! The rows of follow edges: one edge added or removed, and runs of one
//! kind of edge step (`socialite_domain::graph::edges` plans
//! a bulk load's follows so: new edges, their lists, the counts), each
//! written in one pass over its tables:
//! every table opened once, its keys inserted in key order (a B-tree
//! written in order touches each page once, where random order reads one
//! for every key), and the counts summed per user before they are written.

use crate::edge_times::{self, newness};
use crate::lists;
use crate::lists::encode_lists;
use crate::tables::*;
use redb::{ReadableTable, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::{ListName, UserId};
use socialite_core::plan::Step;
use std::collections::HashMap;

/// The new edges of a run of `Step::AddEdge`, as `add_edge` writes one.
pub(crate) fn add_edges(txn: &WriteTransaction, run: &[Step]) -> Result<()> {
    let mut edges: Vec<(&str, &str, String, u64)> = run
        .iter()
        .filter_map(|s| match s {
            Step::AddEdge {
                follower,
                followee,
                lists,
                at_ms,
            } => Some((
                follower.as_str(),
                followee.as_str(),
                encode_lists(lists),
                *at_ms,
            )),
            _ => None,
        })
        .collect();
    edges.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    {
        let mut following = txn.open_table(FOLLOWING).store()?;
        let mut times = txn.open_table(EDGE_TIMES).store()?;
        let mut by_time = txn.open_table(FOLLOWING_BY_TIME).store()?;
        let mut lists = txn.open_table(EDGE_LISTS).store()?;
        for (f, t, filed, at) in &edges {
            following.insert((*f, *t), ()).store()?;
            times.insert((*f, *t), *at).store()?;
            by_time.insert((*f, newness(*at), *t), ()).store()?;
            if filed.is_empty() {
                lists.remove((*f, *t)).store()?;
            } else {
                lists.insert((*f, *t), filed.as_str()).store()?;
            }
        }
    }
    // The other direction, in its own key order.
    edges.sort_unstable_by(|a, b| (a.1, a.0).cmp(&(b.1, b.0)));
    let mut followers = txn.open_table(FOLLOWERS).store()?;
    let mut by_time = txn.open_table(FOLLOWERS_BY_TIME).store()?;
    let mut listed = txn.open_table(LISTED).store()?;
    for (f, t, filed, at) in &edges {
        followers.insert((*t, *f), ()).store()?;
        by_time.insert((*t, newness(*at), *f), ()).store()?;
        if filed.is_empty() {
            listed.remove((*t, *f)).store()?;
        } else {
            listed.insert((*t, *f), filed.as_str()).store()?;
        }
    }
    Ok(())
}

/// The list members a run of `Step::MoveLists` adds and removes, in key
/// order, and each list's size written once.
pub(crate) fn move_lists(txn: &WriteTransaction, run: &[Step]) -> Result<()> {
    let mut members: Vec<((&str, &str, &str), bool)> = Vec::new();
    let mut sizes: HashMap<(&str, &str), i64> = HashMap::new();
    for s in run {
        if let Step::MoveLists {
            follower,
            followee,
            added,
            removed,
        } = s
        {
            let (f, t) = (follower.as_str(), followee.as_str());
            for (lists, joins) in [(added, true), (removed, false)] {
                for l in lists {
                    members.push(((f, l.as_str(), t), joins));
                    *sizes.entry((f, l.as_str())).or_default() += if joins { 1 } else { -1 };
                }
            }
        }
    }
    members.sort_unstable();
    let mut table = txn.open_table(LIST_MEMBERS).store()?;
    for (key, joins) in members {
        match joins {
            true => table.insert(key, ()).store()?,
            false => table.remove(key).store()?,
        };
    }
    let mut sizes: Vec<((&str, &str), i64)> = sizes.into_iter().collect();
    sizes.sort_unstable();
    let mut table = txn.open_table(USER_LISTS).store()?;
    for (key, moved) in sizes {
        let n = table.get(key).store()?.map_or(0, |g| g.value());
        match n.saturating_add_signed(moved) {
            0 => table.remove(key).store()?,
            n => table.insert(key, n).store()?,
        };
    }
    Ok(())
}

/// The counts a run of `Step::FollowCounts` moves, each user's written once.
pub(crate) fn follow_counts(txn: &WriteTransaction, run: &[Step]) -> Result<()> {
    let mut moved: HashMap<&str, (i64, i64)> = HashMap::new();
    for s in run {
        if let Step::FollowCounts {
            follower,
            followee,
            step,
        } = s
        {
            moved.entry(follower.as_str()).or_default().1 += step;
            moved.entry(followee.as_str()).or_default().0 += step;
        }
    }
    let mut moved: Vec<(&str, (i64, i64))> = moved.into_iter().collect();
    moved.sort_unstable_by_key(|m| m.0);
    let mut counts = txn.open_table(COUNTS).store()?;
    for (user, (followers, following)) in moved {
        let (a, b) = counts
            .get(user)
            .store()?
            .map(|g| g.value())
            .unwrap_or((0, 0));
        let now = (
            a.saturating_add_signed(followers),
            b.saturating_add_signed(following),
        );
        counts.insert(user, now).store()?;
    }
    Ok(())
}

/// The new edge `follower → followee`, filed under `lists`, made at `at_ms`.
pub(crate) fn add_edge(
    txn: &WriteTransaction,
    follower: &UserId,
    followee: &UserId,
    lists: &[ListName],
    at_ms: u64,
) -> Result<()> {
    let (f, t) = (follower.as_str(), followee.as_str());
    txn.open_table(FOLLOWING)
        .store()?
        .insert((f, t), ())
        .store()?;
    txn.open_table(FOLLOWERS)
        .store()?
        .insert((t, f), ())
        .store()?;
    edge_times::add(txn, &[(f, t)], at_ms)?;
    lists::file_edge(txn, f, t, lists)
}

/// Removes the edge `follower → followee` and its time and lists.
pub(crate) fn remove_edge(
    txn: &WriteTransaction,
    follower: &UserId,
    followee: &UserId,
) -> Result<()> {
    let (f, t) = (follower.as_str(), followee.as_str());
    txn.open_table(FOLLOWING).store()?.remove((f, t)).store()?;
    txn.open_table(FOLLOWERS).store()?.remove((t, f)).store()?;
    edge_times::remove(txn, f, t)?;
    lists::file_edge(txn, f, t, &[])
}
