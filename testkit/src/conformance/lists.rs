//! Lists on follow edges.

use super::*;

/// Lists on follow edges: filing, refiling, keeping, leaving, their sizes,
/// members and reverse index, the limit on lists per user, and what a
/// deletion does to them.
pub async fn lists_on_edges(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "lists_on_edges").await else {
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
                lists: vec![l("family"), l("work")],
                at_ms: 0,
            },
            Event::Followed {
                follower: u("a"),
                followee: u("c"),
                lists: vec![l("work")],
                at_ms: 0,
            },
            Event::Followed {
                follower: u("a"),
                followee: u("d"),
                lists: vec![],
                at_ms: 0,
            },
            Event::Followed {
                follower: u("e"),
                followee: u("b"),
                lists: vec![l("work")],
                at_ms: 0,
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
