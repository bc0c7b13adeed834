//! The rows of likes in `content.redb`: a like by post, newest first (keyed
//! as the follow lists are, so one page reader serves both), by user, and
//! each post's counts. One writer applies every write, so a post's count
//! is one row: the parts of a tally (`socialite_domain::interactions::likes`) keep
//! concurrent writers of other stores apart, and this store has none.

use crate::edge_times::newness;
use crate::tables::*;
use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::PostCounts;
use socialite_domain::interactions::likes::Tally;

/// The post's key in the like tables: its id as text, so that a post's
/// likers page as an account's followers do.
pub(crate) fn post_key(post: PostId) -> String {
    post.to_string()
}

/// When `user` liked `post`, if they do.
pub(crate) fn liked(txn: &WriteTransaction, post: PostId, user: &str) -> Result<Option<u64>> {
    let table = txn.open_table(LIKES).store()?;
    let found = table.get((post_key(post).as_str(), user)).store()?;
    Ok(found.map(|g| g.value()))
}

/// Up to `limit` of the posts `user` likes, each with whether it is stored.
pub(crate) fn likes_by(
    txn: &WriteTransaction,
    user: &str,
    limit: usize,
) -> Result<Vec<(PostId, bool)>> {
    let mine = txn.open_table(USER_LIKES).store()?;
    let posts = txn.open_table(POSTS).store()?;
    let mut out = Vec::new();
    for item in mine
        .range((user, 0)..=(user, u64::MAX))
        .store()?
        .take(limit)
    {
        let p = item.store()?.0.value().1;
        out.push((PostId(p), posts.get(p).store()?.is_some()));
    }
    Ok(out)
}

/// Makes (`active`, at `at_ms`) or removes the like of `post` by `user`.
pub(crate) fn put(
    txn: &WriteTransaction,
    post: PostId,
    user: &str,
    at_ms: u64,
    active: bool,
) -> Result<()> {
    let key = post_key(post);
    let mut likes = txn.open_table(LIKES).store()?;
    let mut by_time = txn.open_table(LIKES_BY_TIME).store()?;
    let mut mine = txn.open_table(USER_LIKES).store()?;
    if active {
        likes.insert((key.as_str(), user), at_ms).store()?;
        by_time
            .insert((key.as_str(), newness(at_ms), user), ())
            .store()?;
        mine.insert((user, post.0), ()).store()?;
        return Ok(());
    }
    let held = likes
        .remove((key.as_str(), user))
        .store()?
        .map(|g| g.value());
    if let Some(at) = held {
        by_time.remove((key.as_str(), newness(at), user)).store()?;
    }
    mine.remove((user, post.0)).store()?;
    Ok(())
}

/// Moves the post's `tally` by `step`; a count back at zero has no row.
pub(crate) fn add(txn: &WriteTransaction, post: PostId, tally: Tally, step: i64) -> Result<()> {
    let mut table = txn.open_table(TALLIES).store()?;
    let key = (post.0, tally.code());
    let now = table.get(key).store()?.map_or(0, |g| g.value()) + step;
    match now {
        0 => table.remove(key).store()?,
        n => table.insert(key, n).store()?,
    };
    Ok(())
}

/// Forgets the counts of removed posts.
pub(crate) fn forget(txn: &WriteTransaction, posts: &[PostId]) -> Result<()> {
    let mut table = txn.open_table(TALLIES).store()?;
    for p in posts {
        for tally in Tally::ALL {
            table.remove((p.0, tally.code())).store()?;
        }
    }
    Ok(())
}

/// The counts of each of `posts`.
pub(crate) fn counts(txn: &ReadTransaction, posts: &[PostId]) -> Result<Vec<PostCounts>> {
    let table = txn.open_table(TALLIES).store()?;
    let mut out = Vec::with_capacity(posts.len());
    for p in posts {
        let mut counts = PostCounts::default();
        for row in table.range((p.0, 0)..=(p.0, u8::MAX)).store()? {
            let (k, v) = row.store()?;
            if let Some(tally) = Tally::from_code(k.value().1) {
                tally.add_to(&mut counts, v.value());
            }
        }
        out.push(counts);
    }
    Ok(out)
}

/// The posts `user` likes from `from` on, newest first, at most `limit`.
pub(crate) fn liked_since(
    txn: &ReadTransaction,
    user: &str,
    from: PostId,
    limit: usize,
) -> Result<Vec<PostId>> {
    let mine = txn.open_table(USER_LIKES).store()?;
    let mut out = Vec::new();
    for row in mine
        .range((user, from.0)..=(user, u64::MAX))
        .store()?
        .rev()
        .take(limit)
    {
        out.push(PostId(row.store()?.0.value().1));
    }
    Ok(out)
}

/// A page of the post's likers, newest first.
pub(crate) fn likers(
    txn: &ReadTransaction,
    post: PostId,
    after: Option<&(u64, UserId)>,
    limit: usize,
) -> Result<Vec<(UserId, u64)>> {
    let table = txn.open_table(LIKES_BY_TIME).store()?;
    crate::edge_times::page(&table, &post_key(post), after, limit)
}
