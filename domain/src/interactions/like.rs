//! A like made or undone: the user must exist, the post must be stored,
//! no block may stand between the user and the post's author; the row,
//! the post's count and the event move together, once
//! ([`crate::interactions::likes`]).

use crate::checks::{post_not_found, user_not_found, Blocks};
use crate::event::Event;
use crate::ids::now_ms;
use crate::interactions::likes::{like_blocked, tally_shard, LikeChange, Tally};
use crate::model::Post;
use crate::plan::{Step, Txn};

/// Applies `change` now; whether it changed anything (a like of a post
/// liked already, or an unlike of one not liked, changes nothing). A
/// repost's id stands for its original.
pub async fn change_like<T: Txn>(txn: &mut T, change: &LikeChange) -> Result<bool, T::Error> {
    let change = crate::interactions::repost::like_of_original(txn, change).await?;
    change_like_at(txn, &change, now_ms()).await
}

/// Applies `change` as made at `at_ms`.
async fn change_like_at<T: Txn>(
    txn: &mut T,
    change: &LikeChange,
    at_ms: u64,
) -> Result<bool, T::Error> {
    let LikeChange { user, post, .. } = change;
    if txn.existing_users(&[user]).await?.is_empty() {
        return Err(user_not_found(user).into());
    }
    let Some(stored) = txn.post(*post).await? else {
        return Err(post_not_found(*post).into());
    };
    like_stored(txn, change, &stored, at_ms, Blocks::Refuse).await
}

/// [`change_like_at`] once its user is known to exist and its post is
/// `stored`; a block refuses a like as `blocks` says. A transfer decides
/// those itself (`crate::transfer::mode`): what a user or a post that is
/// not here does, and whether a like made before a block stands.
pub async fn like_stored<T: Txn>(
    txn: &mut T,
    change: &LikeChange,
    stored: &Post,
    at_ms: u64,
    blocks: Blocks,
) -> Result<bool, T::Error> {
    let LikeChange { user, post, like } = change;
    let held = txn.liked(*post, user).await?;
    if held.is_some() == *like {
        return Ok(false);
    }
    if *like && blocks == Blocks::Refuse && txn.blocked_either_way(user, &stored.author).await? {
        return Err(like_blocked(user, &stored.author).into());
    }
    let at_ms = held.unwrap_or(at_ms);
    let event = match like {
        true => Event::Liked {
            user: user.clone(),
            post: *post,
            author: stored.author.clone(),
            at_ms,
        },
        false => Event::Unliked {
            user: user.clone(),
            post: *post,
            author: stored.author.clone(),
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
