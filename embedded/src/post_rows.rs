//! The rows of posts in `content.redb`: a post's record, its author's index
//! and its mentions, as the planned writes of `socialite_core::plan` read
//! and write them (a post stored or deleted, a deletion's pages of posts).

use crate::tables::*;
use redb::{ReadableTable, WriteTransaction};
use socialite_core::checks::post_id_taken;
use socialite_core::error::Result;
use socialite_core::ids::PostId;
use socialite_core::model::{Post, PostRef};

/// Stores a new post: its record, its author's index and its mentions;
/// refused, before any row is written, under an id a post holds.
pub(crate) fn put_post(txn: &WriteTransaction, post: &Post) -> Result<()> {
    let mut posts = txn.open_table(POSTS).store()?;
    if posts.get(post.id.0).store()?.is_some() {
        return Err(post_id_taken(post.id));
    }
    let reference = |r: &PostRef| RefRecord {
        id: r.id.0,
        author: r.author.to_string(),
    };
    let record = PostRecord {
        author: post.author.to_string(),
        message: post.message.clone(),
        data: post.data.clone(),
        mentions: post.mentions.iter().map(|m| m.to_string()).collect(),
        reply_to: post.reply_to.as_ref().map(reference),
        repost_of: post.repost_of.as_ref().map(reference),
    };
    let mut mentions = txn.open_table(MENTIONS).store()?;
    for m in &post.mentions {
        mentions.insert((m.as_str(), post.id.0), ()).store()?;
    }
    posts
        .insert(post.id.0, encode(&record).as_slice())
        .store()?;
    let mut by_author = txn.open_table(AUTHOR_POSTS).store()?;
    by_author
        .insert((post.author.as_str(), post.id.0), ())
        .store()?;
    if let Some(answered) = &post.reply_to {
        let mut replies = txn.open_table(REPLIES).store()?;
        replies.insert((answered.id.0, post.id.0), ()).store()?;
    }
    Ok(())
}

/// The first `limit` post ids under `user` in a (user, post id) table:
/// their posts (`AUTHOR_POSTS`) or those mentioning them (`MENTIONS`).
pub(crate) fn first_posts(
    txn: &WriteTransaction,
    table: redb::TableDefinition<'static, (&'static str, u64), ()>,
    user: &str,
    limit: usize,
) -> Result<Vec<PostId>> {
    let table = txn.open_table(table).store()?;
    table
        .range((user, 0)..=(user, u64::MAX))
        .store()?
        .take(limit)
        .map(|r| r.map(|(k, _)| PostId(k.value().1)).store())
        .collect()
}

/// The replies to `post` after `after`, oldest first, at most `limit`.
pub(crate) fn replies(
    txn: &redb::ReadTransaction,
    post: PostId,
    after: Option<PostId>,
    limit: usize,
) -> Result<Vec<PostId>> {
    let table = txn.open_table(REPLIES).store()?;
    let from = after.map_or(0, |a| a.0.saturating_add(1));
    table
        .range((post.0, from)..=(post.0, u64::MAX))
        .store()?
        .take(limit)
        .map(|r| r.map(|(k, _)| PostId(k.value().1)).store())
        .collect()
}

/// Removes posts of `author`, with their mentions of others. An id in the
/// author's index without a record loses its index row all the same.
pub(crate) fn remove_posts(txn: &WriteTransaction, author: &str, ids: &[PostId]) -> Result<()> {
    let mut by_author = txn.open_table(AUTHOR_POSTS).store()?;
    let mut posts = txn.open_table(POSTS).store()?;
    let mut mentions = txn.open_table(MENTIONS).store()?;
    let mut replies = txn.open_table(REPLIES).store()?;
    for &PostId(p) in ids {
        by_author.remove((author, p)).store()?;
        let Some(bytes) = posts.remove(p).store()? else {
            continue;
        };
        let record: PostRecord = decode(bytes.value())?;
        drop(bytes);
        for m in &record.mentions {
            mentions.remove((m.as_str(), p)).store()?;
        }
        if let Some(answered) = &record.reply_to {
            replies.remove((answered.id, p)).store()?;
        }
    }
    Ok(())
}

/// These posts no longer mention `user`.
pub(crate) fn unmention(txn: &WriteTransaction, user: &str, ids: &[PostId]) -> Result<()> {
    let mut mentions = txn.open_table(MENTIONS).store()?;
    let mut posts = txn.open_table(POSTS).store()?;
    for &PostId(p) in ids {
        mentions.remove((user, p)).store()?;
        let record = posts.get(p).store()?.map(|b| b.value().to_vec());
        if let Some(bytes) = record {
            let mut r: PostRecord = decode(&bytes)?;
            r.mentions.retain(|m| m != user);
            posts.insert(p, encode(&r).as_slice()).store()?;
        }
    }
    Ok(())
}
