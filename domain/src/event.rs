//! Events on the log, and their protobuf encoding (`proto/socialite/v1/events.proto`).

use crate::error::{Error, Result};
use crate::ids::{GroupName, ListName, PostId, UserId};
use crate::model::collection::Collection;
use crate::model::marker::{Marker, MarkerTimeline};
use crate::model::notice::NoticeKind;
use crate::model::relation::FollowOption;
use crate::model::standing::Standing;
use crate::model::{Post, PostRef};
use crate::trace::Trace;
use prost::Message;
use serde_json::{Map, Value};
use socialite_proto::v1 as pb;

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A new post, with the trace it was made in (see [`crate::trace`]).
    PostCreated { post: Post, trace: Trace },
    /// A post gone; `told` is what it had told whom (a reply, a repost,
    /// mentions: [`crate::notifications::notified::told_of_post`]).
    PostDeleted {
        post: PostId,
        author: UserId,
        told: Vec<(UserId, NoticeKind, PostId)>,
    },
    /// A new edge, filed under `lists`, made at `at_ms`.
    Followed {
        follower: UserId,
        followee: UserId,
        lists: Vec<ListName>,
        at_ms: u64,
    },
    /// A removed edge, which was filed under `lists`.
    Unfollowed {
        follower: UserId,
        followee: UserId,
        lists: Vec<ListName>,
    },
    /// An existing edge filed under other lists.
    Relisted {
        follower: UserId,
        followee: UserId,
        added: Vec<ListName>,
        removed: Vec<ListName>,
    },
    /// A user joined a group.
    Joined { group: GroupName, user: UserId },
    /// A user left a group (or was deleted).
    Left { group: GroupName, user: UserId },
    AuthorRetracted {
        author: UserId,
        followers: Vec<UserId>,
        /// (follower, list): the lists the author was filed under.
        listed: Vec<(UserId, ListName)>,
    },
    TimelineDropped {
        user: UserId,
        /// The user's lists, whose timelines go too.
        lists: Vec<ListName>,
    },
    /// `user` muted `target`; `edge` is the lists the user files the target
    /// under when the user follows them.
    Muted {
        user: UserId,
        target: UserId,
        edge: Option<Vec<ListName>>,
    },
    /// `user` no longer mutes `target` (or was deleted); `edge` likewise.
    Unmuted {
        user: UserId,
        target: UserId,
        edge: Option<Vec<ListName>>,
    },
    /// The user was created or given a profile; `profile` is the one they
    /// have now. Fanout passes this and the events below by: they make the
    /// log a record of every write (a migration carries writes over from it).
    UserPut {
        user: UserId,
        profile: Option<Map<String, Value>>,
    },
    /// The account id's standing is now `standing`.
    StandingSet { user: UserId, standing: Standing },
    /// `user` blocked `target`.
    Blocked { user: UserId, target: UserId },
    /// `user` no longer blocks `target` (or was deleted).
    Unblocked { user: UserId, target: UserId },
    /// `user`'s priority for `target` is now `level` (-2 to 2; 0: none).
    PrioritySet {
        user: UserId,
        target: UserId,
        level: i8,
    },
    /// `user` turned these follow options for `target` on (`true`) or off;
    /// the others are unchanged (an unfollow turns them all off).
    FollowOptionsSet {
        user: UserId,
        target: UserId,
        changes: Vec<(FollowOption, bool)>,
    },
    /// `user` liked `post`, of `author`, at `at_ms`.
    Liked {
        user: UserId,
        post: PostId,
        author: UserId,
        at_ms: u64,
    },
    /// `user` no longer likes `post`, of `author`.
    Unliked {
        user: UserId,
        post: PostId,
        author: UserId,
    },
    /// `user`'s marker of a timeline is now `marker`.
    MarkerSet { user: UserId, marker: Marker },
    /// `post` is now in (`kept`) or out of the user's `collection`, since
    /// `at_ms`.
    KeptChanged {
        collection: Collection,
        user: UserId,
        post: PostId,
        at_ms: u64,
        kept: bool,
    },
}

impl Event {
    /// The event of a new post, in the current span's trace.
    pub fn post_created(post: Post) -> Event {
        Event::PostCreated {
            post,
            trace: Trace::current(),
        }
    }

    /// The partition key: events about one author's posts and followers share a
    /// key, so a partitioned log keeps them in order.
    pub fn key(&self) -> &UserId {
        match self {
            Event::PostCreated { post, .. } => &post.author,
            Event::PostDeleted { author, .. }
            | Event::AuthorRetracted { author, .. }
            | Event::Liked { author, .. }
            | Event::Unliked { author, .. } => author,
            Event::Followed { followee, .. }
            | Event::Unfollowed { followee, .. }
            | Event::Relisted { followee, .. } => followee,
            Event::Muted { target, .. }
            | Event::Unmuted { target, .. }
            | Event::Blocked { target, .. }
            | Event::Unblocked { target, .. }
            | Event::PrioritySet { target, .. }
            | Event::FollowOptionsSet { target, .. } => target,
            Event::UserPut { user, .. }
            | Event::StandingSet { user, .. }
            | Event::MarkerSet { user, .. }
            | Event::KeptChanged { user, .. } => user,
            Event::TimelineDropped { user, .. }
            | Event::Joined { user, .. }
            | Event::Left { user, .. } => user,
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        use pb::event::Kind;
        let s = |u: &UserId| u.as_str().to_owned();
        let names = |l: &[ListName]| l.iter().map(|n| n.as_str().to_owned()).collect();
        let kind = match self {
            Event::PostCreated { post, trace } => Kind::PostCreated(post_created(post, trace)),
            Event::PostDeleted { post, author, told } => Kind::PostDeleted(pb::PostDeleted {
                post_id: post.0,
                author: s(author),
                told: told.iter().map(told_pb).collect(),
            }),
            Event::Followed {
                follower,
                followee,
                lists,
                at_ms,
            } => Kind::Followed(pb::Followed {
                follower: s(follower),
                followee: s(followee),
                lists: names(lists),
                at_ms: *at_ms,
            }),
            Event::Unfollowed {
                follower,
                followee,
                lists,
            } => Kind::Unfollowed(pb::Unfollowed {
                follower: s(follower),
                followee: s(followee),
                lists: names(lists),
            }),
            Event::Relisted {
                follower,
                followee,
                added,
                removed,
            } => Kind::Relisted(pb::Relisted {
                follower: s(follower),
                followee: s(followee),
                added: names(added),
                removed: names(removed),
            }),
            Event::Joined { group, user } => Kind::Joined(pb::Joined {
                group: group.as_str().to_owned(),
                user: s(user),
            }),
            Event::Left { group, user } => Kind::Left(pb::Left {
                group: group.as_str().to_owned(),
                user: s(user),
            }),
            Event::AuthorRetracted {
                author,
                followers,
                listed,
            } => Kind::AuthorRetracted(pb::AuthorRetracted {
                author: s(author),
                followers: followers.iter().map(s).collect(),
                listed: listed
                    .iter()
                    .map(|(u, l)| pb::ListRef {
                        user: s(u),
                        list: l.as_str().to_owned(),
                    })
                    .collect(),
            }),
            Event::TimelineDropped { user, lists } => Kind::TimelineDropped(pb::TimelineDropped {
                user: s(user),
                lists: names(lists),
            }),
            Event::Muted { user, target, edge } => Kind::Muted(pb::Muted {
                user: s(user),
                target: s(target),
                following: edge.is_some(),
                lists: edge.as_deref().map(names).unwrap_or_default(),
            }),
            Event::Unmuted { user, target, edge } => Kind::Unmuted(pb::Unmuted {
                user: s(user),
                target: s(target),
                following: edge.is_some(),
                lists: edge.as_deref().map(names).unwrap_or_default(),
            }),
            Event::UserPut { .. }
            | Event::StandingSet { .. }
            | Event::Blocked { .. }
            | Event::Unblocked { .. }
            | Event::PrioritySet { .. }
            | Event::FollowOptionsSet { .. }
            | Event::Liked { .. }
            | Event::Unliked { .. }
            | Event::MarkerSet { .. }
            | Event::KeptChanged { .. } => self.record_kind(),
        };
        pb::Event { kind: Some(kind) }.encode_to_vec()
    }

    /// The encoding of an event fanout passes by.
    fn record_kind(&self) -> pb::event::Kind {
        use pb::event::Kind;
        let s = |u: &UserId| u.as_str().to_owned();
        match self {
            Event::UserPut { user, profile } => Kind::UserPut(pb::UserPut {
                user: s(user),
                profile_json: json_text(profile),
            }),
            Event::StandingSet { user, standing } => Kind::StandingSet(pb::StandingSet {
                user: s(user),
                tokens_after_ms: standing.tokens_after_ms,
                suspended: standing.suspended,
            }),
            Event::Blocked { user, target } => Kind::Blocked(pb::Blocked {
                user: s(user),
                target: s(target),
            }),
            Event::Unblocked { user, target } => Kind::Unblocked(pb::Unblocked {
                user: s(user),
                target: s(target),
            }),
            Event::PrioritySet {
                user,
                target,
                level,
            } => Kind::PrioritySet(pb::PrioritySet {
                user: s(user),
                target: s(target),
                level: i32::from(*level),
            }),
            Event::FollowOptionsSet {
                user,
                target,
                changes,
            } => {
                let set =
                    |o: FollowOption| changes.iter().find(|(c, _)| *c == o).map(|(_, on)| *on);
                Kind::FollowOptionsSet(pb::FollowOptionsSet {
                    user: s(user),
                    target: s(target),
                    hide_reposts: set(FollowOption::HideReposts),
                    all_replies: set(FollowOption::AllReplies),
                    notify: set(FollowOption::Notify),
                })
            }
            Event::Liked {
                user,
                post,
                author,
                at_ms,
            } => Kind::Liked(pb::Liked {
                user: s(user),
                post_id: post.0,
                author: s(author),
                at_ms: *at_ms,
            }),
            Event::Unliked { user, post, author } => Kind::Unliked(pb::Unliked {
                user: s(user),
                post_id: post.0,
                author: s(author),
            }),
            Event::MarkerSet { user, marker } => Kind::MarkerSet(pb::MarkerSet {
                user: s(user),
                timeline: marker.timeline.as_str().to_owned(),
                last_read_id: marker.last_read.0,
                at_ms: marker.at_ms,
            }),
            Event::KeptChanged {
                collection,
                user,
                post,
                at_ms,
                kept,
            } => Kind::KeptChanged(pb::KeptChanged {
                collection: collection.as_str().to_owned(),
                user: s(user),
                post_id: post.0,
                at_ms: *at_ms,
                kept: *kept,
            }),
            other => unreachable!("{other:?} changes timelines"),
        }
    }

    pub fn decode(bytes: &[u8]) -> Result<Event> {
        use pb::event::Kind;
        let bad = |why: String| Error::internal(format!("undecodable event on the log: {why}"));
        let msg = pb::Event::decode(bytes).map_err(|e| bad(e.to_string()))?;
        let u = |s: &str| UserId::parse(s).map_err(|e| bad(e.to_string()));
        let l = |s: &str| ListName::parse(s).map_err(|e| bad(e.to_string()));
        let ls = |v: &[String]| v.iter().map(|s| l(s)).collect::<Result<Vec<_>>>();
        let g = |s: &str| GroupName::parse(s).map_err(|e| bad(e.to_string()));
        Ok(match msg.kind.ok_or_else(|| bad("no kind".into()))? {
            Kind::PostCreated(e) => {
                let data = json_object(&e.data_json)
                    .ok_or_else(|| bad("post data is not a JSON object".into()))?;
                let author = u(&e.author)?;
                let mentions = e.mentions.iter().map(|m| u(m)).collect::<Result<_>>()?;
                let post_ref = |r: pb::PostLink| -> Result<PostRef> {
                    Ok(PostRef {
                        id: PostId(r.post_id),
                        author: u(&r.author)?,
                    })
                };
                Event::PostCreated {
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
                }
            }
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
            | Kind::KeptChanged(_)) => Event::decode_record(kind)?,
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
            other => unreachable!("{other:?} is decoded by `decode`"),
        })
    }
}

/// A JSON object as the events carry it: its text, empty for none.
/// What a deleted post had told, decoded.
fn told(t: &pb::Told) -> Result<(UserId, NoticeKind, PostId)> {
    let bad = |why: String| Error::internal(format!("undecodable event on the log: {why}"));
    let kind = NoticeKind::from_code(t.kind as u8)
        .ok_or_else(|| bad(format!("notice kind {}", t.kind)))?;
    let user = UserId::parse(&t.user).map_err(|e| bad(e.to_string()))?;
    Ok((user, kind, PostId(t.post_id)))
}

/// A new post's message on the log.
/// What a deleted post had told one user, as the log carries it.
fn told_pb((user, kind, about): &(UserId, NoticeKind, PostId)) -> pb::Told {
    pb::Told {
        user: user.as_str().to_owned(),
        kind: u32::from(kind.code()),
        post_id: about.0,
    }
}

fn post_created(post: &Post, trace: &Trace) -> pb::PostCreated {
    let link = |r: &PostRef| pb::PostLink {
        post_id: r.id.0,
        author: r.author.as_str().to_owned(),
    };
    pb::PostCreated {
        post_id: post.id.0,
        author: post.author.as_str().to_owned(),
        message: post.message.clone(),
        data_json: json_text(&post.data),
        mentions: post
            .mentions
            .iter()
            .map(|m| m.as_str().to_owned())
            .collect(),
        traceparent: trace.parent().unwrap_or_default().to_owned(),
        reply_to: post.reply_to.as_ref().map(link),
        repost_of: post.repost_of.as_ref().map(link),
    }
}

fn json_text(object: &Option<Map<String, Value>>) -> String {
    object
        .as_ref()
        .map(|d| Value::Object(d.clone()).to_string())
        .unwrap_or_default()
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

#[cfg(test)]
#[path = "event_tests.rs"]
mod tests;
