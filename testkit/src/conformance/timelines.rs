//! The event log, and timeline stores of every feed model.

use super::*;
use socialite_core::numbers::Targets;

pub async fn event_log(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "event_log").await else {
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
                at_ms: 0,
            });
        }
    }
    log.append(&appended[..20]).await.unwrap();
    log.append(&appended[20..]).await.unwrap();
    // Seen from outside, a group that never consumed has the whole log
    // before it.
    // (An append is durable when it returns; its end may show a moment
    // later.)
    let total = appended.len() as u64;
    eventually("the group's backlog to be the whole log", || async {
        log.position("conformance").await.unwrap().backlog() == total
    })
    .await;
    let before = log.position("conformance").await.unwrap();

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
    // And from outside: what it committed is the whole log.
    eventually("the group to have no backlog seen from outside", || async {
        log.position("conformance").await.unwrap().backlog() == 0
    })
    .await;
    let after = log.position("conformance").await.unwrap();
    assert_eq!(
        after.committed() - before.committed(),
        total,
        "{before:?} {after:?}"
    );
    assert_eq!(
        log.position("another-group").await.unwrap().backlog(),
        total,
        "each group has its own place"
    );
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

/// Timeline caches holding linked entries.
pub async fn timeline_caches_linked(open: Opener) {
    timeline_caches(open, false).await
}

/// Timeline caches holding embedded entries.
pub async fn timeline_caches_embedded(open: Opener) {
    timeline_caches(open, true).await
}

async fn timeline_caches(open: Opener, embed: bool) {
    let feed = FeedConfig {
        cache_size: 3,
        embed,
        ..FeedConfig::default()
    };
    let Some(t) = open(feed, "timeline_caches").await else {
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
    let fans = Arc::new(Targets::from(vec![h("r"), h("dormant")]));
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

/// Caches of readers who stop reading expire: a cache not read for the ttl
/// is gone (the next read finds none, and may build it again); reads keep
/// a cache alive. The ttl is two seconds here, read every 400 ms: at one
/// second, a store slowed by the other tests (a refresh more than 600 ms
/// late) let a cache that was read expire.
/// Every stored model: the cache, and both bucket models.
pub async fn caches_expire_when_not_read(open: Opener) {
    for model in [
        FeedModel::Cache,
        FeedModel::TimeBuckets,
        FeedModel::SizedBuckets,
    ] {
        timelines_expire_when_not_read(open, model).await;
    }
}

pub async fn timelines_expire_when_not_read(open: Opener, model: FeedModel) {
    let feed = FeedConfig {
        model,
        cache_ttl_secs: 2,
        ..FeedConfig::default()
    };
    let Some(t) = open(feed, "caches_expire_when_not_read").await else {
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
    for _ in 0..6 {
        tokio::time::sleep(Duration::from_millis(400)).await;
        assert!(is_ready("kept").await, "a cache that is read stays");
    }
    assert!(
        !is_ready("left").await,
        "{model}: 2.4 s without a read: expired"
    );
    assert_eq!(
        tl.read(&h("left"), None, 10).await.unwrap(),
        CacheRead::Absent
    );
    tl.expire().await.unwrap();
    assert!(is_ready("kept").await);
    tokio::time::sleep(Duration::from_millis(2300)).await;
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
pub async fn activation_racing_a_deletion(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "activation_racing_a_deletion").await else {
        return;
    };
    let b = &t.backends;
    let (stores, index) = (b.stores(), FollowerIndex::default());
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
    assert!(page.items.is_empty(), "the new x follows nobody");
    assert_eq!(ready(b, "x").await, (vec![], Coverage::All));
}

/// A timeline's version, where the store keeps one, differs after every
/// change of what its cache holds, and is never given again after the cache
/// is dropped and made anew: a page kept from a version is exact while the
/// version stands ([`socialite_core::feed::stamp`]). A store without
/// versions answers `None` throughout.
pub async fn timeline_versions(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "timeline_versions").await else {
        return;
    };
    let tl = &t.backends.timelines;
    assert_eq!(tl.version(&h("v")).await.unwrap(), None, "no cache");
    tl.create(&h("v")).await.unwrap();
    assert_eq!(tl.version(&h("v")).await.unwrap(), None, "warming");
    let fill = vec![entry(3, "a"), entry(2, "b")];
    tl.fill(&h("v"), fill, Coverage::All).await.unwrap();
    let Some(first) = tl.version(&h("v")).await.unwrap() else {
        return;
    };
    let mut seen = vec![first];
    let mut changed = |v: Option<u64>, what: &str| {
        let v = v.unwrap_or_else(|| panic!("{what}: a ready cache has a version"));
        assert!(!seen.contains(&v), "{what}: version {v} given before");
        seen.push(v);
    };
    assert_eq!(
        tl.version(&h("v")).await.unwrap(),
        Some(first),
        "a read changes nothing"
    );
    let fans = Arc::new(Targets::from(vec![h("v")]));
    tl.deliver(&[(entry(5, "a"), fans)]).await.unwrap();
    changed(tl.version(&h("v")).await.unwrap(), "a delivery");
    tl.retract_post(&[h("v")], PostId(5)).await.unwrap();
    changed(tl.version(&h("v")).await.unwrap(), "a retraction");
    tl.purge_author(&h("v"), &u("b")).await.unwrap();
    changed(tl.version(&h("v")).await.unwrap(), "a purge");
    let back = vec![entry(2, "b")];
    tl.backfill(&h("v"), &u("b"), back, Coverage::All)
        .await
        .unwrap();
    changed(tl.version(&h("v")).await.unwrap(), "a backfill");
    tl.drop_timeline(&h("v")).await.unwrap();
    assert_eq!(tl.version(&h("v")).await.unwrap(), None, "dropped");
    tl.create(&h("v")).await.unwrap();
    tl.fill(&h("v"), vec![entry(3, "a")], Coverage::All)
        .await
        .unwrap();
    changed(tl.version(&h("v")).await.unwrap(), "a cache made anew");
}
