//! The harness: a backend driven as the services drive it (ingest, relay,
//! fanout, reads), beside the oracle it is checked against.

use super::model::{Model, Shown};
use super::model::{GROUPS, LISTS};
use super::notices::Entry;
use crate::open::Opener;
use socialite_core::backends::Backends;
use socialite_core::feed::config::FeedConfig;
use socialite_core::feed::fanout;
use socialite_core::feed::followers::FollowerIndex;
use socialite_core::ids::{PostId, TimelineId};
use socialite_core::ingest::Ingest;
use socialite_core::model::FeedItem;
use socialite_core::ports::{CacheRead, LogConsumer};
use socialite_core::reads::ranked::Ranking;
use socialite_core::reads::Reads;
use socialite_core::relay::relay_once;
use socialite_domain::accounts::access::Caller;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

/// Which timeline of a user a check reads.
#[derive(Debug, Clone)]
pub enum Which {
    Home,
    List(String),
    Group(String),
    Mentions,
}

pub struct Harness {
    pub backends: Backends,
    pub ingest: Ingest,
    pub reads: Reads,
    pub consumer: Box<dyn LogConsumer>,
    pub model: Model,
    pub feed: FeedConfig,
    pub followers: FollowerIndex,
    /// Authors marked for hybrid fanout after the last drain, and how many
    /// times an author crossed the threshold up and down.
    pub marked: BTreeSet<String>,
    pub crossings: (usize, usize),
    /// Fanout is held back: events reach the log, and stay there, while
    /// reads merge what it has not delivered ([`Harness::hold_fanout`]).
    pub held: bool,
    _opened: crate::open::Opened,
}

impl Harness {
    /// The backend `open` opens with `feed`; `None` when it is skipped.
    /// Its log must rewind (the replays).
    pub async fn open(open: Opener, feed: FeedConfig) -> Option<Harness> {
        Some(Harness::on(open(feed, "differential").await?, feed).await)
    }

    /// A harness on backends opened with `feed`, whose log rewinds.
    pub async fn on(opened: crate::open::Opened, feed: FeedConfig) -> Harness {
        let backends = opened.backends.clone();
        assert!(
            backends.rewind.is_some(),
            "the differential test replays the log: open a log that rewinds"
        );
        let ingest = Ingest::new(&backends, 1).await.unwrap();
        // Ranked orders with no deadline a test machine misses, over every
        // candidate (a history's timelines are all within the window).
        let patient = Ranking {
            deadline: Duration::from_secs(60),
            max_candidates: 100_000,
            ..Ranking::default()
        };
        // Every write goes through `ingest`: what readers hide may be kept.
        let reads = Reads::with_ranking(backends.stores(), patient).keeping_views();
        let consumer = backends.log.consumer("fanout").await.unwrap();
        Harness {
            backends,
            ingest,
            reads,
            consumer,
            model: Model {
                own_posts: feed.own_posts,
                ..Model::default()
            },
            feed,
            followers: FollowerIndex::default(),
            marked: BTreeSet::new(),
            crossings: (0, 0),
            held: false,
            _opened: opened,
        }
    }

    /// Relays and fans out until nothing is left (while fanout is held,
    /// relays only).
    pub async fn drain(&mut self) {
        while relay_once(&*self.backends.outbox, &*self.backends.log)
            .await
            .unwrap()
            > 0
        {}
        if self.held {
            return;
        }
        loop {
            let events = self
                .consumer
                .poll(7, Duration::ZERO, Duration::ZERO)
                .await
                .unwrap();
            if events.is_empty() {
                break;
            }
            for e in &events {
                self.model.note_time(e);
            }
            fanout::apply(&self.backends.stores(), &self.followers, &events)
                .await
                .unwrap();
            self.consumer.commit().await.unwrap();
        }
        let marked: BTreeSet<String> = self
            .backends
            .graph
            .hybrid_authors()
            .await
            .unwrap()
            .iter()
            .map(|u| u.to_string())
            .collect();
        self.crossings.0 += marked.difference(&self.marked).count();
        self.crossings.1 += self.marked.difference(&marked).count();
        self.marked = marked;
    }

    /// Delivers what is on the log, then holds fanout back as a stalled
    /// or overrun worker would, with reads told that every write from
    /// now on may be undelivered ([`socialite_core::feed::late`]).
    pub async fn hold_fanout(&mut self) {
        self.drain().await;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64;
        let margin = socialite_core::feed::late::STAMP_MARGIN.as_millis() as u64;
        self.backends.late.set(Some(PostId::first_at(now - margin)));
        self.held = true;
    }

    /// Lets fanout deliver again, and reads rely on it.
    pub async fn release_fanout(&mut self) {
        self.held = false;
        self.drain().await;
        self.backends.late.set(None);
    }

    /// Makes the group consume again from `from` (a replay; none while
    /// fanout is held).
    pub async fn replay_from(&mut self, from: u64) {
        if self.held {
            return;
        }
        self.consumer.commit().await.unwrap();
        self.backends
            .rewind
            .as_ref()
            .unwrap()
            .rewind("fanout", from)
            .await
            .unwrap();
        self.consumer = self.backends.log.consumer("fanout").await.unwrap();
        self.drain().await;
    }

    /// A page of one of `user`'s timelines.
    pub async fn page(
        &self,
        user: &str,
        which: &Which,
        limit: u64,
        before: Option<&str>,
    ) -> socialite_core::Result<socialite_core::model::Page<FeedItem, PostId>> {
        let c = &Caller::Trusted;
        let read = match which {
            Which::Home => self.reads.timeline(c, user, Some(limit), before).await,
            Which::List(l) => {
                self.reads
                    .list_timeline(c, user, l, Some(limit), before)
                    .await
            }
            Which::Group(g) => {
                let viewer = (!user.is_empty()).then_some(user);
                let read = self.reads.group_timeline(c, g, viewer, Some(limit), before);
                read.await
            }
            Which::Mentions => return self.reads.mentions(c, user, Some(limit), before).await,
        };
        read.map(|(page, _)| page)
    }

    /// Pages through one timeline and compares it with its oracle.
    pub async fn check_timeline(&self, seed: u64, step: usize, u: &str, which: Which, limit: u64) {
        let config = format!(
            "{} embed={} own_posts={}",
            self.feed.model, self.feed.embed, self.feed.own_posts
        );
        let plain = |posts: Vec<PostId>| posts.into_iter().map(Shown::plain).collect();
        let expected: Vec<Shown> = match &which {
            Which::Home => self.model.timeline(u),
            Which::List(l) => self.model.list_timeline(u, l),
            Which::Group(g) => plain(self.model.group_timeline(g, u)),
            Which::Mentions => plain(self.model.mentions_of(u)),
        };
        let mut got = Vec::new();
        let mut before: Option<String> = None;
        loop {
            let page = self
                .page(u, &which, limit, before.as_deref())
                .await
                .unwrap_or_else(|e| panic!("seed {seed} {config}: {u} {which:?}: {e:?}"));
            assert!(page.items.len() <= limit as usize);
            for p in page.items.iter().map(|i| &i.post) {
                let Some((author, message)) = self.model.posts.get(&p.id) else {
                    panic!("seed {seed} step {step} {config}: {u} {which:?} shows {} that the model does not hold ({}: {:?})", p.id, p.author, p.message);
                };
                assert_eq!(
                    (p.author.as_str(), &p.message),
                    (author.as_str(), message),
                    "seed {seed} {config}"
                );
                if let Which::Mentions = which {
                    let named: Vec<String> = p.mentions.iter().map(|m| m.to_string()).collect();
                    assert_eq!(
                        named, self.model.mentions[&p.id],
                        "seed {seed}: mentions of {}",
                        p.id
                    );
                }
            }
            got.extend(page.items.iter().map(shown));
            match page.next_cursor {
                Some(c) => before = Some(c.to_string()),
                None => break,
            }
            assert!(
                got.len() <= expected.len() + 1,
                "seed {seed} step {step} {config}: paging does not end for {u} {which:?}"
            );
        }
        assert_eq!(
            got, expected,
            "seed {seed} step {step} {config}: timeline {which:?} of {u} at page size {limit}"
        );
    }

    /// Checks every timeline against the oracle, and, unless fanout is
    /// held, what fanout keeps beside them (stored timelines,
    /// notifications, counts).
    pub async fn check_all(&mut self, seed: u64, step: usize) {
        self.drain().await;
        if !self.held {
            self.check_readers(seed, step).await;
        }
        let users: Vec<String> = self.model.users.iter().cloned().collect();
        let config = format!(
            "{} embed={} own_posts={}",
            self.feed.model, self.feed.embed, self.feed.own_posts
        );
        for (i, u) in users.iter().enumerate() {
            if self.model.suspended.contains(u) {
                // Hidden from every reader, its own timelines too.
                let err = self.page(u, &Which::Home, 3, None).await.unwrap_err();
                assert_eq!(err.code(), "user_not_found", "seed {seed} step {step}");
                continue;
            }
            let limit = [1u64, 2, 3, 7, 50][i % 5];
            self.check_timeline(seed, step, u, Which::Home, limit).await;
            self.check_balanced(seed, step, u, limit).await;
            // Every list the user has, and its size, as the model says.
            let lists = self.model.lists(u);
            let stored: BTreeMap<String, u64> = self
                .reads
                .lists(&Caller::Trusted, u, None)
                .await
                .unwrap()
                .into_iter()
                .map(|l| {
                    let marked = self
                        .model
                        .exclusive
                        .contains(&(u.clone(), l.name.to_string()));
                    assert_eq!(
                        l.exclusive,
                        Some(marked),
                        "seed {seed} step {step}: {u}'s {}",
                        l.name
                    );
                    (l.name.to_string(), l.count)
                })
                .collect();
            assert_eq!(
                stored, lists,
                "seed {seed} step {step} {config}: lists of {u}"
            );
            for l in LISTS {
                if lists.contains_key(l) {
                    self.check_timeline(seed, step, u, Which::List(l.into()), limit)
                        .await;
                } else {
                    let err = self.page(u, &Which::List(l.into()), 3, None).await;
                    assert_eq!(err.unwrap_err().code(), "list_not_found");
                }
            }
            self.check_timeline(seed, step, u, Which::Mentions, limit)
                .await;
            if let Some(g) = GROUPS.get(i) {
                let which = Which::Group(g.to_string());
                // Read by a viewer, whose mutes and blocks apply, and as a whole.
                let viewer = if i == 0 { u.as_str() } else { "" };
                if self.model.groups.get(*g).is_some_and(|m| !m.is_empty()) {
                    self.check_timeline(seed, step, viewer, which, limit).await;
                } else {
                    let err = self.page("", &which, 3, None).await.unwrap_err();
                    assert_eq!(err.code(), "group_not_found");
                }
            }
            // Embedding is a storage choice: the stored entries must carry content.
            let uid = socialite_core::ids::UserId::parse(u).unwrap();
            let stored = self
                .backends
                .timelines
                .read(&TimelineId::home(&uid), None, usize::MAX)
                .await
                .unwrap();
            if let (CacheRead::Ready { entries, .. }, false) = (stored, self.held) {
                // What is stored is the oracle's raw stream: nothing muted,
                // unfollowed or deleted waits there for the read to filter
                // it (a repost of a post deleted since may: it names nothing).
                let oracle = self.model.home_items(u);
                // A suspended author's entries stay stored, hidden when
                // read, so lifting the suspension needs no rebuild.
                let by_suspended = |p: &PostId| {
                    let author = self.model.author_of_item(*p);
                    author.is_some_and(|a| self.model.suspended.contains(a))
                };
                let strays: Vec<PostId> = entries
                    .iter()
                    .map(|e| e.post)
                    .filter(|p| !oracle.contains(p) && !by_suspended(p))
                    .collect();
                assert!(
                    strays.is_empty(),
                    "seed {seed} step {step} {config}: {u}'s stored timeline holds {strays:?}"
                );
                let embedded = entries.iter().filter(|e| e.body.is_some()).count();
                let want = if self.feed.embed { entries.len() } else { 0 };
                assert_eq!(
                    embedded, want,
                    "seed {seed} {config}: entries of {u} with content"
                );
            }
        }
    }

    /// Every post's likes count, and where each marked reader resumes, as
    /// the model says.
    async fn check_readers(&mut self, seed: u64, step: usize) {
        let posts: Vec<PostId> = self.model.posts.keys().copied().collect();
        let counts = self.backends.content.post_counts(&posts).await.unwrap();
        for (p, n) in posts.iter().zip(counts) {
            let m = &self.model;
            let want = (m.likes_of(*p), m.reposts_of(*p), m.replies_of(*p));
            assert_eq!(
                (n.likes, n.reposts, n.replies),
                want,
                "seed {seed} step {step}: likes, reposts and replies of {p}"
            );
        }
        self.check_notifications(seed, step).await;
        let config = format!("{} embed={}", self.feed.model, self.feed.embed);
        for (u, marker) in &self.model.markers {
            if self.model.suspended.contains(u) {
                continue;
            }
            let after = marker.to_string();
            let read = self
                .reads
                .timeline_after(&Caller::Trusted, u, Some(50), &after);
            let (page, _) = read.await.unwrap();
            let got: Vec<Shown> = page.items.iter().map(shown).collect();
            let mut want = self.model.timeline_after(u, *marker);
            want.truncate(50);
            assert_eq!(
                got, want,
                "seed {seed} step {step} {config}: {u} after {marker}"
            );
        }
    }
}

/// An entry as the oracle describes one.
fn shown(i: &FeedItem) -> Shown {
    Shown {
        post: i.post.id,
        position: i.position,
        reposted_by: i.reposted_by.iter().map(|r| r.to_string()).collect(),
    }
}

impl Harness {
    /// Every reader's notifications, paged, and their unread count, as the
    /// model says.
    async fn check_notifications(&self, seed: u64, step: usize) {
        let users: Vec<&String> = self.model.users.iter().collect();
        for (i, u) in users.into_iter().enumerate() {
            if self.model.suspended.contains(u) {
                continue;
            }
            let want = self.model.notifications(u);
            let limit = [1u64, 3, 50][i % 3];
            let (mut got, mut before) = (Vec::new(), None::<String>);
            loop {
                let page = self
                    .reads
                    .notifications(&Caller::Trusted, u, Some(limit), before.as_deref())
                    .await
                    .unwrap();
                got.extend(page.items.into_iter().map(|n| Entry {
                    kind: n.kind,
                    post: n.post,
                    actors: n.actors.iter().map(|a| a.to_string()).collect(),
                    count: n.count,
                    latest: n.latest,
                }));
                match page.next_cursor {
                    Some(c) => before = Some(c.to_string()),
                    None => break,
                }
                assert!(
                    got.len() <= want.len() + 1,
                    "seed {seed}: paging does not end"
                );
            }
            assert_eq!(got, want, "seed {seed} step {step}: notifications of {u}");
            let read = self.model.notice_markers.get(u);
            let unread = want
                .iter()
                .filter(|e| read.is_none_or(|r| e.latest > *r))
                .count();
            let counted = self.reads.unread_notifications(&Caller::Trusted, u).await;
            assert_eq!(
                counted.unwrap(),
                (unread as u64, false),
                "seed {seed} step {step}: unread notifications of {u}"
            );
        }
    }
}
