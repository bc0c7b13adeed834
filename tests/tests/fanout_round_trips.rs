//! How many round trips MongoDB fanout costs: one post by an account whose
//! followers are all active, delivered in one batch, on every stored model
//! (a test each). The count is deterministic (not a timing), so the test
//! asserts it: a bounded number per chunk of followers, never one per
//! follower. Alone in its binary, and each count taken while no other test
//! of it touches a store (see [`COUNTING`]), so the process-wide counter
//! counts only the delivery.
//! `SOCIALITE_FANOUT_FOLLOWERS=100000` measures the size; the
//! default (500) keeps CI quick on the test server, whose activations are
//! slow; past the default, timelines are made by bulk inserts of the
//! documents an activation leaves, so that only the delivery is measured.

use futures_util::StreamExt;
use mongodb::bson::{doc, DateTime, Document};
use socialite_core::feed::config::{FeedConfig, FeedModel};
use socialite_core::ids::{PostIdGen, TimelineId, UserId};
use socialite_core::metrics::metrics;
use socialite_core::model::Entry;
use socialite_core::numbers::Targets;
use socialite_core::ports::{Coverage, TimelineStore};
use socialite_e2e::servers::Servers;
use socialite_mongo::{Db, MongoBuckets, MongoTimelines};
use std::sync::Arc;

/// Followers per `$in` read and per `update` command (the adapter's chunk).
const CHUNK: usize = 10_000;

/// Held shared while a test makes its timelines, and alone while one
/// counts a delivery's round trips: the counter is the process's.
static COUNTING: tokio::sync::RwLock<()> = tokio::sync::RwLock::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_post_to_every_active_follower_costs_a_few_round_trips_per_chunk_cached() {
    round_trips(FeedModel::Cache).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_post_to_every_active_follower_costs_a_few_round_trips_per_chunk_time_buckets() {
    round_trips(FeedModel::TimeBuckets).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_post_to_every_active_follower_costs_a_few_round_trips_per_chunk_sized_buckets() {
    round_trips(FeedModel::SizedBuckets).await;
}

async fn round_trips(model: FeedModel) {
    let Some(servers) = Servers::from_env("one_post_costs_a_few_round_trips_per_chunk") else {
        return;
    };
    let followers: usize = std::env::var("SOCIALITE_FANOUT_FOLLOWERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    let making = COUNTING.read().await;
    let feed = FeedConfig {
        model,
        ..FeedConfig::default()
    };
    let db = Db::connect(&servers.mongodb_uri(&Servers::unique("round_trips")))
        .await
        .unwrap();
    let store: Arc<dyn TimelineStore> = match model {
        FeedModel::Cache => Arc::new(
            MongoTimelines::open(db.clone(), feed.cache_size, feed.freshness())
                .await
                .unwrap(),
        ),
        _ => Arc::new(MongoBuckets::open(db.clone(), &feed).await.unwrap()),
    };
    let to: Vec<TimelineId> = (0..followers)
        .map(|i| TimelineId::home(&UserId::parse(&format!("f{i}")).unwrap()))
        .collect();
    // Every follower active: each read once, which made their timeline.
    if followers <= 500 {
        futures_util::stream::iter(to.iter().cloned())
            .for_each_concurrent(64, |t| {
                let store = store.clone();
                async move {
                    store.create(&t).await.unwrap();
                    store.fill(&t, vec![], Coverage::All).await.unwrap();
                }
            })
            .await;
    } else {
        activate_in_bulk(&db, model, &to).await;
    }
    drop(making);
    let counting = COUNTING.write().await;
    let post = Entry::linked(PostIdGen::new(1).next(), UserId::parse("star").unwrap());
    let before = metrics().timeline_round_trips.get();
    let landed = store
        .deliver(&[(post, Arc::new(Targets::from(to)))])
        .await
        .unwrap();
    let round_trips = metrics().timeline_round_trips.get() - before;
    drop(counting);
    let chunks = followers.div_ceil(CHUNK) as u64;
    eprintln!(
        "{model}: one post to {followers} active followers: {round_trips} round trips, {:.0} deliveries per round trip",
        landed as f64 / round_trips as f64
    );
    assert_eq!(landed, followers, "{model}: every follower got the post");
    // One read of which timelines exist and one write per chunk; a new
    // bucket per follower adds retention's reads and writes per chunk.
    let bound = 2 * chunks
        + if model == FeedModel::Cache {
            0
        } else {
            3 * chunks
        };
    assert!(
        round_trips <= bound,
        "{model}: {round_trips} round trips for {chunks} chunks"
    );
}

/// The documents an activation leaves for each timeline, inserted in bulk:
/// a ready, empty cache, or a ready bucket head.
async fn activate_in_bulk(db: &Db, model: FeedModel, to: &[TimelineId]) {
    let (collection, extra) = match model {
        FeedModel::Cache => ("timeline_cache", doc! { "entries": [] }),
        FeedModel::TimeBuckets => ("timed_buckets.heads", doc! { "g": 1_i64, "setup": false }),
        _ => (
            "sized_buckets.heads",
            doc! { "g": 1_i64, "setup": false, "open": 0_i64 },
        ),
    };
    let docs: Vec<Document> = to
        .iter()
        .map(|t| {
            let mut d = doc! {
                "_id": t.as_str(), "warming": false, "wv": 0_i64, "floor": 0_i64,
                "purged": [], "retracted": [], "read_at": DateTime::now(),
            };
            d.extend(extra.clone());
            d
        })
        .collect();
    let coll = db.database.collection::<Document>(collection);
    for chunk in docs.chunks(10_000) {
        coll.insert_many(chunk.to_vec()).await.unwrap();
    }
}
