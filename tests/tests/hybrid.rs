//! Hybrid fanout on every backend (the embedded default, and MongoDB with
//! Kafka): the marks a graph store keeps, and an author crossing the
//! threshold both ways while their followers read.

mod common;

use common::ports::{open, Kind};
use socialite_core::backends::Backends;
use socialite_core::feed::config::FeedConfig;
use socialite_core::feed::fanout;
use socialite_core::feed::followers::FollowerIndex;
use socialite_core::ids::{PostId, TimelineId, UserId};
use socialite_core::ingest::Ingest;
use socialite_core::ports::CacheRead;
use socialite_core::reads::Reads;
use socialite_core::relay::relay_once;
use socialite_domain::accounts::access::Caller;
use socialite_domain::feed::hybrid::Hybrid;

fn u(s: &str) -> UserId {
    UserId::parse(s).unwrap()
}

/// Relays the outbox and applies the log, as the worker does, until the
/// `expected` events were applied (a Kafka consumer may still be joining its
/// group); how many follower timelines hybrid fanout skipped.
async fn fan_out(
    b: &Backends,
    index: &FollowerIndex,
    consumer: &mut Box<dyn socialite_core::ports::LogConsumer>,
    expected: usize,
) -> usize {
    while relay_once(&*b.outbox, &*b.log).await.unwrap() > 0 {}
    let (mut skipped, mut applied) = (0, 0);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    // At least `expected` events, and then all the log holds: a poll may
    // bring fewer than were relayed, and what it left would be the next
    // call's.
    while applied < expected || consumer.backlog().await.unwrap() > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "{applied} of {expected} events"
        );
        let wait = std::time::Duration::from_millis(200);
        let events = consumer.poll(100, wait, wait).await.unwrap();
        applied += events.len();
        skipped += fanout::apply(&b.stores(), index, &events)
            .await
            .unwrap()
            .hybrid_skipped;
        consumer.commit().await.unwrap();
    }
    skipped
}

/// Backends with caches of 10 and hybrid fanout from `threshold`
/// followers, their write and read paths, and a log consumer.
struct HybridRun {
    t: common::ports::Under,
    b: Backends,
    ingest: Ingest,
    reads: Reads,
    consumer: Box<dyn socialite_core::ports::LogConsumer>,
}

impl HybridRun {
    async fn open(kind: Kind, threshold: u64, test: &str, tag: &str) -> Option<HybridRun> {
        let feed = FeedConfig {
            cache_size: 10,
            hybrid: Hybrid::Above(threshold),
            ..FeedConfig::default()
        };
        let t = open(kind, feed, test, tag).await?;
        let b = t.backends.clone();
        let ingest = Ingest::new(&b, 1).await.unwrap();
        let reads = Reads::new(b.stores());
        // A group of its own: members other tests left on the same Kafka
        // would otherwise hold its partitions.
        let group = common::servers::Servers::unique("fanout");
        let consumer = b.log.consumer(&group).await.unwrap();
        Some(HybridRun {
            t,
            b,
            ingest,
            reads,
            consumer,
        })
    }
}

async fn stored(b: &Backends, user: &str) -> Vec<PostId> {
    match b
        .timelines
        .read(&TimelineId::home(&u(user)), None, 100)
        .await
        .unwrap()
    {
        CacheRead::Ready { entries, .. } => entries.iter().map(|e| e.post).collect(),
        other => panic!("{user}: {other:?}"),
    }
}

async fn marks_are_kept(kind: Kind) {
    let Some(t) = open(kind, FeedConfig::default(), "marks_are_kept", "hyb").await else {
        return;
    };
    let g = &t.backends.graph;
    assert!(g.hybrid_authors().await.unwrap().is_empty());
    for a in ["b", "a", "b"] {
        g.set_hybrid(&u(a), true).await.unwrap();
    }
    assert_eq!(g.hybrid_authors().await.unwrap(), vec![u("a"), u("b")]);
    g.set_hybrid(&u("a"), false).await.unwrap();
    g.set_hybrid(&u("zed"), false).await.unwrap();
    assert_eq!(g.hybrid_authors().await.unwrap(), vec![u("b")]);
    for name in ["r", "a", "b", "c"] {
        t.backends.content.put_user(&u(name), None).await.unwrap();
    }
    for followee in ["c", "a"] {
        let e = socialite_core::checks::EdgeChange::new(
            u("r"),
            u(followee),
            socialite_core::checks::EdgeOp::Follow,
        )
        .unwrap();
        g.change_edge(&e).await.unwrap();
    }
    let among = g.following_among(&u("r"), &[u("a"), u("b"), u("c")]).await;
    assert_eq!(among.unwrap(), vec![u("a"), u("c")]);
}

/// An author past the threshold is not delivered to followers' stored
/// timelines, yet every follower reads their posts, page by page; once the
/// threshold rises past them, their posts are backfilled and they are
/// delivered again.
async fn an_author_crosses_the_threshold_both_ways(kind: Kind) {
    let test = "an_author_crosses_the_threshold_both_ways";
    let Some(HybridRun {
        mut t,
        b,
        ingest,
        reads,
        mut consumer,
    }) = HybridRun::open(kind, 3, test, "hyb").await
    else {
        return;
    };
    let index = FollowerIndex::default();
    let c = &Caller::Trusted;
    for name in ["star", "f1", "f2", "f3", "small"] {
        ingest.put_user(c, name, None).await.unwrap();
    }
    for f in ["f1", "f2", "f3"] {
        ingest.follow(c, f, "star", None).await.unwrap();
        if f != "f3" {
            ingest.follow(c, f, "small", None).await.unwrap(); // under the threshold
        }
        reads.timeline(c, f, None, None).await.unwrap(); // active
    }
    fan_out(&b, &index, &mut consumer, 5).await;
    let mut posts = Vec::new();
    for n in 0..6 {
        let author = if n % 2 == 0 { "star" } else { "small" };
        posts.push(
            ingest
                .create_post(c, author, format!("{n}"), None)
                .await
                .unwrap()
                .id,
        );
    }
    let skipped = fan_out(&b, &index, &mut consumer, 6).await;
    assert_eq!(skipped, 9, "three posts by star, three followers each");
    assert_eq!(b.graph.hybrid_authors().await.unwrap(), vec![u("star")]);
    let small: Vec<PostId> = posts.iter().rev().step_by(2).copied().collect();
    assert_eq!(
        stored(&b, "f1").await,
        small,
        "only small's posts are stored"
    );
    // Every page still has star's posts, newest first, pages of two.
    let mut all = Vec::new();
    let mut before: Option<String> = None;
    loop {
        let (page, _) = reads
            .timeline(c, "f1", Some(2), before.as_deref())
            .await
            .unwrap();
        all.extend(page.items.iter().map(|p| p.post.id));
        match page.next_cursor {
            Some(n) => before = Some(n.to_string()),
            None => break,
        }
    }
    let newest_first: Vec<PostId> = posts.iter().rev().copied().collect();
    assert_eq!(all, newest_first);

    // A repost by the big account is merged at read time like its posts:
    // small's oldest post rises to the top, for f3 too, who follows only
    // star; undone, it is back where it was.
    let oldest_small = posts[1].to_string();
    let reposted = ingest.repost(c, "star", &oldest_small, true).await.unwrap();
    assert_eq!(
        fan_out(&b, &index, &mut consumer, 1).await,
        3,
        "not fanned out"
    );
    for f in ["f1", "f3"] {
        let (page, _) = reads.timeline(c, f, Some(1), None).await.unwrap();
        let top = &page.items[0];
        assert_eq!(
            (top.post.id, Some(top.position)),
            (posts[1], reposted.item),
            "{f}"
        );
        assert_eq!(top.reposted_by, [u("star")]);
    }
    ingest
        .repost(c, "star", &oldest_small, false)
        .await
        .unwrap();
    fan_out(&b, &index, &mut consumer, 1).await;
    let (page, _) = reads.timeline(c, "f1", Some(10), None).await.unwrap();
    let ids: Vec<PostId> = page.items.iter().map(|i| i.post.id).collect();
    assert_eq!(ids, newest_first);

    // The threshold rises past star: the next post backfills and unmarks.
    t.backends.feed.hybrid = Hybrid::Above(100);
    let b = t.backends.clone();
    let last = ingest
        .create_post(c, "star", "back".into(), None)
        .await
        .unwrap()
        .id;
    assert_eq!(fan_out(&b, &index, &mut consumer, 1).await, 0);
    assert!(b.graph.hybrid_authors().await.unwrap().is_empty());
    let mut expected = newest_first.clone();
    expected.insert(0, last);
    assert_eq!(
        stored(&b, "f2").await,
        expected,
        "star's posts were backfilled"
    );
}

/// A fresh worker's index knows a big author by the follower count their
/// record keeps, without loading their followers; the follow events it
/// applies move that count, so unfollows take the author below the rule's
/// hysteresis and the next post loads the list, backfills and delivers.
async fn an_author_known_by_count_follows_the_unfollows(kind: Kind) {
    let test = "an_author_known_by_count_follows_the_unfollows";
    let Some(HybridRun {
        b,
        ingest,
        reads,
        mut consumer,
        ..
    }) = HybridRun::open(kind, 4, test, "hbc").await
    else {
        return;
    };
    let c = &Caller::Trusted;
    let fans = ["f1", "f2", "f3", "f4"];
    for name in std::iter::once("star").chain(fans) {
        ingest.put_user(c, name, None).await.unwrap();
    }
    for f in fans {
        ingest.follow(c, f, "star", None).await.unwrap();
        reads.timeline(c, f, None, None).await.unwrap(); // active
    }
    // The index starts after the follows, as a restarted worker would: it
    // never saw them, so only the stored count can tell it star is big.
    fan_out(&b, &FollowerIndex::default(), &mut consumer, 4).await;
    let index = FollowerIndex::default();
    let first = ingest
        .create_post(c, "star", "1".into(), None)
        .await
        .unwrap();
    assert_eq!(
        fan_out(&b, &index, &mut consumer, 1).await,
        4,
        "big by count"
    );
    assert_eq!(b.graph.hybrid_authors().await.unwrap(), vec![u("star")]);
    assert_eq!(stored(&b, "f4").await, vec![], "merged at read time only");
    for f in ["f1", "f2", "f3"] {
        ingest.unfollow(c, f, "star").await.unwrap();
    }
    fan_out(&b, &index, &mut consumer, 3).await;
    // One follower left: below half the threshold, small again.
    let second = ingest
        .create_post(c, "star", "2".into(), None)
        .await
        .unwrap();
    assert_eq!(fan_out(&b, &index, &mut consumer, 1).await, 0);
    assert!(b.graph.hybrid_authors().await.unwrap().is_empty());
    assert_eq!(
        stored(&b, "f4").await,
        vec![second.id, first.id],
        "backfilled, then delivered"
    );
}

macro_rules! suite {
    ($name:ident, $kind:expr) => {
        mod $name {
            use super::*;

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn marks_are_kept() {
                super::marks_are_kept($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn an_author_crosses_the_threshold_both_ways() {
                super::an_author_crosses_the_threshold_both_ways($kind).await
            }

            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn an_author_known_by_count_follows_the_unfollows() {
                super::an_author_known_by_count_follows_the_unfollows($kind).await
            }
        }
    };
}

suite!(embedded, Kind::Embedded);
suite!(mongodb_kafka, Kind::MongoKafka);
