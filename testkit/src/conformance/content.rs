//! Users, posts, mentions, the outbox and a user's deletion in steps.

use super::*;

pub async fn users_posts_and_outbox(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "users_posts_and_outbox").await else {
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
    // A store never overwrites a post: a new one under a held id is
    // refused, and the held one stands.
    let taken = b
        .content
        .create_post(post(30, "bo", "over"))
        .await
        .unwrap_err();
    assert_eq!(taken.code(), "post_id_taken");
    let held = b.content.get_posts(&[PostId(30)]).await.unwrap();
    assert_eq!(held, vec![post(30, "ann", "m30")]);
    let by_bo = b
        .content
        .post_ids_by(&[u("bo")], IdRange::default(), 10)
        .await
        .unwrap();
    assert_eq!(ids(&by_bo), vec![20], "no row of the refused post");

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
            Event::PostCreated { post, .. } => format!("created {}", post.id.0),
            Event::PostDeleted { post, .. } => format!("deleted {}", post.0),
            Event::UserPut { user, .. } => format!("put {user}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "put ann",
            "put bo",
            "created 10",
            "created 20",
            "created 30",
            "created 40",
            "deleted 30"
        ]
    );
    let put = Event::UserPut {
        user: u("ann"),
        profile,
    };
    assert_eq!(events[0], put, "a put that changes nothing queues nothing");
    assert_eq!(
        events[2],
        Event::post_created(post(10, "ann", "m10")),
        "content travels with the event"
    );
    assert_eq!(b.outbox.backlog().await.unwrap(), 0);
}

/// A user's deletion in bounded steps: gone to readers and writers from
/// the first, resumable after a crash at any step, exact at the end.
pub async fn deletion_in_steps(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "deletion_in_steps").await else {
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

/// Mentions: only users are kept, the index serves them newest first below
/// a cursor, and deleting the post, its author or the mentioned user takes
/// them away.
pub async fn mentions(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "mentions").await else {
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
        Event::PostCreated { post, .. } if post.id == PostId(10) && post.mentions == vec![u("b"), u("c")])));
}
