//! Keyword filters: a warning marks an entry, a hiding filter leaves it
//! out, at the next read, entries already stored included, on every feed
//! model; each filter only where its contexts say, never on the reader's
//! own posts, not once expired; the limits refuse; the log carries each
//! change, and a replayed one restores it.

use super::*;
use socialite_core::filters::FilterChange;
use socialite_core::model::filter::{FilterAction, FilterContext, Phrase};
use socialite_core::reads::Reads;
use socialite_core::write::Write;

pub async fn keyword_filters(open: Opener) {
    for (i, model) in FeedModel::ALL.into_iter().enumerate() {
        let feed = FeedConfig {
            model,
            ..FeedConfig::default()
        };
        let Some(t) = open(feed, "keyword_filters").await else {
            return;
        };
        filters_on(&t.backends, i == 0).await;
    }
}

/// ann's home timeline: each post id, with the filters that warn of it.
async fn home(reads: &Reads) -> Vec<(u64, Vec<u64>)> {
    let (page, _) = reads
        .timeline(&Caller::Trusted, "ann", Some(50), None)
        .await
        .unwrap();
    let warned =
        |i: &socialite_core::model::FeedItem| i.filtered.iter().map(|h| h.filter).collect();
    let mut out: Vec<(u64, Vec<u64>)> = page
        .items
        .iter()
        .map(|i| (i.post.id.0, warned(i)))
        .collect();
    out.sort();
    out
}

async fn mentions(reads: &Reads) -> Vec<u64> {
    let page = reads
        .mentions(&Caller::Trusted, "ann", Some(50), None)
        .await
        .unwrap();
    page.items.iter().map(|i| i.post.id.0).collect()
}

fn words(phrases: &[(&str, bool)]) -> Option<Vec<Phrase>> {
    Some(
        phrases
            .iter()
            .map(|(t, w)| Phrase {
                text: t.to_string(),
                whole_word: *w,
            })
            .collect(),
    )
}

async fn filters_on(b: &Backends, limits: bool) {
    let (c, g) = (&b.content, &b.graph);
    let reads = Reads::new(b.stores());
    for name in ["ann", "rob", "cat"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    for followee in ["rob", "cat"] {
        g.change_edge(&edge("ann", followee, EdgeOp::Follow))
            .await
            .unwrap();
    }
    home(&reads).await; // ann's timeline exists before the posts arrive
    c.create_post(post(10, "rob", "Big SPOILER ahead"))
        .await
        .unwrap();
    c.create_post(post(20, "rob", "spoilers everywhere"))
        .await
        .unwrap();
    c.create_post(post(30, "cat", "the weather is nice"))
        .await
        .unwrap();
    let mention = Post {
        mentions: vec![u("ann")],
        ..post(40, "cat", "@ann a spoiler for you")
    };
    c.create_post(mention).await.unwrap();
    c.create_post(post(50, "ann", "my own spoiler"))
        .await
        .unwrap();
    let events = drain_outbox(b).await;
    fanout::apply(&b.stores(), &FollowerIndex::default(), &events)
        .await
        .unwrap();
    let all = home(&reads).await;
    assert!(all.iter().all(|(_, w)| w.is_empty()));
    let ids: Vec<u64> = all.iter().map(|(p, _)| *p).collect();
    assert!(ids.contains(&10) && ids.contains(&40), "{ids:?}");
    assert_eq!(mentions(&reads).await, [40]);

    // A warning, whole word: "spoilers" is another word; ann's own post
    // is never filtered.
    let warn = FilterChange {
        phrases: words(&[("spoiler", true)]),
        ..FilterChange::default()
    };
    let f = c.put_filter(&u("ann"), None, &warn).await.unwrap();
    assert_eq!((f.id, f.action), (1, FilterAction::Warn));
    let expect = |hidden: &[u64], warned: &[u64]| {
        let hidden = hidden.to_vec();
        let warned = warned.to_vec();
        ids.iter()
            .filter(|p| !hidden.contains(p))
            .map(|p| (*p, if warned.contains(p) { vec![1] } else { vec![] }))
            .collect::<Vec<_>>()
    };
    assert_eq!(home(&reads).await, expect(&[], &[10, 40]));

    // Hide: out of home and the mentions, at the next read.
    let hide = FilterChange {
        action: Some(FilterAction::Hide),
        ..FilterChange::default()
    };
    c.put_filter(&u("ann"), Some(1), &hide).await.unwrap();
    assert_eq!(home(&reads).await, expect(&[10, 40], &[]));
    assert!(mentions(&reads).await.is_empty());

    // Only in lists: home and the mentions show them again.
    let lists_only = FilterChange {
        contexts: Some(vec![FilterContext::Lists]),
        ..FilterChange::default()
    };
    c.put_filter(&u("ann"), Some(1), &lists_only).await.unwrap();
    assert_eq!(home(&reads).await, expect(&[], &[]));
    assert_eq!(mentions(&reads).await, [40]);

    // An expired filter applies nowhere (one made a minute ago, for a second).
    let weather = Write::PutFilter {
        user: u("ann"),
        id: None,
        change: FilterChange {
            phrases: words(&[("WEATHER", false)]),
            action: Some(FilterAction::Hide),
            expires_in_s: Some(Some(1)),
            ..FilterChange::default()
        },
        at_ms: socialite_core::ids::now_ms() - 60_000,
    };
    let expired = c.transact(weather).await.unwrap().filter().unwrap();
    assert_eq!(expired.id, 2);
    assert_eq!(home(&reads).await, expect(&[], &[]));
    let no_expiry = FilterChange {
        expires_in_s: Some(None),
        ..FilterChange::default()
    };
    c.put_filter(&u("ann"), Some(2), &no_expiry).await.unwrap();
    assert_eq!(home(&reads).await, expect(&[30], &[]));

    // Deleted: gone from every read; a second deletion changes nothing.
    assert!(c.remove_filter(&u("ann"), 2).await.unwrap());
    assert!(!c.remove_filter(&u("ann"), 2).await.unwrap());
    assert_eq!(home(&reads).await, expect(&[], &[]));
    let missing = c.put_filter(&u("ann"), Some(2), &hide).await.unwrap_err();
    assert_eq!(missing.code(), "filter_not_found");
    let listed = c.filters(&u("ann")).await.unwrap().unwrap();
    assert_eq!(listed.filters.len(), 1);
    assert_eq!(listed.next_id, 3, "an id is never given twice");

    // Each change is on the log; replayed, a change restores the filter.
    let logged = drain_outbox(b).await;
    let puts: Vec<&Event> = logged
        .iter()
        .filter(|e| matches!(e, Event::FilterPut { .. }))
        .collect();
    assert_eq!(puts.len(), 5);
    let removed = Event::FilterRemoved {
        user: u("ann"),
        filter: 2,
    };
    assert!(logged.contains(&removed));
    let replayed = puts[0].clone();
    c.transact(Write::Replay(replayed)).await.unwrap();
    assert_eq!(
        home(&reads).await,
        expect(&[], &[10, 40]),
        "filter 1 as first made"
    );
    let refused = c.put_filter(&u("nobody"), None, &warn).await.unwrap_err();
    assert_eq!(refused.code(), "user_not_found");

    if limits {
        for _ in 1..socialite_core::filters::MAX_FILTERS {
            c.put_filter(&u("ann"), None, &warn).await.unwrap();
        }
        let full = c.put_filter(&u("ann"), None, &warn).await.unwrap_err();
        assert_eq!(full.code(), "too_many_filters");
    }
}
