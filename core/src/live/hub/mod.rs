//! The live hub of one process: which users have open streams, whose posts
//! their home timelines hold, and the dispatch of applied events to them.

mod notices;

use super::LiveEvent;
use crate::error::Result;
use crate::event::Event;
use crate::feed::{Feed, Stores};
use crate::ids::{now_ms, PostId, UserId};
use crate::metrics::metrics;
use crate::model::filter::FilterContext;
use crate::model::{FeedItem, Post};
use crate::ports::{Applied, AppliedFeed};
use crate::shutdown::Shutdown;
use rustc_hash::{FxHashMap, FxHashSet};
use socialite_domain::feed::timeline_change::TimelineChange;
use socialite_domain::filters::matcher::{Matcher, Verdict};
use socialite_domain::filters::Sift;
use socialite_domain::graph::relations::{FollowOption, Relation};
use socialite_domain::notifications::notified::Notice;
use socialite_domain::notifications::thread_mutes::MAX_THREAD_MUTES;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::mpsc;

/// Events one stream may have waiting before it is told to reload: a slow
/// client costs at most this much memory.
pub const STREAM_BUFFER: usize = 256;

struct Sub {
    id: u64,
    tx: mpsc::Sender<LiveEvent>,
}

/// A user with open streams: whose posts their home timeline holds, and
/// what their relations keep from them.
struct Watched {
    authors: FxHashSet<UserId>,
    seen: Seen,
    subs: Vec<Sub>,
}

/// What a reader's relations decide for their streams.
#[derive(Default)]
struct Seen {
    /// Whose posts they do not see (a repost carries others' posts).
    hidden: FxHashSet<UserId>,
    /// Followees whose reposts they do not see (a follow option).
    reposts_off: FxHashSet<UserId>,
    /// Followees whose posts they are told of (the `notify` option).
    notify: FxHashSet<UserId>,
    /// Their keyword filters, applied to each entry at its time.
    filters: Option<Arc<Matcher>>,
    /// The threads they muted (first posts): no notices from them.
    muted_threads: Arc<FxHashSet<PostId>>,
    /// Whom they file under an exclusive list: left out of home.
    home_off: FxHashSet<UserId>,
}

impl Seen {
    /// Whether the reader's filters hide a notice of `event`'s post (as a
    /// read of their notifications leaves out an entry about it).
    fn filters_hide(&self, reader: &UserId, event: &Event, notice: &Notice) -> bool {
        let (Event::PostCreated { post, .. }, Some(m)) = (event, &self.filters) else {
            return false;
        };
        if notice.key.post != Some(post.id) {
            return false;
        }
        let sift = Sift::new(m, FilterContext::Notifications, reader, now_ms());
        sift.is_some_and(|s| s.verdict(post) == Verdict::Hide)
    }

    /// The entry as `reader`'s filters leave it: `None` when one hides it.
    fn sifted(&self, reader: &UserId, event: &LiveEvent) -> Option<LiveEvent> {
        let (LiveEvent::Entry(item), Some(m)) = (event, &self.filters) else {
            return Some(event.clone());
        };
        let Some(sift) = Sift::new(m, FilterContext::Home, reader, now_ms()) else {
            return Some(event.clone());
        };
        match sift.verdict(&item.post) {
            Verdict::Show => Some(event.clone()),
            Verdict::Hide => None,
            Verdict::Warn(filtered) => Some(LiveEvent::Entry(Box::new(FeedItem {
                filtered,
                ..(**item).clone()
            }))),
        }
    }
}

#[derive(Default)]
struct Registry {
    next_id: u64,
    users: FxHashMap<UserId, Watched>,
    /// Author → the watched users whose home timeline holds their posts.
    by_author: FxHashMap<UserId, FxHashSet<UserId>>,
}

impl Registry {
    /// Sends to every stream of `user`; a stream whose buffer is full (or
    /// whose client left) is dropped, and its client told to reload.
    fn send(&mut self, user: &UserId, event: &LiveEvent) {
        send_to(&mut self.users, user, event);
    }

    /// Sends to the streams of every user watching `author` (no copy of the
    /// watchers: this runs for every post), but those who do not see
    /// `carried`'s posts, or `author`'s reposts when the post carries one.
    fn send_watchers(&mut self, author: &UserId, carried: Option<&UserId>, event: &LiveEvent) {
        for w in self.by_author.get(author).into_iter().flatten() {
            let kept_from = self.users.get(w).is_some_and(|x| {
                let off = &x.seen.home_off;
                off.contains(author)
                    || match carried {
                        Some(c) => {
                            x.seen.hidden.contains(c)
                                || x.seen.reposts_off.contains(author)
                                || off.contains(c)
                        }
                        None => false,
                    }
            });
            if kept_from {
                continue;
            }
            let sifted = self.users.get(w).and_then(|x| x.seen.sifted(w, event));
            if let Some(event) = sifted {
                send_to(&mut self.users, w, &event);
            }
        }
    }

    fn set_authors(&mut self, user: &UserId, (authors, seen): (FxHashSet<UserId>, Seen)) {
        let Some(w) = self.users.get_mut(user) else {
            return;
        };
        w.seen = seen;
        for gone in w.authors.difference(&authors) {
            if let Some(set) = self.by_author.get_mut(gone) {
                set.remove(user);
                if set.is_empty() {
                    self.by_author.remove(gone);
                }
            }
        }
        for new in authors.difference(&w.authors) {
            self.by_author
                .entry(new.clone())
                .or_default()
                .insert(user.clone());
        }
        w.authors = authors;
    }

    fn forget(&mut self, user: &UserId) {
        self.set_authors(user, Default::default());
        self.users.remove(user);
    }
}

fn send_to(users: &mut FxHashMap<UserId, Watched>, user: &UserId, event: &LiveEvent) {
    if let Some(w) = users.get_mut(user) {
        w.subs.retain(|s| s.tx.try_send(event.clone()).is_ok());
    }
}

pub struct LiveHub {
    stores: Stores,
    registry: Mutex<Registry>,
}

/// One open stream's receiving end; dropping it closes the stream.
pub struct Watch {
    hub: Arc<LiveHub>,
    user: UserId,
    id: u64,
    rx: mpsc::Receiver<LiveEvent>,
}

impl Watch {
    /// The next event; `None` once the hub dropped the stream (it fell
    /// behind, the hub lost track, or the user was deleted).
    pub async fn recv(&mut self) -> Option<LiveEvent> {
        self.rx.recv().await
    }

    pub fn user(&self) -> &UserId {
        &self.user
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        metrics().live_streams.dec();
        let mut reg = self.hub.registry();
        let empty = match reg.users.get_mut(&self.user) {
            Some(w) => {
                w.subs.retain(|s| s.id != self.id);
                w.subs.is_empty()
            }
            None => false,
        };
        if empty {
            reg.forget(&self.user);
        }
    }
}

impl LiveHub {
    pub fn new(stores: Stores) -> Arc<LiveHub> {
        Arc::new(LiveHub {
            stores,
            registry: Mutex::default(),
        })
    }

    fn registry(&self) -> MutexGuard<'_, Registry> {
        self.registry.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Open streams in this process.
    pub fn streams(&self) -> usize {
        self.registry().users.values().map(|w| w.subs.len()).sum()
    }

    /// Opens a stream of `user`'s home timeline: from now on every applied
    /// event that concerns it is sent to the returned watch.
    pub async fn watch(self: &Arc<Self>, user: &UserId) -> Result<Watch> {
        let known = self.registry().users.contains_key(user);
        let authors = if known {
            None
        } else {
            Some(self.authors(user).await?)
        };
        let (tx, rx) = mpsc::channel(STREAM_BUFFER);
        let mut reg = self.registry();
        reg.next_id += 1;
        let id = reg.next_id;
        let w = reg.users.entry(user.clone()).or_insert_with(|| Watched {
            authors: FxHashSet::default(),
            seen: Seen::default(),
            subs: Vec::new(),
        });
        w.subs.push(Sub { id, tx });
        if let Some(authors) = authors {
            reg.set_authors(user, authors);
        }
        metrics().live_streams.inc();
        Ok(Watch {
            hub: self.clone(),
            user: user.clone(),
            id,
            rx,
        })
    }

    /// Whose posts `user`'s home timeline holds, and what their relations
    /// keep from their streams.
    async fn authors(&self, user: &UserId) -> Result<(FxHashSet<UserId>, Seen)> {
        let feed = Feed::Home(user.clone());
        let authors = self.stores.authors(&feed).await?.into_iter().collect();
        let graph = &self.stores.graph;
        let notify = Relation::Option(FollowOption::Notify);
        let filters = self.stores.filters.matcher(&*self.stores.content, user);
        let content = &self.stores.content;
        let threads = content.muted_threads(user, None, MAX_THREAD_MUTES);
        let (r, notify, filters, threads, home_off) = tokio::try_join!(
            graph.relations_of(user),
            graph.all_relations(user, notify),
            filters,
            threads,
            graph.exclusive_members(user)
        )?;
        let hidden = r.muted.into_iter().chain(r.blocked).chain(r.blocked_by);
        let seen = Seen {
            hidden: hidden.collect(),
            reposts_off: r.reposts_off.into_iter().collect(),
            notify: notify.into_iter().collect(),
            filters,
            muted_threads: Arc::new(threads.into_iter().collect()),
            home_off: home_off.into_iter().collect(),
        };
        Ok((authors, seen))
    }

    /// Reads the applied feed and dispatches it until `shutdown`.
    pub async fn run(self: Arc<Self>, feed: Arc<dyn AppliedFeed>, mut shutdown: Shutdown) {
        let mut stream = loop {
            match feed.subscribe().await {
                Ok(s) => break s,
                Err(e) => {
                    tracing::warn!(error = %e.chain(), "subscribing to the applied feed failed");
                    tokio::select! {
                        _ = shutdown.wait() => return self.close(),
                        _ = tokio::time::sleep(std::time::Duration::from_secs(1)) => {}
                    }
                }
            }
        };
        loop {
            let applied = tokio::select! {
                _ = shutdown.wait() => return self.close(),
                applied = stream.next() => applied,
            };
            match applied {
                Applied::Events(events) => {
                    for e in &events {
                        self.dispatch(e).await;
                    }
                }
                Applied::Lost => self.lost(),
            }
        }
    }

    /// Some events may have been missed: every stream is told to reload.
    fn lost(&self) {
        tracing::warn!("the live hub missed applied events; open streams are told to reload");
        self.close();
    }

    /// Ends every stream (each client is told to reload): on shutdown, so
    /// that clients move to another replica and the server drains.
    fn close(&self) {
        let mut reg = self.registry();
        reg.users.clear();
        reg.by_author.clear();
    }

    /// Sends what one applied event changes to the streams it concerns.
    pub async fn dispatch(&self, event: &Event) {
        for (notice, muted) in self.notify(event) {
            self.notify_outside_muted(notice, &muted).await;
        }
        if let Event::FollowOptionsSet { user, .. }
        | Event::FilterPut { user, .. }
        | Event::FilterRemoved { user, .. }
        | Event::ThreadMuteSet { user, .. }
        | Event::ListExclusiveSet { user, .. } = event
        {
            // What the streams keep from the user changed; their timeline not.
            return self.reload(user).await;
        }
        if let Event::Relisted { follower, .. } | Event::Followed { follower, .. } = event {
            // The accounts their exclusive lists hold may have changed.
            self.reload(follower).await;
        }
        let Some(change) = TimelineChange::of(event) else {
            return;
        };
        match change {
            TimelineChange::Posted(post) => {
                if !self.registry().by_author.contains_key(&post.author) {
                    return; // nobody watching: no copy of the post
                }
                let Some(item) = self.entry_of(post).await else {
                    return;
                };
                let carried = post.repost_of.as_ref().map(|o| &o.author);
                self.registry().send_watchers(
                    &post.author,
                    carried,
                    &LiveEvent::Entry(Box::new(item)),
                );
                let took = now_ms().saturating_sub(post.id.unix_ms());
                metrics().live_push.observe(took as f64 / 1000.0);
            }
            TimelineChange::Retracted { post, author } => {
                self.registry()
                    .send_watchers(author, None, &LiveEvent::Retracted(post));
            }
            TimelineChange::Unfollowed {
                follower: user,
                followee: author,
                ..
            }
            | TimelineChange::Mute {
                user,
                target: author,
                muted: true,
                ..
            } => {
                self.registry()
                    .send(user, &LiveEvent::Purged(author.clone()));
                self.reload(user).await;
            }
            TimelineChange::Followed { follower: user, .. }
            | TimelineChange::Mute {
                user, muted: false, ..
            } => self.reload(user).await,
            TimelineChange::Block { user, target } => {
                self.reload(user).await;
                self.reload(target).await;
            }
            TimelineChange::AuthorRetracted {
                author, followers, ..
            } => {
                for f in followers {
                    self.registry().send(f, &LiveEvent::Purged(author.clone()));
                    self.reload(f).await;
                }
            }
            TimelineChange::Dropped { user, .. } => self.registry().forget(user),
            // Streams carry home timelines, which lists and groups leave as they are.
            TimelineChange::Relisted { .. } | TimelineChange::Membership { .. } => {}
        }
    }

    /// The entry a new item makes: the post itself, or for a repost the
    /// post it carries, placed by the repost and naming the reposter;
    /// `None` for a repost of a post deleted since.
    async fn entry_of(&self, item: &Post) -> Option<FeedItem> {
        let Some(original) = &item.repost_of else {
            return Some(FeedItem::plain(item.clone()));
        };
        let found = match self.stores.content.get_posts(&[original.id]).await {
            Ok(found) => found,
            Err(e) => {
                tracing::warn!(error = %e.chain(), "reading a reposted post for live streams failed");
                return None;
            }
        };
        found.into_iter().next().map(|post| FeedItem {
            position: item.id,
            post,
            reposted_by: vec![item.author.clone()],
            reposts_seen: 1,
            filtered: Vec::new(),
        })
    }

    /// Reads again whose posts a watched user's timeline holds, after an
    /// event that changed it (the store already holds the change).
    async fn reload(&self, user: &UserId) {
        if !self.registry().users.contains_key(user) {
            return;
        }
        match self.authors(user).await {
            Ok(authors) => self.registry().set_authors(user, authors),
            Err(e) => {
                // Without the authors the streams cannot be trusted.
                tracing::warn!(error = %e.chain(), %user, "reloading a live timeline's authors failed");
                self.registry().forget(user);
            }
        }
    }
}
