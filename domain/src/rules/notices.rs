//! The notices a user is told of, and the entries they group into: the
//! types [`crate::rules::notifications`] decides with, apart from the
//! events it decides from (which carry a [`NoticeKind`] themselves).

use crate::ids::{PostId, UserId};
use crate::rules::likes::spread;

/// The span of a group's window: a UTC day.
pub const WINDOW_MS: u64 = 86_400_000;
/// Actors an entry names: the newest.
pub const ACTORS_SHOWN: usize = 5;
/// The most entries an unread count counts.
pub const MAX_UNREAD: usize = 1000;

pub use crate::model::notice_kind::NoticeKind;

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

/// What an applied event changes in notifications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeChange {
    Made(Notice),
    Undone(NoticeKey),
    /// Every notice to or by the user (deleted) goes, a page at a time.
    Forget(UserId),
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

/// An id for an act without one of its own (a like, a follow) made at
/// `at_ms`: its time, and low bits that tell apart acts of one millisecond.
pub fn id_at(at_ms: u64, actor: &UserId, post: Option<PostId>) -> PostId {
    let tie = post.map_or(0, |p| p.0);
    let low = spread(&format!("{actor}:{tie}"), 1 << 22);
    PostId(PostId::first_at(at_ms).0 | low)
}
