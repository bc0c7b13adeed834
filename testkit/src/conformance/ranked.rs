//! The ranked orders of a home timeline, as every backend must serve them
//! (`socialite_core::reads::ranked`): latest unchanged; balanced shows no
//! muted or blocked author and no post twice, and a prolific author does
//! not bury the others; catch-up holds only what is newer than the
//! marker, each author once; paging over a snapshot neither repeats nor
//! skips while posts arrive; the same inputs give the same order; past the
//! deadline the page is served in latest order and says so.

use super::*;
use socialite_core::ids::now_ms;
use socialite_core::reads::ranked::{Order, RankedPage, Ranking};
use socialite_core::reads::Reads;
use socialite_domain::collections::KeepChange;
use socialite_domain::feed::marker::marker_now;
use socialite_domain::interactions::likes::LikeChange;
use socialite_domain::interactions::reposts::RepostChange;
use socialite_domain::model::marker::MarkerTimeline;
use std::collections::HashSet;

/// The post of minute `m` of the test's two hours (ids in time order,
/// within the ranked window).
pub(super) fn at(start: u64, m: u64) -> PostId {
    PostId::first_at(start + m * 60_000)
}

fn posts_of(page: &RankedPage) -> Vec<(PostId, String)> {
    page.items
        .iter()
        .map(|i| (i.item.post.id, i.item.post.author.as_str().to_owned()))
        .collect()
}

pub(super) async fn page(
    reads: &Reads,
    order: Order,
    limit: u64,
    cursor: Option<&str>,
    since: Option<&str>,
) -> RankedPage {
    let all = &Caller::Trusted;
    reads
        .ranked_timeline(all, "rd", None, order, Some(limit), cursor, since)
        .await
        .unwrap()
}

pub async fn ranked_orders(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "ranked").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    let start = now_ms() - 2 * 3_600_000;
    let friends: Vec<String> = (0..10).map(|i| format!("f{i}")).collect();
    let mut names = vec!["rd", "pro", "mu", "bl", "rp"];
    names.extend(friends.iter().map(String::as_str));
    for name in &names {
        c.put_user(&u(name), None).await.unwrap();
    }
    for name in names.iter().filter(|n| **n != "rd") {
        g.change_edge(&edge("rd", name, EdgeOp::Follow))
            .await
            .unwrap();
    }
    // Ten friends post twice each, early; the prolific account 40 times,
    // later; a muted and a blocked account between.
    let mut friend_posts = Vec::new();
    for (i, f) in friends.iter().enumerate() {
        for k in 0..2 {
            let id = at(start, 10 + i as u64 * 4 + k);
            c.create_post(post(id.0, f, "news")).await.unwrap();
            friend_posts.push(id);
        }
    }
    for m in 60..100 {
        c.create_post(post(at(start, m).0, "pro", "again"))
            .await
            .unwrap();
    }
    for (m, who) in [(50, "mu"), (51, "mu"), (52, "bl"), (53, "bl")] {
        c.create_post(post(at(start, m).0, who, "hidden"))
            .await
            .unwrap();
    }
    for (who, relation) in [("mu", Relation::Mute), ("bl", Relation::Block)] {
        let change = RelationChange::new(u("rd"), u(who), relation, true).unwrap();
        g.change_relation(&change).await.unwrap();
    }
    // f0's first post is reposted twice (it shows once); f9's second is
    // deleted; f3's first is liked by five.
    for (who, m) in [("rp", 102), ("pro", 103)] {
        let change = RepostChange {
            user: u(who),
            post: friend_posts[0],
            repost: true,
        };
        c.change_repost(&change, at(start, m)).await.unwrap();
    }
    c.delete_post(friend_posts[19]).await.unwrap();
    friend_posts.pop();
    for who in ["rp", "pro", "f1", "f2", "f4"] {
        let like = LikeChange {
            user: u(who),
            post: friend_posts[6],
            like: true,
        };
        c.change_like(&like).await.unwrap();
    }
    drain_outbox(b).await;
    // A deadline no test machine misses (the deadline's own test is below).
    let patient = Ranking {
        deadline: Duration::from_secs(60),
        ..Ranking::default()
    };
    let reads = Reads::with_ranking(b.stores(), patient);

    // Latest is the newest-first timeline, entry for entry.
    let all = &Caller::Trusted;
    let (newest, _) = reads.timeline(all, "rd", Some(50), None).await.unwrap();
    let latest = page(&reads, Order::Latest, 50, None, None).await;
    let latest_ids: Vec<PostId> = latest.items.iter().map(|i| i.item.position).collect();
    let newest_ids: Vec<PostId> = newest.items.iter().map(|i| i.position).collect();
    assert_eq!(latest_ids, newest_ids);
    assert!(!latest.fallback);

    // Balanced: nothing muted or blocked, each post once, and all 19 of
    // the friends' posts on the first page of 50 beside the prolific
    // account's 40, which holds at most three of its first ten.
    let balanced = page(&reads, Order::Balanced, 50, None, None).await;
    assert!(!balanced.fallback);
    let shown = posts_of(&balanced);
    assert_eq!(shown.len(), 50);
    assert!(
        shown.iter().all(|(_, a)| a != "mu" && a != "bl"),
        "{shown:?}"
    );
    let distinct: HashSet<PostId> = shown.iter().map(|(p, _)| *p).collect();
    assert_eq!(distinct.len(), shown.len(), "a post twice: {shown:?}");
    for p in &friend_posts {
        assert!(distinct.contains(p), "{p} buried: {shown:?}");
    }
    let top = shown[..10].iter().filter(|(_, a)| a == "pro").count();
    assert!(top <= 3, "{shown:?}");
    let liked = balanced
        .items
        .iter()
        .find(|i| i.item.post.id == friend_posts[6])
        .unwrap();
    assert!(liked.parts.engagement > 0.0);
    let reposted = balanced
        .items
        .iter()
        .find(|i| i.item.post.id == friend_posts[0])
        .unwrap();
    assert_eq!(reposted.item.reposts_seen, 2, "placed by both reposts");

    // The same inputs give the same order.
    let again = page(&reads, Order::Balanced, 50, None, None).await;
    assert_eq!(posts_of(&again), shown);

    // A priority of +2 lifts an account to the top, -2 lowers it; each
    // entry it placed says so. Cleared, the order is as before.
    let first_of = |page: &RankedPage, who: &str| {
        page.items
            .iter()
            .position(|i| i.item.post.author.as_str() == who)
            .unwrap()
    };
    let plain_at = first_of(&balanced, "f5");
    let level = |l| socialite_domain::graph::relations::Priority::new(l).unwrap();
    // The writes below are made on the ports: what the write gate does for
    // each (`Ingest`), the test does by hand, so that a first page kept
    // while nothing changed is not served across them.
    let written = || b.epoch.advance();
    assert!(g.set_priority(&u("rd"), &u("f5"), level(2)).await.unwrap());
    assert!(
        !g.set_priority(&u("rd"), &u("f5"), level(2)).await.unwrap(),
        "once"
    );
    written();
    let lifted = page(&reads, Order::Balanced, 50, None, None).await;
    assert_eq!(first_of(&lifted, "f5"), 0);
    assert_eq!(
        lifted.items[0].reason,
        socialite_domain::feed::rank::Reason::Priority
    );
    assert_eq!(lifted.items[0].parts.priority, 4.0);
    assert!(g.set_priority(&u("rd"), &u("f5"), level(-2)).await.unwrap());
    written();
    let lowered = page(&reads, Order::Balanced, 50, None, None).await;
    assert!(first_of(&lowered, "f5") > plain_at, "{plain_at}");
    let held = reads.feed_preferences(all, "rd").await.unwrap();
    assert_eq!(held, [(u("f5"), -2)], "one level per account");
    assert!(g.set_priority(&u("rd"), &u("f5"), level(0)).await.unwrap());
    written();
    assert!(reads.feed_preferences(all, "rd").await.unwrap().is_empty());
    assert_eq!(
        posts_of(&page(&reads, Order::Balanced, 50, None, None).await),
        shown
    );
    let own = g
        .set_priority(&u("rd"), &u("rd"), level(1))
        .await
        .unwrap_err();
    assert_eq!(own.code(), "cannot_prioritize_self");
    let events = drain_outbox(b).await;
    let levels: Vec<i8> = events
        .iter()
        .filter_map(|e| match e {
            Event::PrioritySet { level, .. } => Some(*level),
            _ => None,
        })
        .collect();
    assert_eq!(levels, [2, -2, 0]);

    // The reader's likes lift the author they like (affinity), and a store
    // gives them newest first from a post on.
    let (f8_first, f8_second) = (friend_posts[16], friend_posts[17]);
    for post in [f8_first, f8_second] {
        let like = LikeChange {
            user: u("rd"),
            post,
            like: true,
        };
        c.change_like(&like).await.unwrap();
    }
    written();
    assert_eq!(
        c.liked_since(&u("rd"), f8_first, 10).await.unwrap(),
        [f8_second, f8_first]
    );
    assert_eq!(
        c.liked_since(&u("rd"), f8_second, 10).await.unwrap(),
        [f8_second]
    );
    let fond = page(&reads, Order::Balanced, 50, None, None).await;
    let affinity = |who: &str| {
        fond.items
            .iter()
            .find(|i| i.item.post.author.as_str() == who)
            .unwrap()
            .parts
            .affinity
    };
    assert!(affinity("f8") > 0.0 && affinity("f1") == 0.0);
    for post in [f8_first, f8_second] {
        let unlike = LikeChange {
            user: u("rd"),
            post,
            like: false,
        };
        c.change_like(&unlike).await.unwrap();
    }
    written();
    drain_outbox(b).await;

    // "Show less like this": the post leaves the ranked order and lowers
    // its author (f4's other post falls below where it stood); taken back,
    // the order is as before.
    let less = |keep: bool| KeepChange {
        collection: socialite_core::reads::ranked::SHOWN_LESS,
        user: u("rd"),
        post: friend_posts[8],
        keep,
    };
    let f4_at = first_of(&balanced, "f4");
    assert!(c.change_kept(&less(true)).await.unwrap());
    written();
    let fewer = page(&reads, Order::Balanced, 50, None, None).await;
    let fewer_posts: Vec<PostId> = fewer.items.iter().map(|i| i.item.post.id).collect();
    assert!(!fewer_posts.contains(&friend_posts[8]));
    assert!(first_of(&fewer, "f4") > f4_at, "{f4_at}");
    assert!(c.change_kept(&less(false)).await.unwrap());
    written();
    assert_eq!(
        posts_of(&page(&reads, Order::Balanced, 50, None, None).await),
        shown
    );
    drain_outbox(b).await;

    // Paging holds while posts arrive: pages of 20 neither repeat nor
    // skip an entry of the order the first page ranked.
    let whole: HashSet<PostId> = posts_of(&page(&reads, Order::Balanced, 200, None, None).await)
        .into_iter()
        .map(|(p, _)| p)
        .collect();
    let mut paged = Vec::new();
    let mut next = page(&reads, Order::Balanced, 20, None, None).await;
    for n in 0.. {
        paged.extend(posts_of(&next).into_iter().map(|(p, _)| p));
        let post = post(at(start, 110 + n).0, "f5", "meanwhile");
        c.create_post(post).await.unwrap();
        let Some(cursor) = next.next_cursor.clone() else {
            break;
        };
        next = page(&reads, Order::Balanced, 20, Some(&cursor), None).await;
    }
    let once: HashSet<PostId> = paged.iter().copied().collect();
    assert_eq!(once.len(), paged.len(), "repeated: {paged:?}");
    assert_eq!(once, whole, "skipped or added");
    let bad = reads
        .ranked_timeline(
            all,
            "rd",
            None,
            Order::Balanced,
            None,
            Some("rffff.0"),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(bad.code(), "cursor_expired");
    let bad = reads
        .ranked_timeline(
            all,
            "rd",
            None,
            Order::Balanced,
            None,
            Some("nonsense"),
            None,
        )
        .await
        .unwrap_err();
    assert_eq!(bad.code(), "invalid_cursor");

    // Catch-up from the marker: only what came after it, each author
    // once, with the count of the rest.
    let marker = marker_now(MarkerTimeline::Home, at(start, 59));
    c.set_marker(&u("rd"), marker, false).await.unwrap();
    let caught = page(&reads, Order::CatchUp, 50, None, None).await;
    assert!(caught.items.iter().all(|i| i.item.position > at(start, 59)));
    let authors: Vec<String> = posts_of(&caught).into_iter().map(|(_, a)| a).collect();
    let distinct: HashSet<&String> = authors.iter().collect();
    assert_eq!(distinct.len(), authors.len(), "{authors:?}");
    assert!(authors.contains(&"pro".to_owned()) && authors.contains(&"f0".to_owned()));
    let pro = caught
        .items
        .iter()
        .find(|i| i.item.post.author.as_str() == "pro")
        .unwrap();
    assert_eq!(pro.more, 39);
    // `since` instead of the marker; a reader who has read everything
    // gets an empty catch-up.
    let newest_id = at(start, 200).to_string();
    let none = page(&reads, Order::CatchUp, 50, None, Some(&newest_id)).await;
    assert!(none.items.is_empty() && none.next_cursor.is_none());

    // Past the deadline: latest order, and it says so.
    let hurried = Reads::with_ranking(
        b.stores(),
        Ranking {
            deadline: Duration::ZERO,
            ..Ranking::default()
        },
    );
    let fell_back = page(&hurried, Order::Balanced, 50, None, None).await;
    assert!(fell_back.fallback);
    let (newest, _) = reads.timeline(all, "rd", Some(50), None).await.unwrap();
    let ids: Vec<PostId> = fell_back.items.iter().map(|i| i.item.position).collect();
    assert_eq!(
        ids,
        newest.items.iter().map(|i| i.position).collect::<Vec<_>>()
    );
}
