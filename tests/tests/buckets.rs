//! The bucket models on MongoDB, as documents: what the reference design
//! shows, and what concurrent fanout workers leave. The differential test
//! (`feed_model.rs`) proves the timelines they serve; this looks inside.

use futures_util::TryStreamExt;
use mongodb::bson::{doc, Bson, Document};
use socialite_core::feed::config::{FeedConfig, FeedModel};
use socialite_core::ids::{PostId, PostIdGen, TimelineId, UserId};
use socialite_core::model::Entry;
use socialite_core::numbers::Targets;
use socialite_core::ports::{CacheRead, Coverage, Delivery, TimelineStore};
use socialite_e2e::servers::Servers;
use socialite_mongo::{Db, MongoBuckets};
use std::collections::BTreeMap;
use std::sync::Arc;

const READERS: usize = 12;

fn readers() -> Vec<TimelineId> {
    (0..READERS)
        .map(|r| TimelineId::home(&UserId::parse(&format!("reader{r}")).unwrap()))
        .collect()
}

async fn open(uri: &str, feed: &FeedConfig) -> MongoBuckets {
    MongoBuckets::open(Db::connect(uri).await.unwrap(), feed)
        .await
        .unwrap()
}

async fn documents(uri: &str, collection: &str) -> Vec<Document> {
    let db = Db::connect(uri).await.unwrap();
    db.database
        .collection::<Document>(collection)
        .find(doc! {})
        .await
        .unwrap()
        .try_collect()
        .await
        .unwrap()
}

fn ids(bucket: &Document) -> Vec<i64> {
    bucket
        .get_array("_c")
        .unwrap()
        .iter()
        .map(|e| e.as_document().unwrap().get_i64("p").unwrap())
        .collect()
}

/// Two fanout workers (two stores on one database) deliver to the same
/// readers at once, in small batches, with a stretch of posts that both
/// deliver (a replay after a rebalance): no bucket ever takes more than N,
/// and every reader holds every post exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_workers_fill_the_same_sized_buckets_at_once() {
    let Some(servers) = Servers::from_env("two_workers_fill_the_same_sized_buckets_at_once") else {
        return;
    };
    let uri = servers.mongodb_uri(&Servers::unique("sized"));
    const N: usize = 4;
    let feed = FeedConfig {
        model: FeedModel::SizedBuckets,
        bucket_size: N,
        bucket_retention: 1000,
        ..FeedConfig::default()
    };
    let (a, b) = (open(&uri, &feed).await, open(&uri, &feed).await);
    for r in readers() {
        a.create(&r).await.unwrap();
        a.fill(&r, vec![], Coverage::All).await.unwrap();
    }
    let gen = PostIdGen::new(3);
    let posts: Vec<PostId> = (0..120).map(|_| gen.next()).collect();
    let to = Arc::new(Targets::from(readers()));
    let batches = |range: std::ops::Range<usize>| -> Vec<Vec<Delivery>> {
        posts[range]
            .chunks(3)
            .map(|chunk| {
                chunk
                    .iter()
                    .map(|p| {
                        (
                            Entry::linked(*p, UserId::parse("author").unwrap()),
                            to.clone(),
                        )
                    })
                    .collect()
            })
            .collect()
    };
    // Worker a takes 0..70, worker b 50..120: 50..70 go twice.
    let run = |store: MongoBuckets, work: Vec<Vec<Delivery>>| {
        tokio::spawn(async move {
            for batch in work {
                store.deliver(&batch).await.unwrap();
            }
            store
        })
    };
    let (wa, wb) = (run(a, batches(0..70)), run(b, batches(50..120)));
    let (a, _b) = (wa.await.unwrap(), wb.await.unwrap());

    let buckets = documents(&uri, "sized_buckets").await;
    let mut held: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for bucket in &buckets {
        let entries = ids(bucket);
        assert!(
            bucket.get_i64("_s").unwrap() as usize <= N && entries.len() <= N,
            "a bucket past {N}: {bucket}"
        );
        let id = bucket.get_document("_id").unwrap();
        let owner = id.get_str("_u").unwrap().to_owned();
        assert!(matches!(id.get("_n"), Some(Bson::Int64(_))), "{bucket}");
        held.entry(owner).or_default().extend(entries);
    }
    let want: Vec<i64> = posts.iter().map(|p| p.0 as i64).collect();
    assert_eq!(held.len(), READERS);
    for (reader, mut got) in held {
        got.sort_unstable();
        assert_eq!(got, want, "{reader}: every post once");
    }
    // And a read serves them newest first, all of them.
    let CacheRead::Ready { entries, .. } = a.read(&readers()[0], None, 500).await.unwrap() else {
        panic!("a ready timeline")
    };
    let mut newest_first = want.clone();
    newest_first.reverse();
    assert_eq!(
        entries.iter().map(|e| e.post.0 as i64).collect::<Vec<_>>(),
        newest_first
    );
}

/// The documents look like the design's: a time bucket is
/// `{_id: {_t, _u}, _c: [...]}` with `_t` the post time over the span, and
/// retention keeps the newest buckets, raising the floor past the rest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn time_buckets_are_the_designs_documents() {
    let Some(servers) = Servers::from_env("time_buckets_are_the_designs_documents") else {
        return;
    };
    let uri = servers.mongodb_uri(&Servers::unique("timed"));
    let feed = FeedConfig {
        model: FeedModel::TimeBuckets,
        time_bucket_ms: 1000,
        bucket_retention: 2,
        embed: true,
        ..FeedConfig::default()
    };
    let store = open(&uri, &feed).await;
    let reader = readers().remove(0);
    store.create(&reader).await.unwrap();
    store.fill(&reader, vec![], Coverage::All).await.unwrap();
    // Three posts a second apart each: three buckets, of which two are kept.
    let ms = |s: u64| 1_800_000_000_000 + s * 1000;
    let post = |s: u64| PostId::first_at(ms(s));
    let author = UserId::parse("author").unwrap();
    for s in [0, 1, 2] {
        let entry = Entry {
            post: post(s),
            author: author.clone(),
            body: Some(Arc::new(socialite_core::model::Body {
                message: format!("second {s}"),
                data: None,
                mentions: vec![],
                reply_to: None,
                repost_of: None,
            })),
        };
        store
            .deliver(&[(entry, Arc::new(Targets::from(vec![reader.clone()])))])
            .await
            .unwrap();
    }
    let mut buckets = documents(&uri, "timed_buckets").await;
    buckets.sort_by_key(|b| b.get_document("_id").unwrap().get_i64("_t").unwrap());
    let keys: Vec<i64> = buckets
        .iter()
        .map(|b| b.get_document("_id").unwrap().get_i64("_t").unwrap())
        .collect();
    assert_eq!(keys, vec![(ms(1) / 1000) as i64, (ms(2) / 1000) as i64]);
    let first = &buckets[0];
    assert_eq!(
        first.get_document("_id").unwrap().get_str("_u").unwrap(),
        reader.as_str()
    );
    let entry = first.get_array("_c").unwrap()[0]
        .as_document()
        .unwrap()
        .clone();
    assert_eq!(entry.get_i64("p").unwrap(), post(1).0 as i64);
    assert_eq!(entry.get_str("a").unwrap(), "author");
    assert_eq!(entry.get_str("m").unwrap(), "second 1", "embedded");
    let CacheRead::Ready { entries, coverage } = store.read(&reader, None, 10).await.unwrap()
    else {
        panic!("a ready timeline")
    };
    assert_eq!(
        coverage,
        Coverage::From(post(1)),
        "the floor passed the dropped bucket"
    );
    assert_eq!(entries.len(), 2);
    // A replay changes nothing.
    let replay = Entry::linked(post(2), author.clone());
    assert_eq!(
        store
            .deliver(&[(replay, Arc::new(Targets::from(vec![reader.clone()])))])
            .await
            .unwrap(),
        0
    );
    let held: usize = documents(&uri, "timed_buckets")
        .await
        .iter()
        .map(|b| ids(b).len())
        .sum();
    assert_eq!(held, 2);
}
