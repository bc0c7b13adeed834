//! Users and posts of the embedded store. A user's deletion removes their
//! records in one transaction and queues the events that
//! [`UserDeletion`] decides.

use crate::store::{
    add_counts, edges_of, emit, require_user, to_user_ids, user_exists, EmbeddedStore,
};
use crate::tables::*;
use crate::{edge_times, groups, lists};
use async_trait::async_trait;
use redb::{ReadTransaction, ReadableTable};
use serde_json::{Map, Value};
use socialite_core::error::{Error, Result};
use socialite_core::event::Event;
use socialite_core::ids::{ListName, PostId, UserId};
use socialite_core::model::{Entry, Post, User};
use socialite_core::ports::{ContentStore, IdRange};
use socialite_core::rules::cascade::{post_deleted, UserDeletion};
use socialite_core::rules::checks::{EdgeChange, EdgeOp, Membership};
use socialite_core::rules::mentions::kept;
use std::sync::Arc;

fn load_user(txn: &ReadTransaction, id: &UserId) -> Result<Option<User>> {
    let users = txn.open_table(USERS).store()?;
    let Some(profile) = users.get(id.as_str()).store()? else {
        return Ok(None);
    };
    let profile = match profile.value() {
        [] => None,
        bytes => Some(decode::<Map<String, Value>>(bytes)?),
    };
    let counts = txn.open_table(COUNTS).store()?;
    let (followers, following) = counts
        .get(id.as_str())
        .store()?
        .map(|g| g.value())
        .unwrap_or((0, 0));
    Ok(Some(User {
        id: id.clone(),
        followers,
        following,
        profile,
    }))
}

/// Removes the list data of a deleted user's edges, each as its unfollow
/// would: returns the lists that filed the user, and whom the user followed
/// with each edge's lists.
#[allow(clippy::type_complexity)]
fn remove_lists(
    txn: &redb::WriteTransaction,
    user: &UserId,
    following: Vec<UserId>,
) -> Result<(Vec<(UserId, ListName)>, Vec<(UserId, Vec<ListName>)>)> {
    let listed = lists::listed_by(&txn.open_table(LISTED).store()?, user.as_str())?;
    let following: Vec<(UserId, Vec<ListName>)> = {
        let table = txn.open_table(EDGE_LISTS).store()?;
        following
            .into_iter()
            .map(|t| {
                let l = lists::edge_lists(&table, user.as_str(), t.as_str())?;
                Ok((t, l))
            })
            .collect::<Result<_>>()?
    };
    let mut filed: Vec<(&UserId, &UserId, Vec<ListName>)> = Vec::new();
    for (f, l) in &listed {
        match filed.last_mut() {
            Some((last, _, ls)) if *last == f => ls.push(l.clone()),
            _ => filed.push((f, user, vec![l.clone()])),
        }
    }
    filed.extend(
        following
            .iter()
            .filter(|(_, l)| !l.is_empty())
            .map(|(t, l)| (user, t, l.clone())),
    );
    for (f, t, l) in filed {
        let unfollow = EdgeChange::new(f.clone(), t.clone(), EdgeOp::Unfollow)?;
        lists::apply(txn, f.as_str(), t.as_str(), &unfollow.transition(Some(l)))?;
    }
    Ok((listed, following))
}

/// A deleted user leaves the mentions of the posts that named them (so a
/// user created again under the id inherits none): their index entries go
/// and the posts' records drop them. Returns the posts rewritten.
fn forget_mentions(txn: &redb::WriteTransaction, user: &str) -> Result<Vec<u64>> {
    let mut mentions = txn.open_table(MENTIONS).store()?;
    let ids: Vec<u64> = mentions
        .range((user, 0)..=(user, u64::MAX))
        .store()?
        .map(|r| r.map(|(k, _)| k.value().1))
        .collect::<std::result::Result<_, _>>()
        .store()?;
    let mut posts = txn.open_table(POSTS).store()?;
    for &p in &ids {
        mentions.remove((user, p)).store()?;
        let record = posts.get(p).store()?.map(|b| b.value().to_vec());
        if let Some(bytes) = record {
            let mut r: PostRecord = decode(&bytes)?;
            r.mentions.retain(|m| m != user);
            posts.insert(p, encode(&r).as_slice()).store()?;
        }
    }
    Ok(ids)
}

/// The inclusive post id bounds of a range, or `None` when it is empty.
fn bounds(range: IdRange) -> Option<(u64, u64)> {
    let hi = match range.below {
        Some(PostId(0)) => return None,
        Some(PostId(b)) => b - 1,
        None => u64::MAX,
    };
    let lo = range.from.map_or(0, |f| f.0);
    (lo <= hi).then_some((lo, hi))
}

fn to_post(id: u64, bytes: &[u8]) -> Result<Post> {
    let r: PostRecord = decode(bytes)?;
    let author =
        UserId::parse(&r.author).map_err(|e| Error::internal(format!("stored author: {e}")))?;
    Ok(Post {
        id: PostId(id),
        author,
        message: r.message,
        data: r.data,
        mentions: r.mentions.into_iter().map(UserId::from_stored).collect(),
    })
}

#[async_trait]
impl ContentStore for EmbeddedStore {
    async fn put_user(
        &self,
        id: &UserId,
        profile: Option<Map<String, Value>>,
    ) -> Result<(User, bool)> {
        // The user is answered from the writing transaction: a deletion that
        // commits right after cannot turn a successful put into a 404.
        let id = id.clone();
        self.writer
            .write(move |ctx| {
                let mut users = ctx.txn.open_table(USERS).store()?;
                let existing = users.get(id.as_str()).store()?.map(|g| g.value().to_vec());
                let created = existing.is_none();
                let bytes = match (&profile, existing) {
                    (Some(p), _) => encode(p),
                    (None, Some(old)) => old,
                    (None, None) => Vec::new(),
                };
                users.insert(id.as_str(), bytes.as_slice()).store()?;
                let mut counts = ctx.txn.open_table(COUNTS).store()?;
                let (followers, following) = match counts.get(id.as_str()).store()? {
                    Some(c) => c.value(),
                    None => (0, 0),
                };
                if created {
                    counts.insert(id.as_str(), (0, 0)).store()?;
                }
                let profile = match bytes.as_slice() {
                    [] => None,
                    b => Some(decode::<Map<String, Value>>(b)?),
                };
                let user = User {
                    id,
                    followers,
                    following,
                    profile,
                };
                Ok((user, created))
            })
            .await
    }

    async fn get_user(&self, id: &UserId) -> Result<Option<User>> {
        self.read(|txn| load_user(txn, id))
    }

    async fn delete_user(&self, id: &UserId) -> Result<bool> {
        let id = id.clone();
        let removed = self
            .writer
            .write(move |ctx| {
                let u = id.as_str();
                if !user_exists(ctx.txn, u)? {
                    return Ok(None);
                }
                let followers =
                    edges_of(&ctx.txn.open_table(FOLLOWERS).store()?, u, None, usize::MAX)?;
                let following =
                    edges_of(&ctx.txn.open_table(FOLLOWING).store()?, u, None, usize::MAX)?;
                for f in &followers {
                    edge_times::remove(ctx.txn, f, u)?;
                }
                for t in &following {
                    edge_times::remove(ctx.txn, u, t)?;
                }
                {
                    let mut fwing = ctx.txn.open_table(FOLLOWING).store()?;
                    let mut fwers = ctx.txn.open_table(FOLLOWERS).store()?;
                    for f in &followers {
                        fwing.remove((f.as_str(), u)).store()?;
                        fwers.remove((u, f.as_str())).store()?;
                    }
                    for t in &following {
                        fwers.remove((t.as_str(), u)).store()?;
                        fwing.remove((u, t.as_str())).store()?;
                    }
                }
                for f in &followers {
                    add_counts(ctx.txn, f, 0, -1)?;
                }
                for t in &following {
                    add_counts(ctx.txn, t, -1, 0)?;
                }
                let removed_posts = {
                    let mut by_author = ctx.txn.open_table(AUTHOR_POSTS).store()?;
                    let mut posts = ctx.txn.open_table(POSTS).store()?;
                    let ids: Vec<u64> = by_author
                        .range((u, 0)..=(u, u64::MAX))
                        .store()?
                        .map(|r| r.map(|(k, _)| k.value().1))
                        .collect::<std::result::Result<_, _>>()
                        .store()?;
                    let mut mentions = ctx.txn.open_table(MENTIONS).store()?;
                    for &p in &ids {
                        if let Some(bytes) = posts.remove(p).store()? {
                            for m in decode::<PostRecord>(bytes.value())?.mentions {
                                mentions.remove((m.as_str(), p)).store()?;
                            }
                        }
                        by_author.remove((u, p)).store()?;
                    }
                    drop(mentions);
                    ids
                };
                let unmentioned = forget_mentions(ctx.txn, u)?;
                ctx.txn.open_table(USERS).store()?.remove(u).store()?;
                ctx.txn.open_table(COUNTS).store()?.remove(u).store()?;
                let (followers, following) = (to_user_ids(followers)?, to_user_ids(following)?);
                let (listed, following) = remove_lists(ctx.txn, &id, following)?;
                let groups = groups::groups_of(&ctx.txn.open_table(USER_GROUPS).store()?, u)?;
                for group in &groups {
                    let leave = Membership {
                        group: group.clone(),
                        user: id.clone(),
                        join: false,
                    };
                    groups::apply(ctx.txn, &leave)?;
                }
                let deletion = UserDeletion {
                    user: &id,
                    followers: &followers,
                    listed: &listed,
                    following: &following,
                    groups: &groups,
                };
                for event in deletion.events() {
                    emit(ctx, &event)?;
                }
                Ok(Some((removed_posts, unmentioned)))
            })
            .await?;
        if let Some((removed, unmentioned)) = &removed {
            for p in removed.iter().chain(unmentioned) {
                self.posts.remove(PostId(*p));
            }
        }
        Ok(removed.is_some())
    }

    async fn create_post(&self, post: Post) -> Result<Post> {
        let stored = self
            .writer
            .write(move |ctx| {
                let mut post = post;
                require_user(ctx.txn, &post.author)?;
                post.mentions = kept(&post.mentions, |u| user_exists(ctx.txn, u.as_str()))?;
                let record = PostRecord {
                    author: post.author.to_string(),
                    message: post.message.clone(),
                    data: post.data.clone(),
                    mentions: post.mentions.iter().map(|m| m.to_string()).collect(),
                };
                let mut mentions = ctx.txn.open_table(MENTIONS).store()?;
                for m in &post.mentions {
                    mentions.insert((m.as_str(), post.id.0), ()).store()?;
                }
                drop(mentions);
                ctx.txn
                    .open_table(POSTS)
                    .store()?
                    .insert(post.id.0, encode(&record).as_slice())
                    .store()?;
                ctx.txn
                    .open_table(AUTHOR_POSTS)
                    .store()?
                    .insert((post.author.as_str(), post.id.0), ())
                    .store()?;
                emit(ctx, &Event::PostCreated { post: post.clone() })?;
                Ok(post)
            })
            .await?;
        self.posts.put(Arc::new(stored.clone()));
        Ok(stored)
    }

    async fn mentions_of(
        &self,
        user: &UserId,
        range: IdRange,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        let Some((lo, hi)) = bounds(range) else {
            return Ok(Vec::new());
        };
        self.read(|txn| {
            let table = txn.open_table(MENTIONS).store()?;
            let u = user.as_str();
            let mut out = Vec::new();
            for item in table.range((u, lo)..=(u, hi)).store()?.rev().take(limit) {
                out.push(PostId(item.store()?.0.value().1));
            }
            Ok(out)
        })
    }

    async fn get_posts(&self, ids: &[PostId]) -> Result<Vec<Post>> {
        let mut found: Vec<Option<Arc<Post>>> = ids.iter().map(|id| self.posts.get(*id)).collect();
        if found.iter().any(Option::is_none) {
            self.read(|txn| {
                let posts = txn.open_table(POSTS).store()?;
                for (id, slot) in ids
                    .iter()
                    .zip(found.iter_mut())
                    .filter(|(_, s)| s.is_none())
                {
                    if let Some(bytes) = posts.get(id.0).store()? {
                        let post = Arc::new(to_post(id.0, bytes.value())?);
                        self.posts.put(post.clone());
                        *slot = Some(post);
                    }
                }
                Ok(())
            })?;
        }
        Ok(found
            .into_iter()
            .flatten()
            .map(|p| Post::clone(&p))
            .collect())
    }

    async fn delete_post(&self, id: PostId) -> Result<Option<Post>> {
        let deleted = self
            .writer
            .write(move |ctx| {
                let post = {
                    let posts = ctx.txn.open_table(POSTS).store()?;
                    let Some(bytes) = posts.get(id.0).store()? else {
                        return Ok(None);
                    };
                    to_post(id.0, bytes.value())?
                };
                ctx.txn.open_table(POSTS).store()?.remove(id.0).store()?;
                ctx.txn
                    .open_table(AUTHOR_POSTS)
                    .store()?
                    .remove((post.author.as_str(), id.0))
                    .store()?;
                let mut mentions = ctx.txn.open_table(MENTIONS).store()?;
                for m in &post.mentions {
                    mentions.remove((m.as_str(), id.0)).store()?;
                }
                drop(mentions);
                emit(ctx, &post_deleted(id, &post.author))?;
                Ok(Some(post))
            })
            .await?;
        self.posts.remove(id);
        Ok(deleted)
    }

    async fn post_ids_by(
        &self,
        authors: &[UserId],
        range: IdRange,
        limit: usize,
    ) -> Result<Vec<Entry>> {
        let Some((lo, hi)) = bounds(range).filter(|_| limit > 0) else {
            return Ok(Vec::new());
        };
        let authors = authors.to_vec();
        self.read_blocking(move |txn| {
            let table = txn.open_table(AUTHOR_POSTS).store()?;
            let mut out = Vec::new();
            for a in &authors {
                for item in table
                    .range((a.as_str(), lo)..=(a.as_str(), hi))
                    .store()?
                    .rev()
                    .take(limit)
                {
                    let (k, _) = item.store()?;
                    out.push(Entry::linked(PostId(k.value().1), a.clone()));
                }
            }
            Ok(out)
        })
        .await
    }

    async fn newest_post_id(&self) -> Result<Option<PostId>> {
        self.read(|txn| {
            Ok(txn
                .open_table(POSTS)
                .store()?
                .last()
                .store()?
                .map(|(k, _)| PostId(k.value())))
        })
    }
}
