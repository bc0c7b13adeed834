//! Posts users keep, in `content.redb`: a row per (user, collection,
//! post), the collection in its order, and who keeps each post.

use crate::tables::*;
use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::PostId;
use socialite_core::model::collection::{Collection, Kept};
use socialite_core::plan::Step;

/// Applies a step of the collections.
pub(crate) fn apply(txn: &WriteTransaction, step: &Step) -> Result<()> {
    match step {
        Step::Keep {
            collection,
            user,
            kept,
        } => put(txn, collection, user.as_str(), *kept),
        Step::Unkeep {
            collection,
            user,
            post,
        } => remove(txn, collection, user.as_str(), *post),
        Step::ForgetKept(user) => forget_user(txn, user.as_str()),
        Step::ForgetKeptPosts(posts) => forget_posts(txn, posts),
        _ => unreachable!("not a step of the collections"),
    }
}

/// When `user` kept `post` in `collection`, if they do.
pub(crate) fn kept_at(
    txn: &WriteTransaction,
    collection: &Collection,
    user: &str,
    post: PostId,
) -> Result<Option<u64>> {
    let table = txn.open_table(KEPT).store()?;
    let at = table.get((user, collection.as_str(), post.0)).store()?;
    Ok(at.map(|a| a.value()))
}

/// How many posts the user's `collection` holds.
pub(crate) fn count(txn: &WriteTransaction, collection: &Collection, user: &str) -> Result<u64> {
    let table = txn.open_table(KEPT_ORDER).store()?;
    let c = collection.as_str();
    let rows = table
        .range((user, c, 0, 0)..=(user, c, u64::MAX, u64::MAX))
        .store()?;
    Ok(rows.count() as u64)
}

/// Puts `kept` in the user's `collection`.
pub(crate) fn put(
    txn: &WriteTransaction,
    collection: &Collection,
    user: &str,
    kept: Kept,
) -> Result<()> {
    let c = collection.as_str();
    let post = kept.post.0;
    txn.open_table(KEPT)
        .store()?
        .insert((user, c, post), kept.at_ms)
        .store()?;
    let mut order = txn.open_table(KEPT_ORDER).store()?;
    order.insert((user, c, kept.at_ms, post), ()).store()?;
    let mut by_post = txn.open_table(KEPT_BY_POST).store()?;
    by_post.insert((post, user, c), ()).store()?;
    Ok(())
}

/// Takes `post` out of the user's `collection`.
pub(crate) fn remove(
    txn: &WriteTransaction,
    collection: &Collection,
    user: &str,
    post: PostId,
) -> Result<()> {
    let c = collection.as_str();
    let mut rows = txn.open_table(KEPT).store()?;
    let at = rows.remove((user, c, post.0)).store()?.map(|a| a.value());
    drop(rows);
    if let Some(at) = at {
        let mut order = txn.open_table(KEPT_ORDER).store()?;
        order.remove((user, c, at, post.0)).store()?;
    }
    let mut by_post = txn.open_table(KEPT_BY_POST).store()?;
    by_post.remove((post.0, user, c)).store()?;
    Ok(())
}

/// Takes `posts` out of every collection that keeps them.
pub(crate) fn forget_posts(txn: &WriteTransaction, posts: &[PostId]) -> Result<()> {
    for post in posts {
        let keepers: Vec<(String, String)> = {
            let by_post = txn.open_table(KEPT_BY_POST).store()?;
            let rows = by_post
                .range((post.0, "", "")..=(post.0, "\u{10FFFF}", ""))
                .store()?;
            let mut out = Vec::new();
            for row in rows {
                let (k, _) = row.store()?;
                let (_, user, c) = k.value();
                out.push((user.to_owned(), c.to_owned()));
            }
            out
        };
        for (user, c) in keepers {
            remove(txn, &Collection::parse(&c)?, &user, *post)?;
        }
    }
    Ok(())
}

/// Forgets every collection of a deleted user.
pub(crate) fn forget_user(txn: &WriteTransaction, user: &str) -> Result<()> {
    let rows: Vec<(String, u64)> = {
        let table = txn.open_table(KEPT).store()?;
        let mut out = Vec::new();
        for row in table
            .range((user, "", 0)..=(user, "\u{10FFFF}", u64::MAX))
            .store()?
        {
            let (k, _) = row.store()?;
            let (_, c, post) = k.value();
            out.push((c.to_owned(), post));
        }
        out
    };
    for (c, post) in rows {
        remove(txn, &Collection::parse(&c)?, user, PostId(post))?;
    }
    Ok(())
}

/// The user's `collection`, newest kept first, after `before`.
pub(crate) fn page(
    txn: &ReadTransaction,
    collection: &Collection,
    user: &str,
    before: Option<(u64, PostId)>,
    limit: usize,
) -> Result<Vec<Kept>> {
    let table = txn.open_table(KEPT_ORDER).store()?;
    let c = collection.as_str();
    let end = match before {
        Some((at, post)) => (user, c, at, post.0),
        None => (user, c, u64::MAX, u64::MAX),
    };
    let rows = table.range((user, c, 0, 0)..end).store()?;
    let mut out = Vec::with_capacity(limit);
    for row in rows.rev().take(limit) {
        let (k, _) = row.store()?;
        let (_, _, at_ms, post) = k.value();
        out.push(Kept {
            post: PostId(post),
            at_ms,
        });
    }
    Ok(out)
}
