use super::*;
use socialite_core::numbers::Targets;
use std::sync::Arc;

const DAY_MS: u64 = 86_400_000;

fn store() -> MemoryTimelines {
    MemoryTimelines::new(LayoutSpec::Capped { cap: 50 }, 50, Freshness::new(DAY_MS))
}

/// 600 timelines, every third without a cache, and 60 posts to all of
/// them: 36,000 deliveries, a batch large enough to be spread over the
/// cores on a multi-threaded runtime.
async fn deliver_large_batch(store: &MemoryTimelines) -> (usize, Vec<TimelineId>) {
    let ids: Vec<TimelineId> = (0..600)
        .map(|i| TimelineId::from_stored(&format!("large-batch-{i}")))
        .collect();
    for id in ids.iter().filter(|id| !id.as_str().ends_with('0')) {
        store.create(id).await.unwrap();
        store.fill(id, vec![], Coverage::All).await.unwrap();
    }
    let targets = Arc::new(Targets::from(ids.clone()));
    let author = UserId::parse("writer").unwrap();
    let batch: Vec<Delivery> = (1..=60u64)
        .map(|p| {
            (
                Entry::linked(PostId(p << 20), author.clone()),
                targets.clone(),
            )
        })
        .collect();
    assert!(batch.len() * ids.len() > PARALLEL_DELIVERIES);
    (store.deliver(&batch).await.unwrap(), ids)
}

async fn pages(store: &MemoryTimelines, ids: &[TimelineId]) -> Vec<CacheRead> {
    let mut pages = Vec::new();
    for id in ids {
        pages.push(store.read(id, None, 100).await.unwrap());
    }
    pages
}

#[test]
fn a_shard_finds_each_timeline_after_others_leave() {
    let mut s = Shard::default();
    let spec = LayoutSpec::Capped { cap: 3 };
    for k in [5, 0, 9, 2] {
        s.add(k, || StoredTimeline::warming(spec, u64::from(k)));
    }
    s.add(5, || panic!("5 has a cache"));
    assert_eq!(s.remove(0).map(|t| t.read_at), Some(0));
    assert!(s.remove(0).is_none());
    assert_eq!(s.retain(|t| t.read_at != 9), 1);
    for (k, want) in [
        (5, Some(5)),
        (2, Some(2)),
        (9, None),
        (0, None),
        (7, None),
        (1000, None),
    ] {
        assert_eq!(s.get(k).map(|t| t.read_at), want, "key {k}");
    }
    assert_eq!(s.timelines.len(), 2);
}

/// A batch that reaches timelines several times, out of id order, with
/// a repeated post and more posts than the layout keeps, ends each
/// timeline as delivering the posts one by one does (sized buckets
/// keep arrival order, so they see the order too).
#[tokio::test]
async fn a_timeline_reached_many_times_takes_the_batch_in_order() {
    for spec in [
        LayoutSpec::Capped { cap: 4 },
        LayoutSpec::SizedBuckets { size: 2, keep: 2 },
    ] {
        one_batch_as_one_by_one(spec).await;
    }
}

async fn one_batch_as_one_by_one(spec: LayoutSpec) {
    let store = MemoryTimelines::new(spec, 4, Freshness::new(DAY_MS));
    let ids: Vec<TimelineId> = (0..3)
        .map(|i| TimelineId::from_stored(&format!("grouped-{spec:?}-{i}")))
        .collect();
    for id in &ids {
        store.create(id).await.unwrap();
        store.fill(id, vec![], Coverage::All).await.unwrap();
    }
    let author = UserId::parse("writer").unwrap();
    let all = Arc::new(Targets::from(ids.clone()));
    let first = Arc::new(Targets::from(ids[..1].to_vec()));
    let posts = [7u64, 3, 9, 3, 1, 12, 8, 15];
    let batch: Vec<Delivery> = posts
        .iter()
        .enumerate()
        .map(|(i, &p)| {
            let targets = if i % 2 == 0 {
                all.clone()
            } else {
                first.clone()
            };
            (Entry::linked(PostId(p << 20), author.clone()), targets)
        })
        .collect();
    assert_eq!(store.deliver(&batch).await.unwrap(), 8 + 4 + 4);
    let mut one_by_one = [
        StoredTimeline::warming(spec, 0),
        StoredTimeline::warming(spec, 0),
    ];
    for t in &mut one_by_one {
        t.fill(vec![], Coverage::All, &store.authors);
    }
    for (i, &p) in posts.iter().enumerate() {
        let e = Entry::linked(PostId(p << 20), author.clone());
        one_by_one[0].insert(&e, &store.authors);
        if i % 2 == 0 {
            one_by_one[1].insert(&e, &store.authors);
        }
    }
    let wants = [&one_by_one[0], &one_by_one[1], &one_by_one[1]];
    for (id, want) in ids.iter().zip(wants) {
        let CacheRead::Ready { entries, coverage } = store.read(id, None, 10).await.unwrap() else {
            panic!("{id} has no cache");
        };
        assert_eq!(entries, want.page(None, 10, &store.authors), "{id}");
        assert_eq!(coverage, want.coverage(), "{id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_spread_over_the_cores_delivers_as_one_thread_does() {
    let spread = store();
    let (delivered, ids) = deliver_large_batch(&spread).await;
    let with_cache = ids.iter().filter(|i| !i.as_str().ends_with('0')).count();
    assert_eq!(delivered, with_cache * 60);
    let one_thread = store();
    let serial = std::thread::spawn(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        rt.block_on(async move {
            let (delivered, ids) = deliver_large_batch(&one_thread).await;
            (delivered, pages(&one_thread, &ids).await)
        })
    });
    let (serial_delivered, serial_pages) = serial.join().unwrap();
    assert_eq!(serial_delivered, delivered);
    let spread_pages = pages(&spread, &ids).await;
    assert!(
        spread_pages == serial_pages,
        "pages differ from one thread's"
    );
    for (id, page) in ids.iter().zip(&spread_pages) {
        match page {
            CacheRead::Ready { entries, .. } => {
                let newest: Vec<u64> = entries.iter().map(|e| e.post.0 >> 20).collect();
                assert_eq!(newest, (11..=60).rev().collect::<Vec<_>>(), "{id}");
            }
            CacheRead::Absent => assert!(id.as_str().ends_with('0'), "{id} lost its cache"),
            CacheRead::Warming => panic!("{id} is still warming"),
        }
    }
}
