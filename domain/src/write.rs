//! Every write of the domain, as one value: what the ports' write methods
//! hand to a backend's one transaction primitive (`socialite_core::ports::Transact`).
//! [`Write::plan`] runs the write's planner on the backend's transaction, so
//! a backend implements how to run a transaction and how to act on what it
//! applied ([`Ledger`]), never a write of its own.

use crate::accounts::user;
use crate::checks::{EdgeChange, EdgeOp, EdgeTransition, Membership};
use crate::collections::{self, KeepChange};
use crate::deletion::cascade::DeletionStage;
use crate::deletion::plan::{begin_deletion, deletion_step};
use crate::error::{Error, Result};
use crate::event::Event;
use crate::feed::marker;
use crate::feed::markers::Marker;
use crate::filters::{self, FilterChange};
use crate::graph::relations::{
    FollowOption, Priority, Relation, RelationChange, RelationTransition,
};
use crate::graph::{edge, exclusive, membership, relate};
use crate::ids::{ListName, PostId, UserId};
use crate::interactions::likes::LikeChange;
use crate::interactions::repost::Reposted;
use crate::interactions::reposts::RepostChange;
use crate::interactions::{like, repost};
use crate::model::filter::Filter;
use crate::model::Post;
use crate::notifications::notified::NoticeChange;
use crate::notifications::notify;
use crate::notifications::thread_mutes::mute_thread;
use crate::plan::{Ledger, Txn};
use crate::posts::post;
use crate::transfer::import::Caps;
use crate::transfer::record::Record;
use crate::transfer::{import, replay};
use serde_json::{Map, Value};

/// A write of the domain, planned by `crate::plan` in one transaction.
#[derive(Debug, Clone)]
pub enum Write {
    /// A user created, or given a profile (`None` keeps theirs).
    PutUser {
        user: UserId,
        profile: Option<Map<String, Value>>,
    },
    /// A user's deletion begun.
    BeginDeletion(UserId),
    /// One step of a begun deletion.
    DeletionStep {
        user: UserId,
        stage: DeletionStage,
        limit: usize,
    },
    CreatePost(Post),
    DeletePost(PostId),
    Like(LikeChange),
    /// A repost made or undone; a new one takes the id `id`.
    Repost {
        change: RepostChange,
        id: PostId,
    },
    /// Notices kept or dropped (no `Forget` among them).
    Notices(Vec<NoticeChange>),
    /// A page of the notices to or by `user` forgotten.
    ForgetNotices {
        user: UserId,
        limit: usize,
    },
    Marker {
        user: UserId,
        to: Marker,
        force: bool,
    },
    /// A post put in or taken out of a user's collection, at `at_ms`.
    Keep {
        change: KeepChange,
        at_ms: u64,
    },
    Edge(EdgeChange),
    Membership(Membership),
    Relation(RelationChange),
    /// A reader's priority for an account set (`None`: cleared).
    Priority {
        user: UserId,
        target: UserId,
        level: Option<Priority>,
    },
    /// A follower's options for an account they follow turned on or off,
    /// at `at_ms`.
    FollowOptions {
        user: UserId,
        target: UserId,
        changes: Vec<(FollowOption, bool)>,
        at_ms: u64,
    },
    /// A keyword filter made (`id` None) or changed as `change` says, at
    /// `at_ms`.
    PutFilter {
        user: UserId,
        id: Option<u64>,
        change: FilterChange,
        at_ms: u64,
    },
    RemoveFilter {
        user: UserId,
        id: u64,
    },
    /// The user's `list` marked exclusive (`on`) or no longer.
    ListExclusive {
        user: UserId,
        list: ListName,
        on: bool,
    },
    /// The thread of `post` muted (`make`) or unmuted for `user`'s
    /// notifications.
    ThreadMute {
        user: UserId,
        post: PostId,
        make: bool,
    },
    RevokeTokens {
        user: UserId,
        at_ms: u64,
    },
    Suspension {
        user: UserId,
        on: bool,
        at_ms: u64,
    },
    Import {
        records: Vec<Record>,
        caps: Caps,
    },
    Replay(Event),
}

/// What a write answers; [`Write::plan`] gives each write its own kind.
#[derive(Debug)]
pub enum Done {
    /// Whether the user was created, and the profile they have now.
    User(bool, Option<Map<String, Value>>),
    /// Whether the write changed anything (or, for a deletion's step,
    /// whether its stage has more).
    Changed(bool),
    /// How many of its parts changed something.
    Count(usize),
    Post(Post),
    Deleted(Option<Post>),
    Reposted(Reposted),
    /// The marker the user has afterwards, and whether it moved.
    Marker(Marker, bool),
    Edge(EdgeTransition),
    Relation(RelationTransition),
    Filter(Filter),
    /// Whether a thread mute changed, and the thread's first post.
    Thread(bool, PostId),
}

impl Write {
    /// The operation's name, for metrics and spans: the port method that
    /// asks for it (a graph change: what it does, `follow`, `mute`...).
    pub fn name(&self) -> &'static str {
        match self {
            Write::PutUser { .. } => "put_user",
            Write::BeginDeletion(_) => "begin_deletion",
            Write::DeletionStep { .. } => "deletion_step",
            Write::CreatePost(_) => "create_post",
            Write::DeletePost(_) => "delete_post",
            Write::Like(_) => "change_like",
            Write::Repost { .. } => "change_repost",
            Write::Notices(_) => "apply_notices",
            Write::ForgetNotices { .. } => "forget_notices",
            Write::Marker { .. } => "set_marker",
            Write::Keep { .. } => "change_kept",
            Write::Edge(change) => match change.op() {
                EdgeOp::Follow => "follow",
                EdgeOp::Unfollow => "unfollow",
            },
            Write::Membership(change) => match change.join {
                true => "join",
                false => "leave",
            },
            Write::Relation(change) => match (change.relation(), change.makes()) {
                (Relation::Mute, true) => "mute",
                (Relation::Mute, false) => "unmute",
                (Relation::Block, true) => "block",
                (Relation::Block, false) => "unblock",
                (Relation::Priority(_), _) => "set_priority",
                (Relation::Option(_), _) => "set_follow_options",
            },
            Write::Priority { .. } => "set_priority",
            Write::FollowOptions { .. } => "set_follow_options",
            Write::PutFilter { .. } => "put_filter",
            Write::RemoveFilter { .. } => "remove_filter",
            Write::ListExclusive { .. } => "set_list_exclusive",
            Write::ThreadMute { make: true, .. } => "mute_thread",
            Write::ThreadMute { make: false, .. } => "unmute_thread",
            Write::RevokeTokens { .. } => "revoke_tokens",
            Write::Suspension { .. } => "set_suspended",
            Write::Import { .. } => "import",
            Write::Replay(_) => "replay",
        }
    }

    /// What the write does, for a store error's message.
    pub fn doing(&self) -> &'static str {
        match self {
            Write::PutUser { .. } => "storing a user",
            Write::BeginDeletion(_) => "marking a user as being deleted",
            Write::DeletionStep { .. } => "deleting a user",
            Write::CreatePost(_) => "storing a post",
            Write::DeletePost(_) => "deleting a post",
            Write::Like(_) => "storing a like",
            Write::Repost { .. } => "storing a repost",
            Write::Notices(_) => "storing notifications",
            Write::ForgetNotices { .. } => "forgetting notifications",
            Write::Marker { .. } => "storing a marker",
            Write::Keep { .. } => "keeping a post",
            Write::Edge(_) => "changing a follow",
            Write::Membership(_) => "changing a membership",
            Write::Relation(_) => "changing a mute or block",
            Write::Priority { .. } => "setting a priority",
            Write::FollowOptions { .. } => "setting follow options",
            Write::PutFilter { .. } => "storing a filter",
            Write::RemoveFilter { .. } => "deleting a filter",
            Write::ThreadMute { .. } => "changing a thread mute",
            Write::ListExclusive { .. } => "marking a list exclusive",
            Write::RevokeTokens { .. } => "revoking tokens",
            Write::Suspension { .. } => "changing a suspension",
            Write::Import { .. } => "importing records",
            Write::Replay(_) => "replaying an event",
        }
    }

    /// Whether the write queues events: an import's do not (see
    /// `transfer::import`); every other write's do.
    pub fn emits(&self) -> bool {
        !matches!(self, Write::Import { .. })
    }

    /// Runs the write's planner in `txn`.
    pub async fn plan<T: Txn>(&self, txn: &mut T) -> Result<Done, T::Error> {
        Ok(match self {
            Write::PutUser { user, profile } => {
                let (created, now) = user::put_user(txn, user, profile.clone()).await?;
                Done::User(created, now)
            }
            Write::BeginDeletion(user) => Done::Changed(begin_deletion(txn, user).await?),
            Write::DeletionStep { user, stage, limit } => {
                let step = deletion_step(txn, user, *stage, *limit).await?;
                Done::Changed(step.more)
            }
            Write::CreatePost(post) => Done::Post(post::create_post(txn, post.clone()).await?),
            Write::DeletePost(id) => Done::Deleted(post::delete_post(txn, *id).await?),
            Write::Like(change) => Done::Changed(like::change_like(txn, change).await?),
            Write::Repost { change, id } => {
                Done::Reposted(repost::change_repost(txn, change, *id).await?)
            }
            Write::Notices(changes) => Done::Count(notify::apply_notices(txn, changes).await?),
            Write::ForgetNotices { user, limit } => {
                Done::Changed(notify::forget_page(txn, user, *limit).await?)
            }
            Write::Marker { user, to, force } => {
                let (marker, moved) = marker::set_marker(txn, user, *to, *force).await?;
                Done::Marker(marker, moved)
            }
            Write::Keep { change, at_ms } => {
                Done::Changed(collections::change_kept(txn, change, *at_ms).await?)
            }
            Write::Edge(change) => Done::Edge(edge::change_edge(txn, change).await?),
            Write::Membership(change) => {
                Done::Changed(membership::change_membership(txn, change).await?)
            }
            Write::Relation(change) => Done::Relation(relate::change_relation(txn, change).await?),
            Write::Priority {
                user,
                target,
                level,
            } => Done::Changed(relate::set_priority(txn, user, target, *level, false).await?),
            Write::FollowOptions {
                user,
                target,
                changes,
                at_ms,
            } => {
                Done::Changed(relate::set_follow_options(txn, user, target, changes, *at_ms).await?)
            }
            Write::PutFilter {
                user,
                id,
                change,
                at_ms,
            } => Done::Filter(filters::plan::put_filter(txn, user, *id, change, *at_ms).await?),
            Write::RemoveFilter { user, id } => {
                Done::Changed(filters::plan::remove_filter(txn, user, *id).await?)
            }
            Write::ListExclusive { user, list, on } => {
                Done::Changed(exclusive::set_exclusive(txn, user, list, *on, true).await?)
            }
            Write::ThreadMute { user, post, make } => {
                let (changed, thread) = mute_thread(txn, user, *post, *make, true).await?;
                Done::Thread(changed, thread)
            }
            Write::RevokeTokens { user, at_ms } => {
                user::set_standing(txn, user, |s| s.revoked(*at_ms)).await?;
                Done::Changed(true)
            }
            Write::Suspension { user, on, at_ms } => {
                let held =
                    user::set_standing(txn, user, |s| s.with_suspension(*on, *at_ms).0).await?;
                Done::Changed(held.suspended != *on)
            }
            Write::Import { records, caps } => {
                Done::Count(import::import_records(txn, records, caps).await?)
            }
            Write::Replay(event) => Done::Changed(replay::replay_event(txn, event).await?),
        })
    }
}

/// The answer of a write that is not of the kind asked for: a backend that
/// answered one write with another's result.
fn mismatch(done: Done) -> Error {
    Error::internal(format!("a write answered {done:?}"))
}

impl Ledger {
    /// A ledger for `write`'s transaction: its events queued or left out
    /// ([`Write::emits`]).
    pub fn of(write: &Write) -> Ledger {
        if write.emits() {
            Ledger::default()
        } else {
            Ledger::quiet()
        }
    }
}

impl Done {
    pub fn changed(self) -> Result<bool> {
        match self {
            Done::Changed(c) => Ok(c),
            other => Err(mismatch(other)),
        }
    }
    pub fn count(self) -> Result<usize> {
        match self {
            Done::Count(n) => Ok(n),
            other => Err(mismatch(other)),
        }
    }
    pub fn post(self) -> Result<Post> {
        match self {
            Done::Post(p) => Ok(p),
            other => Err(mismatch(other)),
        }
    }
    pub fn deleted(self) -> Result<Option<Post>> {
        match self {
            Done::Deleted(p) => Ok(p),
            other => Err(mismatch(other)),
        }
    }
    pub fn reposted(self) -> Result<Reposted> {
        match self {
            Done::Reposted(r) => Ok(r),
            other => Err(mismatch(other)),
        }
    }
    pub fn marker(self) -> Result<(Marker, bool)> {
        match self {
            Done::Marker(m, moved) => Ok((m, moved)),
            other => Err(mismatch(other)),
        }
    }
    pub fn edge(self) -> Result<EdgeTransition> {
        match self {
            Done::Edge(t) => Ok(t),
            other => Err(mismatch(other)),
        }
    }
    pub fn relation(self) -> Result<RelationTransition> {
        match self {
            Done::Relation(t) => Ok(t),
            other => Err(mismatch(other)),
        }
    }
    pub fn thread(self) -> Result<(bool, PostId)> {
        match self {
            Done::Thread(changed, thread) => Ok((changed, thread)),
            other => Err(mismatch(other)),
        }
    }
    pub fn filter(self) -> Result<Filter> {
        match self {
            Done::Filter(f) => Ok(f),
            other => Err(mismatch(other)),
        }
    }
    pub fn user(self) -> Result<(bool, Option<Map<String, Value>>)> {
        match self {
            Done::User(created, profile) => Ok((created, profile)),
            other => Err(mismatch(other)),
        }
    }
}
