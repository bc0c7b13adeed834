//! Muted threads: a user mutes a conversation, and its replies, likes,
//! reposts and mentions notify them no more (Mastodon's and Bluesky's
//! "mute conversation"). Decided once for every backend:
//!
//! - **A thread is named by its first post**: muting through any post of
//!   it mutes the chain's top, the first post reached going up its replies,
//!   so the replies under it are covered. The walk goes up
//!   [`MAX_ANCESTORS`] posts at most, as a thread read does: a reply deeper
//!   than that names the post that far up, not the top (a post deleted
//!   since ends the chain at its id).
//! - **At notice time**: a notice about a post (a reply to, like, repost or
//!   mention in it) is not made for a recipient who muted the post's
//!   thread ([`in_muted_thread`]). The chain is walked only for a
//!   recipient who muted any, so the common notice costs one read.
//!   Notices made before the mute stay.
//! - **At read time**: an alert of a followed author's post
//!   ([`crate::notifications::alerts`]), derived when read, is left out
//!   while its thread is muted ([`in_one_of`]).
//! - **Bounded**: at most [`MAX_THREAD_MUTES`] threads a user.

use crate::checks::{post_not_found, user_not_found};
use crate::error::Error;
use crate::event::Event;
use crate::ids::{PostId, UserId};
use crate::model::MAX_ANCESTORS;
use crate::plan::{Step, Txn};

/// Most threads one user mutes.
pub const MAX_THREAD_MUTES: usize = 1000;

/// Where a thread walk reads posts: a write's transaction, or a store.
#[allow(async_fn_in_trait)]
pub trait Answered {
    type Error;
    /// What `post` answers (`Some(None)`: nothing, it is a first post);
    /// `None` when `post` is not stored.
    async fn answered(&mut self, post: PostId) -> Result<Option<Option<PostId>>, Self::Error>;
}

/// A write's transaction, as a thread walk reads it.
pub struct InTxn<'a, T>(pub &'a mut T);

impl<T: Txn> Answered for InTxn<'_, T> {
    type Error = T::Error;
    async fn answered(&mut self, post: PostId) -> Result<Option<Option<PostId>>, T::Error> {
        let found = self.0.post(post).await?;
        Ok(found.map(|p| p.reply_to.map(|r| r.id)))
    }
}

/// The first post of `post`'s thread: its chain's top, or the id of the
/// post the chain's last stored post answers (deleted since). `None` when
/// `post` itself is not stored.
pub async fn thread_of<A: Answered>(
    posts: &mut A,
    post: PostId,
) -> Result<Option<PostId>, A::Error> {
    let Some(mut up) = posts.answered(post).await? else {
        return Ok(None);
    };
    let mut at = post;
    for _ in 0..MAX_ANCESTORS {
        let Some(parent) = up else {
            break;
        };
        match posts.answered(parent).await? {
            Some(next) => (at, up) = (parent, next),
            None => return Ok(Some(parent)),
        }
    }
    Ok(Some(at))
}

/// Mutes (`make`) or unmutes for `user` the thread of `post` (`resolve`:
/// found as [`thread_of`] finds it, as the API names one; else `post` is
/// the thread's first post already, as a transfer carries it). A post not
/// stored cannot be muted through (`post_not_found`), but a thread named by
/// its first post can be unmuted after that post is gone. Whether it
/// changed, and the thread's first post.
pub async fn mute_thread<T: Txn>(
    txn: &mut T,
    user: &UserId,
    post: PostId,
    make: bool,
    resolve: bool,
) -> Result<(bool, PostId), T::Error> {
    if txn.existing_users(&[user]).await?.is_empty() {
        return Err(user_not_found(user).into());
    }
    let found = match resolve {
        true => thread_of(&mut InTxn(&mut *txn), post).await?,
        false => Some(post),
    };
    let thread = match found {
        Some(first) => first,
        None if make => return Err(post_not_found(post).into()),
        None => post,
    };
    let held = txn.thread_mutes(user, MAX_THREAD_MUTES).await?;
    if held.contains(&thread) == make {
        return Ok((false, thread));
    }
    if make && held.len() >= MAX_THREAD_MUTES {
        return Err(Error::conflict(
            "too_many_thread_mutes",
            format!("a user mutes at most {MAX_THREAD_MUTES} threads"),
        )
        .into());
    }
    let steps = [
        Step::ThreadMute {
            user: user.clone(),
            post: thread,
            active: make,
        },
        Step::Emit(Event::ThreadMuteSet {
            user: user.clone(),
            post: thread,
            muted: make,
        }),
    ];
    txn.apply(&steps).await?;
    Ok((true, thread))
}

/// Whether `recipient` muted the thread `about` is in (read in the
/// notice's transaction).
pub async fn in_muted_thread<T: Txn>(
    txn: &mut T,
    recipient: &UserId,
    about: PostId,
) -> Result<bool, T::Error> {
    let muted = txn.thread_mutes(recipient, MAX_THREAD_MUTES).await?;
    if muted.is_empty() {
        return Ok(false);
    }
    in_one_of(&mut InTxn(&mut *txn), |p| muted.contains(p), about).await
}

/// Whether `about` is in one of the threads `muted` names (by their first
/// posts): the post itself, or the first post of its thread.
pub async fn in_one_of<A: Answered>(
    posts: &mut A,
    muted: impl Fn(&PostId) -> bool,
    about: PostId,
) -> Result<bool, A::Error> {
    if muted(&about) {
        return Ok(true);
    }
    let first = thread_of(posts, about).await?;
    Ok(first.is_some_and(|first| muted(&first)))
}
