//! Follow options: a followee's reposts hidden and all their replies shown
//! at the next read, entries already stored included, on every feed model;
//! `notify` tells the follower of each post and reply (not a repost) made
//! since, and a deleted post takes its alert back; options need the follow,
//! show in the reader's relations, and an unfollow clears them.

use super::*;
use socialite_core::model::PostRef;
use socialite_core::reads::Reads;
use socialite_domain::graph::relations::FollowOption;
use socialite_domain::interactions::reposts::RepostChange;
use socialite_domain::notifications::notified::NoticeKind;

pub async fn follow_options(open: Opener) {
    for t in each_model(open, "follow_options").await.unwrap_or_default() {
        follow_options_on(&t.backends).await;
    }
}

async fn home(reads: &Reads) -> Vec<u64> {
    home_ids(reads, "ann").await
}

/// ann's notifications of kind `post`: the posts, newest first.
async fn alerts(reads: &Reads) -> Vec<u64> {
    let page = reads
        .notifications(&Caller::Trusted, "ann", Some(50), None)
        .await
        .unwrap();
    let alerts = page.items.iter().filter(|n| n.kind == NoticeKind::Post);
    alerts.filter_map(|n| n.post.map(|p| p.0)).collect()
}

async fn follow_options_on(b: &Backends) {
    let (c, g) = (&b.content, &b.graph);
    let index = FollowerIndex::default();
    let reads = Reads::new(b.stores());
    for name in ["ann", "rob", "cat", "far"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    for followee in ["rob", "cat"] {
        let follow = edge("ann", followee, EdgeOp::Follow);
        g.change_edge(&follow).await.unwrap();
    }
    let set = |target: &'static str, option, on| async move {
        g.set_follow_options(&u("ann"), &u(target), &[(option, on)])
            .await
    };
    // Options need the follow.
    let refused = set("far", FollowOption::Notify, true).await.unwrap_err();
    assert_eq!(refused.code(), "not_following");
    assert!(set("cat", FollowOption::Notify, true).await.unwrap());
    assert!(
        !set("cat", FollowOption::Notify, true).await.unwrap(),
        "once"
    );
    home(&reads).await; // ann's timeline exists before the posts arrive
                        // Post ids of now: an alert is of a post made since `notify` was on.
    let t = PostId::first_at(socialite_core::ids::now_ms() + 1).0;

    // far posts; rob reposts it; cat answers far, then posts and reposts.
    c.create_post(post(t + 10, "far", "afar")).await.unwrap();
    let repost = |user: &str, post: u64| RepostChange {
        user: u(user),
        post: PostId(post),
        repost: true,
    };
    c.change_repost(&repost("rob", t + 10), PostId(t + 20))
        .await
        .unwrap();
    let reply = Post {
        reply_to: Some(PostRef {
            id: PostId(t + 10),
            author: u("far"),
        }),
        ..post(t + 30, "cat", "re")
    };
    c.create_post(reply).await.unwrap();
    c.create_post(post(t + 40, "cat", "own")).await.unwrap();
    c.change_repost(&repost("cat", t + 10), PostId(t + 50))
        .await
        .unwrap();
    fan_out(b, &index).await;
    // A plain follow: the reposts show (once, at the newest), cat's reply
    // to someone ann does not follow does not; notify told of 30 and 40.
    assert_eq!(home(&reads).await, [t + 10, t + 40]);
    assert_eq!(
        alerts(&reads).await,
        [t + 40, t + 30],
        "a post and a reply, not a repost"
    );

    // The options apply at the next read, to what is stored already.
    assert!(set("rob", FollowOption::HideReposts, true).await.unwrap());
    assert!(set("cat", FollowOption::AllReplies, true).await.unwrap());
    fan_out(b, &index).await;
    assert_eq!(
        home(&reads).await,
        [t + 10, t + 40, t + 30],
        "cat's repost still shows far's post"
    );
    assert!(set("cat", FollowOption::HideReposts, true).await.unwrap());
    assert_eq!(home(&reads).await, [t + 40, t + 30]);
    let r = g.relations_of(&u("ann")).await.unwrap();
    assert_eq!((r.reposts_off.len(), r.replies_on), (2, vec![u("cat")]));

    // A deleted post takes its notice back.
    c.delete_post(PostId(t + 40)).await.unwrap();
    fan_out(b, &index).await;
    assert_eq!(alerts(&reads).await, [t + 30]);

    // An unfollow clears them: a follow again starts plain.
    g.change_edge(&edge("ann", "cat", EdgeOp::Unfollow))
        .await
        .unwrap();
    g.change_edge(&edge("ann", "cat", EdgeOp::Follow))
        .await
        .unwrap();
    fan_out(b, &index).await;
    let r = g.relations_of(&u("ann")).await.unwrap();
    assert_eq!((r.reposts_off, r.replies_on), (vec![u("rob")], vec![]));
    let notify = Relation::Option(FollowOption::Notify);
    assert!(g.all_related(&u("cat"), notify).await.unwrap().is_empty());
    c.create_post(post(t + 60, "cat", "again")).await.unwrap();
    fan_out(b, &index).await;
    assert_eq!(
        alerts(&reads).await,
        Vec::<u64>::new(),
        "no longer told, and the unfollow took the alerts with it"
    );

    // An alert is of a post made since the option: rob's post made after
    // ann's option for cat but before hers for him tells nothing, his next
    // one does; a muted author's alerts are hidden.
    // (Each step a millisecond of its own: cat's earlier posts carry the
    // test's first milliseconds.)
    let tick = || tokio::time::sleep(Duration::from_millis(2));
    tick().await;
    assert!(set("cat", FollowOption::Notify, true).await.unwrap());
    tick().await;
    let between = PostId::first_at(socialite_core::ids::now_ms()).0;
    c.create_post(post(between, "rob", "old")).await.unwrap();
    tick().await;
    assert!(set("rob", FollowOption::Notify, true).await.unwrap());
    tick().await;
    let now = PostId::first_at(socialite_core::ids::now_ms()).0;
    c.create_post(post(now, "rob", "new")).await.unwrap();
    fan_out(b, &index).await;
    assert_eq!(alerts(&reads).await, [now]);
    let mute = RelationChange::new(u("ann"), u("rob"), Relation::Mute, true).unwrap();
    g.change_relation(&mute).await.unwrap();
    assert_eq!(alerts(&reads).await, Vec::<u64>::new(), "muted");
}
