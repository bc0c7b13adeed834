//! An export of a store while a user's deletion runs: the user is absent,
//! with every record that names them (their follows either way, the
//! relations either way, memberships, posts and the reposts and likes of
//! them, likes, markers, mentions, filters), as core's walk decides for every
//! backend (`socialite_domain::transfer::export`).

use super::*;
use socialite_core::transfer::stream::Stream;
use socialite_domain::feed::markers::{Marker, MarkerTimeline};
use socialite_domain::interactions::likes::LikeChange;
use socialite_domain::interactions::reposts::RepostChange;
use socialite_domain::transfer::record::Record;

/// What the export of `b` holds, a line of words a record.
pub(crate) async fn exported(b: &Backends) -> Vec<String> {
    let mut stream = Stream::open(&*b.transfer).await.unwrap();
    let mut out = Vec::new();
    loop {
        let page = stream.next(3).await.unwrap();
        if page.is_empty() {
            return out;
        }
        out.extend(page.iter().map(|r| match r {
            Record::User { id, .. } => format!("user {id}"),
            Record::Account { id, .. } => format!("account {id}"),
            Record::Follow {
                follower, followee, ..
            } => format!("follow {follower} {followee}"),
            Record::Relation {
                user,
                relation,
                target,
                at_ms,
            } => match at_ms {
                Some(at) => format!("{relation:?} {user} {target} at {at}"),
                None => format!("{relation:?} {user} {target}"),
            },
            Record::Member { group, user } => format!("member {group} {user}"),
            Record::Post { post, .. } => {
                let named: Vec<&str> = post.mentions.iter().map(|m| m.as_str()).collect();
                format!("post {} {} {named:?}", post.id.0, post.author)
            }
            Record::Like { post, user, .. } => format!("like {} {user}", post.0),
            Record::Marker { user, .. } => format!("marker {user}"),
            Record::Kept {
                collection,
                user,
                kept,
            } => format!("kept {collection} {user} {}", kept.post.0),
            Record::Filters { user, filters, .. } => format!("filters {user} {}", filters.len()),
            Record::ThreadMute { user, post } => format!("thread_mute {user} {}", post.0),
            Record::ExclusiveList { user, list } => format!("exclusive {user} {list}"),
        }));
    }
}

pub async fn export_leaves_out_users_being_deleted(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "export_leaves_out").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    for name in ["ann", "bo", "zed"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    for (a, z) in [("ann", "zed"), ("zed", "ann")] {
        g.change_edge(&edge(a, z, EdgeOp::Follow)).await.unwrap();
    }
    let relate = |user, relation, target| RelationChange::new(u(user), u(target), relation, true);
    g.change_relation(&relate("ann", Relation::Mute, "zed").unwrap())
        .await
        .unwrap();
    g.change_relation(&relate("zed", Relation::Block, "bo").unwrap())
        .await
        .unwrap();
    for user in ["ann", "zed"] {
        g.change_membership(&member("club", user, true))
            .await
            .unwrap();
    }
    let mut named = post(10, "zed", "hi @ann");
    named.mentions = vec![u("ann")];
    c.create_post(named).await.unwrap();
    let mut naming = post(20, "ann", "hey @zed @bo");
    naming.mentions = vec![u("zed"), u("bo")];
    c.create_post(naming).await.unwrap();
    let repost = RepostChange {
        user: u("ann"),
        post: PostId(10),
        repost: true,
    };
    c.change_repost(&repost, PostId(30)).await.unwrap();
    for (user, post) in [("ann", 10), ("zed", 20), ("bo", 20)] {
        let like = LikeChange {
            user: u(user),
            post: PostId(post),
            like: true,
        };
        c.change_like(&like).await.unwrap();
    }
    for user in ["ann", "zed"] {
        let at = Marker {
            timeline: MarkerTimeline::Home,
            last_read: PostId(20),
            at_ms: 1_700_000_000_000,
        };
        c.set_marker(&u(user), at, false).await.unwrap();
        let filter = socialite_core::filters::FilterChange {
            phrases: Some(vec![socialite_core::model::filter::Phrase {
                text: "word".into(),
                whole_word: true,
            }]),
            ..Default::default()
        };
        c.put_filter(&u(user), None, &filter).await.unwrap();
    }
    let before = exported(b).await;
    assert_eq!(before.len(), 19, "{before:#?}");

    assert!(c.begin_deletion(&u("zed")).await.unwrap());
    assert_eq!(
        exported(b).await,
        [
            "user ann",
            "user bo",
            "member club ann",
            "post 20 ann [\"bo\"]",
            "like 20 bo",
            "marker ann",
            "filters ann 1",
        ]
    );
}
