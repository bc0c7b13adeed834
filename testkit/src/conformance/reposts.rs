//! Reposts: made once per user, counted exactly, refused for one's own
//! post and across a block; a reposted post shows once in a timeline, at
//! its newest arrival, naming the timeline's reposters, and moves back when
//! a repost is undone; groups show no reposts; a deleted post takes its
//! reposts out of every timeline and export; a deleted reposter's reposts
//! go and the counts follow; replays and imports count nothing twice.

use super::likes::export;
use super::*;
use socialite_core::model::FeedItem;
use socialite_domain::interactions::reposts::RepostChange;
use socialite_domain::transfer::record::Record;

fn change(user: &str, post: u64, repost: bool) -> RepostChange {
    RepostChange {
        user: u(user),
        post: PostId(post),
        repost,
    }
}

async fn reposts_of(b: &Backends, post: u64) -> u64 {
    b.content.post_counts(&[PostId(post)]).await.unwrap()[0].reposts
}

/// A page of `feed` as (post, position, reposters) of each entry.
async fn seen(b: &Backends, feed: &Feed) -> Vec<(u64, u64, Vec<String>)> {
    let page = read_timeline(&b.stores(), feed, &Hidden::default(), None, 50)
        .await
        .unwrap();
    page.items.iter().map(described).collect()
}

fn described(i: &FeedItem) -> (u64, u64, Vec<String>) {
    let by = i.reposted_by.iter().map(|r| r.to_string()).collect();
    (i.post.id.0, i.position.0, by)
}

pub async fn reposts(open: Opener) {
    // A stored timeline with room for everything, and fanout on read.
    for model in [FeedModel::Cache, FeedModel::FanoutOnRead] {
        let feed = FeedConfig {
            model,
            ..FeedConfig::default()
        };
        let Some(t) = open(feed, "reposts").await else {
            return;
        };
        reposts_on(&t.backends).await;
    }
}

async fn reposts_on(b: &Backends) {
    let (c, g) = (&b.content, &b.graph);
    let index = FollowerIndex::default();
    for name in ["ann", "bo", "cy", "dee", "eve"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    // bo follows ann, cy and dee; eve follows only cy.
    for (f, t) in [("bo", "ann"), ("bo", "cy"), ("bo", "dee"), ("eve", "cy")] {
        g.change_edge(&edge(f, t, EdgeOp::Follow)).await.unwrap();
    }
    c.create_post(post(10, "ann", "x")).await.unwrap();
    c.create_post(post(20, "ann", "y")).await.unwrap();
    // The readers' timelines exist before the reposts arrive.
    seen(b, &Feed::Home(u("bo"))).await;
    seen(b, &Feed::Home(u("eve"))).await;
    fan_out(b, &index).await;

    // Made once; a repost of a repost reposts its original.
    let made = c
        .change_repost(&change("cy", 10, true), PostId(100))
        .await
        .unwrap();
    assert!(made.changed && made.item == Some(PostId(100)));
    let again = c
        .change_repost(&change("cy", 10, true), PostId(101))
        .await
        .unwrap();
    assert!(!again.changed && again.item == Some(PostId(100)), "once");
    let via = c
        .change_repost(&change("dee", 100, true), PostId(110))
        .await
        .unwrap();
    assert!(via.changed);
    assert_eq!(reposts_of(b, 10).await, 2);
    let item = c.get_posts(&[PostId(110)]).await.unwrap().pop().unwrap();
    assert_eq!(
        item.repost_of.map(|o| (o.id.0, o.author.to_string())),
        Some((10, "ann".into()))
    );
    assert_eq!((item.author.as_str(), item.message.as_str()), ("dee", ""));

    // Refused: one's own post, no such post, no such user, a block.
    let own = c
        .change_repost(&change("ann", 10, true), PostId(120))
        .await
        .unwrap_err();
    assert_eq!(
        (own.code(), own.kind()),
        ("cannot_repost_own", ErrorKind::Conflict)
    );
    let gone = c
        .change_repost(&change("bo", 99, true), PostId(121))
        .await
        .unwrap_err();
    assert_eq!(gone.code(), "post_not_found");
    let nobody = c
        .change_repost(&change("zed", 10, true), PostId(122))
        .await
        .unwrap_err();
    assert_eq!(nobody.code(), "user_not_found");
    let block = RelationChange::new(u("ann"), u("eve"), Relation::Block, true).unwrap();
    g.change_relation(&block).await.unwrap();
    let refused = c
        .change_repost(&change("eve", 20, true), PostId(123))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "blocked");
    assert_eq!(reposts_of(b, 20).await, 0);

    // Who reposted, newest first; among some users; which posts have any.
    let who = c.reposters(PostId(10), 10).await.unwrap();
    assert_eq!(who, vec![(u("dee"), PostId(110)), (u("cy"), PostId(100))]);
    assert_eq!(c.reposters(PostId(10), 1).await.unwrap().len(), 1);
    let among = c
        .reposts_among(PostId(10), &[u("cy"), u("bo")])
        .await
        .unwrap();
    assert_eq!(among, vec![(u("cy"), PostId(100))]);
    let with = c.reposted_among(&[PostId(20), PostId(10)]).await.unwrap();
    assert_eq!(with, vec![PostId(10)]);

    // Once, at the newest arrival, naming the timeline's reposters.
    fan_out(b, &index).await;
    let bo = Feed::Home(u("bo"));
    assert_eq!(
        seen(b, &bo).await,
        [(10, 110, vec!["dee".into(), "cy".into()]), (20, 20, vec![])]
    );
    // eve follows cy only: ann's post by cy's repost (what her relations
    // hide is the reads' part: `Hidden`).
    assert_eq!(
        seen(b, &Feed::Home(u("eve"))).await,
        [(10, 100, vec!["cy".into()])]
    );
    // An undone repost moves the post back to the one before it.
    let undone = c
        .change_repost(&change("dee", 10, false), PostId(0))
        .await
        .unwrap();
    assert!(undone.changed && undone.item == Some(PostId(110)));
    assert!(
        !c.change_repost(&change("dee", 10, false), PostId(0))
            .await
            .unwrap()
            .changed
    );
    fan_out(b, &index).await;
    assert_eq!(
        seen(b, &bo).await,
        [(10, 100, vec!["cy".into()]), (20, 20, vec![])]
    );
    assert_eq!(reposts_of(b, 10).await, 1);
    // Not following the author: the repost alone places it; undone, gone.
    g.change_edge(&edge("bo", "ann", EdgeOp::Unfollow))
        .await
        .unwrap();
    fan_out(b, &index).await;
    assert_eq!(seen(b, &bo).await, [(10, 100, vec!["cy".into()])]);
    c.change_repost(&change("cy", 10, false), PostId(0))
        .await
        .unwrap();
    fan_out(b, &index).await;
    assert_eq!(seen(b, &bo).await, []);

    // Groups carry posts only; a profile shows its owner's reposts.
    c.change_repost(&change("cy", 20, true), PostId(130))
        .await
        .unwrap();
    g.change_membership(&member("club", "cy", true))
        .await
        .unwrap();
    fan_out(b, &index).await;
    let club = Feed::Group(GroupName::parse("club").unwrap());
    assert_eq!(seen(b, &club).await, []);
    assert_eq!(seen(b, &bo).await, [(20, 130, vec!["cy".into()])]);

    // Every change is on the log: the item made, and its retraction.
    let events = drain_outbox(b).await;
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::PostCreated { .. })),
        "drained"
    );
    let replayed = Event::post_created(c.get_posts(&[PostId(130)]).await.unwrap().pop().unwrap());
    assert!(
        !b.transfer.replay(&replayed).await.unwrap(),
        "a replay counts once"
    );
    assert_eq!(reposts_of(b, 20).await, 1);

    // An export carries the repost; an import of it into the same store
    // changes nothing.
    let exported = export(b).await;
    let items: Vec<&Record> = exported
        .iter()
        .filter(|r| matches!(r, Record::Post { post: p, .. } if p.repost_of.is_some()))
        .collect();
    assert_eq!(items.len(), 1);
    assert_eq!(
        b.transfer
            .import(&[items[0].clone()], &Default::default())
            .await
            .unwrap(),
        0
    );

    // A deleted post takes its reposts out of every timeline and export.
    c.delete_post(PostId(20)).await.unwrap();
    fan_out(b, &index).await;
    assert_eq!(seen(b, &bo).await, []);
    assert_eq!(reposts_of(b, 20).await, 0);
    let exported = export(b).await;
    assert!(!exported
        .iter()
        .any(|r| matches!(r, Record::Post { post: p, .. } if p.repost_of.is_some())));
    // Undoing a repost of a deleted post still takes the row back.
    assert!(
        c.change_repost(&change("cy", 20, false), PostId(0))
            .await
            .unwrap()
            .changed
    );

    // A deleted reposter's reposts go, and the counts follow.
    c.create_post(post(30, "ann", "z")).await.unwrap();
    c.change_repost(&change("dee", 30, true), PostId(140))
        .await
        .unwrap();
    c.change_repost(&change("cy", 30, true), PostId(141))
        .await
        .unwrap();
    assert!(c.delete_user(&u("dee")).await.unwrap());
    assert_eq!(reposts_of(b, 30).await, 1);
    assert_eq!(
        c.reposters(PostId(30), 10).await.unwrap(),
        vec![(u("cy"), PostId(141))]
    );
    assert!(c.get_posts(&[PostId(140)]).await.unwrap().is_empty());
    fan_out(b, &index).await;
    assert_eq!(seen(b, &bo).await, [(30, 141, vec!["cy".into()])]);
}
