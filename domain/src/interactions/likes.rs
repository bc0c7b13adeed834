//! Likes: who may like a post, and how a post's count of them moves.
//!
//! A like is a row (post, user, when) kept once: liking twice, or replaying
//! a like from the log, changes nothing. A post's count moves in the same
//! transaction as its rows, so it is exact; it is kept in
//! [`TALLY_SHARDS`] parts, and a like moves the part its user hashes to
//! ([`tally_shard`]), so that concurrent likes of one viral post seldom
//! write the same record (a store whose writes contend per record, as
//! MongoDB's transactions do, keeps each part as a document; a store with
//! one writer may keep one). Unliking moves the same part back.
//!
//! Liking is refused while either user blocks the other, as a follow is.
//! A repost's item stands for the post it carries, as it does for a repost
//! or a reply: liking it likes the original ([`liked_post`]), so the block
//! check sees the original's author and the like counts and notifies where
//! readers see it.
//! A deleted post's count goes with it; its like rows go with their users'
//! deletions (a post id is never used again, so they name nothing).

use crate::error::{Error, ErrorKind};
use crate::ids::{spread, PostId, UserId};
pub use crate::model::tally::Tally;

/// Parts each post's count is kept in.
pub const TALLY_SHARDS: u64 = 16;

/// The part of a post's tally that `actor`'s acts move.
pub fn tally_shard(actor: &UserId) -> u8 {
    spread(actor.as_str(), TALLY_SHARDS) as u8
}

/// A like made (`like`) or undone by `user` of `post`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LikeChange {
    pub user: UserId,
    pub post: PostId,
    pub like: bool,
}

/// The refusal of a like between users one of whom blocks the other.
pub fn like_blocked(user: &UserId, author: &UserId) -> Error {
    Error::new(
        ErrorKind::Forbidden,
        "blocked",
        format!("{user} cannot like a post of {author}: one of them blocks the other"),
    )
}

/// The post a like (`like`) or an unlike of the post stored under `id`
/// acts on, when that post is a repost's item carrying `original`:
/// `original_stored` tells whether the original still is, `held_on_item`
/// whether the user's like is on the item itself.
///
/// The item stands for its original: a like or an unlike of it acts on
/// the original. A like an earlier version stored on the item itself is
/// taken back where it is, so it can still be undone. A repost whose
/// original is gone names nothing (`None`): it is refused as a post that
/// does not exist, as every read of it answers.
pub fn liked_post(
    id: PostId,
    original: PostId,
    original_stored: bool,
    held_on_item: bool,
    like: bool,
) -> Option<PostId> {
    if !like && held_on_item {
        return Some(id);
    }
    original_stored.then_some(original)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repost_is_liked_and_unliked_as_its_original() {
        let (item, original) = (PostId(9), PostId(5));
        assert_eq!(
            liked_post(item, original, true, false, true),
            Some(original)
        );
        assert_eq!(
            liked_post(item, original, true, false, false),
            Some(original)
        );
        // A like stored on the item by an earlier version is undone there.
        assert_eq!(liked_post(item, original, true, true, false), Some(item));
        assert_eq!(liked_post(item, original, false, true, false), Some(item));
        // The original deleted: the item names nothing.
        for like in [true, false] {
            assert_eq!(liked_post(item, original, false, false, like), None);
        }
    }

    #[test]
    fn likers_spread_over_every_part_and_keep_theirs() {
        let mut used = std::collections::HashSet::new();
        for i in 0..400 {
            used.insert(tally_shard(&UserId::parse(&format!("u{i}")).unwrap()));
        }
        assert_eq!(used.len() as u64, TALLY_SHARDS);
        let fan = UserId::parse("fan").unwrap();
        assert_eq!(tally_shard(&fan), tally_shard(&fan));
        // The mixing the stored follower counts were written with.
        assert_eq!(spread("fan", 16), spread("fan", 16));
        assert_ne!(Tally::Likes.code(), 0);
    }
}
