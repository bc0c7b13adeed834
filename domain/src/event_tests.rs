//! The events' encoding, round-tripped.

#[cfg(test)]
use super::*;
#[cfg(test)]
use crate::model::marker::MarkerTimeline;
#[cfg(test)]
use crate::notifications::notices::NoticeKind;

/// One event of every kind (some kinds more than once).
pub(crate) fn samples() -> Vec<Event> {
    let a = UserId::parse("a").unwrap();
    let b = UserId::parse("b").unwrap();
    let work = ListName::parse("work").unwrap();
    vec![
        Event::PostCreated {
            post: Post {
                id: PostId(7),
                author: a.clone(),
                message: "hi @b".into(),
                data: serde_json::json!({ "k": [1] }).as_object().cloned(),
                mentions: vec![b.clone()],
                reply_to: Some(PostRef {
                    id: PostId(3),
                    author: b.clone(),
                }),
                repost_of: None,
            },
            trace: Trace::from_header("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        },
        Event::PostCreated {
            post: Post::repost(
                PostId(8),
                b.clone(),
                PostRef {
                    id: PostId(7),
                    author: a.clone(),
                },
            ),
            trace: Trace::default(),
        },
        Event::PostDeleted {
            post: PostId(u64::MAX),
            author: a.clone(),
            told: vec![(b.clone(), NoticeKind::Mention, PostId(u64::MAX))],
        },
        Event::Followed {
            follower: a.clone(),
            followee: b.clone(),
            lists: vec![work.clone()],
            at_ms: 1_700_000_000_123,
        },
        Event::UserPut {
            user: a.clone(),
            profile: serde_json::json!({ "name": "A" }).as_object().cloned(),
        },
        Event::Liked {
            user: b.clone(),
            post: PostId(9),
            author: a.clone(),
            at_ms: 1_700_000_000_456,
        },
        Event::Unliked {
            user: b.clone(),
            post: PostId(9),
            author: a.clone(),
        },
        Event::MarkerSet {
            user: b.clone(),
            marker: Marker {
                timeline: MarkerTimeline::Home,
                last_read: PostId(9),
                at_ms: 1_700_000_000_789,
            },
        },
        Event::KeptChanged {
            collection: crate::model::collection::Collection::named("bookmarks"),
            user: b.clone(),
            post: PostId(9),
            at_ms: 1_700_000_000_790,
            kept: true,
        },
        Event::UserPut {
            user: b.clone(),
            profile: None,
        },
        Event::StandingSet {
            user: a.clone(),
            standing: Standing {
                tokens_after_ms: 9,
                suspended: true,
            },
            was_suspended: false,
        },
        Event::Blocked {
            user: a.clone(),
            target: b.clone(),
        },
        Event::Unblocked {
            user: b.clone(),
            target: a.clone(),
        },
        Event::PrioritySet {
            user: a.clone(),
            target: b.clone(),
            level: -2,
        },
        Event::Unfollowed {
            follower: b.clone(),
            followee: a.clone(),
            lists: vec![],
        },
        Event::Relisted {
            follower: b.clone(),
            followee: a.clone(),
            added: vec![work.clone()],
            removed: vec![ListName::parse("x").unwrap()],
        },
        Event::Joined {
            group: GroupName::parse("g").unwrap(),
            user: a.clone(),
        },
        Event::Left {
            group: GroupName::parse("g").unwrap(),
            user: b.clone(),
        },
        Event::AuthorRetracted {
            author: a.clone(),
            followers: vec![b.clone(), a.clone()],
            listed: vec![(b.clone(), work.clone())],
        },
        Event::TimelineDropped {
            user: b.clone(),
            lists: vec![work.clone()],
        },
        Event::Muted {
            user: a.clone(),
            target: b.clone(),
            edge: Some(vec![work]),
            until_ms: None,
        },
        Event::Muted {
            user: a.clone(),
            target: b.clone(),
            edge: Some(vec![]),
            until_ms: Some(1_800_000_000_000),
        },
        Event::Unmuted {
            user: b.clone(),
            target: a.clone(),
            edge: None,
        },
    ]
}

#[test]
fn events_round_trip() {
    for e in samples() {
        assert_eq!(Event::decode(&e.encode()).unwrap(), e);
    }
    assert!(Event::decode(b"\xff\xff").is_err());
    assert!(Event::decode(&[]).is_err());
}
