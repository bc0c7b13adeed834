//! Reads: profiles, the graph, posts and home timelines, with paging. Shared
//! by the REST and gRPC transports; every call is checked against its
//! caller's permissions (`crate::rules::access`).

use crate::error::Result;
use crate::feed::merge::newest;
use crate::feed::timeline::{read_home, ReadSource};
use crate::feed::Stores;
use crate::ids::{decode_user_cursor, encode_user_cursor, PostId, UserId};
use crate::metrics::metrics;
use crate::model::{page_size, Entry, Page, Post, User};
use crate::ports::IdRange;
use crate::rules::access::{check, Act, Caller};
use crate::rules::checks::{post_not_found, user_not_found};
use std::collections::HashMap;

pub struct Reads {
    stores: Stores,
}

/// Which edge list to page through.
#[derive(Debug, Clone, Copy)]
pub enum Direction {
    Followers,
    Following,
}

impl Reads {
    pub fn new(stores: Stores) -> Reads {
        Reads { stores }
    }

    pub async fn user(&self, caller: &Caller, id: &str) -> Result<User> {
        let id = UserId::parse(id)?;
        check(caller, Act::ReadPublic)?;
        self.existing(&id).await
    }

    async fn existing(&self, id: &UserId) -> Result<User> {
        self.stores
            .content
            .get_user(id)
            .await?
            .ok_or_else(|| user_not_found(id))
    }

    pub async fn edges(
        &self,
        caller: &Caller,
        id: &str,
        direction: Direction,
        limit: Option<u64>,
        cursor: Option<&str>,
    ) -> Result<Page<UserId, String>> {
        let user = self.user(caller, id).await?;
        let limit = page_size(limit)?;
        let after = cursor.map(decode_user_cursor).transpose()?;
        let graph = &self.stores.graph;
        let mut ids = match direction {
            Direction::Followers => graph.followers(&user.id, after.as_ref(), limit + 1).await?,
            Direction::Following => graph.following(&user.id, after.as_ref(), limit + 1).await?,
        };
        let next_cursor = (ids.len() > limit).then(|| encode_user_cursor(&ids[limit - 1]));
        ids.truncate(limit);
        Ok(Page {
            items: ids,
            next_cursor,
        })
    }

    pub async fn post(&self, caller: &Caller, id: &str) -> Result<Post> {
        let id = PostId::parse(id)?;
        check(caller, Act::ReadPublic)?;
        self.stores
            .content
            .get_posts(&[id])
            .await?
            .pop()
            .ok_or_else(|| post_not_found(id))
    }

    /// A user's own posts, newest first.
    pub async fn posts_by(
        &self,
        caller: &Caller,
        id: &str,
        limit: Option<u64>,
        before: Option<&str>,
    ) -> Result<Page<Post, PostId>> {
        let user = self.user(caller, id).await?;
        let limit = page_size(limit)?;
        let before = before.map(PostId::parse).transpose()?;
        let range = IdRange {
            below: before,
            from: None,
        };
        let entries = self
            .stores
            .content
            .post_ids_by(&[user.id], range, limit + 1)
            .await?;
        self.hydrate(newest(entries, limit + 1), limit).await
    }

    /// The home timeline, newest first.
    pub async fn timeline(
        &self,
        caller: &Caller,
        id: &str,
        limit: Option<u64>,
        before: Option<&str>,
    ) -> Result<(Page<Post, PostId>, ReadSource)> {
        let id = UserId::parse(id)?;
        check(caller, Act::ReadOwn(&id))?;
        let user = self.existing(&id).await?;
        let limit = page_size(limit)?;
        let before = before.map(PostId::parse).transpose()?;
        let page = read_home(&self.stores, &user.id, before, limit).await?;
        metrics().timeline_read(page.source.as_str());
        let items = self.load(&page.entries).await?;
        Ok((
            Page {
                items,
                next_cursor: page.next,
            },
            page.source,
        ))
    }

    /// Pages up to `limit + 1` entries and loads the posts of the first
    /// `limit`. The cursor comes from the entries, so a post deleted meanwhile
    /// shortens the page without breaking the paging.
    async fn hydrate(&self, mut entries: Vec<Entry>, limit: usize) -> Result<Page<Post, PostId>> {
        let next_cursor = (entries.len() > limit).then(|| entries[limit - 1].post);
        entries.truncate(limit);
        Ok(Page {
            items: self.load(&entries).await?,
            next_cursor,
        })
    }

    /// The posts of `entries`: embedded ones carry theirs, linked ones are
    /// loaded in one batched read; deleted ones are left out.
    async fn load(&self, entries: &[Entry]) -> Result<Vec<Post>> {
        let linked: Vec<PostId> = entries
            .iter()
            .filter(|e| e.body.is_none())
            .map(|e| e.post)
            .collect();
        let mut loaded: HashMap<PostId, Post> = if linked.is_empty() {
            HashMap::new()
        } else {
            self.stores
                .content
                .get_posts(&linked)
                .await?
                .into_iter()
                .map(|p| (p.id, p))
                .collect()
        };
        Ok(entries
            .iter()
            .filter_map(|e| e.to_post().or_else(|| loaded.remove(&e.post)))
            .collect())
    }
}
