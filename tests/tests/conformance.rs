//! One conformance suite for the ports, run on every backend: the embedded
//! default, and MongoDB with Kafka (see `common/servers.rs`). Each check
//! states what any adapter of the port must do; the suite knows the
//! backends only by their URIs.

mod common;

use common::eventually;
use common::ports::{Kind, Under};
use serde_json::json;
use socialite_core::backends::Backends;
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
use socialite_core::rules::access::Caller;
use socialite_core::rules::cascade::{timeline_dropped, DeletionStage, UserDeletion};
use socialite_core::rules::checks::{EdgeChange, EdgeOp, Membership};
use socialite_core::rules::relations::Hidden;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

async fn open(kind: Kind, feed: FeedConfig, test: &str) -> Option<Under> {
    common::ports::open(kind, feed, test, "conf").await
}

fn u(s: &str) -> UserId {
    UserId::parse(s).unwrap()
}

fn edge(follower: &str, followee: &str, op: EdgeOp) -> EdgeChange {
    EdgeChange::new(u(follower), u(followee), op).unwrap()
}

fn post(id: u64, author: &str, message: &str) -> Post {
    Post {
        id: PostId(id),
        author: u(author),
        message: message.into(),
        data: json!({ "n": id, "tags": ["a", "b"], "nested": { "x": 1.5 } })
            .as_object()
            .cloned(),
        mentions: vec![],
    }
}

fn ids(entries: &[Entry]) -> Vec<u64> {
    entries.iter().map(|e| e.post.0).collect()
}

/// Drains the outbox, in order, acknowledging what it read.
async fn drain_outbox(b: &Backends) -> Vec<Event> {
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

async fn users_posts_and_outbox(kind: Kind) {
    let Some(t) = open(kind, FeedConfig::default(), "users_posts_and_outbox").await else {
        return;
    };
    let b = &t.backends;
    assert!(
        b.outbox.lease().await.unwrap(),
        "a lone relay gets the lease"
    );
    drain_outbox(b).await;

    // Users: created once, profile replaced or kept.
    let profile = json!({ "name": "Ann", "n": 1 }).as_object().cloned();
    let (user, created) = b
        .content
        .put_user(&u("ann"), profile.clone())
        .await
        .unwrap();
    assert!(created);
    assert_eq!(
        (user.followers, user.following, &user.profile),
        (0, 0, &profile)
    );
    let (user, created) = b.content.put_user(&u("ann"), None).await.unwrap();
    assert!(!created);
    assert_eq!(user.profile, profile, "no profile keeps the old one");
    b.content.put_user(&u("bo"), None).await.unwrap();
    assert_eq!(b.content.get_user(&u("nobody")).await.unwrap(), None);

    // Posts: stored with their data exactly, unknown authors refused.
    let err = b
        .content
        .create_post(post(5, "nobody", "x"))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::NotFound);
    for (id, author) in [(10, "ann"), (20, "bo"), (30, "ann"), (40, "ann")] {
        b.content
            .create_post(post(id, author, &format!("m{id}")))
            .await
            .unwrap();
    }
    let got = b
        .content
        .get_posts(&[PostId(30), PostId(99), PostId(10)])
        .await
        .unwrap();
    assert_eq!(got, vec![post(30, "ann", "m30"), post(10, "ann", "m10")]);
    let repeated = b
        .content
        .get_posts(&[PostId(10), PostId(10)])
        .await
        .unwrap();
    assert_eq!(repeated.len(), 2, "each id asked for gets its post");
    assert_eq!(b.content.newest_post_id().await.unwrap(), Some(PostId(40)));

    // An author's posts, newest first per author, in a window.
    let mut found = ids(&b
        .content
        .post_ids_by(
            &[u("ann"), u("bo")],
            IdRange {
                below: Some(PostId(40)),
                from: None,
            },
            10,
        )
        .await
        .unwrap());
    found.sort_unstable();
    assert_eq!(found, vec![10, 20, 30]);
    let newest = b
        .content
        .post_ids_by(
            &[u("ann")],
            IdRange {
                below: None,
                from: Some(PostId(20)),
            },
            1,
        )
        .await
        .unwrap();
    assert_eq!(ids(&newest), vec![40]);

    // Deleting a post returns it once.
    assert_eq!(
        b.content.delete_post(PostId(30)).await.unwrap(),
        Some(post(30, "ann", "m30"))
    );
    assert_eq!(b.content.delete_post(PostId(30)).await.unwrap(), None);

    // Every change that others must learn of is queued, in commit order.
    let events = drain_outbox(b).await;
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e {
            Event::PostCreated { post } => format!("created {}", post.id.0),
            Event::PostDeleted { post, .. } => format!("deleted {}", post.0),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "created 10",
            "created 20",
            "created 30",
            "created 40",
            "deleted 30"
        ]
    );
    assert_eq!(
        events[0],
        Event::PostCreated {
            post: post(10, "ann", "m10")
        },
        "content travels with the event"
    );
    assert_eq!(b.outbox.backlog().await.unwrap(), 0);
}

async fn follow_graph(kind: Kind) {
    let Some(t) = open(kind, FeedConfig::default(), "follow_graph").await else {
        return;
    };
    let (b, g) = (&t.backends, &t.backends.graph);
    for name in ["a", "b", "c", "d"] {
        b.content.put_user(&u(name), None).await.unwrap();
    }
    drain_outbox(b).await;
    // The rules refuse a self-follow before any store is asked.
    let ingest = Ingest::new(b, 1).await.unwrap();
    let err = ingest
        .follow(&Caller::Trusted, "a", "a", None)
        .await
        .unwrap_err();
    assert_eq!(
        (err.kind(), err.code()),
        (ErrorKind::Conflict, "cannot_follow_self")
    );
    // Both ends must exist, for a follow and an unfollow alike, and the
    // first one missing is named: the same answer from every store.
    for (f, t, op) in [
        ("a", "zz", EdgeOp::Follow),
        ("zz", "a", EdgeOp::Follow),
        ("a", "zz", EdgeOp::Unfollow),
        ("zz", "a", EdgeOp::Unfollow),
        ("zz", "yy", EdgeOp::Unfollow),
    ] {
        let err = g.change_edge(&edge(f, t, op)).await.unwrap_err();
        assert_eq!(
            (err.kind(), err.code(), err.message()),
            (
                ErrorKind::NotFound,
                "user_not_found",
                format!("user {} does not exist", if f == "zz" { f } else { t }).as_str()
            ),
            "{op:?} {f} -> {t}"
        );
    }
    assert!(
        !g.change_edge(&edge("a", "b", EdgeOp::Unfollow))
            .await
            .unwrap()
            .changed(),
        "unfollowing without an edge changes nothing"
    );
    assert!(!g
        .change_edge(&edge("a", "a", EdgeOp::Unfollow))
        .await
        .unwrap()
        .changed());
    assert!(drain_outbox(b).await.is_empty(), "refusals queue nothing");
    assert!(g
        .change_edge(&edge("b", "a", EdgeOp::Follow))
        .await
        .unwrap()
        .changed());
    assert!(
        !g.change_edge(&edge("b", "a", EdgeOp::Follow))
            .await
            .unwrap()
            .changed(),
        "a second follow changes nothing"
    );
    assert!(g
        .change_edge(&edge("d", "a", EdgeOp::Follow))
        .await
        .unwrap()
        .changed());
    assert!(g
        .change_edge(&edge("c", "a", EdgeOp::Follow))
        .await
        .unwrap()
        .changed());
    assert!(g
        .change_edge(&edge("a", "c", EdgeOp::Follow))
        .await
        .unwrap()
        .changed());

    let page = |v: Vec<UserId>| v.iter().map(|x| x.as_str().to_owned()).collect::<Vec<_>>();
    assert_eq!(
        page(g.followers(&u("a"), None, 10).await.unwrap()),
        ["b", "c", "d"]
    );
    assert_eq!(
        page(g.followers(&u("a"), Some(&u("b")), 1).await.unwrap()),
        ["c"]
    );
    assert_eq!(page(g.following(&u("a"), None, 10).await.unwrap()), ["c"]);
    let lists = g.followers_of(&[u("a"), u("b"), u("c")]).await.unwrap();
    let mut first = page(lists[0].clone());
    first.sort();
    assert_eq!(
        (first, lists[1].len(), page(lists[2].clone())),
        (
            vec!["b".to_owned(), "c".into(), "d".into()],
            0,
            vec!["a".to_owned()]
        )
    );
    // One edge, one direction: b follows a, a does not follow b.
    for (x, y, want) in [
        ("b", "a", true),
        ("a", "b", false),
        ("a", "c", true),
        ("a", "zz", false),
    ] {
        assert_eq!(
            g.is_following(&u(x), &u(y)).await.unwrap(),
            want,
            "{x} follows {y}"
        );
    }
    let a = b.content.get_user(&u("a")).await.unwrap().unwrap();
    assert_eq!((a.followers, a.following), (3, 1));
    // A put answers the user as its own write left it, counts included.
    let (again, created) = b.content.put_user(&u("a"), None).await.unwrap();
    assert_eq!((again, created), (a, false));

    assert!(g
        .change_edge(&edge("d", "a", EdgeOp::Unfollow))
        .await
        .unwrap()
        .changed());
    assert!(
        !g.is_following(&u("d"), &u("a")).await.unwrap(),
        "unfollowed"
    );
    assert!(!g
        .change_edge(&edge("d", "a", EdgeOp::Unfollow))
        .await
        .unwrap()
        .changed());
    let events = drain_outbox(b).await;
    let expected = [
        ("Followed", "b", "a"),
        ("Followed", "d", "a"),
        ("Followed", "c", "a"),
        ("Followed", "a", "c"),
        ("Unfollowed", "d", "a"),
    ];
    let seen: Vec<(&str, String, String)> = events
        .iter()
        .map(|e| match e {
            Event::Followed {
                follower, followee, ..
            } => ("Followed", follower.to_string(), followee.to_string()),
            Event::Unfollowed {
                follower, followee, ..
            } => ("Unfollowed", follower.to_string(), followee.to_string()),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    let expected: Vec<(&str, String, String)> = expected
        .iter()
        .map(|(k, f, t)| (*k, f.to_string(), t.to_string()))
        .collect();
    assert_eq!(seen, expected);

    // Deleting a user removes their posts and edges and fixes the counts.
    b.content.create_post(post(7, "a", "bye")).await.unwrap();
    drain_outbox(b).await;
    assert!(b.content.delete_user(&u("a")).await.unwrap());
    assert!(!b.content.delete_user(&u("a")).await.unwrap());
    assert_eq!(b.content.get_posts(&[PostId(7)]).await.unwrap(), vec![]);
    assert!(g.followers(&u("a"), None, 10).await.unwrap().is_empty());
    assert!(g.following(&u("b"), None, 10).await.unwrap().is_empty());
    let c = b.content.get_user(&u("c")).await.unwrap().unwrap();
    assert_eq!((c.followers, c.following), (0, 0));
    // The cascade queues exactly the events the rule decides, in its order.
    let deletion = UserDeletion {
        user: &u("a"),
        followers: &[u("b"), u("c")],
        listed: &[],
        following: &[(u("c"), vec![])],
        groups: &[],
        muted: &[],
    };
    let mut events = deletion.events();
    events.push(timeline_dropped(&u("a"), vec![]));
    assert_eq!(drain_outbox(b).await, events);
}

/// A user's deletion in bounded steps: gone to readers and writers from
/// the first, resumable after a crash at any step, exact at the end.
async fn deletion_in_steps(kind: Kind) {
    let Some(t) = open(kind, FeedConfig::default(), "deletion_in_steps").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    let names = ["x", "f1", "f2", "f3", "f4", "f5", "t1", "t2", "t3", "m"];
    for name in names {
        c.put_user(&u(name), None).await.unwrap();
    }
    for f in ["f1", "f2", "f3", "f4", "f5"] {
        let lists: &[&str] = if f == "f2" { &["close"] } else { &[] };
        g.change_edge(&filed(f, "x", lists)).await.unwrap();
    }
    for t in ["t1", "t2", "t3"] {
        g.change_edge(&filed("x", t, &["work"])).await.unwrap();
    }
    let join = Membership {
        group: GroupName::parse("club").unwrap(),
        user: u("x"),
        join: true,
    };
    g.change_membership(&join).await.unwrap();
    for p in 1..=5 {
        c.create_post(post(p, "x", "mine")).await.unwrap();
    }
    let mut naming = post(9, "m", "hi @x");
    naming.mentions = vec![u("x")];
    c.create_post(naming).await.unwrap();
    drain_outbox(b).await;

    assert!(c.begin_deletion(&u("x")).await.unwrap());
    assert!(!c.begin_deletion(&u("x")).await.unwrap(), "begun once");
    assert!(c.get_user(&u("x")).await.unwrap().is_none(), "gone at once");
    let refused = c.put_user(&u("x"), None).await.unwrap_err();
    assert_eq!(refused.code(), "user_being_deleted");
    let follow = g.change_edge(&edge("t1", "x", EdgeOp::Follow)).await;
    assert_eq!(follow.unwrap_err().kind(), ErrorKind::NotFound);
    let post_refused = c.create_post(post(20, "x", "late")).await;
    assert_eq!(post_refused.unwrap_err().kind(), ErrorKind::NotFound);
    // Steps of two: a crash after two steps of followers leaves the rest.
    assert!(c
        .deletion_step(&u("x"), DeletionStage::Followers, 2)
        .await
        .unwrap());
    assert!(c
        .deletion_step(&u("x"), DeletionStage::Followers, 2)
        .await
        .unwrap());
    let f1 = c.get_user(&u("f1")).await.unwrap().unwrap();
    assert_eq!(f1.following, 0, "each step moves its edges' counts");
    assert_eq!(c.pending_deletions().await.unwrap(), vec![u("x")]);
    assert_eq!(c.resume_deletions().await.unwrap(), 1);
    assert!(c.pending_deletions().await.unwrap().is_empty());

    for f in ["f1", "f2", "f3", "f4", "f5"] {
        let user = c.get_user(&u(f)).await.unwrap().unwrap();
        assert_eq!(user.following, 0, "{f}");
        assert!(g.edge(&u(f), &u("x")).await.unwrap().is_none());
    }
    assert!(g.lists(&u("f2")).await.unwrap().is_empty());
    for t in ["t1", "t2", "t3"] {
        assert_eq!(
            c.get_user(&u(t)).await.unwrap().unwrap().followers,
            0,
            "{t}"
        );
        assert!(g.followers(&u(t), None, 10).await.unwrap().is_empty());
    }
    assert_eq!(g.group_size(&join.group).await.unwrap(), 0);
    let posts: Vec<PostId> = (1..=5).map(PostId).collect();
    assert!(c.get_posts(&posts).await.unwrap().is_empty());
    let mentioning = c.get_posts(&[PostId(9)]).await.unwrap();
    assert!(
        mentioning[0].mentions.is_empty(),
        "no mention of a user who is gone"
    );
    // What the steps queued adds up to the whole deletion's events.
    let events = drain_outbox(b).await;
    let retracted: Vec<UserId> = events
        .iter()
        .flat_map(|e| match e {
            Event::AuthorRetracted { followers, .. } => followers.clone(),
            _ => vec![],
        })
        .collect();
    assert_eq!(retracted, ["f1", "f2", "f3", "f4", "f5"].map(u).to_vec());
    let unfollowed = events
        .iter()
        .filter(|e| matches!(e, Event::Unfollowed { lists, .. } if *lists == vec![l("work")]))
        .count();
    assert_eq!(unfollowed, 3);
    assert_eq!(
        events.last(),
        Some(&timeline_dropped(&u("x"), vec![l("work")])),
        "the user's own timelines go last, once"
    );
    assert_eq!(
        events
            .iter()
            .filter(|e| matches!(e, Event::TimelineDropped { .. }))
            .count(),
        1
    );
    // The id is free again, and inherits nothing.
    let (again, created) = c.put_user(&u("x"), None).await.unwrap();
    assert!(created && again.followers == 0 && again.following == 0);
    assert!(c
        .mentions_of(&u("x"), IdRange::default(), 10)
        .await
        .unwrap()
        .is_empty());
}

/// Follow lists newest first: each edge with its time, pages after a
/// (time, id) cursor, unfollows and deletions leave them.
async fn follow_times(kind: Kind) {
    let Some(t) = open(kind, FeedConfig::default(), "follow_times").await else {
        return;
    };
    let b = &t.backends;
    let g = &b.graph;
    for name in ["a", "b", "c", "d", "e"] {
        b.content.put_user(&u(name), None).await.unwrap();
    }
    let before = socialite_core::ids::now_ms();
    // d first, then b, then c: follow order, not id order.
    for f in ["d", "b", "c"] {
        g.change_edge(&edge(f, "a", EdgeOp::Follow)).await.unwrap();
        tokio::time::sleep(Duration::from_millis(3)).await;
    }
    let page = g.followers_by_time(&u("a"), None, 10).await.unwrap();
    let who: Vec<&str> = page.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(who, ["c", "b", "d"], "newest follow first");
    assert!(page.windows(2).all(|w| w[0].1 > w[1].1));
    assert!(page.iter().all(|(_, at)| *at >= before));
    let (last, at) = page[0].clone();
    let rest = g
        .followers_by_time(&u("a"), Some(&(at, last)), 10)
        .await
        .unwrap();
    assert_eq!(
        rest,
        page[1..].to_vec(),
        "a page continues after its cursor"
    );
    let one = g.followers_by_time(&u("a"), None, 1).await.unwrap();
    assert_eq!(one, page[..1].to_vec());
    // A refiling keeps the time; the following side has it too.
    g.change_edge(&filed("b", "a", &["x"])).await.unwrap();
    assert_eq!(
        g.following_by_time(&u("b"), None, 10).await.unwrap(),
        vec![(u("a"), page[1].1)]
    );
    assert_eq!(g.followers_by_time(&u("a"), None, 10).await.unwrap(), page);
    g.change_edge(&edge("c", "a", EdgeOp::Unfollow))
        .await
        .unwrap();
    assert!(b.content.delete_user(&u("d")).await.unwrap());
    let left: Vec<UserId> = g
        .followers_by_time(&u("a"), None, 10)
        .await
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    assert_eq!(left, vec![u("b")]);
    assert!(g
        .following_by_time(&u("d"), None, 10)
        .await
        .unwrap()
        .is_empty());
}

fn member(group: &str, user: &str, join: bool) -> Membership {
    Membership {
        group: GroupName::parse(group).unwrap(),
        user: u(user),
        join,
    }
}

/// Groups: joins and leaves (idempotent), sizes, members in id order, a
/// user's groups, the limit per user, the events, and a deletion's leaves.
async fn groups(kind: Kind) {
    let Some(t) = open(kind, FeedConfig::default(), "groups").await else {
        return;
    };
    let b = &t.backends;
    let g = &b.graph;
    for name in ["a", "b", "c"] {
        b.content.put_user(&u(name), None).await.unwrap();
    }
    drain_outbox(b).await;
    let gn = |s: &str| GroupName::parse(s).unwrap();
    assert!(g
        .change_membership(&member("rust", "a", true))
        .await
        .unwrap());
    assert!(!g
        .change_membership(&member("rust", "a", true))
        .await
        .unwrap());
    assert!(g
        .change_membership(&member("rust", "b", true))
        .await
        .unwrap());
    assert!(g.change_membership(&member("go", "a", true)).await.unwrap());
    let err = g
        .change_membership(&member("go", "zz", true))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "user_not_found");
    assert_eq!(g.group_size(&gn("rust")).await.unwrap(), 2);
    assert_eq!(g.group_size(&gn("none")).await.unwrap(), 0);
    assert_eq!(
        g.group_members(&gn("rust"), None, 10).await.unwrap(),
        vec![u("a"), u("b")]
    );
    assert_eq!(
        g.group_members(&gn("rust"), Some(&u("a")), 10)
            .await
            .unwrap(),
        vec![u("b")]
    );
    assert_eq!(
        g.groups_of(&[u("a"), u("b"), u("c")]).await.unwrap(),
        vec![vec![gn("go"), gn("rust")], vec![gn("rust")], vec![]]
    );
    assert!(g
        .change_membership(&member("rust", "b", false))
        .await
        .unwrap());
    assert!(!g
        .change_membership(&member("rust", "b", false))
        .await
        .unwrap());
    assert_eq!(g.group_size(&gn("rust")).await.unwrap(), 1);
    assert_eq!(
        drain_outbox(b).await,
        vec![
            member("rust", "a", true).event(),
            member("rust", "b", true).event(),
            member("go", "a", true).event(),
            member("rust", "b", false).event(),
        ]
    );
    // At most 100 groups per user.
    for i in 0..100 {
        g.change_membership(&member(&format!("g{i}"), "c", true))
            .await
            .unwrap();
    }
    let err = g
        .change_membership(&member("one-more", "c", true))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "too_many_groups");
    drain_outbox(b).await;
    // A deleted user leaves every group.
    assert!(b.content.delete_user(&u("a")).await.unwrap());
    assert_eq!(g.group_size(&gn("rust")).await.unwrap(), 0);
    assert_eq!(g.group_size(&gn("go")).await.unwrap(), 0);
    let deletion = UserDeletion {
        user: &u("a"),
        followers: &[],
        listed: &[],
        following: &[],
        groups: &[gn("go"), gn("rust")],
        muted: &[],
    };
    let mut events = deletion.events();
    events.push(timeline_dropped(&u("a"), vec![]));
    assert_eq!(drain_outbox(b).await, events);
}

fn mentioning(id: u64, author: &str, named: &[&str]) -> Post {
    Post {
        mentions: named.iter().map(|n| u(n)).collect(),
        ..post(id, author, "hi")
    }
}

/// Mentions: only users are kept, the index serves them newest first below
/// a cursor, and deleting the post, its author or the mentioned user takes
/// them away.
async fn mentions(kind: Kind) {
    let Some(t) = open(kind, FeedConfig::default(), "mentions").await else {
        return;
    };
    let c = &t.backends.content;
    for name in ["a", "b", "c"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    let stored = c
        .create_post(mentioning(10, "a", &["b", "nobody", "c"]))
        .await
        .unwrap();
    assert_eq!(
        stored.mentions,
        vec![u("b"), u("c")],
        "only users are mentioned"
    );
    assert_eq!(
        c.get_posts(&[PostId(10)]).await.unwrap()[0].mentions,
        stored.mentions
    );
    c.create_post(mentioning(20, "c", &["b"])).await.unwrap();
    c.create_post(mentioning(30, "a", &["b"])).await.unwrap();
    c.create_post(post(40, "a", "no one")).await.unwrap();
    let all = IdRange::default();
    let of = |user: &'static str, range: IdRange, limit: usize| async move {
        let got = c.mentions_of(&u(user), range, limit).await.unwrap();
        got.iter().map(|p| p.0).collect::<Vec<u64>>()
    };
    assert_eq!(of("b", all, 10).await, vec![30, 20, 10]);
    assert_eq!(of("b", all, 2).await, vec![30, 20]);
    let below = IdRange {
        below: Some(PostId(30)),
        from: None,
    };
    assert_eq!(of("b", below, 10).await, vec![20, 10]);
    assert_eq!(of("a", all, 10).await, Vec::<u64>::new());
    // A deleted post leaves the index.
    c.delete_post(PostId(30)).await.unwrap();
    assert_eq!(of("b", all, 10).await, vec![20, 10]);
    // A deleted author's posts leave it.
    assert!(c.delete_user(&u("c")).await.unwrap());
    assert_eq!(of("b", all, 10).await, vec![10]);
    // A deleted user is no longer mentioned, and a user created again
    // under the id inherits no mentions.
    c.put_user(&u("c"), None).await.unwrap();
    assert_eq!(of("c", all, 10).await, Vec::<u64>::new());
    assert_eq!(
        c.get_posts(&[PostId(10)]).await.unwrap()[0].mentions,
        vec![u("b")]
    );
    // The event carries the post as stored.
    let events = drain_outbox(&t.backends).await;
    assert!(events.iter().any(|e| matches!(e,
        Event::PostCreated { post } if post.id == PostId(10) && post.mentions == vec![u("b"), u("c")])));
}

fn l(s: &str) -> ListName {
    ListName::parse(s).unwrap()
}

fn filed(follower: &str, followee: &str, lists: &[&str]) -> EdgeChange {
    edge(follower, followee, EdgeOp::Follow).with_lists(lists.iter().map(|s| l(s)).collect())
}

/// Lists on follow edges: filing, refiling, keeping, leaving, their sizes,
/// members and reverse index, the limit on lists per user, and what a
/// deletion does to them.
async fn lists_on_edges(kind: Kind) {
    let Some(t) = open(kind, FeedConfig::default(), "lists_on_edges").await else {
        return;
    };
    let b = &t.backends;
    let g = &b.graph;
    for name in ["a", "b", "c", "d", "e"] {
        b.content.put_user(&u(name), None).await.unwrap();
    }
    drain_outbox(b).await;
    let t1 = g
        .change_edge(&filed("a", "b", &["work", "family"]))
        .await
        .unwrap();
    assert_eq!(
        (t1.count_step, t1.after),
        (1, Some(vec![l("family"), l("work")]))
    );
    g.change_edge(&filed("a", "c", &["work"])).await.unwrap();
    g.change_edge(&edge("a", "d", EdgeOp::Follow))
        .await
        .unwrap();
    g.change_edge(&filed("e", "b", &["work"])).await.unwrap();
    assert_eq!(
        g.lists(&u("a")).await.unwrap(),
        vec![(l("family"), 1), (l("work"), 2)]
    );
    assert_eq!(
        g.list_members(&u("a"), &l("work"), None, 10).await.unwrap(),
        vec![u("b"), u("c")]
    );
    assert_eq!(
        g.list_members(&u("a"), &l("work"), Some(&u("b")), 10)
            .await
            .unwrap(),
        vec![u("c")]
    );
    assert_eq!(
        g.edge(&u("a"), &u("b")).await.unwrap(),
        Some(vec![l("family"), l("work")])
    );
    assert_eq!(g.edge(&u("a"), &u("d")).await.unwrap(), Some(vec![]));
    assert_eq!(g.edge(&u("b"), &u("a")).await.unwrap(), None);
    let mut listed = g.listed_by(&[u("b"), u("c"), u("d")]).await.unwrap();
    listed.iter_mut().for_each(|v| v.sort());
    assert_eq!(
        listed,
        vec![
            vec![
                (u("a"), l("family")),
                (u("a"), l("work")),
                (u("e"), l("work"))
            ],
            vec![(u("a"), l("work"))],
            vec![],
        ]
    );
    // Refiled: family goes, the edge and the counts stay.
    let t2 = g.change_edge(&filed("a", "b", &["work"])).await.unwrap();
    assert_eq!((t2.count_step, t2.removed.clone()), (0, vec![l("family")]));
    // A plain follow keeps the lists and changes nothing.
    let t3 = g
        .change_edge(&edge("a", "b", EdgeOp::Follow))
        .await
        .unwrap();
    assert_eq!((t3.changed(), t3.after), (false, Some(vec![l("work")])));
    // An unfollow leaves every list.
    g.change_edge(&edge("a", "c", EdgeOp::Unfollow))
        .await
        .unwrap();
    assert_eq!(g.lists(&u("a")).await.unwrap(), vec![(l("work"), 1)]);
    let a = b.content.get_user(&u("a")).await.unwrap().unwrap();
    assert_eq!(a.following, 2);
    let events = drain_outbox(b).await;
    assert_eq!(
        events,
        vec![
            Event::Followed {
                follower: u("a"),
                followee: u("b"),
                lists: vec![l("family"), l("work")]
            },
            Event::Followed {
                follower: u("a"),
                followee: u("c"),
                lists: vec![l("work")]
            },
            Event::Followed {
                follower: u("a"),
                followee: u("d"),
                lists: vec![]
            },
            Event::Followed {
                follower: u("e"),
                followee: u("b"),
                lists: vec![l("work")]
            },
            Event::Relisted {
                follower: u("a"),
                followee: u("b"),
                added: vec![],
                removed: vec![l("family")]
            },
            Event::Unfollowed {
                follower: u("a"),
                followee: u("c"),
                lists: vec![l("work")]
            },
        ]
    );
    // At most 50 lists per user: a files new accounts under 8 new lists at
    // a time: 1 + 6 x 8 = 49 lists stand, the seventh batch is refused.
    for round in 0..7 {
        let target = format!("t{round}");
        b.content.put_user(&u(&target), None).await.unwrap();
        let names: Vec<String> = (0..8).map(|i| format!("r{round}x{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let result = g.change_edge(&filed("a", &target, &names)).await;
        if round < 6 {
            result.unwrap();
        } else {
            assert_eq!(result.unwrap_err().code(), "too_many_lists");
        }
    }
    assert_eq!(g.lists(&u("a")).await.unwrap().len(), 49);
    assert_eq!(
        g.edge(&u("a"), &u("t6")).await.unwrap(),
        None,
        "refused whole"
    );
    drain_outbox(b).await;
    // Deleting b: a's and e's lists lose it; the events name them.
    g.change_edge(&filed("b", "c", &["mine"])).await.unwrap();
    drain_outbox(b).await;
    assert!(b.content.delete_user(&u("b")).await.unwrap());
    assert!(g
        .lists(&u("a"))
        .await
        .unwrap()
        .iter()
        .all(|(name, _)| name.as_str() != "work"));
    assert_eq!(g.lists(&u("e")).await.unwrap(), vec![]);
    assert_eq!(
        g.listed_by(&[u("c")]).await.unwrap()[0]
            .iter()
            .filter(|(f, _)| *f == u("b"))
            .count(),
        0
    );
    let deletion = UserDeletion {
        user: &u("b"),
        followers: &[u("a"), u("e")],
        listed: &[(u("a"), l("work")), (u("e"), l("work"))],
        following: &[(u("c"), vec![l("mine")])],
        groups: &[],
        muted: &[],
    };
    let mut events = deletion.events();
    events.push(timeline_dropped(&u("b"), vec![l("mine")]));
    assert_eq!(drain_outbox(b).await, events);
    // Members come in id order whatever else their edges are filed under.
    g.change_edge(&filed("e", "a", &["work"])).await.unwrap();
    g.change_edge(&filed("e", "c", &["aa", "work"]))
        .await
        .unwrap();
    assert_eq!(
        g.list_members(&u("e"), &l("work"), None, 10).await.unwrap(),
        vec![u("a"), u("c")]
    );
    assert_eq!(
        g.list_members(&u("e"), &l("work"), Some(&u("a")), 1)
            .await
            .unwrap(),
        vec![u("c")]
    );
}

/// Polls `consumer` until `want` events arrived (or the deadline passes).
async fn consume(consumer: &mut Box<dyn LogConsumer>, want: usize) -> Vec<Event> {
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

fn posted(author: &str, id: u64) -> Event {
    Event::PostCreated {
        post: post(id, author, "x"),
    }
}

async fn event_log(kind: Kind) {
    let Some(t) = open(kind, FeedConfig::default(), "event_log").await else {
        return;
    };
    let log = &t.backends.log;
    log.ping().await.unwrap();
    // Three authors' posts interleaved, and graph events keyed by followee.
    let mut appended = Vec::new();
    for i in 0..30u64 {
        let author = ["x", "y", "z"][(i % 3) as usize];
        appended.push(posted(author, 100 + i));
        if i % 10 == 0 {
            appended.push(Event::Followed {
                follower: u("f"),
                followee: u(author),
                lists: vec![ListName::parse("work").unwrap()],
            });
        }
    }
    log.append(&appended[..20]).await.unwrap();
    log.append(&appended[20..]).await.unwrap();

    let mut first = log.consumer("conformance").await.unwrap();
    let got = consume(&mut first, appended.len()).await;
    assert_eq!(got.len(), appended.len(), "every event arrives once");
    // Each key's events arrive in the order appended.
    let by_key = |events: &[Event]| {
        let mut m: BTreeMap<String, Vec<Event>> = BTreeMap::new();
        for e in events {
            let family = matches!(e, Event::PostCreated { .. });
            m.entry(format!("{}{}", e.key(), family))
                .or_default()
                .push(e.clone());
        }
        m
    };
    assert_eq!(by_key(&got), by_key(&appended));
    first.commit().await.unwrap();
    eventually("the committed group to have no backlog", || async {
        first.backlog().await.unwrap() == 0
    })
    .await;
    drop(first);

    // The group resumes after its commit; another group reads from the start.
    log.append(&[posted("x", 500)]).await.unwrap();
    let mut again = log.consumer("conformance").await.unwrap();
    let got = consume(&mut again, 1).await;
    assert_eq!(got, vec![posted("x", 500)]);
    again.commit().await.unwrap();
    drop(again);
    let mut other = log.consumer("another-group").await.unwrap();
    assert_eq!(
        consume(&mut other, appended.len() + 1).await.len(),
        appended.len() + 1
    );
}

/// The home timeline of `user`.
fn h(user: &str) -> TimelineId {
    TimelineId::home(&u(user))
}

fn entry(id: u64, author: &str) -> Entry {
    Entry::linked(PostId(id), u(author))
}

async fn ready(b: &Backends, user: &str) -> (Vec<u64>, Coverage) {
    match b.timelines.read(&h(user), None, 200).await.unwrap() {
        CacheRead::Ready { entries, coverage } => (ids(&entries), coverage),
        other => panic!("{user}: expected a ready cache, found {other:?}"),
    }
}

async fn timeline_caches(kind: Kind, embed: bool) {
    let feed = FeedConfig {
        cache_size: 3,
        embed,
        ..FeedConfig::default()
    };
    let Some(t) = open(kind, feed, "timeline_caches").await else {
        return;
    };
    let b = &t.backends;
    let tl = &b.timelines;
    assert_eq!(tl.capacity(), 3);
    assert_eq!(tl.read(&h("r"), None, 10).await.unwrap(), CacheRead::Absent);
    assert_eq!(tl.coverage(&h("r")).await.unwrap(), None);

    // Warming: deliveries land, purges and retractions are remembered.
    tl.create(&h("r")).await.unwrap();
    tl.create(&h("r")).await.unwrap();
    assert_eq!(
        tl.read(&h("r"), None, 10).await.unwrap(),
        CacheRead::Warming
    );
    let fans = Arc::new(vec![h("r"), h("dormant")]);
    let body = Entry::embedded(&post(50, "a", "embedded"));
    let landed = tl
        .deliver(&[(
            if embed { body.clone() } else { entry(50, "a") },
            fans.clone(),
        )])
        .await
        .unwrap();
    assert_eq!(landed, 1, "the dormant follower gets nothing");
    tl.purge_author(&h("r"), &u("gone")).await.unwrap();
    tl.retract_post(&[h("r")], PostId(8)).await.unwrap();
    tl.fill(
        &h("r"),
        vec![
            entry(9, "a"),
            entry(8, "a"),
            entry(7, "gone"),
            entry(6, "b"),
        ],
        Coverage::All,
    )
    .await
    .unwrap();
    let (entries, coverage) = ready(b, "r").await;
    assert_eq!(entries, vec![50, 9, 6]);
    assert!(
        coverage <= Coverage::From(PostId(6)),
        "a full cache covers at least its entries"
    );
    if embed {
        let CacheRead::Ready { entries, .. } = tl.read(&h("r"), None, 1).await.unwrap() else {
            panic!()
        };
        assert_eq!(entries, vec![body], "embedded content comes back whole");
    }
    tl.fill(&h("r"), vec![entry(1, "a")], Coverage::All)
        .await
        .unwrap();
    assert_eq!(
        ready(b, "r").await.0,
        vec![50, 9, 6],
        "a second fill changes nothing"
    );

    // Idempotent, capped deliveries; the floor follows what the cap drops.
    // (How a repeat counts is the adapter's business; the cache is what matters.)
    tl.deliver(&[(entry(50, "a"), fans.clone())]).await.unwrap();
    assert_eq!(
        ready(b, "r").await.0,
        vec![50, 9, 6],
        "a repeat takes no slot"
    );
    tl.deliver(&[
        (entry(60, "b"), fans.clone()),
        (entry(55, "a"), fans.clone()),
    ])
    .await
    .unwrap();
    assert_eq!(
        ready(b, "r").await,
        (vec![60, 55, 50], Coverage::From(PostId(50)))
    );
    tl.deliver(&[(entry(40, "a"), fans.clone())]).await.unwrap();
    assert_eq!(
        ready(b, "r").await.0,
        vec![60, 55, 50],
        "below the floor: the merge serves it"
    );
    let CacheRead::Ready { entries, .. } = tl.read(&h("r"), Some(PostId(60)), 1).await.unwrap()
    else {
        panic!()
    };
    assert_eq!(ids(&entries), vec![55], "pages continue below the cursor");

    // Removals keep the floor where the cap had put it.
    tl.retract_post(&[h("r"), h("dormant")], PostId(55))
        .await
        .unwrap();
    assert_eq!(
        ready(b, "r").await,
        (vec![60, 50], Coverage::From(PostId(50)))
    );
    tl.purge_author(&h("r"), &u("b")).await.unwrap();
    assert_eq!(ready(b, "r").await, (vec![50], Coverage::From(PostId(50))));

    // A backfill exact from 52 raises the floor.
    tl.backfill(
        &h("r"),
        &u("c"),
        vec![entry(58, "c"), entry(52, "c")],
        Coverage::From(PostId(52)),
    )
    .await
    .unwrap();
    // A replayed follow adds nothing the cache holds, full or not.
    tl.create(&h("r2")).await.unwrap();
    tl.fill(&h("r2"), vec![], Coverage::All).await.unwrap();
    let two = || vec![entry(5, "c"), entry(4, "c")];
    tl.backfill(&h("r2"), &u("c"), two(), Coverage::All)
        .await
        .unwrap();
    let stored = tl.footprint().await.unwrap().entries;
    tl.backfill(&h("r2"), &u("c"), two(), Coverage::All)
        .await
        .unwrap();
    assert_eq!(
        tl.footprint().await.unwrap().entries,
        stored,
        "a repeated backfill stores nothing twice"
    );
    assert_eq!(ready(b, "r2").await, (vec![5, 4], Coverage::All));
    assert_eq!(
        ready(b, "r").await,
        (vec![58, 52], Coverage::From(PostId(52)))
    );
    assert_eq!(
        tl.coverage(&h("r")).await.unwrap(),
        Some(Coverage::From(PostId(52)))
    );

    let footprint = tl.footprint().await.unwrap();
    assert_eq!((footprint.users, footprint.entries >= 4), (2, true));
    tl.drop_timeline(&h("r")).await.unwrap();
    assert_eq!(tl.read(&h("r"), None, 10).await.unwrap(), CacheRead::Absent);
    assert_eq!(
        tl.deliver(&[(entry(70, "a"), fans)]).await.unwrap(),
        0,
        "no cache is created by fanout"
    );
}

/// Applies what the outbox queued, as a fanout worker would.
async fn fan_out(b: &Backends, index: &FollowerIndex) {
    let events = drain_outbox(b).await;
    fanout::apply(&b.stores(), index, &events).await.unwrap();
}

/// Caches of readers who stop reading expire: a cache not read for the ttl
/// is gone (the next read finds none, and may build it again); reads keep
/// a cache alive. The ttl is a second here: reads refresh every 250 ms.
/// Every stored model: the cache, and both bucket models.
async fn caches_expire_when_not_read(kind: Kind) {
    for model in [
        FeedModel::Cache,
        FeedModel::TimeBuckets,
        FeedModel::SizedBuckets,
    ] {
        timelines_expire_when_not_read(kind, model).await;
    }
}

async fn timelines_expire_when_not_read(kind: Kind, model: FeedModel) {
    let feed = FeedConfig {
        model,
        cache_ttl_secs: 1,
        ..FeedConfig::default()
    };
    let Some(t) = open(kind, feed, "caches_expire_when_not_read").await else {
        return;
    };
    let tl = &t.backends.timelines;
    for r in ["kept", "left"] {
        tl.create(&h(r)).await.unwrap();
        tl.fill(&h(r), vec![entry(5, "a")], Coverage::All)
            .await
            .unwrap();
    }
    let is_ready = |r: &'static str| async move {
        matches!(
            tl.read(&h(r), None, 10).await.unwrap(),
            CacheRead::Ready { .. }
        )
    };
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(is_ready("kept").await, "a cache that is read stays");
    }
    assert!(
        !is_ready("left").await,
        "{model}: 1.6 s without a read: expired"
    );
    assert_eq!(
        tl.read(&h("left"), None, 10).await.unwrap(),
        CacheRead::Absent
    );
    tl.expire().await.unwrap();
    assert!(is_ready("kept").await);
    tokio::time::sleep(Duration::from_millis(1300)).await;
    tl.expire().await.unwrap();
    assert_eq!(
        tl.read(&h("kept"), None, 10).await.unwrap(),
        CacheRead::Absent
    );
    // Dormant again: the next activation builds it anew.
    tl.create(&h("kept")).await.unwrap();
    tl.fill(&h("kept"), vec![entry(6, "a")], Coverage::All)
        .await
        .unwrap();
    assert_eq!(ready(&t.backends, "kept").await.0, vec![6]);
}

/// A reader found a user just before the user was deleted, and activates
/// their cache after the worker dropped the deleted user's timeline: no
/// cache may be left behind, neither for nobody nor for a user created again
/// under the same id.
async fn activation_racing_a_deletion(kind: Kind) {
    let Some(t) = open(kind, FeedConfig::default(), "activation_racing_a_deletion").await else {
        return;
    };
    let b = &t.backends;
    let (stores, index) = (b.stores(), FollowerIndex::new());
    for name in ["x", "f"] {
        b.content.put_user(&u(name), None).await.unwrap();
    }
    b.graph
        .change_edge(&edge("x", "f", EdgeOp::Follow))
        .await
        .unwrap();
    b.content.create_post(post(10, "f", "old")).await.unwrap();
    fan_out(b, &index).await;

    assert!(b.content.delete_user(&u("x")).await.unwrap());
    fan_out(b, &index).await; // TimelineDropped: there was no cache yet
    activate(&stores, &Feed::Home(u("x"))).await.unwrap(); // the racing reader
    assert_eq!(
        b.timelines.read(&h("x"), None, 10).await.unwrap(),
        CacheRead::Absent,
        "no cache outlives its user"
    );

    b.content.put_user(&u("x"), None).await.unwrap();
    b.content.create_post(post(20, "f", "new")).await.unwrap();
    fan_out(b, &index).await;
    let nothing = Hidden::default();
    let page = read_timeline(&stores, &Feed::Home(u("x")), &nothing, None, 10)
        .await
        .unwrap();
    assert!(page.entries.is_empty(), "the new x follows nobody");
    assert_eq!(ready(b, "x").await, (vec![], Coverage::All));
}

macro_rules! suite {
    ($name:ident, $kind:expr) => {
        mod $name {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn users_posts_and_outbox() {
                super::users_posts_and_outbox($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn follow_graph() {
                super::follow_graph($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn caches_expire_when_not_read() {
                super::caches_expire_when_not_read($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn deletion_in_steps() {
                super::deletion_in_steps($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn follow_times() {
                super::follow_times($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn groups() {
                super::groups($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn mentions() {
                super::mentions($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn lists_on_edges() {
                super::lists_on_edges($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn activation_racing_a_deletion() {
                super::activation_racing_a_deletion($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn event_log() {
                super::event_log($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn timeline_caches_linked() {
                super::timeline_caches($kind, false).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn timeline_caches_embedded() {
                super::timeline_caches($kind, true).await
            }
        }
    };
}

suite!(embedded, Kind::Embedded);
suite!(mongodb_kafka, Kind::MongoKafka);
