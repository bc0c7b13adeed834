//! Reposts: who may repost what, and where a reposted post sits in a
//! timeline.
//!
//! A repost is an item of its reposter, as a post is: stored with the
//! reposter's posts (an id of its own, no message, [`Post::repost_of`]
//! naming the original), fanned out to the reposter's followers' home and
//! list timelines (groups carry posts only), merged at read time for
//! dormant readers and for big reposters (hybrid fanout), purged with the
//! reposter's other items on an unfollow, a mute or a block. So the raw
//! stream of a timeline is every item of its accounts, and what a reader
//! sees is decided from it here:
//!
//! - **Once.** A post appears once in a timeline, however many of the
//!   timeline's accounts reposted it and whether or not its author is one
//!   of them. It sits at its *newest arrival*: the newest of the reposts
//!   that the timeline's accounts made of it, or the post itself when none
//!   did ([`place`]). A new repost lifts it to the top, like a new post;
//!   a reader paging down never meets it twice, since it only ever moves
//!   up, out of the range below their cursor (an undone repost moves it
//!   back down to its previous arrival, or out when that was the last).
//!   The other choice, its *first* arrival, was rejected: deciding it at
//!   fanout needs what a timeline held below its stored window (a lookup
//!   per follower for every repost of an older post), where the newest
//!   arrival needs nothing but the repost itself.
//! - **Who.** The entry names the timeline's accounts that reposted it,
//!   newest first ([`MAX_REPOSTED_BY`] of them) and how many did.
//! - **Hidden.** A repost of a post whose author the reader does not see
//!   (muted, blocked either way, suspended) is not shown, nor is one of a
//!   post that was deleted.
//! - **Refused.** Reposting one's own post ([`own_repost`]), a post that is
//!   not stored, or across a block either way. Reposting a repost reposts
//!   its original. A post is reposted once per user: again changes nothing.
//!
//! A post's reposts are counted exactly, as its likes are
//! ([`crate::interactions::likes::Tally::Reposts`]). Deleting the post takes its
//! count; the reposts of it name nothing any more, no read or export shows
//! them (a read of a repost's own id answers `post_not_found`, as it would
//! for a post never made: [`shown_by_id`]; a like of it is refused the
//! same way), and they go with their reposters' deletions (a post id is
//! never used again). Undoing a repost deletes the reposter's item, whose
//! retraction leaves the timelines that held it.

use crate::error::{Error, ErrorKind};
use crate::ids::{PostId, UserId};
use crate::model::Post;

/// Reposters an entry names at most: the newest.
pub const MAX_REPOSTED_BY: usize = 20;

/// A post with at most this many reposts has them read whole and its
/// reposters looked up among the reader's followees; past it, the reader's
/// followees are looked up among its reposters (at most the follow cap).
pub const FEW_REPOSTS: usize = 64;

/// A repost made (`repost`) or undone by `user` of `post`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepostChange {
    pub user: UserId,
    pub post: PostId,
    pub repost: bool,
}

/// The refusal of reposting one's own post.
pub fn own_repost(user: &UserId) -> Error {
    Error::conflict(
        "cannot_repost_own",
        format!("{user} cannot repost their own post"),
    )
}

/// The refusal of a repost between users one of whom blocks the other.
pub fn repost_blocked(user: &UserId, author: &UserId) -> Error {
    Error::new(
        ErrorKind::Forbidden,
        "blocked",
        format!("{user} cannot repost a post of {author}: one of them blocks the other"),
    )
}

/// Where a post sits in one timeline and who placed it there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub position: PostId,
    /// Newest first, at most [`MAX_REPOSTED_BY`].
    pub reposted_by: Vec<UserId>,
    pub reposts_seen: u64,
}

/// Where a post sits in a timeline, from its arrivals there: `own` is the
/// post's id when the timeline shows the post itself (its author is one of
/// the timeline's accounts, and the reader sees it), `reposts` the reposts
/// of it that the timeline's accounts made, which the reader sees. `None`
/// when it has no arrival: the timeline does not show it.
pub fn place(own: Option<PostId>, mut reposts: Vec<(UserId, PostId)>) -> Option<Placement> {
    reposts.sort_unstable_by_key(|r| std::cmp::Reverse(r.1));
    let newest_repost = reposts.first().map(|(_, at)| *at);
    let position = newest_repost.into_iter().chain(own).max()?;
    let reposts_seen = reposts.len() as u64;
    reposts.truncate(MAX_REPOSTED_BY);
    Some(Placement {
        position,
        reposted_by: reposts.into_iter().map(|(u, _)| u).collect(),
        reposts_seen,
    })
}

/// The authors a read of `item` by its id must let the reader see for it
/// to answer: the item's, and for a repost's item the author of the
/// original it carries (`original`: that post as stored). `None` when it
/// answers nothing: the item of a repost whose original is gone names
/// nothing, read by id as in every timeline.
pub fn shown_by_id<'a>(item: &'a Post, original: Option<&'a Post>) -> Option<Vec<&'a UserId>> {
    match (&item.repost_of, original) {
        (None, _) => Some(vec![&item.author]),
        (Some(carried), Some(o)) if o.id == carried.id => Some(vec![&item.author, &o.author]),
        (Some(_), _) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    #[test]
    fn a_post_sits_at_its_newest_arrival() {
        assert_eq!(place(None, vec![]), None, "no arrival, not shown");
        let own = place(Some(PostId(5)), vec![]).unwrap();
        assert_eq!((own.position, own.reposts_seen), (PostId(5), 0));
        let lifted = place(
            Some(PostId(5)),
            vec![
                (u("b"), PostId(9)),
                (u("c"), PostId(12)),
                (u("d"), PostId(7)),
            ],
        )
        .unwrap();
        assert_eq!(lifted.position, PostId(12));
        assert_eq!(lifted.reposted_by, vec![u("c"), u("b"), u("d")]);
        assert_eq!(lifted.reposts_seen, 3);
        let unfollowed_author = place(None, vec![(u("b"), PostId(9))]).unwrap();
        assert_eq!(unfollowed_author.position, PostId(9));
    }

    #[test]
    fn an_entry_names_the_newest_reposters() {
        let many: Vec<(UserId, PostId)> = (0..50)
            .map(|i| (u(&format!("r{i}")), PostId(100 + i)))
            .collect();
        let p = place(None, many).unwrap();
        assert_eq!(p.reposted_by.len(), MAX_REPOSTED_BY);
        assert_eq!(p.reposted_by[0], u("r49"));
        assert_eq!(p.reposts_seen, 50);
        assert_eq!(p.position, PostId(149));
    }

    #[test]
    fn a_repost_reads_by_id_only_while_its_original_is_stored() {
        let original = Post::written(PostId(5), u("ann"), "hi".into(), None, vec![]);
        let item = Post::repost(PostId(9), u("bo"), original.shown());
        assert_eq!(shown_by_id(&original, None), Some(vec![&u("ann")]));
        assert_eq!(
            shown_by_id(&item, Some(&original)),
            Some(vec![&u("bo"), &u("ann")]),
            "the reader must see the reposter and the original's author"
        );
        assert_eq!(shown_by_id(&item, None), None, "the original is gone");
        let other = Post::written(PostId(6), u("ann"), "other".into(), None, vec![]);
        assert_eq!(shown_by_id(&item, Some(&other)), None);
    }

    #[test]
    fn refusals_have_their_codes() {
        assert_eq!(own_repost(&u("a")).code(), "cannot_repost_own");
        let blocked = repost_blocked(&u("a"), &u("b"));
        assert_eq!(
            (blocked.code(), blocked.kind()),
            ("blocked", ErrorKind::Forbidden)
        );
    }
}
