//! The conformance suite of mutes and blocks, run on every backend (the
//! embedded default, and MongoDB with Kafka): what a graph store must do
//! with a relation change (`socialite_domain::graph::relations`), and what the
//! feed logic then does to stored timelines.

mod common;

use common::ports::{Kind, Under};
use socialite_core::backends::Backends;
use socialite_core::checks::{EdgeChange, EdgeOp};
use socialite_core::error::ErrorKind;
use socialite_core::event::Event;
use socialite_core::feed::config::FeedConfig;
use socialite_core::feed::fanout;
use socialite_core::feed::followers::FollowerIndex;
use socialite_core::ids::{ListName, PostId, TimelineId, UserId};
use socialite_core::model::Post;
use socialite_core::ports::CacheRead;
use socialite_domain::deletion::cascade::DeletionStage;
use socialite_domain::graph::relations::{Relation, RelationChange};

async fn open(kind: Kind, test: &str) -> Option<Under> {
    let feed = FeedConfig {
        cache_size: 10,
        ..FeedConfig::default()
    };
    common::ports::open(kind, feed, test, "rel").await
}

fn u(s: &str) -> UserId {
    UserId::parse(s).unwrap()
}

fn l(s: &str) -> ListName {
    ListName::parse(s).unwrap()
}

fn change(user: &str, target: &str, r: Relation, make: bool) -> RelationChange {
    RelationChange::new(u(user), u(target), r, make).unwrap()
}

fn follow(follower: &str, followee: &str, lists: &[&str]) -> EdgeChange {
    EdgeChange::new(u(follower), u(followee), EdgeOp::Follow)
        .unwrap()
        .with_lists(lists.iter().map(|n| l(n)).collect())
}

fn post(id: u64, author: &str) -> Post {
    Post::written(PostId(id), u(author), format!("post {id}"), None, vec![])
}

async fn fan_out(b: &Backends, index: &FollowerIndex) {
    let events = socialite_testkit::conformance::outbox_events(b).await;
    fanout::apply(&b.stores(), index, &events).await.unwrap();
}

async fn stored(b: &Backends, timeline: TimelineId) -> Vec<u64> {
    match b.timelines.read(&timeline, None, 100).await.unwrap() {
        CacheRead::Ready { entries, .. } => entries.iter().map(|e| e.post.0).collect(),
        other => panic!("{timeline}: expected a ready timeline, found {other:?}"),
    }
}

/// A mute is kept and listed both ways, tells the worker the edge's lists,
/// and changes nothing the second time; lifting it likewise.
async fn mutes_are_kept_and_listed(kind: Kind) {
    let Some(t) = open(kind, "mutes_are_kept_and_listed").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    for name in ["a", "b", "c"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    g.change_edge(&follow("a", "b", &["work"])).await.unwrap();
    socialite_testkit::conformance::outbox_events(b).await;

    let err = g
        .change_relation(&change("a", "zed", Relation::Mute, true))
        .await
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.code()),
        (ErrorKind::NotFound, "user_not_found")
    );
    let t1 = g
        .change_relation(&change("a", "b", Relation::Mute, true))
        .await
        .unwrap();
    assert!(t1.changed && t1.active);
    let again = g
        .change_relation(&change("a", "b", Relation::Mute, true))
        .await
        .unwrap();
    assert!(!again.changed && again.active, "idempotent");
    g.change_relation(&change("a", "c", Relation::Mute, true))
        .await
        .unwrap();
    assert_eq!(
        socialite_testkit::conformance::outbox_events(b).await,
        vec![
            Event::Muted {
                user: u("a"),
                target: u("b"),
                edge: Some(vec![l("work")]),
                until_ms: None,
            },
            Event::Muted {
                user: u("a"),
                target: u("c"),
                edge: None,
                until_ms: None,
            },
        ]
    );
    let muted = g
        .relations(&u("a"), Relation::Mute, None, 10)
        .await
        .unwrap();
    assert_eq!(muted, vec![u("b"), u("c")]);
    let page = g
        .relations(&u("a"), Relation::Mute, Some(&u("b")), 10)
        .await;
    assert_eq!(page.unwrap(), vec![u("c")], "paged after the cursor");
    assert!(g
        .relations(&u("a"), Relation::Block, None, 10)
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        g.related(&u("b"), Relation::Mute, None, 10).await.unwrap(),
        vec![u("a")]
    );
    assert_eq!(
        g.related_to_each(&[u("c"), u("a")], Relation::Mute)
            .await
            .unwrap(),
        vec![vec![u("a")], vec![]]
    );
    assert!(g
        .has_relation(&u("a"), Relation::Mute, &u("b"))
        .await
        .unwrap());
    assert!(!g
        .has_relation(&u("b"), Relation::Mute, &u("a"))
        .await
        .unwrap());
    // A mute keeps the edge and its lists.
    assert_eq!(
        g.edge(&u("a"), &u("b")).await.unwrap(),
        Some(vec![l("work")])
    );

    let lifted = g
        .change_relation(&change("a", "b", Relation::Mute, false))
        .await
        .unwrap();
    assert!(lifted.changed && !lifted.active);
    assert_eq!(
        socialite_testkit::conformance::outbox_events(b).await,
        vec![Event::Unmuted {
            user: u("a"),
            target: u("b"),
            edge: Some(vec![l("work")]),
        }]
    );
    let r = g.relations_of(&u("a")).await.unwrap();
    assert_eq!(
        (r.muted, r.blocked, r.blocked_by),
        (vec![u("c")], vec![], vec![])
    );
}

/// A block removes the edges both ways (counts and lists move, with their
/// `Unfollowed` events, then `Blocked`), refuses follows either way while
/// it stands, and no longer once lifted (`Unblocked`).
async fn blocks_cut_edges_and_refuse_follows(kind: Kind) {
    let Some(t) = open(kind, "blocks_cut_edges_and_refuse_follows").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    for name in ["a", "b", "x"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    g.change_edge(&follow("a", "b", &["close"])).await.unwrap();
    g.change_edge(&follow("b", "a", &[])).await.unwrap();
    g.change_edge(&follow("x", "b", &[])).await.unwrap();
    socialite_testkit::conformance::outbox_events(b).await;

    let t1 = g
        .change_relation(&change("b", "a", Relation::Block, true))
        .await
        .unwrap();
    let blocked = Event::Blocked {
        user: u("b"),
        target: u("a"),
    };
    assert!(t1.changed && t1.active && t1.event == Some(blocked.clone()));
    assert_eq!(
        socialite_testkit::conformance::outbox_events(b).await,
        vec![
            Event::Unfollowed {
                follower: u("b"),
                followee: u("a"),
                lists: vec![],
            },
            Event::Unfollowed {
                follower: u("a"),
                followee: u("b"),
                lists: vec![l("close")],
            },
            blocked,
        ]
    );
    assert_eq!(g.edge(&u("a"), &u("b")).await.unwrap(), None);
    assert_eq!(g.edge(&u("b"), &u("a")).await.unwrap(), None);
    assert!(
        g.lists(&u("a")).await.unwrap().is_empty(),
        "the list emptied"
    );
    let (ua, ub) = (
        c.get_user(&u("a")).await.unwrap().unwrap(),
        c.get_user(&u("b")).await.unwrap().unwrap(),
    );
    assert_eq!((ua.followers, ua.following), (0, 0));
    assert_eq!((ub.followers, ub.following), (1, 0), "x still follows b");

    for (f, t) in [("a", "b"), ("b", "a")] {
        let err = g.change_edge(&follow(f, t, &[])).await.unwrap_err();
        assert_eq!((err.kind(), err.code()), (ErrorKind::Forbidden, "blocked"));
    }
    let unfollow = EdgeChange::new(u("a"), u("b"), EdgeOp::Unfollow).unwrap();
    assert!(
        g.change_edge(&unfollow).await.is_ok(),
        "an unfollow is never refused"
    );
    let r = g.relations_of(&u("a")).await.unwrap();
    assert_eq!(r.blocked_by, vec![u("b")]);
    assert_eq!(g.relations_of(&u("b")).await.unwrap().blocked, vec![u("a")]);
    assert!(
        socialite_testkit::conformance::outbox_events(b)
            .await
            .is_empty(),
        "a refused follow queues nothing"
    );

    g.change_relation(&change("b", "a", Relation::Block, false))
        .await
        .unwrap();
    assert_eq!(
        socialite_testkit::conformance::outbox_events(b).await,
        vec![Event::Unblocked {
            user: u("b"),
            target: u("a"),
        }],
        "lifting a block restores no edge"
    );
    assert!(g
        .change_edge(&follow("a", "b", &[]))
        .await
        .unwrap()
        .changed());
}

/// A user's deletion removes the relations they keep, and tells the worker
/// to forget their mutes; those others keep to them stay.
async fn deletion_removes_relations(kind: Kind) {
    let Some(t) = open(kind, "deletion_removes_relations").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    for name in ["d", "m1", "m2", "k"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    for target in ["m1", "m2"] {
        g.change_relation(&change("d", target, Relation::Mute, true))
            .await
            .unwrap();
    }
    g.change_relation(&change("k", "d", Relation::Block, true))
        .await
        .unwrap();
    g.change_relation(&change("k", "d", Relation::Mute, true))
        .await
        .unwrap();
    socialite_testkit::conformance::outbox_events(b).await;
    assert!(c.begin_deletion(&u("d")).await.unwrap());
    // Steps of two: the relations go a step at a time.
    assert!(c
        .deletion_step(&u("d"), DeletionStage::Relations, 2)
        .await
        .unwrap());
    c.finish_deletion(&u("d")).await.unwrap();
    let unmuted: Vec<Event> = socialite_testkit::conformance::outbox_events(b)
        .await
        .into_iter()
        .filter(|e| matches!(e, Event::Unmuted { .. }))
        .collect();
    let forget = |t: &str| Event::Unmuted {
        user: u("d"),
        target: u(t),
        edge: None,
    };
    assert_eq!(unmuted, vec![forget("m1"), forget("m2")]);
    for r in [Relation::Mute, Relation::Block] {
        // The deleted user's own relations are gone; k's of d stay k's.
        assert!(g.related(&u("m1"), r, None, 10).await.unwrap().is_empty());
        assert_eq!(
            g.relations(&u("k"), r, None, 10).await.unwrap(),
            vec![u("d")]
        );
    }
    // A user created again under the id keeps none of its own, and does
    // not shed the block on it.
    c.put_user(&u("d"), None).await.unwrap();
    let again = g.relations_of(&u("d")).await.unwrap();
    assert_eq!((again.muted.len(), again.blocked.len()), (0, 0));
    assert_eq!(again.blocked_by, vec![u("k")]);
    // A relation to an account that is gone is still its keeper's to lift.
    c.delete_user(&u("d")).await.unwrap();
    let lifted = g
        .change_relation(&change("k", "d", Relation::Block, false))
        .await
        .unwrap();
    assert!(lifted.changed && !lifted.active);
    assert_eq!(
        g.change_relation(&change("k", "d", Relation::Mute, true))
            .await
            .unwrap_err()
            .code(),
        "user_not_found"
    );
}

/// What the feed logic does with them: a mute purges the muter's stored
/// timelines and stops deliveries, lifting it brings the posts back, and a
/// block purges both ways.
async fn stored_timelines_follow_mutes_and_blocks(kind: Kind) {
    let Some(t) = open(kind, "stored_timelines_follow_mutes_and_blocks").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    let index = FollowerIndex::default();
    for name in ["r", "a", "z"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    g.change_edge(&follow("r", "a", &["fav"])).await.unwrap();
    g.change_edge(&follow("r", "z", &[])).await.unwrap();
    g.change_edge(&follow("a", "r", &[])).await.unwrap();
    for (id, author) in [(10, "a"), (11, "z"), (12, "a"), (13, "r")] {
        c.create_post(post(id, author)).await.unwrap();
    }
    fan_out(b, &index).await;
    let (home, fav) = (
        TimelineId::home(&u("r")),
        TimelineId::list(&u("r"), &l("fav")),
    );
    let stores = b.stores();
    for feed in [
        socialite_core::feed::Feed::Home(u("r")),
        socialite_core::feed::Feed::List(u("r"), l("fav")),
        socialite_core::feed::Feed::Home(u("a")),
    ] {
        socialite_core::feed::timeline::activate(&stores, &feed)
            .await
            .unwrap();
    }
    assert_eq!(stored(b, home.clone()).await, vec![13, 12, 11, 10]);

    // Muted: purged from home and list, and not delivered.
    g.change_relation(&change("r", "a", Relation::Mute, true))
        .await
        .unwrap();
    fan_out(b, &index).await;
    c.create_post(post(20, "a")).await.unwrap();
    fan_out(b, &index).await;
    assert_eq!(stored(b, home.clone()).await, vec![13, 11]);
    assert_eq!(stored(b, fav.clone()).await, Vec::<u64>::new());
    // A refiling while muted brings nothing back.
    g.change_edge(&follow("r", "a", &["more"])).await.unwrap();
    g.change_edge(&follow("r", "a", &["fav"])).await.unwrap();
    fan_out(b, &index).await;
    assert_eq!(stored(b, fav.clone()).await, Vec::<u64>::new());

    // Lifted: the posts come back, and new ones are delivered.
    g.change_relation(&change("r", "a", Relation::Mute, false))
        .await
        .unwrap();
    fan_out(b, &index).await;
    c.create_post(post(21, "a")).await.unwrap();
    fan_out(b, &index).await;
    assert_eq!(stored(b, home.clone()).await, vec![21, 20, 13, 12, 11, 10]);
    assert_eq!(stored(b, fav).await, vec![21, 20, 12, 10]);

    // Blocked: each leaves the other's stored timelines.
    g.change_relation(&change("a", "r", Relation::Block, true))
        .await
        .unwrap();
    fan_out(b, &index).await;
    c.create_post(post(30, "a")).await.unwrap();
    c.create_post(post(31, "r")).await.unwrap();
    fan_out(b, &index).await;
    assert_eq!(stored(b, home).await, vec![31, 13, 11]);
    assert_eq!(
        stored(b, TimelineId::home(&u("a"))).await,
        vec![30, 21, 20, 12, 10]
    );
}

macro_rules! suite {
    ($name:ident, $kind:expr) => {
        mod $name {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn mutes_are_kept_and_listed() {
                super::mutes_are_kept_and_listed($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn blocks_cut_edges_and_refuse_follows() {
                super::blocks_cut_edges_and_refuse_follows($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn deletion_removes_relations() {
                super::deletion_removes_relations($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn stored_timelines_follow_mutes_and_blocks() {
                super::stored_timelines_follow_mutes_and_blocks($kind).await
            }
        }
    };
}

suite!(embedded, Kind::Embedded);
suite!(mongodb_kafka, Kind::MongoKafka);
