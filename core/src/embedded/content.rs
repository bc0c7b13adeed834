//! Users, the follow graph, posts and the outbox in one redb file
//! (`content.redb`). Every write goes through the group-commit [`Writer`]; a
//! write that others must learn of queues its event in the outbox within the
//! same transaction.

use super::graph::{add_counts, edges_of, to_user_ids};
use super::post_cache::PostCache;
use super::tables::*;
use super::writer::{WriteCtx, Writer};
use crate::error::{Error, Result};
use crate::event::{Event, RETRACT_CHUNK};
use crate::ids::{PostId, UserId};
use crate::model::{Entry, Post, User};
use crate::ports::{ContentStore, IdRange, Outbox};
use crate::reads::user_not_found;
use async_trait::async_trait;
use redb::{
    Database, ReadTransaction, ReadableDatabase, ReadableTable, ReadableTableMetadata,
    WriteTransaction,
};
use serde_json::{Map, Value};
use std::path::Path;
use std::sync::Arc;
use tokio::sync::Notify;

pub struct EmbeddedStore {
    db: Arc<Database>,
    pub(super) writer: Writer<State>,
    outbox_ready: Arc<Notify>,
    posts: PostCache,
}

/// Recent posts kept in memory for hydrating timelines.
const POST_CACHE: usize = 200_000;

/// Owned by the writer thread.
pub(super) struct State {
    next_outbox_seq: u64,
    queued: bool,
    outbox_ready: Arc<Notify>,
}

type Ctx<'t> = WriteCtx<'t, State>;

impl EmbeddedStore {
    pub fn open(path: &Path) -> Result<EmbeddedStore> {
        let db = Arc::new(Database::create(path).store()?);
        let txn = db.begin_write().store()?;
        let next_outbox_seq = {
            // Create every table up front so that reads never meet a missing one.
            txn.open_table(USERS).store()?;
            txn.open_table(COUNTS).store()?;
            txn.open_table(FOLLOWING).store()?;
            txn.open_table(FOLLOWERS).store()?;
            txn.open_table(POSTS).store()?;
            txn.open_table(AUTHOR_POSTS).store()?;
            last_u64_key(&txn.open_table(OUTBOX).store()?)? + 1
        };
        txn.commit().store()?;
        let outbox_ready = Arc::new(Notify::new());
        let state = State {
            next_outbox_seq,
            queued: false,
            outbox_ready: outbox_ready.clone(),
        };
        let writer = Writer::spawn("content", db.clone(), state, |s| {
            if std::mem::take(&mut s.queued) {
                s.outbox_ready.notify_one();
            }
        });
        Ok(EmbeddedStore {
            db,
            writer,
            outbox_ready,
            posts: PostCache::new(POST_CACHE),
        })
    }

    pub(super) fn read<R>(&self, f: impl FnOnce(&ReadTransaction) -> Result<R>) -> Result<R> {
        f(&self.db.begin_read().store()?)
    }

    /// Runs a larger read off the async runtime.
    pub(super) async fn read_blocking<R: Send + 'static>(
        &self,
        f: impl FnOnce(&ReadTransaction) -> Result<R> + Send + 'static,
    ) -> Result<R> {
        let db = self.db.clone();
        tokio::task::spawn_blocking(move || f(&db.begin_read().store()?))
            .await
            .map_err(|e| Error::internal(format!("store read task failed: {e}")))?
    }
}

pub(super) fn emit(ctx: &mut Ctx<'_>, event: &Event) -> Result<()> {
    let seq = ctx.state.next_outbox_seq;
    ctx.txn
        .open_table(OUTBOX)
        .store()?
        .insert(seq, event.encode().as_slice())
        .store()?;
    ctx.state.next_outbox_seq += 1;
    ctx.state.queued = true;
    Ok(())
}

fn user_exists(txn: &WriteTransaction, id: &str) -> Result<bool> {
    Ok(txn.open_table(USERS).store()?.get(id).store()?.is_some())
}

pub(super) fn require_user(txn: &WriteTransaction, id: &UserId) -> Result<()> {
    if user_exists(txn, id.as_str())? {
        Ok(())
    } else {
        Err(user_not_found(id))
    }
}

/// Adds `followers` and `following` to a user's counts.
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

fn to_post(id: u64, bytes: &[u8]) -> Result<Post> {
    let r: PostRecord = decode(bytes)?;
    let author =
        UserId::parse(&r.author).map_err(|e| Error::internal(format!("stored author: {e}")))?;
    Ok(Post {
        id: PostId(id),
        author,
        message: r.message,
        data: r.data,
    })
}

#[async_trait]
impl ContentStore for EmbeddedStore {
    async fn put_user(
        &self,
        id: &UserId,
        profile: Option<Map<String, Value>>,
    ) -> Result<(User, bool)> {
        let id2 = id.clone();
        let created = self
            .writer
            .write(move |ctx| {
                let mut users = ctx.txn.open_table(USERS).store()?;
                let existing = users.get(id2.as_str()).store()?.map(|g| g.value().to_vec());
                let created = existing.is_none();
                let bytes = match (&profile, existing) {
                    (Some(p), _) => encode(p),
                    (None, Some(old)) => old,
                    (None, None) => Vec::new(),
                };
                users.insert(id2.as_str(), bytes.as_slice()).store()?;
                if created {
                    ctx.txn
                        .open_table(COUNTS)
                        .store()?
                        .insert(id2.as_str(), (0, 0))
                        .store()?;
                }
                Ok(created)
            })
            .await?;
        let user = self.get_user(id).await?.ok_or_else(|| user_not_found(id))?;
        Ok((user, created))
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
                    for &p in &ids {
                        posts.remove(p).store()?;
                        by_author.remove((u, p)).store()?;
                    }
                    ids
                };
                ctx.txn.open_table(USERS).store()?.remove(u).store()?;
                ctx.txn.open_table(COUNTS).store()?.remove(u).store()?;
                for chunk in followers.chunks(RETRACT_CHUNK) {
                    let followers = to_user_ids(chunk.to_vec())?;
                    emit(
                        ctx,
                        &Event::AuthorRetracted {
                            author: id.clone(),
                            followers,
                        },
                    )?;
                }
                // Fanout workers keep follower lists: tell them who lost a follower.
                for t in to_user_ids(following)? {
                    emit(
                        ctx,
                        &Event::Unfollowed {
                            follower: id.clone(),
                            followee: t,
                        },
                    )?;
                }
                emit(ctx, &Event::TimelineDropped { user: id.clone() })?;
                Ok(Some(removed_posts))
            })
            .await?;
        for p in removed.iter().flatten() {
            self.posts.remove(PostId(*p));
        }
        Ok(removed.is_some())
    }

    async fn create_post(&self, post: Post) -> Result<()> {
        let cached = Arc::new(post.clone());
        self.writer
            .write(move |ctx| {
                require_user(ctx.txn, &post.author)?;
                let record = PostRecord {
                    author: post.author.to_string(),
                    message: post.message.clone(),
                    data: post.data.clone(),
                };
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
                emit(ctx, &Event::PostCreated { post })
            })
            .await?;
        self.posts.put(cached);
        Ok(())
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
                emit(
                    ctx,
                    &Event::PostDeleted {
                        post: id,
                        author: post.author.clone(),
                    },
                )?;
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
        let hi = match range.below {
            Some(PostId(0)) => return Ok(Vec::new()),
            Some(PostId(b)) => b - 1,
            None => u64::MAX,
        };
        let lo = range.from.map_or(0, |f| f.0);
        if lo > hi || limit == 0 {
            return Ok(Vec::new());
        }
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

#[async_trait]
impl Outbox for EmbeddedStore {
    async fn pending(&self, limit: usize) -> Result<Vec<(u64, Event)>> {
        self.read(|txn| {
            let outbox = txn.open_table(OUTBOX).store()?;
            let mut out = Vec::new();
            for item in outbox.range(0u64..).store()?.take(limit) {
                let (k, v) = item.store()?;
                out.push((k.value(), Event::decode(v.value())?));
            }
            Ok(out)
        })
    }

    async fn ack(&self, seqs: &[u64]) -> Result<()> {
        // Sequence numbers here follow commit order, so `pending` listed a prefix.
        let Some(&through) = seqs.iter().max() else {
            return Ok(());
        };
        self.writer
            .write_lazy(move |ctx| {
                ctx.txn
                    .open_table(OUTBOX)
                    .store()?
                    .retain_in(..=through, |_, _| false)
                    .store()?;
                Ok(())
            })
            .await
    }

    async fn backlog(&self) -> Result<u64> {
        self.read(|txn| txn.open_table(OUTBOX).store()?.len().store())
    }

    fn notifier(&self) -> Arc<Notify> {
        self.outbox_ready.clone()
    }
}
