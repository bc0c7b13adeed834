//! Reads by name and likes of reposts, as every backend must give them: a
//! like of a repost's id likes its original (so a block with the
//! original's author refuses it); a repost whose original is deleted
//! answers no read by id and takes no like; an account on the other side
//! of a block reads to the viewer as one that does not exist (its profile,
//! lists and posts, a post of it by id, its thread), where a mute hides
//! nothing asked for by name.

use super::*;
use socialite_core::graph::Direction;
use socialite_core::reads::Reads;
use socialite_domain::interactions::likes::LikeChange;
use socialite_domain::interactions::reposts::RepostChange;

fn like(user: &str, post: u64, like: bool) -> LikeChange {
    LikeChange {
        user: u(user),
        post: PostId(post),
        like,
    }
}

async fn likes_of(b: &Backends, post: u64) -> u64 {
    b.content.post_counts(&[PostId(post)]).await.unwrap()[0].likes
}

/// The code a read failed with, or `ok`.
fn code<T>(r: socialite_core::error::Result<T>) -> &'static str {
    r.map_or_else(|e| e.code(), |_| "ok")
}

pub async fn reads_by_name(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "named").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    for name in ["ann", "bo", "cy", "dee"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    c.create_post(post(10, "ann", "x")).await.unwrap();
    c.create_post(post(20, "ann", "y")).await.unwrap();
    let repost = |post: u64, id: u64| {
        let change = RepostChange {
            user: u("bo"),
            post: PostId(post),
            repost: true,
        };
        async move { c.change_repost(&change, PostId(id)).await.unwrap() }
    };
    repost(10, 110).await;
    repost(20, 120).await;
    drain_outbox(b).await;

    // A like of a repost's id likes the original, and unlikes it the same
    // way; its event names the original and its author.
    assert!(c.change_like(&like("dee", 110, true)).await.unwrap());
    assert!(
        !c.change_like(&like("dee", 10, true)).await.unwrap(),
        "once"
    );
    assert_eq!((likes_of(b, 10).await, likes_of(b, 110).await), (1, 0));
    let liked = drain_outbox(b).await;
    assert!(
        matches!(&liked[..], [Event::Liked { post, author, .. }]
            if *post == PostId(10) && author.as_str() == "ann"),
        "{liked:?}"
    );
    assert!(c.change_like(&like("dee", 110, false)).await.unwrap());
    assert_eq!(likes_of(b, 10).await, 0);

    // A block with the original's author refuses a like through a repost.
    let block = RelationChange::new(u("ann"), u("cy"), Relation::Block, true).unwrap();
    g.change_relation(&block).await.unwrap();
    let refused = c.change_like(&like("cy", 120, true)).await.unwrap_err();
    assert_eq!(refused.code(), "blocked");
    assert_eq!(likes_of(b, 20).await, 0);

    // A deleted original: its repost answers no read by id, takes no like.
    let reads = Reads::new(b.stores());
    let all = &Caller::Trusted;
    assert_eq!(code(reads.post(all, "0000000000000078", None).await), "ok");
    c.delete_post(PostId(20)).await.unwrap();
    let gone = "0000000000000078"; // 120, bo's repost of ann's deleted post
    assert_eq!(code(reads.post(all, gone, None).await), "post_not_found");
    let counted = reads.post_with_counts(all, gone, None).await;
    assert_eq!(code(counted), "post_not_found");
    let likers = reads.likers(all, gone, None, None, None).await;
    assert_eq!(code(likers), "post_not_found");
    let thread = reads.thread(all, gone, None, None, None).await;
    assert_eq!(code(thread), "post_not_found");
    let refused = c.change_like(&like("dee", 120, true)).await.unwrap_err();
    assert_eq!(refused.code(), "post_not_found");
    let refused = c.change_like(&like("dee", 120, false)).await.unwrap_err();
    assert_eq!(refused.code(), "post_not_found");
    assert!(drain_outbox(b)
        .await
        .iter()
        .all(|e| !matches!(e, Event::Liked { .. })));

    // cy is blocked by ann: ann, her posts and bo's repost of one read to
    // cy as if they did not exist; to everyone else they stand.
    let ann_post = "000000000000000a";
    let bo_repost = "000000000000006e"; // 110
    let cy = Some("cy");
    for (viewer, want) in [(None, "ok"), (Some("dee"), "ok"), (cy, "post_not_found")] {
        for id in [ann_post, bo_repost] {
            assert_eq!(code(reads.post(all, id, viewer).await), want, "{id}");
            let thread = reads.thread(all, id, viewer, None, None).await;
            assert_eq!(code(thread), want, "thread of {id}");
            let likers = reads.likers(all, id, viewer, None, None).await;
            assert_eq!(code(likers), want, "likers of {id}");
        }
    }
    let hidden = "user_not_found";
    assert_eq!(code(reads.user(all, "ann", cy).await), hidden);
    assert_eq!(code(reads.user(all, "ann", Some("dee")).await), "ok");
    assert_eq!(code(reads.lists(all, "ann", cy).await), hidden);
    assert_eq!(
        code(reads.posts_by(all, "ann", cy, None, None).await),
        hidden
    );
    for d in [Direction::Followers, Direction::Following] {
        let page = reads.edges(all, "ann", cy, d, None, None).await;
        assert_eq!(code(page), hidden, "{d:?}");
    }
    // The blocker reads the blocked the same way.
    assert_eq!(code(reads.user(all, "cy", Some("ann")).await), hidden);
    // Several authors: those hidden add nothing; a repost of a hidden
    // author's post is left out of bo's posts too.
    let page = reads
        .posts_by_authors(all, &["ann", "bo"], cy, None, None)
        .await
        .unwrap();
    assert!(page.items.is_empty(), "{:?}", page.items);
    let page = reads.posts_by(all, "bo", cy, None, None).await.unwrap();
    assert!(page.items.is_empty(), "{:?}", page.items);
    let page = reads.posts_by(all, "bo", None, None, None).await.unwrap();
    assert_eq!(page.items.len(), 1, "the repost of the stored post");

    // A mute hides nothing asked for by name, the thread's post included.
    let mute = RelationChange::new(u("dee"), u("ann"), Relation::Mute, true).unwrap();
    g.change_relation(&mute).await.unwrap();
    let dee = Some("dee");
    assert_eq!(code(reads.post(all, ann_post, dee).await), "ok");
    assert_eq!(code(reads.user(all, "ann", dee).await), "ok");
    let thread = reads.thread(all, ann_post, dee, None, None).await.unwrap();
    assert_eq!(thread.post.id, PostId(10));
}
