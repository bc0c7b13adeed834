//! A like made or undone: the user must exist, the post must be stored,
//! no block may stand between the user and the post's author; the row,
//! the post's count and the event move together, once
//! ([`crate::rules::likes`]).

use super::{Step, Txn};
use crate::event::Event;
use crate::ids::now_ms;
use crate::rules::checks::{post_not_found, user_not_found};
use crate::rules::likes::{like_blocked, tally_shard, LikeChange, Tally};

/// Applies `change` now; whether it changed anything (a like of a post
/// liked already, or an unlike of one not liked, changes nothing). A
/// repost's id stands for its original.
pub async fn change_like<T: Txn>(txn: &mut T, change: &LikeChange) -> Result<bool, T::Error> {
    let change = super::repost::like_of_original(txn, change).await?;
    change_like_at(txn, &change, now_ms()).await
}

/// Applies `change` as made at `at_ms` (an import or a replay keeps the
/// time the like was made).
pub async fn change_like_at<T: Txn>(
    txn: &mut T,
    change: &LikeChange,
    at_ms: u64,
) -> Result<bool, T::Error> {
    let LikeChange { user, post, like } = change;
    if txn.existing_users(&[user]).await?.is_empty() {
        return Err(user_not_found(user).into());
    }
    let Some(stored) = txn.post(*post).await? else {
        return Err(post_not_found(*post).into());
    };
    let held = txn.liked(*post, user).await?;
    if held.is_some() == *like {
        return Ok(false);
    }
    if *like && txn.blocked_either_way(user, &stored.author).await? {
        return Err(like_blocked(user, &stored.author).into());
    }
    let at_ms = held.unwrap_or(at_ms);
    let event = match like {
        true => Event::Liked {
            user: user.clone(),
            post: *post,
            author: stored.author,
            at_ms,
        },
        false => Event::Unliked {
            user: user.clone(),
            post: *post,
            author: stored.author,
        },
    };
    let steps = [
        Step::Like {
            post: *post,
            user: user.clone(),
            at_ms,
            active: *like,
        },
        Step::Tally {
            post: *post,
            tally: Tally::Likes,
            shard: tally_shard(user),
            step: if *like { 1 } else { -1 },
        },
        Step::Emit(event),
    ];
    txn.apply(&steps).await?;
    Ok(true)
}
