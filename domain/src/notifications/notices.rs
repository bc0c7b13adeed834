//! The notices a user is told of, and the entries they group into: the
//! types [`crate::notifications::notified`] decides with, apart from the
//! events it decides from (which carry a [`NoticeKind`] themselves).

use crate::ids::spread;
use crate::ids::{PostId, UserId};

/// Actors an entry names: the newest.
pub const ACTORS_SHOWN: usize = 5;
/// The most entries an unread count counts.
pub const MAX_UNREAD: usize = 1000;

pub use crate::model::notice::{GroupKey, Notice, NoticeGroup, NoticeKey, NoticeKind, WINDOW_MS};

/// What an applied event changes in notifications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NoticeChange {
    Made(Notice),
    Undone(NoticeKey),
    /// Every notice to or by the user (deleted) goes, a page at a time.
    Forget(UserId),
}

/// An id for an act without one of its own (a like, a follow) made at
/// `at_ms`: its time, and low bits that tell apart acts of one millisecond.
pub fn id_at(at_ms: u64, actor: &UserId, post: Option<PostId>) -> PostId {
    let tie = post.map_or(0, |p| p.0);
    let low = spread(&format!("{actor}:{tie}"), 1 << 22);
    PostId(PostId::first_at(at_ms).0 | low)
}
