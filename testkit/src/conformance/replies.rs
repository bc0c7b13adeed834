//! Replies: a reply answers a stored post (a repost's original), counted
//! exactly on it, refused across a block; the replies to a post page
//! oldest first; deleting a reply, or its author, lowers the count; a
//! reply reaches a follower's home timeline only if the follower also
//! follows the author answered; a replay and an import count nothing twice.

use super::*;
use socialite_core::model::PostRef;
use socialite_domain::interactions::reposts::RepostChange;
use socialite_domain::transfer::record::Record;

fn reply(id: u64, author: &str, to: u64) -> Post {
    Post {
        reply_to: Some(PostRef {
            id: PostId(to),
            // The store answers with the author it holds.
            author: u(author),
        }),
        ..post(id, author, "re")
    }
}

async fn replies_of(b: &Backends, post: u64) -> u64 {
    b.content.post_counts(&[PostId(post)]).await.unwrap()[0].replies
}

async fn home(b: &Backends, user: &str) -> Vec<u64> {
    let page = read_timeline(
        &b.stores(),
        &Feed::Home(u(user)),
        &Hidden::default(),
        None,
        50,
    )
    .await
    .unwrap();
    page.items.iter().map(|i| i.post.id.0).collect()
}

pub async fn replies(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "replies").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    let index = FollowerIndex::default();
    for name in ["ann", "bo", "cy", "dee"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    // cy follows bo only; dee follows bo and ann.
    for (f, t) in [("cy", "bo"), ("dee", "bo"), ("dee", "ann")] {
        g.change_edge(&edge(f, t, EdgeOp::Follow)).await.unwrap();
    }
    home(b, "cy").await;
    home(b, "dee").await;
    c.create_post(post(10, "ann", "question")).await.unwrap();

    // A reply answers the post by its stored author, and counts on it.
    let stored = c.create_post(reply(20, "bo", 10)).await.unwrap();
    let answered = stored
        .reply_to
        .as_ref()
        .map(|a| (a.id.0, a.author.as_str()));
    assert_eq!(answered, Some((10, "ann")));
    c.create_post(reply(30, "cy", 10)).await.unwrap();
    c.create_post(reply(40, "ann", 20)).await.unwrap();
    assert_eq!((replies_of(b, 10).await, replies_of(b, 20).await), (2, 1));
    let held = c.get_posts(&[PostId(20)]).await.unwrap().pop().unwrap();
    assert_eq!(held.reply_to.map(|a| a.id), Some(PostId(10)));
    // Replying to a repost answers its original.
    c.change_repost(
        &RepostChange {
            user: u("dee"),
            post: PostId(10),
            repost: true,
        },
        PostId(45),
    )
    .await
    .unwrap();
    let via = c.create_post(reply(50, "bo", 45)).await.unwrap();
    assert_eq!(via.reply_to.map(|a| a.id), Some(PostId(10)));
    assert_eq!(replies_of(b, 10).await, 3);

    // Refused: no such post, a block either way.
    let gone = c.create_post(reply(60, "bo", 99)).await.unwrap_err();
    assert_eq!(gone.code(), "post_not_found");
    let block = RelationChange::new(u("ann"), u("cy"), Relation::Block, true).unwrap();
    g.change_relation(&block).await.unwrap();
    let refused = c.create_post(reply(61, "cy", 10)).await.unwrap_err();
    assert_eq!(refused.code(), "blocked");
    assert_eq!(replies_of(b, 10).await, 3);

    // The replies to a post, oldest first, a page at a time.
    let all = c.replies_of(PostId(10), None, 10).await.unwrap();
    assert_eq!(all, [PostId(20), PostId(30), PostId(50)]);
    let first = c.replies_of(PostId(10), None, 1).await.unwrap();
    let rest = c
        .replies_of(PostId(10), first.last().copied(), 10)
        .await
        .unwrap();
    assert_eq!([first, rest].concat(), all);

    // bo's replies to ann reach dee (who follows both), not cy; ann's
    // reply to bo reaches dee too; cy sees her own. dee's repost placed
    // ann's post.
    fan_out(b, &index).await;
    assert_eq!(home(b, "dee").await, [50, 10, 40, 20]);
    assert_eq!(home(b, "cy").await, [30]);

    // Deleting a reply lowers the count; a replay of a reply held counts
    // nothing, one replayed across a block since is refused.
    let held = c.get_posts(&[PostId(20), PostId(30)]).await.unwrap();
    c.delete_post(PostId(30)).await.unwrap();
    assert_eq!(replies_of(b, 10).await, 2);
    let left = c.replies_of(PostId(10), None, 10).await.unwrap();
    assert_eq!(left, [PostId(20), PostId(50)]);
    let again = Event::post_created(held[0].clone());
    assert!(!b.transfer.replay(&again).await.unwrap());
    let refused = b
        .transfer
        .replay(&Event::post_created(held[1].clone()))
        .await;
    assert_eq!(refused.unwrap_err().code(), "blocked");
    assert_eq!(replies_of(b, 10).await, 2);

    // An export carries replies; importing them again changes nothing.
    let exported = super::likes::export(b).await;
    let answering: Vec<&Record> = exported
        .iter()
        .filter(|r| matches!(r, Record::Post { post: p, .. } if p.reply_to.is_some()))
        .collect();
    assert_eq!(answering.len(), 3);
    let again: Vec<Record> = answering.into_iter().cloned().collect();
    assert_eq!(
        b.transfer
            .import(&again, &Default::default())
            .await
            .unwrap(),
        0
    );
    assert_eq!(replies_of(b, 10).await, 2);

    // A deleted replier's replies go, and the counts follow; a reply
    // outlives the post it answers.
    assert!(c.delete_user(&u("bo")).await.unwrap());
    assert_eq!(replies_of(b, 10).await, 0);
    assert!(c.replies_of(PostId(10), None, 10).await.unwrap().is_empty());
    c.delete_post(PostId(20)).await.unwrap_or_default();
    let orphan = c.get_posts(&[PostId(40)]).await.unwrap().pop().unwrap();
    assert_eq!(orphan.reply_to.map(|a| a.id), Some(PostId(20)));
}
