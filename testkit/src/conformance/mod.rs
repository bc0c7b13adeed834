//! One conformance suite for the ports, run on every backend: each check
//! states what any adapter of a port must do, and knows the backend only by
//! the [`Opener`] it is given. A backend runs the whole suite with
//! [`conformance_suite!`](crate::conformance_suite).

mod collections;
mod content;
mod exclusive;
mod export;
mod filters;
mod firehose;
mod follow_options;
mod graph;
mod likes;
mod lists;
mod markers;
mod mute_ends;
mod named;
mod notices;
mod ranked;
mod ranked_shared;
mod ranked_sources;
mod replies;
mod reposts;
mod runs_of_members;
mod runs_of_posts;
mod runs_read_ahead;
mod thread_mutes;
mod timelines;
mod transfer_modes;
mod wakes;
mod webhooks;

pub use collections::*;
pub use content::*;
pub use exclusive::*;
pub use export::*;
pub use filters::*;
pub use firehose::*;
pub use follow_options::*;
pub use graph::*;
pub use likes::*;
pub use lists::*;
pub use markers::*;
pub use mute_ends::*;
pub use named::*;
pub use notices::*;
pub use ranked::*;
pub use ranked_shared::*;
pub use ranked_sources::*;
pub use replies::*;
pub use reposts::*;
pub use runs_of_members::*;
pub use runs_of_posts::*;
pub use runs_read_ahead::*;
pub use thread_mutes::*;
pub use timelines::*;
pub use transfer_modes::*;
pub use wakes::*;
pub use webhooks::*;

use crate::open::{eventually, Opener};
use serde_json::json;
use socialite_core::backends::Backends;
use socialite_core::checks::{EdgeChange, EdgeOp, Membership};
use socialite_core::error::ErrorKind;
use socialite_core::event::Event;
use socialite_core::feed::config::{FeedConfig, FeedModel};
use socialite_core::feed::fanout;
use socialite_core::feed::followers::FollowerIndex;
use socialite_core::feed::timeline::{activate, read_timeline};
use socialite_core::feed::Feed;
use socialite_core::ids::{GroupName, ListName, PostId, TimelineId, UserId};
use socialite_core::ingest::Ingest;
use socialite_core::model::{Entry, Post};
use socialite_core::ports::{CacheRead, Coverage, IdRange, LogConsumer};
use socialite_domain::accounts::access::Caller;
use socialite_domain::deletion::cascade::{timeline_dropped, DeletionStage, UserDeletion};
use socialite_domain::graph::relations::{Hidden, Relation, RelationChange};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub(crate) fn u(s: &str) -> UserId {
    UserId::parse(s).unwrap()
}

pub(crate) fn edge(follower: &str, followee: &str, op: EdgeOp) -> EdgeChange {
    EdgeChange::new(u(follower), u(followee), op).unwrap()
}

pub(crate) fn post(id: u64, author: &str, message: &str) -> Post {
    let data = json!({ "n": id, "tags": ["a", "b"], "nested": { "x": 1.5 } });
    Post::written(
        PostId(id),
        u(author),
        message.into(),
        data.as_object().cloned(),
        vec![],
    )
}

pub(crate) fn ids(entries: &[Entry]) -> Vec<u64> {
    entries.iter().map(|e| e.post.0).collect()
}

/// Drains the outbox, in order, acknowledging what it read. A follow's
/// time varies from run to run: each `Followed` must carry one, and is
/// given back with it at 0, to compare with what a test expects.
pub(crate) async fn drain_outbox(b: &Backends) -> Vec<Event> {
    outbox_events(b).await.into_iter().map(untimed).collect()
}

/// Drains the outbox, in order, acknowledging what it read: the events as
/// the log would carry them.
pub async fn outbox_events(b: &Backends) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        let pending = b.outbox.pending(1000).await.unwrap();
        if pending.is_empty() {
            return out;
        }
        let seqs: Vec<u64> = pending.iter().map(|(s, _)| *s).collect();
        assert!(
            seqs.windows(2).all(|w| w[0] < w[1]),
            "pending is oldest first"
        );
        b.outbox.ack(&seqs).await.unwrap();
        out.extend(pending.into_iter().map(|(_, e)| e));
    }
}

fn untimed(mut e: Event) -> Event {
    if let Event::Followed { at_ms, .. } = &mut e {
        assert!(
            *at_ms > 1_600_000_000_000,
            "a follow's event carries its time"
        );
        *at_ms = 0;
    }
    e
}

pub(crate) fn member(group: &str, user: &str, join: bool) -> Membership {
    Membership {
        group: GroupName::parse(group).unwrap(),
        user: u(user),
        join,
    }
}

pub(crate) fn mentioning(id: u64, author: &str, named: &[&str]) -> Post {
    Post {
        mentions: named.iter().map(|n| u(n)).collect(),
        ..post(id, author, "hi")
    }
}

/// The backend opened once for each feed model, one after another: `None`
/// when the backend is skipped.
pub(crate) async fn each_model(
    open: Opener,
    test: &'static str,
) -> Option<Vec<crate::open::Opened>> {
    let mut opened = Vec::new();
    for model in FeedModel::ALL {
        let feed = FeedConfig {
            model,
            ..FeedConfig::default()
        };
        opened.push(open(feed, test).await?);
    }
    Some(opened)
}

/// `user`'s home timeline as the API reads it: the post ids, newest first.
pub(crate) async fn home_ids(reads: &socialite_core::reads::Reads, user: &str) -> Vec<u64> {
    let (page, _) = reads
        .timeline(&Caller::Trusted, user, Some(50), None)
        .await
        .unwrap();
    page.items.iter().map(|i| i.post.id.0).collect()
}

/// Fans out what the outbox queued since, as a worker would: the events.
pub(crate) async fn fan_out(b: &Backends, index: &FollowerIndex) -> Vec<Event> {
    let events = drain_outbox(b).await;
    fanout::apply(&b.stores(), index, &events).await.unwrap();
    events
}

pub(crate) fn l(s: &str) -> ListName {
    ListName::parse(s).unwrap()
}

pub(crate) fn filed(follower: &str, followee: &str, lists: &[&str]) -> EdgeChange {
    edge(follower, followee, EdgeOp::Follow).with_lists(lists.iter().map(|s| l(s)).collect())
}

/// Polls `consumer` until `want` events arrived (or the deadline passes).
pub(crate) async fn consume(consumer: &mut Box<dyn LogConsumer>, want: usize) -> Vec<Event> {
    let mut got = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while got.len() < want && std::time::Instant::now() < deadline {
        got.extend(
            consumer
                .poll(100, Duration::from_millis(200), Duration::ZERO)
                .await
                .unwrap(),
        );
    }
    got
}

pub(crate) fn posted(author: &str, id: u64) -> Event {
    Event::post_created(post(id, author, "x"))
}

/// The home timeline of `user`.
pub(crate) fn h(user: &str) -> TimelineId {
    TimelineId::home(&u(user))
}

pub(crate) fn entry(id: u64, author: &str) -> Entry {
    Entry::linked(PostId(id), u(author))
}

pub(crate) async fn ready(b: &Backends, user: &str) -> (Vec<u64>, Coverage) {
    match b.timelines.read(&h(user), None, 200).await.unwrap() {
        CacheRead::Ready { entries, coverage } => (ids(&entries), coverage),
        other => panic!("{user}: expected a ready cache, found {other:?}"),
    }
}
