//! Events on the log, and their protobuf encoding (`proto/socialite/v1/events.proto`;
//! read back in `crate::event_decode`).

use crate::ids::{GroupName, ListName, PostId, UserId};
use crate::model::collection::Collection;
use crate::model::filter::{Filter, FilterAction};
use crate::model::marker::Marker;
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
        /// When the mute ends by itself (ms since the epoch); `None`: never.
        until_ms: Option<u64>,
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
    /// The account id's standing is now `standing`; `was_suspended`: the
    /// suspension it had before (false in events written before it was
    /// carried), so a reader of the log tells a suspension or its lifting
    /// from a revocation of tokens.
    StandingSet {
        user: UserId,
        standing: Standing,
        was_suspended: bool,
    },
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
    /// the others are unchanged (an unfollow turns them all off), at
    /// `at_ms` (0 in events written before the time was carried).
    FollowOptionsSet {
        user: UserId,
        target: UserId,
        changes: Vec<(FollowOption, bool)>,
        at_ms: u64,
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
    /// `user`'s keyword filter as it is now (made or changed).
    FilterPut { user: UserId, filter: Filter },
    /// `user`'s keyword filter `filter` deleted.
    FilterRemoved { user: UserId, filter: u64 },
    /// `user` muted (`muted`) or unmuted the thread whose first post is
    /// `post` ([`crate::notifications::thread_mutes`]).
    ThreadMuteSet {
        user: UserId,
        post: PostId,
        muted: bool,
    },
    /// `user`'s `list` marked exclusive or no longer
    /// ([`crate::graph::exclusive`]).
    ListExclusiveSet {
        user: UserId,
        list: ListName,
        exclusive: bool,
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
            | Event::KeptChanged { user, .. }
            | Event::FilterPut { user, .. }
            | Event::FilterRemoved { user, .. }
            | Event::ThreadMuteSet { user, .. }
            | Event::ListExclusiveSet { user, .. } => user,
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
            Event::Muted { .. } => Kind::Muted(self.muted_pb()),
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
            | Event::KeptChanged { .. }
            | Event::FilterPut { .. }
            | Event::FilterRemoved { .. }
            | Event::ThreadMuteSet { .. }
            | Event::ListExclusiveSet { .. } => self.record_kind(),
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
            Event::StandingSet {
                user,
                standing,
                was_suspended,
            } => Kind::StandingSet(pb::StandingSet {
                user: s(user),
                tokens_after_ms: standing.tokens_after_ms,
                suspended: standing.suspended,
                was_suspended: *was_suspended,
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
                at_ms,
            } => {
                let set =
                    |o: FollowOption| changes.iter().find(|(c, _)| *c == o).map(|(_, on)| *on);
                Kind::FollowOptionsSet(pb::FollowOptionsSet {
                    user: s(user),
                    target: s(target),
                    hide_reposts: set(FollowOption::HideReposts),
                    all_replies: set(FollowOption::AllReplies),
                    notify: set(FollowOption::Notify),
                    at_ms: *at_ms,
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
            Event::FilterPut { user, filter } => Kind::FilterPut(filter_put(user, filter)),
            Event::FilterRemoved { user, filter } => Kind::FilterRemoved(pb::FilterRemoved {
                user: s(user),
                id: *filter,
            }),
            Event::ThreadMuteSet { .. } | Event::ListExclusiveSet { .. } => self.setting_kind(),
            other => unreachable!("{other:?} changes timelines"),
        }
    }
}

impl Event {
    /// A reader's setting as the log carries it: a muted thread, an
    /// exclusive list.
    fn setting_kind(&self) -> pb::event::Kind {
        use pb::event::Kind;
        match self {
            Event::ThreadMuteSet { user, post, muted } => Kind::ThreadMuteSet(pb::ThreadMuteSet {
                user: user.as_str().to_owned(),
                post_id: post.0,
                muted: *muted,
            }),
            Event::ListExclusiveSet {
                user,
                list,
                exclusive,
            } => Kind::ListExclusiveSet(pb::ListExclusiveSet {
                user: user.as_str().to_owned(),
                list: list.as_str().to_owned(),
                exclusive: *exclusive,
            }),
            other => unreachable!("{other:?} is no reader's setting"),
        }
    }
}

/// What a deleted post had told one user, as the log carries it.
fn told_pb((user, kind, about): &(UserId, NoticeKind, PostId)) -> pb::Told {
    pb::Told {
        user: user.as_str().to_owned(),
        kind: u32::from(kind.code()),
        post_id: about.0,
    }
}

fn filter_put(user: &UserId, f: &Filter) -> pb::FilterPut {
    pb::FilterPut {
        user: user.as_str().to_owned(),
        id: f.id,
        title: f.title.clone(),
        phrases: f
            .phrases
            .iter()
            .map(|p| pb::FilterPutPhrase {
                text: p.text.clone(),
                whole_word: p.whole_word,
            })
            .collect(),
        contexts: u32::from(f.contexts.bits()),
        hide: f.action == FilterAction::Hide,
        expires_at_ms: f.expires_at_ms,
    }
}

/// A new post's message on the log.
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

/// A JSON object as the events carry it: its text, empty for none.
fn json_text(object: &Option<Map<String, Value>>) -> String {
    object
        .as_ref()
        .map(|d| Value::Object(d.clone()).to_string())
        .unwrap_or_default()
}

impl Event {
    /// A `Muted` event as the log carries it.
    fn muted_pb(&self) -> pb::Muted {
        let Event::Muted {
            user,
            target,
            edge,
            until_ms,
        } = self
        else {
            unreachable!("only a Muted event")
        };
        pb::Muted {
            user: user.as_str().to_owned(),
            target: target.as_str().to_owned(),
            following: edge.is_some(),
            lists: edge
                .iter()
                .flatten()
                .map(|l| l.as_str().to_owned())
                .collect(),
            until_ms: *until_ms,
        }
    }
}

#[cfg(test)]
#[path = "event_tests.rs"]
pub(crate) mod tests;
