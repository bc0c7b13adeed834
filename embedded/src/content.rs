//! Users and posts of the embedded store. A user's deletion runs in steps
//! (see `deletion`).

use crate::recent::{pick, PER_AUTHOR};
use crate::store::EmbeddedStore;
use crate::tables::*;
use crate::{filters, kept, likes, markers, notices, reposts};
use async_trait::async_trait;
use redb::{ReadTransaction, ReadableTable};
use serde_json::{Map, Value};
use socialite_core::error::{Error, Result};
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::collection::{Collection, Kept};
use socialite_core::model::filter::FilterSet;
use socialite_core::model::{Entry, Post, PostCounts, PostRef, User};
use socialite_core::ports::{
    Collections, Deletions, Filters, IdRange, Likes, Markers, Notices, Posts, Reposts, Users,
};
use socialite_domain::deletion::cascade::present;
use socialite_domain::feed::markers::Marker;
use socialite_domain::notifications::notified::{GroupKey, NoticeGroup};
use std::sync::Arc;

fn load_user(txn: &ReadTransaction, id: &UserId) -> Result<Option<User>> {
    let users = txn.open_table(USERS).store()?;
    let deleting = txn.open_table(DELETING).store()?;
    let held = users.get(id.as_str()).store()?;
    let being_deleted = deleting.get(id.as_str()).store()?.is_some();
    // Gone to readers from the deletion's first step.
    let Some(profile) = held.filter(|_| present(true, being_deleted)) else {
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

/// The accounts with at least `at_least` followers, most followed first: a
/// scan of the counts, a few bytes a user (a million users in well under a
/// second), made once when a fanout worker starts.
fn most_followed(txn: &ReadTransaction, at_least: u64, limit: usize) -> Result<Vec<(UserId, u64)>> {
    let counts = txn.open_table(COUNTS).store()?;
    let deleting = txn.open_table(DELETING).store()?;
    let users = txn.open_table(USERS).store()?;
    let exists = |id: &str| -> Result<bool> {
        let stored = users.get(id).store()?.is_some();
        Ok(present(stored, deleting.get(id).store()?.is_some()))
    };
    let mut found: Vec<(UserId, u64)> = Vec::new();
    for row in counts.iter().store()? {
        let (id, value) = row.store()?;
        let followers = value.value().0;
        if followers >= at_least && exists(id.value())? {
            found.push((UserId::from_stored(id.value().to_string()), followers));
        }
    }
    found.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    found.truncate(limit);
    Ok(found)
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

/// An author's newest ids for [`RecentPosts`] (newest first, and whether
/// they are all the author's posts), and their `limit` newest in `lo..=hi`.
fn newest_of(
    table: &impl ReadableTable<(&'static str, u64), ()>,
    author: &UserId,
    lo: u64,
    hi: u64,
    limit: usize,
) -> Result<(Vec<u64>, bool, Vec<u64>)> {
    let a = author.as_str();
    let mut newest = Vec::with_capacity(PER_AUTHOR);
    for item in table
        .range((a, 0)..=(a, u64::MAX))
        .store()?
        .rev()
        .take(PER_AUTHOR + 1)
    {
        newest.push(item.store()?.0.value().1);
    }
    let complete = newest.len() <= PER_AUTHOR;
    newest.truncate(PER_AUTHOR);
    let held = pick(
        newest.iter().copied(),
        newest.last().copied(),
        complete,
        lo,
        hi,
        limit,
    );
    let in_range = match held {
        Some(ids) => ids,
        // Deeper than the newest ids: read the range itself.
        None => table
            .range((a, lo)..=(a, hi))
            .store()?
            .rev()
            .take(limit)
            .map(|item| Ok(item.store()?.0.value().1))
            .collect::<Result<Vec<u64>>>()?,
    };
    Ok((newest, complete, in_range))
}

pub(crate) fn to_post(id: u64, bytes: &[u8]) -> Result<Post> {
    let r: PostRecord = decode(bytes)?;
    let author =
        UserId::parse(&r.author).map_err(|e| Error::internal(format!("stored author: {e}")))?;
    let reference = |r: RefRecord| PostRef {
        id: PostId(r.id),
        author: UserId::from_stored(r.author),
    };
    Ok(Post {
        id: PostId(id),
        author,
        message: r.message,
        data: r.data,
        mentions: r.mentions.into_iter().map(UserId::from_stored).collect(),
        reply_to: r.reply_to.map(reference),
        repost_of: r.repost_of.map(reference),
    })
}

#[async_trait]
impl Users for EmbeddedStore {
    async fn get_user(&self, id: &UserId) -> Result<Option<User>> {
        self.read(|txn| load_user(txn, id))
    }

    fn fault(&self) -> Option<socialite_core::fault::StoreFault> {
        self.known_fault()
    }

    async fn most_followed(&self, at_least: u64, limit: usize) -> Result<Vec<(UserId, u64)>> {
        self.read(|txn| most_followed(txn, at_least, limit))
    }
}

#[async_trait]
impl Deletions for EmbeddedStore {
    async fn pending_deletions(&self) -> Result<Vec<UserId>> {
        self.pending_deletion_list()
    }
}

#[async_trait]
impl Posts for EmbeddedStore {
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
            let epochs: Vec<u64> = ids.iter().map(|id| self.posts.epoch(*id)).collect();
            self.read(|txn| {
                let posts = txn.open_table(POSTS).store()?;
                for ((id, slot), epoch) in ids
                    .iter()
                    .zip(found.iter_mut())
                    .zip(&epochs)
                    .filter(|((_, s), _)| s.is_none())
                {
                    if let Some(bytes) = posts.get(id.0).store()? {
                        let post = Arc::new(to_post(id.0, bytes.value())?);
                        self.posts.loaded(post.clone(), *epoch);
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

    async fn replies_of(
        &self,
        post: PostId,
        after: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        self.read(|txn| crate::post_rows::replies(txn, post, after, limit))
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

    /// A heap merge of the authors' newest ids in the range: from memory
    /// ([`crate::recent::RecentPosts`]) for the authors held there, from the
    /// file for the others, whose newest ids are then kept.
    async fn newest_by(
        &self,
        authors: &[UserId],
        range: IdRange,
        limit: usize,
    ) -> Result<Vec<Entry>> {
        let Some((lo, hi)) = bounds(range).filter(|_| limit > 0) else {
            return Ok(Vec::new());
        };
        // Most authors answer from memory; the rest are read from the file,
        // and their newest ids kept for the next merge.
        let mut sources: Vec<Option<std::vec::IntoIter<u64>>> = Vec::with_capacity(authors.len());
        let mut missing = Vec::new();
        for (i, a) in authors.iter().enumerate() {
            let held = self.recent.newest(a, lo, hi, limit);
            if held.is_none() {
                missing.push((i, self.recent.epoch(a)));
            }
            sources.push(held.map(Vec::into_iter));
        }
        if !missing.is_empty() {
            let wanted: Vec<UserId> = missing.iter().map(|(i, _)| authors[*i].clone()).collect();
            let read = self
                .read_blocking(move |txn| {
                    let table = txn.open_table(AUTHOR_POSTS).store()?;
                    wanted
                        .iter()
                        .map(|a| newest_of(&table, a, lo, hi, limit))
                        .collect::<Result<Vec<_>>>()
                })
                .await?;
            for ((i, epoch), (newest, complete, in_range)) in missing.into_iter().zip(read) {
                self.recent.loaded(&authors[i], epoch, &newest, complete);
                sources[i] = Some(in_range.into_iter());
            }
        }
        // A heap merge of the authors' lists, each newest first.
        let mut sources: Vec<std::vec::IntoIter<u64>> =
            sources.into_iter().map(Option::unwrap_or_default).collect();
        let mut heap = std::collections::BinaryHeap::with_capacity(sources.len());
        for (i, s) in sources.iter_mut().enumerate() {
            if let Some(id) = s.next() {
                heap.push((id, i));
            }
        }
        let mut out = Vec::with_capacity(limit.min(1024));
        while let Some((post, i)) = heap.pop() {
            out.push(Entry::linked(PostId(post), authors[i].clone()));
            if out.len() == limit {
                break;
            }
            if let Some(id) = sources[i].next() {
                heap.push((id, i));
            }
        }
        Ok(out)
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
impl Likes for EmbeddedStore {
    async fn likers(
        &self,
        post: PostId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        self.read(|txn| likes::likers(txn, post, after, limit))
    }

    async fn post_counts(&self, posts: &[PostId]) -> Result<Vec<PostCounts>> {
        self.read(|txn| likes::counts(txn, posts))
    }

    async fn liked_since(&self, user: &UserId, from: PostId, limit: usize) -> Result<Vec<PostId>> {
        self.read(|txn| likes::liked_since(txn, user.as_str(), from, limit))
    }
}

#[async_trait]
impl Reposts for EmbeddedStore {
    async fn reposted_among(&self, posts: &[PostId]) -> Result<Vec<PostId>> {
        Ok(self.reposted.among(posts))
    }

    async fn reposters(&self, post: PostId, limit: usize) -> Result<Vec<(UserId, PostId)>> {
        self.read(|txn| reposts::reposters(txn, post, limit))
    }

    async fn reposts_among(&self, post: PostId, users: &[UserId]) -> Result<Vec<(UserId, PostId)>> {
        self.read(|txn| reposts::among(txn, post, users))
    }
}

#[async_trait]
impl Notices for EmbeddedStore {
    async fn muted_threads(
        &self,
        user: &UserId,
        after: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        self.read(|txn| {
            let table = txn.open_table(THREAD_MUTES).store()?;
            crate::thread_mutes::of(&table, user.as_str(), after, limit)
        })
    }

    async fn notice_groups(
        &self,
        user: &UserId,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<NoticeGroup>> {
        self.read(|txn| notices::entries(txn, user.as_str(), before, limit))
    }

    async fn entry_notices(
        &self,
        user: &UserId,
        group: GroupKey,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<(PostId, UserId)>> {
        self.read(|txn| {
            let table = txn.open_table(ENTRY_NOTICES).store()?;
            notices::entry_notices(&table, user.as_str(), group, before, limit)
        })
    }

    async fn entry_notices_by(
        &self,
        user: &UserId,
        group: GroupKey,
        actors: &[UserId],
    ) -> Result<Vec<(PostId, UserId)>> {
        self.read(|txn| notices::by_actors(txn, user.as_str(), group, actors))
    }
}

#[async_trait]
impl Collections for EmbeddedStore {
    async fn kept(
        &self,
        collection: &Collection,
        user: &UserId,
        before: Option<(u64, PostId)>,
        limit: usize,
    ) -> Result<Vec<Kept>> {
        self.read(|txn| kept::page(txn, collection, user.as_str(), before, limit))
    }
}

#[async_trait]
impl Filters for EmbeddedStore {
    async fn filters(&self, user: &UserId) -> Result<Option<FilterSet>> {
        self.read(|txn| filters::of(&txn.open_table(FILTERS).store()?, user.as_str()))
    }

    async fn filters_rev(&self, user: &UserId) -> Result<Option<u64>> {
        self.read(|txn| filters::rev(&txn.open_table(FILTERS).store()?, user.as_str()))
    }
}

#[async_trait]
impl Markers for EmbeddedStore {
    async fn markers(&self, user: &UserId) -> Result<Vec<Marker>> {
        self.read(|txn| markers::of(&txn.open_table(MARKERS).store()?, user.as_str()))
    }
}
