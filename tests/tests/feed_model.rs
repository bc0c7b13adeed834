//! The differential feed test (`socialite_testkit::differential`) on the
//! embedded backends and on MongoDB's stores (fewer histories: the test
//! server is slow), and races of the feed machinery checked against the same
//! oracle.

mod common;

use common::ports;
use socialite_core::feed::config::{FeedConfig, FeedModel};
use socialite_core::ids::{PostId, TimelineId};
use socialite_domain::accounts::access::Caller;
use socialite_testkit::differential::{feed, Harness};

socialite_testkit::differential_suite!(
    every_feed_model_matches_the_oracle_on_random_histories,
    ports::embedded,
    1..=12
);
socialite_testkit::differential_suite!(
    the_mongodb_stores_match_the_oracle_on_random_histories,
    ports::mongodb_stores,
    1..=4
);

/// A harness on the embedded backends.
async fn open_harness(feed: FeedConfig) -> Harness {
    Harness::open(ports::embedded, feed).await.unwrap()
}

#[tokio::test]
async fn a_post_reaches_an_active_follower() {
    let mut h = open_harness(feed(FeedModel::Cache, false, 1)).await;
    for u in ["u2", "u4"] {
        h.ingest.put_user(&Caller::Trusted, u, None).await.unwrap();
        h.model.users.insert(u.into());
    }
    h.ingest
        .follow(&Caller::Trusted, "u4", "u2", None)
        .await
        .unwrap();
    h.model
        .follows
        .insert(("u4".into(), "u2".into()), Default::default());
    h.check_all(0, 0).await;
    let p = h
        .ingest
        .create_post(&Caller::Trusted, "u2", "hi".into(), None)
        .await
        .unwrap();
    h.model.posts.insert(p.id, ("u2".into(), "hi".into()));
    h.drain().await;
    let uid = socialite_core::ids::UserId::parse("u4").unwrap();
    assert_eq!(
        h.backends
            .timelines
            .read(&TimelineId::home(&uid), None, 10)
            .await
            .unwrap(),
        socialite_core::ports::CacheRead::Ready {
            entries: vec![socialite_core::model::Entry::linked(
                p.id,
                socialite_core::ids::UserId::parse("u2").unwrap()
            )],
            coverage: socialite_core::ports::Coverage::All,
        }
    );
    h.check_all(0, 1).await;
}

fn uid(s: &str) -> socialite_core::ids::UserId {
    socialite_core::ids::UserId::parse(s).unwrap()
}

async fn setup_two_authors(h: &mut Harness) -> (PostId, PostId) {
    for u in ["a", "b", "r"] {
        h.ingest.put_user(&Caller::Trusted, u, None).await.unwrap();
    }
    h.ingest
        .follow(&Caller::Trusted, "r", "a", None)
        .await
        .unwrap();
    h.ingest
        .follow(&Caller::Trusted, "r", "b", None)
        .await
        .unwrap();
    let pa = h
        .ingest
        .create_post(&Caller::Trusted, "a", "from a".into(), None)
        .await
        .unwrap()
        .id;
    let pb = h
        .ingest
        .create_post(&Caller::Trusted, "b", "from b".into(), None)
        .await
        .unwrap()
        .id;
    h.model.posts.insert(pa, ("a".into(), "from a".into()));
    h.model.posts.insert(pb, ("b".into(), "from b".into()));
    h.drain().await;
    (pa, pb)
}

#[tokio::test]
async fn an_interrupted_activation_is_completed_by_the_next_read() {
    use socialite_core::feed::timeline::ReadSource;
    use socialite_core::ports::CacheRead;
    let mut h = open_harness(FeedConfig {
        cache_size: 5,
        ..FeedConfig::default()
    })
    .await;
    let (pa, pb) = setup_two_authors(&mut h).await;
    // A read that created the cache and was cut off before filling it.
    h.backends
        .timelines
        .create(&TimelineId::home(&uid("r")))
        .await
        .unwrap();
    let (page, source) = h
        .reads
        .timeline(&Caller::Trusted, "r", None, None)
        .await
        .unwrap();
    assert_eq!(source, ReadSource::Merge);
    assert_eq!(
        page.items.iter().map(|p| p.post.id).collect::<Vec<_>>(),
        vec![pb, pa]
    );
    let read = h
        .backends
        .timelines
        .read(&TimelineId::home(&uid("r")), None, 10)
        .await
        .unwrap();
    assert!(matches!(read, CacheRead::Ready { .. }), "{read:?}");
    let (_, source) = h
        .reads
        .timeline(&Caller::Trusted, "r", None, None)
        .await
        .unwrap();
    assert_eq!(source, ReadSource::Cache);
}

#[tokio::test]
async fn an_unfollow_that_reaches_a_warming_cache_stays_out_of_its_fill() {
    use socialite_core::model::Entry;
    use socialite_core::ports::{CacheRead, Coverage};
    let mut h = open_harness(FeedConfig {
        cache_size: 5,
        ..FeedConfig::default()
    })
    .await;
    let (pa, pb) = setup_two_authors(&mut h).await;
    let r = uid("r");
    // Activation has created the cache and its merge has read both authors...
    h.backends
        .timelines
        .create(&TimelineId::home(&r))
        .await
        .unwrap();
    let merged = vec![Entry::linked(pb, uid("b")), Entry::linked(pa, uid("a"))];
    // ...when r unfollows b and the purge is applied before the fill lands.
    h.ingest.unfollow(&Caller::Trusted, "r", "b").await.unwrap();
    h.drain().await;
    h.backends
        .timelines
        .fill(&TimelineId::home(&r), merged, Coverage::All)
        .await
        .unwrap();
    let read = h
        .backends
        .timelines
        .read(&TimelineId::home(&r), None, 10)
        .await
        .unwrap();
    assert_eq!(
        read,
        CacheRead::Ready {
            entries: vec![Entry::linked(pa, uid("a"))],
            coverage: Coverage::All
        }
    );
    h.model.users.extend(["a", "b", "r"].map(String::from));
    h.model
        .follows
        .insert(("r".into(), "a".into()), Default::default());
    h.check_all(0, 0).await;
}

#[tokio::test]
async fn a_user_deleted_and_created_again_inherits_no_follows() {
    let mut h = open_harness(FeedConfig::default()).await;
    for u in ["a", "x"] {
        h.ingest.put_user(&Caller::Trusted, u, None).await.unwrap();
    }
    h.ingest
        .follow(&Caller::Trusted, "x", "a", None)
        .await
        .unwrap();
    h.reads
        .timeline(&Caller::Trusted, "x", None, None)
        .await
        .unwrap();
    let before = h
        .ingest
        .create_post(&Caller::Trusted, "a", "before".into(), None)
        .await
        .unwrap();
    h.drain().await; // the worker now knows a's followers
    h.ingest.delete_user(&Caller::Trusted, "x").await.unwrap();
    h.ingest
        .put_user(&Caller::Trusted, "x", None)
        .await
        .unwrap();
    h.drain().await;
    h.reads
        .timeline(&Caller::Trusted, "x", None, None)
        .await
        .unwrap(); // active again, following nobody
    let p = h
        .ingest
        .create_post(&Caller::Trusted, "a", "after".into(), None)
        .await
        .unwrap();
    h.model.users.extend(["a", "x"].map(String::from));
    h.model.posts.insert(p.id, ("a".into(), "after".into()));
    // Still in a's own timeline, never in the new x's.
    h.model
        .posts
        .insert(before.id, ("a".into(), "before".into()));
    h.check_all(0, 0).await;
}

/// A replay of the log delivers posts to the followers of now: a post of
/// an account deleted since, replayed, reaches a follower of a later
/// account under the id. The later account's follow comes after the
/// deletion in the log, and its backfill puts the timeline right: the
/// old account's post is in no timeline, embedded or linked.
#[tokio::test]
async fn a_replay_brings_back_no_post_of_an_earlier_account_under_the_id() {
    for embed in [true, false] {
        let mut h = open_harness(feed(FeedModel::Cache, embed, 1)).await;
        let start = h
            .backends
            .rewind
            .as_ref()
            .unwrap()
            .first_retained()
            .unwrap();
        for u in ["a", "x"] {
            h.ingest.put_user(&Caller::Trusted, u, None).await.unwrap();
        }
        h.reads
            .timeline(&Caller::Trusted, "x", None, None)
            .await
            .unwrap(); // x's timeline is kept
        h.ingest
            .create_post(&Caller::Trusted, "a", "old".into(), None)
            .await
            .unwrap();
        h.drain().await;
        h.ingest.delete_user(&Caller::Trusted, "a").await.unwrap();
        h.ingest
            .put_user(&Caller::Trusted, "a", None)
            .await
            .unwrap();
        h.ingest
            .follow(&Caller::Trusted, "x", "a", None)
            .await
            .unwrap();
        let new = h
            .ingest
            .create_post(&Caller::Trusted, "a", "new".into(), None)
            .await
            .unwrap();
        h.drain().await;
        h.replay_from(start).await;
        h.model.users.extend(["a", "x"].map(String::from));
        h.model
            .follows
            .insert(("x".into(), "a".into()), Default::default());
        h.model.posts.insert(new.id, ("a".into(), "new".into()));
        h.check_all(0, 0).await;
    }
}

/// With fanout held back (a stalled or overrun worker), every timeline of
/// every stored feed model, linked and embedded, still equals its oracle:
/// reads merge what fanout has not delivered. Then fanout catches up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timelines_match_the_oracle_while_fanout_is_held_back() {
    use socialite_testkit::differential::held_fanout_matches_the_oracle as held;
    let seeds: Vec<u64> = match std::env::var("SOCIALITE_SEED") {
        Ok(s) => vec![s.parse().expect("SOCIALITE_SEED is a number")],
        Err(_) => (1..=4).collect(),
    };
    for model in [
        FeedModel::TimeBuckets,
        FeedModel::SizedBuckets,
        FeedModel::Cache,
    ] {
        for embed in [false, true] {
            for &seed in &seeds {
                held(ports::embedded, seed, model, embed).await;
            }
        }
    }
}

/// The same on MongoDB's stores, for one seed a model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mongodb_timelines_match_the_oracle_while_fanout_is_held_back() {
    use socialite_testkit::differential::held_fanout_matches_the_oracle as held;
    for (model, seed) in [(FeedModel::Cache, 1), (FeedModel::TimeBuckets, 2)] {
        held(ports::mongodb_stores, seed, model, seed % 2 == 0).await;
    }
}

/// While fanout is held back, an unfollow it has not applied already
/// takes the account's posts out of the reader's timeline, and a post it
/// has not delivered is already in it.
#[tokio::test]
async fn a_held_back_fanout_neither_shows_the_unfollowed_nor_hides_the_new() {
    for model in [FeedModel::Cache, FeedModel::TimeBuckets] {
        let mut h = open_harness(feed(model, true, 3)).await;
        for u in ["u1", "u2", "u3"] {
            h.ingest.put_user(&Caller::Trusted, u, None).await.unwrap();
            h.model.users.insert(u.into());
        }
        for author in ["u2", "u3"] {
            h.ingest
                .follow(&Caller::Trusted, "u1", author, None)
                .await
                .unwrap();
            h.model
                .follows
                .insert(("u1".into(), author.into()), Default::default());
            let message = format!("by {author}");
            let p = h
                .ingest
                .create_post(&Caller::Trusted, author, message.clone(), None)
                .await
                .unwrap();
            h.model.posts.insert(p.id, (author.into(), message));
        }
        h.check_all(0, 0).await;
        h.hold_fanout().await;
        h.ingest
            .unfollow(&Caller::Trusted, "u1", "u2")
            .await
            .unwrap();
        h.model.follows.remove(&("u1".into(), "u2".into()));
        let p = h
            .ingest
            .create_post(&Caller::Trusted, "u3", "new".into(), None)
            .await
            .unwrap();
        h.model.posts.insert(p.id, ("u3".into(), "new".into()));
        h.check_all(0, 1).await;
        h.release_fanout().await;
        h.check_all(0, 2).await;
    }
}
