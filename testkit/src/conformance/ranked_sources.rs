//! Where a ranked order reads from: the window (nothing older, however
//! small the cache) and a list's timeline (its own accounts, its own
//! snapshot, catch-up from `since`).

use super::ranked::{at, page};
use super::*;
use socialite_core::ids::now_ms;
use socialite_core::reads::ranked::{Order, Ranking};
use socialite_core::reads::Reads;
use std::collections::HashSet;

/// A ranked order's candidates are what the latest order shows inside the
/// window, and nothing older: the cached entries below it are left out,
/// and the merge below a small cache stops at it.
pub async fn ranked_window(open: Opener) {
    let small = FeedConfig {
        cache_size: 5,
        ..FeedConfig::default()
    };
    let Some(t) = open(small, "ranked-window").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    let start = now_ms() - 2 * 3_600_000;
    for name in ["rd", "old", "new"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    for name in ["old", "new"] {
        g.change_edge(&edge("rd", name, EdgeOp::Follow))
            .await
            .unwrap();
    }
    // One account posts each minute of the first hour, the other each
    // minute from the hundredth on.
    let mut inside = HashSet::new();
    for m in 0..60 {
        c.create_post(post(at(start, m).0, "old", "early"))
            .await
            .unwrap();
        if m > 50 {
            inside.insert(at(start, m));
        }
    }
    for m in 100..110 {
        c.create_post(post(at(start, m).0, "new", "late"))
            .await
            .unwrap();
        inside.insert(at(start, m));
    }
    drain_outbox(b).await;
    // The window reaches back to minute 50 and a half.
    let windowed = Ranking {
        deadline: Duration::from_secs(60),
        window: Duration::from_secs(69 * 60 + 30),
        ..Ranking::default()
    };
    let reads = Reads::with_ranking(b.stores(), windowed);
    for order in [Order::Balanced, Order::CatchUp] {
        let mut shown = HashSet::new();
        let mut cursor = None;
        loop {
            let p = page(
                &reads,
                order,
                7,
                cursor.as_deref(),
                Some(&at(start, 0).to_string()),
            )
            .await;
            assert!(!p.fallback, "{order:?}");
            for i in &p.items {
                if order == Order::Balanced {
                    assert!(shown.insert(i.item.post.id), "{order:?}: twice");
                } else {
                    shown.insert(i.item.post.id);
                }
            }
            cursor = p.next_cursor;
            if cursor.is_none() {
                break;
            }
        }
        match order {
            Order::Balanced => assert_eq!(shown, inside, "balanced"),
            // Catch-up: each author's best post of the window.
            _ => {
                assert_eq!(shown.len(), 2, "{shown:?}");
                assert!(shown.is_subset(&inside), "{shown:?}");
            }
        }
    }
}

/// A list's timeline in a ranked order: only the list's accounts, each
/// post once, its own snapshot (a home cursor does not page it), and
/// catch-up from `since` (a list has no marker; without `since` it is
/// refused).
pub async fn ranked_lists(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "ranked-lists").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    let start = now_ms() - 3_600_000;
    for name in ["rd", "loud", "pal", "out"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    g.change_edge(&filed("rd", "loud", &["close"]))
        .await
        .unwrap();
    g.change_edge(&filed("rd", "pal", &["close"]))
        .await
        .unwrap();
    g.change_edge(&edge("rd", "out", EdgeOp::Follow))
        .await
        .unwrap();
    let mut listed = HashSet::new();
    for m in 0..20 {
        c.create_post(post(at(start, m).0, "loud", "again"))
            .await
            .unwrap();
        listed.insert(at(start, m));
    }
    for m in [25, 30] {
        c.create_post(post(at(start, m).0, "pal", "hi"))
            .await
            .unwrap();
        listed.insert(at(start, m));
    }
    for m in 0..10 {
        c.create_post(post(at(start, 40 + m).0, "out", "elsewhere"))
            .await
            .unwrap();
    }
    drain_outbox(b).await;
    let patient = Ranking {
        deadline: Duration::from_secs(60),
        ..Ranking::default()
    };
    let reads = Reads::with_ranking(b.stores(), patient);
    let all = &Caller::Trusted;
    let list_page = |order, cursor: Option<String>, since: Option<String>| {
        let reads = &reads;
        async move {
            reads
                .ranked_timeline(
                    all,
                    "rd",
                    Some("close"),
                    order,
                    Some(8),
                    cursor.as_deref(),
                    since.as_deref(),
                )
                .await
        }
    };
    // Balanced: the list's 22 posts, each once, the rare poster on the
    // first page.
    let first = list_page(Order::Balanced, None, None).await.unwrap();
    assert!(!first.fallback);
    assert!(first
        .items
        .iter()
        .any(|i| i.item.post.author.as_str() == "pal"));
    let mut shown = HashSet::new();
    let mut page = first.clone();
    loop {
        for i in &page.items {
            assert!(shown.insert(i.item.post.id), "twice");
        }
        let Some(next) = page.next_cursor.clone() else {
            break;
        };
        page = list_page(Order::Balanced, Some(next), None).await.unwrap();
    }
    assert_eq!(shown, listed);
    // The list's cursor is the list's: the home timeline refuses it.
    let cursor = first.next_cursor.clone().unwrap();
    let home = reads
        .ranked_timeline(
            all,
            "rd",
            None,
            Order::Balanced,
            Some(8),
            Some(&cursor),
            None,
        )
        .await;
    assert_eq!(home.unwrap_err().code(), "cursor_expired");
    // Catch-up needs `since`; with it, each author once.
    let refused = list_page(Order::CatchUp, None, None).await;
    assert_eq!(refused.unwrap_err().code(), "invalid_query");
    let since = Some(at(start, 10).to_string());
    let caught = list_page(Order::CatchUp, None, since).await.unwrap();
    let authors: Vec<&str> = caught
        .items
        .iter()
        .map(|i| i.item.post.author.as_str())
        .collect();
    assert_eq!(authors.len(), 2, "{authors:?}");
    assert!(caught.items.iter().all(|i| i.item.position > at(start, 10)));
    // Later pages follow the cursor alone.
    let since = at(start, 10).to_string();
    let one = reads
        .ranked_timeline(
            all,
            "rd",
            Some("close"),
            Order::CatchUp,
            Some(1),
            None,
            Some(&since),
        )
        .await
        .unwrap();
    let cursor = one.next_cursor.clone().expect("a second author");
    let two = list_page(Order::CatchUp, Some(cursor), None).await.unwrap();
    assert_eq!(two.items.len(), 1);
    assert_ne!(two.items[0].item.post.author, one.items[0].item.post.author);
    // A list that does not exist.
    let missing = reads
        .ranked_timeline(all, "rd", Some("nope"), Order::Balanced, None, None, None)
        .await;
    assert_eq!(missing.unwrap_err().code(), "list_not_found");
}
