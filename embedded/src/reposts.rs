//! The rows of reposts in `content.redb`: a repost by user (which item a
//! user's repost of a post is) and by post (a post's reposters, newest
//! first), beside the item itself, which is a post of the reposter's
//! (`post_rows`). And the set of posts that have reposts, in memory: every
//! page read asks which of its posts may have been reposted, and a miss
//! must cost no read of the file.

use crate::tables::*;
use redb::{ReadTransaction, ReadableTable, WriteTransaction};
use rustc_hash::FxHashSet;
use socialite_core::error::Result;
use socialite_core::ids::{PostId, UserId};
use std::sync::RwLock;

/// The posts with reposts: every post with a repost row is here, and a
/// post whose reposts were all undone may stay (the port allows it).
#[derive(Default)]
pub struct Reposted {
    posts: RwLock<FxHashSet<u64>>,
}

impl Reposted {
    /// Every post with reposts in the file.
    pub(crate) fn load(txn: &WriteTransaction) -> Result<Reposted> {
        let table = txn.open_table(REPOSTERS).store()?;
        let mut posts = FxHashSet::default();
        for item in table.iter().store()? {
            posts.insert(item.store()?.0.value().0);
        }
        Ok(Reposted {
            posts: RwLock::new(posts),
        })
    }

    /// Taken before the repost's rows are written, so a read never misses
    /// a committed repost.
    pub(crate) fn add(&self, post: PostId) {
        self.posts
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(post.0);
    }

    pub(crate) fn among(&self, posts: &[PostId]) -> Vec<PostId> {
        let held = self.posts.read().unwrap_or_else(|p| p.into_inner());
        if held.is_empty() {
            return Vec::new();
        }
        posts
            .iter()
            .filter(|p| held.contains(&p.0))
            .copied()
            .collect()
    }
}

/// The item of `user`'s repost of `post`, if there is one.
pub(crate) fn item(txn: &WriteTransaction, post: PostId, user: &str) -> Result<Option<PostId>> {
    let table = txn.open_table(REPOSTS).store()?;
    let found = table.get((user, post.0)).store()?;
    Ok(found.map(|g| PostId(g.value())))
}

/// Up to `limit` of `user`'s reposts: (item, post, post stored).
pub(crate) fn by_user(
    txn: &WriteTransaction,
    user: &str,
    limit: usize,
) -> Result<Vec<(PostId, PostId, bool)>> {
    let mine = txn.open_table(REPOSTS).store()?;
    let posts = txn.open_table(POSTS).store()?;
    let mut out = Vec::new();
    for row in mine
        .range((user, 0)..=(user, u64::MAX))
        .store()?
        .take(limit)
    {
        let (k, v) = row.store()?;
        let post = k.value().1;
        out.push((
            PostId(v.value()),
            PostId(post),
            posts.get(post).store()?.is_some(),
        ));
    }
    Ok(out)
}

/// Makes (`active`) or removes the rows of `user`'s repost `item` of `post`.
pub(crate) fn put(
    txn: &WriteTransaction,
    post: PostId,
    user: &str,
    item: PostId,
    active: bool,
) -> Result<()> {
    let mut mine = txn.open_table(REPOSTS).store()?;
    let mut by_post = txn.open_table(REPOSTERS).store()?;
    if active {
        mine.insert((user, post.0), item.0).store()?;
        by_post.insert((post.0, item.0), user).store()?;
    } else {
        mine.remove((user, post.0)).store()?;
        by_post.remove((post.0, item.0)).store()?;
    }
    Ok(())
}

/// Who reposted `post`, newest first, with their items, at most `limit`.
pub(crate) fn reposters(
    txn: &ReadTransaction,
    post: PostId,
    limit: usize,
) -> Result<Vec<(UserId, PostId)>> {
    let table = txn.open_table(REPOSTERS).store()?;
    let mut out = Vec::new();
    for row in table
        .range((post.0, 0)..=(post.0, u64::MAX))
        .store()?
        .rev()
        .take(limit)
    {
        let (k, v) = row.store()?;
        out.push((
            UserId::from_stored(v.value().to_owned()),
            PostId(k.value().1),
        ));
    }
    Ok(out)
}

/// The reposts of `post` that `users` made.
pub(crate) fn among(
    txn: &ReadTransaction,
    post: PostId,
    users: &[UserId],
) -> Result<Vec<(UserId, PostId)>> {
    let table = txn.open_table(REPOSTS).store()?;
    let mut out = Vec::new();
    for u in users {
        if let Some(item) = table.get((u.as_str(), post.0)).store()? {
            out.push((u.clone(), PostId(item.value())));
        }
    }
    Ok(out)
}
