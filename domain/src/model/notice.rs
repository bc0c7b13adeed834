//! What a notice tells, and the notices and entries stored of it: the
//! values notifications are decided with (`notifications::notified`) and
//! stored as.

use crate::ids::{PostId, UserId};

/// What a notice tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NoticeKind {
    Follow,
    Mention,
    Reply,
    Repost,
    Like,
    /// A post or reply by an account the recipient follows with the
    /// `notify` option on.
    Post,
}

impl NoticeKind {
    pub const ALL: [NoticeKind; 6] = [
        NoticeKind::Follow,
        NoticeKind::Mention,
        NoticeKind::Reply,
        NoticeKind::Repost,
        NoticeKind::Like,
        NoticeKind::Post,
    ];

    /// The stored code.
    pub fn code(self) -> u8 {
        match self {
            NoticeKind::Follow => 1,
            NoticeKind::Mention => 2,
            NoticeKind::Reply => 3,
            NoticeKind::Repost => 4,
            NoticeKind::Like => 5,
            NoticeKind::Post => 6,
        }
    }

    pub fn from_code(code: u8) -> Option<NoticeKind> {
        NoticeKind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// The name the API shows.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeKind::Follow => "follow",
            NoticeKind::Mention => "mention",
            NoticeKind::Reply => "reply",
            NoticeKind::Repost => "repost",
            NoticeKind::Like => "like",
            NoticeKind::Post => "post",
        }
    }
}

/// The span of a group's window: a UTC day.
pub const WINDOW_MS: u64 = 86_400_000;

/// Which notice: one per act. `source` is what made it (the reply, the
/// mentioning post, the repost's item), absent for a like or a follow.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NoticeKey {
    pub recipient: UserId,
    pub kind: NoticeKind,
    /// The post it is about: liked, reposted, answered or mentioning.
    pub post: Option<PostId>,
    pub actor: UserId,
    pub source: Option<PostId>,
}

/// A notice: who is told what, and when (a time-ordered id: the source's
/// id, or one made from the act's time).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub key: NoticeKey,
    pub id: PostId,
}

/// Which entry of its recipient's notifications a notice is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupKey {
    pub kind: NoticeKind,
    pub post: Option<PostId>,
    /// The UTC day, as days since the epoch.
    pub window: u64,
}

impl Notice {
    pub fn group(&self) -> GroupKey {
        GroupKey {
            kind: self.key.kind,
            post: self.key.post,
            window: self.id.unix_ms() / WINDOW_MS,
        }
    }
}

/// An entry of a user's notifications as stored: its group, how many
/// notices it holds, its newest notice, and the newest actors with their
/// notices' ids, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoticeGroup {
    pub group: GroupKey,
    pub count: u64,
    pub latest: PostId,
    pub actors: Vec<(PostId, UserId)>,
}
