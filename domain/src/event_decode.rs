//! Events read back from the log ([`Event::decode`]): the protobuf
//! messages [`Event::encode`] writes, checked as they are turned back into
//! events (an id that does not parse is an error naming it, never a panic).

use crate::error::{Error, Result};
use crate::event::Event;
use crate::ids::{GroupName, ListName, PostId, UserId};
use crate::model::collection::Collection;
use crate::model::filter::{Contexts, Filter, FilterAction, Phrase};
use crate::model::marker::{Marker, MarkerTimeline};
use crate::model::notice::NoticeKind;
use crate::model::relation::FollowOption;
use crate::model::standing::Standing;
use crate::model::{Post, PostRef};
use crate::trace::Trace;
use prost::Message;
use serde_json::{Map, Value};
use socialite_proto::v1 as pb;

impl Event {
    pub fn decode(bytes: &[u8]) -> Result<Event> {
        use pb::event::Kind;
        let bad = |why: String| Error::internal(format!("undecodable event on the log: {why}"));
        let msg = pb::Event::decode(bytes).map_err(|e| bad(e.to_string()))?;
        let u = |s: &str| UserId::parse(s).map_err(|e| bad(e.to_string()));
        let l = |s: &str| ListName::parse(s).map_err(|e| bad(e.to_string()));
        let ls = |v: &[String]| v.iter().map(|s| l(s)).collect::<Result<Vec<_>>>();
        let g = |s: &str| GroupName::parse(s).map_err(|e| bad(e.to_string()));
        Ok(match msg.kind.ok_or_else(|| bad("no kind".into()))? {
            Kind::PostCreated(e) => post_created(e, &u, &bad)?,
            Kind::PostDeleted(e) => Event::PostDeleted {
                post: PostId(e.post_id),
                author: u(&e.author)?,
                told: e.told.iter().map(told).collect::<Result<_>>()?,
            },
            Kind::Followed(e) => Event::Followed {
                follower: u(&e.follower)?,
                followee: u(&e.followee)?,
                lists: ls(&e.lists)?,
                at_ms: e.at_ms,
            },
            Kind::Unfollowed(e) => Event::Unfollowed {
                follower: u(&e.follower)?,
                followee: u(&e.followee)?,
                lists: ls(&e.lists)?,
            },
            Kind::Relisted(e) => Event::Relisted {
                follower: u(&e.follower)?,
                followee: u(&e.followee)?,
                added: ls(&e.added)?,
                removed: ls(&e.removed)?,
            },
            Kind::Joined(e) => Event::Joined {
                group: g(&e.group)?,
                user: u(&e.user)?,
            },
            Kind::Left(e) => Event::Left {
                group: g(&e.group)?,
                user: u(&e.user)?,
            },
            Kind::AuthorRetracted(e) => Event::AuthorRetracted {
                author: u(&e.author)?,
                followers: e.followers.iter().map(|f| u(f)).collect::<Result<_>>()?,
                listed: e
                    .listed
                    .iter()
                    .map(|r| Ok((u(&r.user)?, l(&r.list)?)))
                    .collect::<Result<_>>()?,
            },
            Kind::TimelineDropped(e) => Event::TimelineDropped {
                user: u(&e.user)?,
                lists: ls(&e.lists)?,
            },
            Kind::Muted(e) => Event::Muted {
                user: u(&e.user)?,
                target: u(&e.target)?,
                edge: e.following.then(|| ls(&e.lists)).transpose()?,
                until_ms: e.until_ms,
            },
            Kind::Unmuted(e) => Event::Unmuted {
                user: u(&e.user)?,
                target: u(&e.target)?,
                edge: e.following.then(|| ls(&e.lists)).transpose()?,
            },
            kind @ (Kind::UserPut(_)
            | Kind::StandingSet(_)
            | Kind::Blocked(_)
            | Kind::Unblocked(_)
            | Kind::PrioritySet(_)
            | Kind::FollowOptionsSet(_)
            | Kind::Liked(_)
            | Kind::Unliked(_)
            | Kind::MarkerSet(_)
            | Kind::KeptChanged(_)
            | Kind::FilterPut(_)
            | Kind::FilterRemoved(_)
            | Kind::ThreadMuteSet(_)
            | Kind::ListExclusiveSet(_)) => Event::decode_record(kind)?,
        })
    }

    /// The event of a kind fanout passes by (`record_kind` encodes them).
    fn decode_record(kind: pb::event::Kind) -> Result<Event> {
        use pb::event::Kind;
        let bad = |why: String| Error::internal(format!("undecodable event on the log: {why}"));
        let u = |s: &str| UserId::parse(s).map_err(|e| bad(e.to_string()));
        Ok(match kind {
            Kind::UserPut(e) => Event::UserPut {
                user: u(&e.user)?,
                profile: json_object(&e.profile_json)
                    .ok_or_else(|| bad("the profile is not a JSON object".into()))?,
            },
            Kind::StandingSet(e) => Event::StandingSet {
                user: u(&e.user)?,
                standing: Standing {
                    tokens_after_ms: e.tokens_after_ms,
                    suspended: e.suspended,
                },
                was_suspended: e.was_suspended,
            },
            Kind::Blocked(e) => Event::Blocked {
                user: u(&e.user)?,
                target: u(&e.target)?,
            },
            Kind::Unblocked(e) => Event::Unblocked {
                user: u(&e.user)?,
                target: u(&e.target)?,
            },
            Kind::PrioritySet(e) => Event::PrioritySet {
                user: u(&e.user)?,
                target: u(&e.target)?,
                level: i8::try_from(e.level)
                    .ok()
                    .filter(|l| l.abs() <= crate::model::relation::MAX_PRIORITY)
                    .ok_or_else(|| bad(format!("priority {} is out of range", e.level)))?,
            },
            Kind::FollowOptionsSet(e) => Event::FollowOptionsSet {
                user: u(&e.user)?,
                target: u(&e.target)?,
                changes: [
                    (FollowOption::HideReposts, e.hide_reposts),
                    (FollowOption::AllReplies, e.all_replies),
                    (FollowOption::Notify, e.notify),
                ]
                .into_iter()
                .filter_map(|(o, on)| on.map(|on| (o, on)))
                .collect(),
                at_ms: e.at_ms,
            },
            Kind::Liked(e) => Event::Liked {
                user: u(&e.user)?,
                post: PostId(e.post_id),
                author: u(&e.author)?,
                at_ms: e.at_ms,
            },
            Kind::Unliked(e) => Event::Unliked {
                user: u(&e.user)?,
                post: PostId(e.post_id),
                author: u(&e.author)?,
            },
            Kind::MarkerSet(e) => Event::MarkerSet {
                user: u(&e.user)?,
                marker: Marker {
                    timeline: MarkerTimeline::parse(&e.timeline).map_err(|e| bad(e.to_string()))?,
                    last_read: PostId(e.last_read_id),
                    at_ms: e.at_ms,
                },
            },
            Kind::KeptChanged(e) => Event::KeptChanged {
                collection: Collection::parse(&e.collection).map_err(|e| bad(e.to_string()))?,
                user: u(&e.user)?,
                post: PostId(e.post_id),
                at_ms: e.at_ms,
                kept: e.kept,
            },
            Kind::FilterPut(e) => Event::FilterPut {
                user: u(&e.user)?,
                filter: filter_of(e),
            },
            Kind::FilterRemoved(e) => Event::FilterRemoved {
                user: u(&e.user)?,
                filter: e.id,
            },
            Kind::ThreadMuteSet(e) => Event::ThreadMuteSet {
                user: u(&e.user)?,
                post: PostId(e.post_id),
                muted: e.muted,
            },
            Kind::ListExclusiveSet(e) => Event::ListExclusiveSet {
                user: u(&e.user)?,
                list: ListName::parse(&e.list).map_err(|e| bad(e.to_string()))?,
                exclusive: e.exclusive,
            },
            other => unreachable!("{other:?} is decoded by `decode`"),
        })
    }
}

/// What a deleted post had told, decoded.
fn told(t: &pb::Told) -> Result<(UserId, NoticeKind, PostId)> {
    let bad = |why: String| Error::internal(format!("undecodable event on the log: {why}"));
    let kind = NoticeKind::from_code(t.kind as u8)
        .ok_or_else(|| bad(format!("notice kind {}", t.kind)))?;
    let user = UserId::parse(&t.user).map_err(|e| bad(e.to_string()))?;
    Ok((user, kind, PostId(t.post_id)))
}

/// The object `json_text` wrote; `None` when the text is not one.
fn json_object(text: &str) -> Option<Option<Map<String, Value>>> {
    match text {
        "" => Some(None),
        text => match serde_json::from_str(text) {
            Ok(Value::Object(map)) => Some(Some(map)),
            _ => None,
        },
    }
}

/// The filter a `FilterPut` event carries.
fn filter_of(e: pb::FilterPut) -> Filter {
    Filter {
        id: e.id,
        title: e.title,
        phrases: e
            .phrases
            .into_iter()
            .map(|p| Phrase {
                text: p.text,
                whole_word: p.whole_word,
            })
            .collect(),
        contexts: Contexts::from_bits(e.contexts as u8),
        action: match e.hide {
            true => FilterAction::Hide,
            false => FilterAction::Warn,
        },
        expires_at_ms: e.expires_at_ms,
    }
}

/// A `PostCreated` event from its message; `u` parses an id, `bad` names
/// what is wrong.
fn post_created(
    e: pb::PostCreated,
    u: &dyn Fn(&str) -> Result<UserId>,
    bad: &dyn Fn(String) -> Error,
) -> Result<Event> {
    let data =
        json_object(&e.data_json).ok_or_else(|| bad("post data is not a JSON object".into()))?;
    let author = u(&e.author)?;
    let mentions = e.mentions.iter().map(|m| u(m)).collect::<Result<_>>()?;
    let post_ref = |r: pb::PostLink| -> Result<PostRef> {
        Ok(PostRef {
            id: PostId(r.post_id),
            author: u(&r.author)?,
        })
    };
    Ok(Event::PostCreated {
        post: Post {
            id: PostId(e.post_id),
            author,
            message: e.message,
            data,
            mentions,
            reply_to: e.reply_to.map(post_ref).transpose()?,
            repost_of: e.repost_of.map(post_ref).transpose()?,
        },
        trace: Trace::from_header(&e.traceparent),
    })
}
