//! Muted threads: muting through any post of a thread mutes its first
//! post; replies, likes, reposts and mentions in it then notify the muter
//! no more (notices made before stay), while other threads still do;
//! unmuting lets them notify again; listed in id order, carried by an
//! export, refused through a post that is not stored.

use super::export::exported;
use super::*;
use socialite_core::feed::notify;
use socialite_core::model::PostRef;
use socialite_core::reads::Reads;
use socialite_domain::interactions::likes::LikeChange;
use socialite_domain::interactions::reposts::RepostChange;
use socialite_domain::notifications::notified::NoticeKind;

pub async fn thread_mutes(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "thread_mutes").await else {
        return;
    };
    thread_mutes_on(&t.backends).await;
}

/// Applies what the outbox queued since to notifications, as a worker would.
async fn apply(b: &Backends) {
    let events = drain_outbox(b).await;
    notify::apply(&b.stores(), &events).await.unwrap();
}

/// ann's notifications: (kind, post, count) of each entry, newest first.
async fn told(reads: &Reads) -> Vec<(NoticeKind, u64, u64)> {
    let page = reads
        .notifications(&Caller::Trusted, "ann", Some(50), None)
        .await
        .unwrap();
    let about = page
        .items
        .iter()
        .filter_map(|n| Some((n.kind, n.post?.0, n.count)));
    about.collect()
}

fn reply(id: u64, author: &str, to: (u64, &str), mentions: &[&str]) -> Post {
    Post {
        reply_to: Some(PostRef {
            id: PostId(to.0),
            author: u(to.1),
        }),
        mentions: mentions.iter().map(|m| u(m)).collect(),
        ..post(id, author, "re")
    }
}

fn like(user: &str, post: u64, like: bool) -> LikeChange {
    LikeChange {
        user: u(user),
        post: PostId(post),
        like,
    }
}

async fn thread_mutes_on(b: &Backends) {
    let c = &b.content;
    let reads = Reads::new(b.stores());
    for name in ["ann", "rob", "cat"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    // ann's thread (10, answered by rob's 20, answered by ann's 30), and
    // another post of hers (60).
    c.create_post(post(10, "ann", "start")).await.unwrap();
    c.create_post(reply(20, "rob", (10, "ann"), &[]))
        .await
        .unwrap();
    c.create_post(reply(30, "ann", (20, "rob"), &[]))
        .await
        .unwrap();
    c.create_post(post(60, "ann", "other")).await.unwrap();
    apply(b).await;
    assert_eq!(told(&reads).await, [(NoticeKind::Reply, 10, 1)]);

    // Muted through a reply deep in it: the thread is its first post.
    let none = c
        .mute_thread(&u("ann"), PostId(99), true)
        .await
        .unwrap_err();
    assert_eq!(none.code(), "post_not_found");
    assert_eq!(
        c.mute_thread(&u("ann"), PostId(30), true).await.unwrap(),
        (true, PostId(10))
    );
    assert_eq!(
        c.mute_thread(&u("ann"), PostId(20), true).await.unwrap(),
        (false, PostId(10))
    );
    assert_eq!(
        c.muted_threads(&u("ann"), None, 10).await.unwrap(),
        [PostId(10)]
    );
    assert!(exported(b).await.contains(&"thread_mute ann 10".to_owned()));

    // Nothing in the thread notifies her; the other post still does.
    c.create_post(reply(40, "cat", (30, "ann"), &["ann"]))
        .await
        .unwrap();
    c.change_like(&like("cat", 10, true)).await.unwrap();
    c.change_like(&like("cat", 30, true)).await.unwrap();
    let repost = |post, repost| RepostChange {
        user: u("cat"),
        post: PostId(post),
        repost,
    };
    c.change_repost(&repost(10, true), PostId(50))
        .await
        .unwrap();
    c.change_like(&like("cat", 60, true)).await.unwrap();
    apply(b).await;
    assert_eq!(
        told(&reads).await,
        [(NoticeKind::Like, 60, 1), (NoticeKind::Reply, 10, 1)],
        "the reply told before the mute stays"
    );

    // Unmuted (by any post of it, or by its first post once gone): it
    // notifies again.
    assert_eq!(
        c.mute_thread(&u("ann"), PostId(20), false).await.unwrap(),
        (true, PostId(10))
    );
    assert!(c
        .muted_threads(&u("ann"), None, 10)
        .await
        .unwrap()
        .is_empty());
    c.change_like(&like("rob", 30, true)).await.unwrap();
    apply(b).await;
    // (Entries of one millisecond order by a hash: looked for, not placed.)
    assert!(told(&reads).await.contains(&(NoticeKind::Like, 30, 1)));
    c.mute_thread(&u("ann"), PostId(10), true).await.unwrap();
    c.delete_post(PostId(10)).await.unwrap();
    c.change_like(&like("cat", 30, false)).await.unwrap();
    c.change_like(&like("cat", 30, true)).await.unwrap();
    apply(b).await;
    let likes_of_30 = told(&reads).await.into_iter().find(|t| t.1 == 30);
    assert_eq!(
        likes_of_30,
        Some((NoticeKind::Like, 30, 1)),
        "still muted: the chain ends at 10's id"
    );
    let gone = c.mute_thread(&u("ann"), PostId(10), false).await.unwrap();
    assert_eq!(gone, (true, PostId(10)));
}
