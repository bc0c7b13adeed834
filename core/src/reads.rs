//! Reads, with paging, shared by the REST and gRPC transports; every call
//! is checked against its caller's permissions
//! (`socialite_domain::accounts::access`). Here: the `Reads` struct and what
//! every read shares (existence, what is hidden from whom, pages), the
//! timelines (home, list, group, mentions) and a user's posts; a user or a
//! post by id and what a reader may see of them in [`named`]. Each
//! feature's reads are `impl Reads` blocks in its folder (`crate::graph`,
//! `crate::posts`, `crate::interactions`, `crate::notifications`,
//! `crate::markers`).

use crate::checks::{list_not_found, post_not_found, user_not_found};
use crate::error::{Error, Result};
use crate::feed::timeline::{read_timeline, ReadSource};
use crate::feed::visible::{visible, Scope};
use crate::feed::{Feed, Stores};
use crate::ids::{encode_edge_cursor, encode_user_cursor, ListName, PostId, UserId};
use crate::metrics::metrics;
use crate::model::filter::FilterContext;
use crate::model::{newest, page_size, FeedItem, Page, Post, User};
use crate::ports::IdRange;
use socialite_domain::accounts::access::{check, viewing_as, Act, Caller};
use socialite_domain::graph::relations::{Hidden, Relation};
use std::collections::HashSet;

pub(crate) mod named;
mod pages;
mod rank_bases;
mod rank_extend;
mod rank_read;
mod rank_types;
pub mod ranked;
mod reader_signals;
mod reader_views;
mod snapshots;

/// Most authors one `posts_by_authors` call names.
pub(crate) const MAX_AUTHORS: usize = 100;

#[derive(Clone)]
pub struct Reads {
    pub(crate) stores: Stores,
    /// Ranked orders' settings and snapshots ([`ranked`]), shared by the
    /// reads' clones (a ranked order's refresh runs on one).
    pub(crate) ranker: std::sync::Arc<rank_types::Ranker>,
    /// What readers' timelines hide, kept between their reads where one
    /// process takes every write ([`reader_views`]); `None` elsewhere.
    views: Option<std::sync::Arc<reader_views::ReaderViews>>,
}

/// A page of user ids from `limit + 1` read, with the cursor of the next.
pub(crate) fn user_page(mut ids: Vec<UserId>, limit: usize) -> Page<UserId, String> {
    let next_cursor = (ids.len() > limit).then(|| encode_user_cursor(&ids[limit - 1]));
    ids.truncate(limit);
    Page {
        items: ids,
        next_cursor,
    }
}

/// A page of (user, time) pairs, newest first, from `limit + 1` read, with
/// the cursor of the next.
pub(crate) fn time_page(
    mut items: Vec<(UserId, u64)>,
    limit: usize,
) -> Page<(UserId, u64), String> {
    let next_cursor = (items.len() > limit).then(|| {
        let (id, at) = &items[limit - 1];
        encode_edge_cursor(*at, id)
    });
    items.truncate(limit);
    Page { items, next_cursor }
}

impl Reads {
    pub fn new(stores: Stores) -> Reads {
        Reads::with_ranking(stores, ranked::Ranking::default())
    }

    /// Reads whose ranked orders are made as `ranking` says.
    pub fn with_ranking(stores: Stores, ranking: ranked::Ranking) -> Reads {
        Reads {
            stores,
            ranker: std::sync::Arc::new(rank_types::Ranker::new(ranking)),
            views: None,
        }
    }

    /// These reads keeping what readers' timelines hide between their
    /// reads ([`reader_views`]), for a process whose [`crate::Ingest`] over
    /// the same stores takes every write (the clocks it moves tell when a
    /// view is stale). Where snapshots are shared, several processes take
    /// writes, and nothing is kept.
    pub fn keeping_views(mut self) -> Reads {
        self.views = self
            .stores
            .snapshots
            .is_none()
            .then(std::sync::Arc::default);
        self
    }

    /// These reads with a ranker of their own that holds nothing yet: its
    /// next ranked first page of any reader is ranked in full, from what
    /// the stores hold then. To compare an order served from what a ranker
    /// kept with one ranked afresh.
    pub fn ranking_afresh(&self) -> Reads {
        Reads::with_ranking(self.stores.clone(), self.ranker.settings.clone())
    }

    /// The user, unless there is none or it is suspended (hidden from
    /// every reader).
    pub(crate) async fn existing(&self, id: &UserId) -> Result<User> {
        let user = self.stores.content.get_user(id).await?;
        let user = user.ok_or_else(|| user_not_found(id))?;
        self.stores.accounts.visible(id).await?;
        Ok(user)
    }

    /// The reader, who must exist and not be suspended, and what their
    /// timelines in `context` hide ([`Reads::hidden_from`]): kept from one
    /// read to the next while no write that concerns the reader ended,
    /// where one process takes every write ([`reader_views`]).
    pub(crate) async fn reader_hidden(
        &self,
        reader: &UserId,
        context: FilterContext,
    ) -> Result<std::sync::Arc<Hidden>> {
        let Some(views) = &self.views else {
            self.existing(reader).await?;
            return Ok(std::sync::Arc::new(
                self.hidden_from(reader, context).await?,
            ));
        };
        // A filter that expired moves every reader's clock: before the clock
        // is read.
        self.stores.filters.expire_due();
        let at = self.stores.epoch.of_reader(reader);
        if let Some(hidden) = views.get(reader, context, at) {
            return Ok(hidden);
        }
        self.existing(reader).await?;
        let hidden = std::sync::Arc::new(self.hidden_from(reader, context).await?);
        views.put(reader, context, at, hidden.clone());
        Ok(hidden)
    }

    /// Refuses a suspended user (`user_not_found`: hidden) without a store
    /// read: what a live stream of their timeline checks every second.
    pub async fn not_suspended(&self, id: &UserId) -> Result<()> {
        self.stores.accounts.visible(id).await
    }

    /// What every reader is hidden: the suspended accounts.
    pub(crate) async fn hidden_from_all(&self) -> Result<Hidden> {
        let suspended = self.stores.accounts.suspended_ids().await?;
        Ok(Hidden::default().and_suspended(suspended))
    }

    /// Checks that the user exists and has the list (a list exists while an
    /// account is filed under it).
    pub(crate) async fn existing_list(&self, user: &UserId, list: &ListName) -> Result<()> {
        self.existing(user).await?;
        self.has_list(user, list).await
    }

    /// Checks that the user has the list.
    pub(crate) async fn has_list(&self, user: &UserId, list: &ListName) -> Result<()> {
        let lists = self.stores.graph.lists(user).await?;
        if !lists.iter().any(|(l, _)| l == list) {
            return Err(list_not_found(user, list));
        }
        Ok(())
    }

    /// A user's own posts and reposts, newest first, as `viewer` sees them
    /// ([`Reads::user`]).
    pub async fn posts_by(
        &self,
        caller: &Caller,
        id: &str,
        viewer: Option<&str>,
        limit: Option<u64>,
        before: Option<&str>,
    ) -> Result<Page<FeedItem, PostId>> {
        let (user, viewing) = self.user_as(caller, id, viewer).await?;
        let hidden = self
            .hidden_for(&viewing, Some(FilterContext::Profiles))
            .await?;
        self.posts_of(&[user.id], &hidden, limit, before).await
    }

    /// The posts and reposts of several authors (1 to [`MAX_AUTHORS`]),
    /// newest first, each post once; authors that do not exist, or that
    /// `viewer` may not see, add nothing.
    pub async fn posts_by_authors(
        &self,
        caller: &Caller,
        authors: &[&str],
        viewer: Option<&str>,
        limit: Option<u64>,
        before: Option<&str>,
    ) -> Result<Page<FeedItem, PostId>> {
        let viewer = viewer.map(UserId::parse).transpose()?;
        let mut ids = Vec::new();
        for a in authors {
            let id = UserId::parse(a)?;
            if !ids.contains(&id) {
                ids.push(id);
            }
        }
        if ids.is_empty() || ids.len() > MAX_AUTHORS {
            return Err(Error::invalid(
                "invalid_authors",
                format!("name 1 to {MAX_AUTHORS} authors"),
            ));
        }
        check(caller, Act::ReadPublic)?;
        let viewing = self.viewing(caller, viewer).await?;
        let hidden = self
            .hidden_for(&viewing, Some(FilterContext::Profiles))
            .await?;
        ids.retain(|a| !hidden.hides(a));
        if ids.is_empty() {
            page_size(limit)?;
            return Ok(Page {
                items: Vec::new(),
                next_cursor: None,
            });
        }
        self.posts_of(&ids, &hidden, limit, before).await
    }

    /// The home timeline, newest first.
    pub async fn timeline(
        &self,
        caller: &Caller,
        id: &str,
        limit: Option<u64>,
        before: Option<&str>,
    ) -> Result<(Page<FeedItem, PostId>, ReadSource)> {
        let id = UserId::parse(id)?;
        check(caller, Act::ReadOwn(&id))?;
        let hidden = self.reader_hidden(&id, FilterContext::Home).await?;
        self.feed_page(&Feed::Home(id), &hidden, limit, before)
            .await
    }

    /// What `viewer`'s mutes and blocks hide from their timelines, and
    /// what their keyword filters do there (`context`).
    pub(crate) async fn hidden_from(
        &self,
        viewer: &UserId,
        context: FilterContext,
    ) -> Result<Hidden> {
        let graph = &self.stores.graph;
        // Home leaves out whom the viewer files under an exclusive list.
        let exclusive = async {
            match context {
                FilterContext::Home => graph.exclusive_members(viewer).await,
                _ => Ok(Vec::new()),
            }
        };
        let (relations, suspended, sift, exclusive) = tokio::try_join!(
            graph.relations_of(viewer),
            self.stores.accounts.suspended_ids(),
            self.sift(viewer, context),
            exclusive
        )?;
        Ok(Hidden::in_timelines(relations)
            .and_authors(exclusive)
            .and_suspended(suspended)
            .and_filtered(sift))
    }

    /// The group's timeline: its members' posts, newest first, without
    /// those the viewer's mutes and blocks hide. A user token views as its
    /// user; a server key names the viewer, or reads the whole timeline.
    pub async fn group_timeline(
        &self,
        caller: &Caller,
        group: &str,
        viewer: Option<&str>,
        limit: Option<u64>,
        before: Option<&str>,
    ) -> Result<(Page<FeedItem, PostId>, ReadSource)> {
        let viewer = viewer.map(UserId::parse).transpose()?;
        let (group, _) = self.group(caller, group).await?;
        let hidden = match viewing_as(caller, viewer)? {
            Some(v) => {
                let v = self.existing(&v).await?.id;
                self.hidden_from(&v, FilterContext::Groups).await?
            }
            None => self.hidden_from_all().await?,
        };
        self.feed_page(&Feed::Group(group), &hidden, limit, before)
            .await
    }

    /// The posts that mention the user, newest first, without those of
    /// accounts the user blocks or is blocked by.
    pub async fn mentions(
        &self,
        caller: &Caller,
        id: &str,
        limit: Option<u64>,
        before: Option<&str>,
    ) -> Result<Page<FeedItem, PostId>> {
        let id = UserId::parse(id)?;
        check(caller, Act::ReadOwn(&id))?;
        let user = self.existing(&id).await?;
        let limit = page_size(limit)?;
        let mut below = before.map(PostId::parse).transpose()?;
        let (relations, suspended, sift) = tokio::try_join!(
            self.stores.graph.relations_of(&user.id),
            self.stores.accounts.suspended_ids(),
            self.sift(&user.id, FilterContext::Mentions)
        )?;
        let hidden = Hidden::in_mentions(relations).and_suspended(suspended);
        // Reads past what is hidden until the page and one more are found.
        let (content, want) = (&self.stores.content, limit + 1);
        let mut posts = Vec::new();
        loop {
            let range = IdRange { below, from: None };
            let ids = content.mentions_of(&user.id, range, want).await?;
            let ended = ids.len() < want;
            below = ids.last().copied();
            let found = content.get_posts(&ids).await?;
            let mut found: Vec<FeedItem> = found
                .into_iter()
                .filter(|p| !hidden.hides(&p.author))
                .map(FeedItem::plain)
                .collect();
            if let Some(s) = &sift {
                s.apply(&mut found);
            }
            posts.extend(found);
            if ended || posts.len() >= want {
                break;
            }
        }
        let next_cursor = (posts.len() > limit).then(|| posts[limit - 1].position);
        posts.truncate(limit);
        Ok(Page {
            items: posts,
            next_cursor,
        })
    }

    /// The timeline of a list: the posts of the accounts filed under it,
    /// newest first.
    pub async fn list_timeline(
        &self,
        caller: &Caller,
        id: &str,
        list: &str,
        limit: Option<u64>,
        before: Option<&str>,
    ) -> Result<(Page<FeedItem, PostId>, ReadSource)> {
        let (user, list) = (UserId::parse(id)?, ListName::parse(list)?);
        check(caller, Act::ReadOwn(&user))?;
        let hidden = self.reader_hidden(&user, FilterContext::Lists).await?;
        self.has_list(&user, &list).await?;
        self.feed_page(&Feed::List(user, list), &hidden, limit, before)
            .await
    }

    pub(crate) async fn feed_page(
        &self,
        feed: &Feed,
        hidden: &Hidden,
        limit: Option<u64>,
        before: Option<&str>,
    ) -> Result<(Page<FeedItem, PostId>, ReadSource)> {
        let limit = page_size(limit)?;
        let before = before.map(PostId::parse).transpose()?;
        let page = read_timeline(&self.stores, feed, hidden, before, limit).await?;
        metrics().timeline_read(page.source.as_str());
        Ok((
            Page {
                items: page.items,
                next_cursor: page.next,
            },
            page.source,
        ))
    }

    /// A page of the items of `authors` as their stream shows them
    /// ([`visible`]), newest first, below `before`: read on below what it
    /// leaves out (reposts of deleted posts, and of authors `hidden`) until
    /// the page is full. The cursor is the position of the last entry.
    pub(crate) async fn posts_of(
        &self,
        authors: &[UserId],
        hidden: &Hidden,
        limit: Option<u64>,
        before: Option<&str>,
    ) -> Result<Page<FeedItem, PostId>> {
        let limit = page_size(limit)?;
        let mut below = before.map(PostId::parse).transpose()?;
        let want = limit + 1;
        let mut items = Vec::new();
        loop {
            let range = IdRange { below, from: None };
            let entries = self
                .stores
                .content
                .post_ids_by(authors, range, want)
                .await?;
            let entries = newest(entries, want);
            let ended = entries.len() < want;
            below = entries.last().map(|e| e.post);
            let scope = Scope::Authors(authors);
            items.extend(visible(&self.stores, scope, hidden, &entries).await?);
            if ended || items.len() >= want {
                break;
            }
        }
        let next_cursor = (items.len() > limit).then(|| items[limit - 1].position);
        items.truncate(limit);
        Ok(Page { items, next_cursor })
    }
}
