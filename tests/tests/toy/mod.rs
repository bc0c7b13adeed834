//! A toy third backend: every port in memory (content, graph, accounts,
//! transfer, outbox, timelines, event log), built only from the primitives
//! core's planners need (`socialite_core::plan::Txn`), core's rules of
//! what a timeline accepts, and plain reads, with no rule code of its own
//! and nothing of another backend. It passes the whole conformance suite,
//! the differential test and the export round trip (`toy_backend.rs`):
//! the proof that what a write checks and does, and what a timeline holds,
//! is decided once, in core.
//!
//! A write runs on a copy of the state and replaces it when the plan
//! succeeds: a refused plan leaves nothing behind, as a rolled-back
//! transaction would.

mod cache;
mod log;
mod ports;
mod snapshots;
mod timelines;
mod txn;
mod webhooks;

use serde_json::{Map, Value};
use socialite_core::backends::{Backends, Parts};
use socialite_core::error::Result;
use socialite_core::event::Event;
use socialite_core::feed::config::{FeedConfig, FeedModel};
use socialite_core::feed::NoTimelines;
use socialite_core::ids::{GroupName, ListName, PostId, UserId};
use socialite_core::live::in_process::InProcessFeed;
use socialite_core::model::collection::Collection;
use socialite_core::model::Post;
use socialite_core::plan::Ledger;
use socialite_core::ports::{Standing, TimelineStore};
use socialite_domain::feed::markers::{Marker, MarkerTimeline};
use socialite_domain::notifications::notified::{GroupKey, NoticeGroup, NoticeKey};
use socialite_testkit::{Opened, Opening};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use tokio::sync::Notify;

/// Everything the store holds: one map or set per index, as a database
/// would keep tables.
#[derive(Clone, Default)]
struct State {
    /// User → profile.
    users: BTreeMap<UserId, Option<Map<String, Value>>>,
    /// User → (followers, following).
    counts: BTreeMap<UserId, (u64, u64)>,
    /// Users being deleted → their lists when it began.
    deleting: BTreeMap<UserId, Vec<ListName>>,
    /// (follower, followee) → the edge's lists and when it was made.
    following: BTreeMap<(UserId, UserId), (Vec<ListName>, u64)>,
    /// (followee, follower).
    followers: BTreeSet<(UserId, UserId)>,
    /// (user, list) → members; (user, list, member).
    list_sizes: BTreeMap<(UserId, ListName), u64>,
    list_members: BTreeSet<(UserId, ListName, UserId)>,
    /// (user, relation code, target) and (target, relation code, user).
    relations: BTreeSet<(UserId, u8, UserId)>,
    related: BTreeSet<(UserId, u8, UserId)>,
    /// (user, target) → when the mute ends.
    mute_ends: BTreeMap<(UserId, UserId), u64>,
    /// (user, target) → when `notify` was turned on, while it is.
    notify_since: BTreeMap<(UserId, UserId), u64>,
    /// (group, member), (member, group), group → members.
    members: BTreeSet<(GroupName, UserId)>,
    memberships: BTreeSet<(UserId, GroupName)>,
    group_sizes: BTreeMap<GroupName, u64>,
    posts: BTreeMap<PostId, Post>,
    /// (author, post) and (mentioned user, post).
    by_author: BTreeSet<(UserId, PostId)>,
    mentions: BTreeSet<(UserId, PostId)>,
    outbox: BTreeMap<u64, Event>,
    next_seq: u64,
    hybrid: BTreeSet<UserId>,
    /// (post, user) → when the user liked it.
    likes: BTreeMap<(PostId, UserId), u64>,
    /// (user, post) → the item of the user's repost of it; (post, item) →
    /// the reposter.
    reposts: BTreeMap<(UserId, PostId), PostId>,
    reposters: BTreeMap<(PostId, PostId), UserId>,
    /// Notices by key → id, and each recipient's entries.
    notices: BTreeMap<NoticeKey, PostId>,
    notice_groups: BTreeMap<(UserId, GroupKey), NoticeGroup>,
    /// (post, tally code, part) → that part of the post's count.
    tallies: BTreeMap<(PostId, u8, u8), i64>,
    /// (user, timeline) → the user's marker of it.
    markers: BTreeMap<(UserId, MarkerTimeline), Marker>,
    /// user → their keyword filters.
    filters: BTreeMap<UserId, socialite_core::model::filter::FilterSet>,
    /// (user, first post): the threads users muted.
    thread_mutes: BTreeSet<(UserId, PostId)>,
    /// (user, list): the lists users marked exclusive.
    exclusive: BTreeSet<(UserId, ListName)>,
    /// (user, collection, post) → when kept.
    kept: BTreeMap<(UserId, Collection, PostId), u64>,
    accounts: BTreeMap<UserId, Standing>,
}

/// The newest notices of `recipient`'s entry `group` below `before`:
/// (id, actor), newest first.
fn entry_notices(
    s: &State,
    recipient: &UserId,
    group: GroupKey,
    before: Option<PostId>,
    limit: usize,
) -> Vec<(PostId, UserId)> {
    let mut of: Vec<(PostId, UserId)> = s
        .notices
        .iter()
        .filter(|(k, id)| {
            k.recipient == *recipient
                && k.kind == group.kind
                && k.post == group.post
                && id.unix_ms() / socialite_domain::notifications::notified::WINDOW_MS
                    == group.window
                && before.is_none_or(|b| **id < b)
        })
        .map(|(k, id)| (*id, k.actor.clone()))
        .collect();
    of.sort_unstable_by(|a, b| b.cmp(a));
    of.truncate(limit);
    of
}

/// The toy store: one state behind a lock.
#[derive(Default)]
pub struct ToyStore {
    state: Mutex<State>,
    queued: Arc<Notify>,
    webhooks: Mutex<webhooks::ToyWebhooks>,
    snapshots: Mutex<Vec<socialite_domain::feed::snapshot::Snapshot>>,
}

/// A write in progress: a copy of the state, and whether it queued events.
struct ToyTxn {
    state: State,
    ledger: Ledger,
}

impl ToyStore {
    /// Runs `f` on a copy of the state, kept only if `f` succeeds.
    fn write<R>(&self, f: impl FnOnce(&mut ToyTxn) -> Result<R>) -> Result<R> {
        self.run(Ledger::default(), f)
    }

    /// [`ToyStore::write`] with `ledger`; the relay is woken once the
    /// write committed, if it queued events.
    fn run<R>(&self, ledger: Ledger, f: impl FnOnce(&mut ToyTxn) -> Result<R>) -> Result<R> {
        let mut state = self.state.lock().unwrap();
        let mut txn = ToyTxn {
            state: state.clone(),
            ledger,
        };
        let out = f(&mut txn)?;
        *state = txn.state;
        drop(state);
        if txn.ledger.emitted > 0 {
            self.queued.notify_one();
        }
        Ok(out)
    }

    fn read<R>(&self, f: impl FnOnce(&State) -> R) -> R {
        f(&self.state.lock().unwrap())
    }
}

/// Opens the toy store with its timelines and log, for the shared suites.
pub fn open(feed: FeedConfig, _test: &'static str) -> Opening {
    Box::pin(async move {
        let store = Arc::new(ToyStore::default());
        let log = Arc::new(log::ToyLog::default());
        let timelines: Arc<dyn TimelineStore> = match feed.model {
            FeedModel::FanoutOnRead => Arc::new(NoTimelines),
            _ => Arc::new(timelines::ToyTimelines::new(
                feed.cache_size,
                feed.freshness(),
            )),
        };
        let parts = Parts {
            content: store.clone(),
            graph: store.clone(),
            outbox: store.clone(),
            accounts: store.clone(),
            webhooks: store.clone(),
            snapshots: Some(store.clone()),
            transfer: store,
            backup: None,
            timelines,
            log: log.clone(),
            rewind: Some(log),
            applied: Arc::new(InProcessFeed::new()),
        };
        Some(Opened::new(Backends::assemble(parts, feed), ()))
    })
}
