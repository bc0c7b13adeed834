//! Notifications: made once from the log's events, grouped by kind, post
//! and day with exact counts and the newest actors, taken back by undoing
//! the act, paged newest first, without what the reader hides, counted
//! unread against a marker, and gone with a deleted actor or recipient.

use super::*;
use socialite_core::feed::notify;
use socialite_core::notifications::Notification;
use socialite_core::reads::Reads;
use socialite_domain::interactions::likes::LikeChange;
use socialite_domain::interactions::reposts::RepostChange;
use socialite_domain::notifications::notified::NoticeKind;

fn like(user: &str, post: u64, like: bool) -> LikeChange {
    LikeChange {
        user: u(user),
        post: PostId(post),
        like,
    }
}

/// Applies what the outbox queued to notifications, as a worker would.
async fn apply(b: &Backends) -> usize {
    let events = outbox_events(b).await;
    notify::apply(&b.stores(), &events).await.unwrap()
}

/// The user's notifications: (kind, post, actors, count) of each entry.
async fn told(reads: &Reads, user: &str) -> Vec<(NoticeKind, Option<u64>, Vec<String>, u64)> {
    let page = reads
        .notifications(&Caller::Trusted, user, Some(50), None)
        .await
        .unwrap();
    page.items.iter().map(described).collect()
}

fn described(n: &Notification) -> (NoticeKind, Option<u64>, Vec<String>, u64) {
    let actors = n.actors.iter().map(|a| a.to_string()).collect();
    (n.kind, n.post.map(|p| p.0), actors, n.count)
}

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

pub async fn notifications(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "notifications").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    let reads = Reads::new(b.stores());
    let fans = ["f1", "f2", "f3", "f4", "f5", "f6", "f7"];
    for name in ["ann", "bo"].iter().chain(&fans) {
        c.put_user(&u(name), None).await.unwrap();
    }
    c.create_post(post(10, "ann", "x")).await.unwrap();
    apply(b).await;
    // Seven like ann's post, bo follows her, f1 reposts and replies, f2
    // mentions her: each act once, however often the log replays it.
    // Acts of one millisecond order by a hash of theirs: a test that
    // names the newest makes each in a millisecond of its own.
    let tick = || tokio::time::sleep(Duration::from_millis(2));
    for f in fans {
        c.change_like(&like(f, 10, true)).await.unwrap();
        tick().await;
    }
    c.change_like(&like("ann", 10, true)).await.unwrap();
    g.change_edge(&edge("bo", "ann", EdgeOp::Follow))
        .await
        .unwrap();
    c.change_repost(
        &RepostChange {
            user: u("f1"),
            post: PostId(10),
            repost: true,
        },
        PostId(20),
    )
    .await
    .unwrap();
    let reply = Post {
        reply_to: Some(socialite_core::model::PostRef {
            id: PostId(10),
            author: u("ann"),
        }),
        ..post(30, "f1", "re @ann")
    };
    c.create_post(Post {
        mentions: vec![u("ann")],
        ..reply
    })
    .await
    .unwrap();
    c.create_post(mentioning(40, "f2", &["ann"])).await.unwrap();
    let events = outbox_events(b).await;
    let made = notify::apply(&b.stores(), &events).await.unwrap();
    assert_eq!(made, 11, "7 likes, a follow, a repost, a reply, a mention");
    assert_eq!(
        notify::apply(&b.stores(), &events).await.unwrap(),
        0,
        "a replay"
    );
    let all = told(&reads, "ann").await;
    assert_eq!(
        all,
        [
            (NoticeKind::Follow, None, names(&["bo"]), 1),
            (NoticeKind::Like, Some(10), names(&["f7", "f6", "f5", "f4", "f3"]), 7),
            (NoticeKind::Mention, Some(40), names(&["f2"]), 1),
            (NoticeKind::Reply, Some(10), names(&["f1"]), 1),
            (NoticeKind::Repost, Some(10), names(&["f1"]), 1),
        ],
        "newest first (the test's posts are old); one's own like tells no one; a reply naming ann tells her once"
    );

    // Paged by the entries' places.
    let first = reads
        .notifications(&Caller::Trusted, "ann", Some(2), None)
        .await
        .unwrap();
    let cursor = first.next_cursor.map(|c| c.to_string());
    let rest = reads
        .notifications(&Caller::Trusted, "ann", Some(10), cursor.as_deref())
        .await;
    let paged: Vec<_> = first
        .items
        .iter()
        .chain(&rest.unwrap().items)
        .map(described)
        .collect();
    assert_eq!(paged, all);

    // Unread: all of them, then none after the newest is marked read.
    assert_eq!(
        reads
            .unread_notifications(&Caller::Trusted, "ann")
            .await
            .unwrap(),
        (5, false)
    );
    let newest = first.items[0].latest;
    let marker = socialite_domain::feed::marker::marker_now(
        socialite_domain::feed::markers::MarkerTimeline::Notifications,
        newest,
    );
    c.set_marker(&u("ann"), marker, false).await.unwrap();
    assert_eq!(
        reads
            .unread_notifications(&Caller::Trusted, "ann")
            .await
            .unwrap(),
        (0, false)
    );

    // Undone acts take their notices back; the entry names who is left.
    c.change_like(&like("f7", 10, false)).await.unwrap();
    c.delete_post(PostId(40)).await.unwrap();
    g.change_edge(&edge("bo", "ann", EdgeOp::Unfollow))
        .await
        .unwrap();
    apply(b).await;
    let now = told(&reads, "ann").await;
    assert_eq!(now.len(), 3, "{now:?}");
    assert_eq!(
        now[0],
        (
            NoticeKind::Like,
            Some(10),
            names(&["f6", "f5", "f4", "f3", "f2"]),
            6
        )
    );

    // What ann mutes or blocks is left out of the actors and the counts.
    let mute = RelationChange::new(u("ann"), u("f6"), Relation::Mute, true).unwrap();
    g.change_relation(&mute).await.unwrap();
    let block = RelationChange::new(u("f1"), u("ann"), Relation::Block, true).unwrap();
    g.change_relation(&block).await.unwrap();
    let hidden = told(&reads, "ann").await;
    assert_eq!(
        hidden,
        [(
            NoticeKind::Like,
            Some(10),
            names(&["f5", "f4", "f3", "f2"]),
            4
        )]
    );

    // A deleted actor's notices go; so do a deleted recipient's.
    assert!(c.delete_user(&u("f5")).await.unwrap());
    apply(b).await;
    let after = told(&reads, "ann").await;
    assert_eq!(
        after,
        [(NoticeKind::Like, Some(10), names(&["f4", "f3", "f2"]), 3)]
    );
    assert!(c.delete_user(&u("ann")).await.unwrap());
    apply(b).await;
    c.put_user(&u("ann"), None).await.unwrap();
    assert!(
        told(&reads, "ann").await.is_empty(),
        "a new account under the id is told nothing"
    );
}
