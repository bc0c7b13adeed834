//! The follow graph, follow times, and groups.

use super::*;

pub async fn follow_graph(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "follow_graph").await else {
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
    // The most followed first, as the fanout worker loads them ahead.
    let top = |at_least, limit| b.content.most_followed(at_least, limit);
    assert_eq!(top(1, 10).await.unwrap(), vec![(u("a"), 2), (u("c"), 1)]);
    assert_eq!(top(2, 10).await.unwrap(), vec![(u("a"), 2)]);
    assert_eq!(top(1, 1).await.unwrap(), vec![(u("a"), 2)]);
    assert_eq!(top(3, 10).await.unwrap(), vec![]);
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
    assert_eq!(b.content.most_followed(1, 10).await.unwrap(), vec![]);
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

/// Follow lists newest first: each edge with its time, pages after a
/// (time, id) cursor, unfollows and deletions leave them.
pub async fn follow_times(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "follow_times").await else {
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

/// Groups: joins and leaves (idempotent), sizes, members in id order, a
/// user's groups, the limit per user, the events, and a deletion's leaves.
pub async fn groups(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "groups").await else {
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
