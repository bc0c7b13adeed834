//! An import and a replay are one planner in two modes: they differ only
//! where `socialite_domain::transfer::mode` decides, each as it says (a
//! restore takes what a store held, a replay makes a log's writes again).
//! The differences other tests show (a block, a user or a post not held, a
//! post id held, a limit, the clock on import) are not repeated here.

use super::likes::export;
use super::*;
use socialite_core::ports::Standing;
use socialite_domain::ids::now_ms;
use socialite_domain::interactions::reposts::RepostChange;
use socialite_domain::model::notice::NoticeKind;
use socialite_domain::model::PostRef;
use socialite_domain::transfer::admit::Caps;
use socialite_domain::transfer::record::Record;

fn reply(id: u64, author: &str, to: u64, to_author: &str) -> Post {
    let mut p = post(id, author, "yes");
    p.reply_to = Some(PostRef {
        id: PostId(to),
        author: u(to_author),
    });
    p
}

fn repost(id: u64, user: &str, of: u64, author: &str) -> Post {
    let original = PostRef {
        id: PostId(of),
        author: u(author),
    };
    Post::repost(PostId(id), u(user), original)
}

async fn standing(b: &Backends, user: &str) -> u64 {
    let held = export(b).await.into_iter().find_map(|r| match r {
        Record::Account { id, standing } if id.as_str() == user => Some(standing),
        _ => None,
    });
    held.map_or(0, |s| s.tokens_after_ms)
}

/// Who told `user` they follow them.
pub(crate) async fn followers_told(b: &Backends, user: &str) -> Vec<String> {
    let groups = b.content.notice_groups(&u(user), None, 10).await.unwrap();
    let follows = groups.iter().filter(|g| g.group.kind == NoticeKind::Follow);
    follows
        .flat_map(|g| g.actors.iter().map(|(_, a)| a.as_str().to_owned()))
        .collect()
}

pub async fn transfer_modes(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "transfer_modes").await else {
        return;
    };
    let (b, c) = (&t.backends, &t.backends.content);
    let caps = Caps::default();
    let import = |records: Vec<Record>, caps: Caps| async move {
        b.transfer.import(&records, &caps).await.map(|n| n > 0)
    };
    for name in ["ann", "bo", "cy", "dee"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    c.create_post(post(10, "ann", "hello")).await.unwrap();
    for (user, item) in [("dee", 100), ("cy", 110)] {
        let change = RepostChange {
            user: u(user),
            post: PostId(10),
            repost: true,
        };
        c.change_repost(&change, PostId(item)).await.unwrap();
    }
    drain_outbox(b).await;

    // A replay checks the clock (a restore's records are admitted first).
    let ahead = post(PostId::first_at(now_ms() + 3_600_000).0, "ann", "soon");
    let e = b.transfer.replay(&Event::post_created(ahead)).await;
    assert_eq!(e.unwrap_err().code(), "time_ahead");

    // A put of the profile held changes nothing, either way.
    let same = Record::User {
        id: u("ann"),
        profile: None,
    };
    assert!(!import(vec![same], caps).await.unwrap());
    let same = Event::UserPut {
        user: u("ann"),
        profile: None,
    };
    assert!(!b.transfer.replay(&same).await.unwrap());

    // A standing: merged on import (a revocation held stays), set on replay.
    let at = |tokens_after_ms| Standing {
        tokens_after_ms,
        suspended: false,
    };
    let account = |ms| Record::Account {
        id: u("bo"),
        standing: at(ms),
    };
    assert!(import(vec![account(2000)], caps).await.unwrap());
    assert!(!import(vec![account(1000)], caps).await.unwrap());
    assert_eq!(standing(b, "bo").await, 2000);
    let set = Event::StandingSet {
        user: u("bo"),
        standing: at(1000),
        was_suspended: false,
    };
    assert!(b.transfer.replay(&set).await.unwrap());
    assert_eq!(standing(b, "bo").await, 1000);

    // A follow: the deployment's cap on import, the source's (checked
    // there) on replay; its notice made on import, by fanout on replay.
    let follow = |follower: &str| Record::Follow {
        follower: u(follower),
        followee: u("ann"),
        at_ms: 1_700_000_000_000,
        lists: vec![],
    };
    assert!(import(vec![follow("bo")], caps).await.unwrap());
    let capped = Caps { max_following: 1 };
    g_follow(b, "cy", "bo").await;
    let e = import(vec![follow("cy")], capped).await.unwrap_err();
    assert_eq!(e.code(), "too_many_following");
    let followed = Event::Followed {
        follower: u("cy"),
        followee: u("ann"),
        lists: vec![],
        at_ms: 1_700_000_000_000,
    };
    assert!(b.transfer.replay(&followed).await.unwrap());
    assert_eq!(followers_told(b, "ann").await, ["bo"]);

    // A block of an id whose account is gone stands on import only.
    let to_gone = Record::Relation {
        user: u("ann"),
        relation: Relation::Block,
        target: u("zed"),
        at_ms: None,
    };
    assert!(import(vec![to_gone], caps).await.unwrap());
    let blocked = Event::Blocked {
        user: u("bo"),
        target: u("zed"),
    };
    let e = b.transfer.replay(&blocked).await.unwrap_err();
    assert_eq!(e.code(), "user_not_found");

    // A reply whose post is not held: on replay it stands; on import only
    // when the stream marks the post gone.
    let orphan = reply(120, "bo", 5, "ann");
    assert!(b
        .transfer
        .replay(&Event::post_created(orphan))
        .await
        .unwrap());
    let e = import(vec![Record::post(reply(121, "bo", 6, "ann"))], caps).await;
    assert_eq!(e.unwrap_err().code(), "post_not_found");
    let gone = Record::Post {
        post: reply(121, "bo", 6, "ann"),
        answered_gone: true,
    };
    assert!(import(vec![gone], caps).await.unwrap());
    let held = c.get_posts(&[PostId(120), PostId(121)]).await.unwrap();
    assert_eq!(held.len(), 2, "both stand");

    // A reply naming a repost's item answers its original on replay, as
    // the write does; an import refuses it, and a reply naming the wrong
    // author.
    let to_item = reply(130, "bo", 100, "dee");
    assert!(b
        .transfer
        .replay(&Event::post_created(to_item))
        .await
        .unwrap());
    let stored = c.get_posts(&[PostId(130)]).await.unwrap().pop().unwrap();
    assert_eq!(
        stored.reply_to.map(|r| (r.id.0, r.author)),
        Some((10, u("ann")))
    );
    for wrong in [reply(131, "bo", 100, "dee"), reply(131, "bo", 10, "cy")] {
        let e = import(vec![Record::post(wrong)], caps).await.unwrap_err();
        assert_eq!(e.code(), "invalid_reply");
    }

    // A second repost of one post by one user, as another item: nothing on
    // replay (a repost taken back and made again), refused on import.
    let again = repost(141, "cy", 10, "ann");
    assert!(!b
        .transfer
        .replay(&Event::post_created(again))
        .await
        .unwrap());
    let e = import(vec![Record::post(repost(140, "cy", 10, "ann"))], caps).await;
    assert_eq!(e.unwrap_err().code(), "already_reposted");
    let items = c.get_posts(&[PostId(140), PostId(141)]).await.unwrap();
    assert!(items.is_empty(), "{items:?}");
}

async fn g_follow(b: &Backends, follower: &str, followee: &str) {
    let change = edge(follower, followee, EdgeOp::Follow);
    b.graph.change_edge(&change).await.unwrap();
}
