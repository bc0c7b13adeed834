//! Replies: which post a reply answers, who may reply, and whose timelines
//! a reply reaches.
//!
//! - A reply names the post it answers ([`crate::model::Post::reply_to`]),
//!   which must be stored; replying to a repost answers the post it
//!   carries. A block either way between the replier and the author
//!   answered refuses the reply, as it refuses a follow.
//! - A reply is an item of its author's like any post: fanned out to their
//!   followers, their lists and their groups. In home and list timelines it
//!   shows only to a reader who also follows the author answered, or who
//!   is that author, or wrote it ([`reaches`]): a conversation between two
//!   accounts reaches those who follow both, as large networks do it.
//!   Groups and profiles show every reply of their accounts.
//! - A post's replies are counted exactly, as its likes are
//!   ([`crate::interactions::likes::Tally::Replies`]), in the part the replier
//!   hashes to; deleting the reply, or its author, lowers the count. A
//!   reply outlives the post it answers (its `reply_to` then names a post
//!   that is gone).
//! - A thread ([`MAX_ANCESTORS`]) is the chain of posts a post answers,
//!   root first, and the post's direct replies, oldest first, each with
//!   its own count of replies to follow the conversation down.

use crate::error::{Error, ErrorKind};
use crate::ids::UserId;

pub use crate::model::MAX_ANCESTORS;

/// Whether a reply by `author` to a post of `answered` shows in `reader`'s
/// home and list timelines, `follows` being whether the reader follows
/// `answered`.
pub fn reaches(reader: &UserId, author: &UserId, answered: &UserId, follows: bool) -> bool {
    reader == author || reader == answered || follows
}

/// The refusal of a reply between users one of whom blocks the other.
pub fn reply_blocked(user: &UserId, author: &UserId) -> Error {
    Error::new(
        ErrorKind::Forbidden,
        "blocked",
        format!("{user} cannot reply to a post of {author}: one of them blocks the other"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    #[test]
    fn a_reply_reaches_who_follows_both_or_is_in_it() {
        let (reader, author, answered) = (u("r"), u("a"), u("b"));
        assert!(
            !reaches(&reader, &author, &answered, false),
            "follows only the replier"
        );
        assert!(reaches(&reader, &author, &answered, true), "follows both");
        assert!(
            reaches(&answered, &author, &answered, false),
            "the one answered"
        );
        assert!(reaches(&author, &author, &answered, false), "the replier");
        assert!(
            reaches(&reader, &author, &author, true),
            "a thread of one's own"
        );
        assert_eq!(reply_blocked(&author, &answered).code(), "blocked");
    }
}
