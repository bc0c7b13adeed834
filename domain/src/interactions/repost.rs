//! A repost made or undone ([`crate::interactions::reposts`]): the user must
//! exist, the post must be stored and not the user's own, no block may
//! stand between the user and its author; then the reposter's item (a
//! post of theirs naming the original), its index rows, the original's
//! count and the event move together, once.

use crate::checks::{post_not_found, user_not_found, Blocks};
use crate::event::Event;
use crate::ids::{PostId, UserId};
use crate::interactions::likes::{liked_post, tally_shard, LikeChange, Tally};
use crate::interactions::reposts::{own_repost, repost_blocked, RepostChange};
use crate::model::{Post, PostRef};
use crate::notifications::notified::post_deleted;
use crate::plan::{Step, Txn};

/// What a repost change did: the reposter's item it made or removed (the
/// one that stands, if any, when nothing changed), and whether anything
/// changed. Afterwards the user reposts the post exactly when the change
/// asked to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reposted {
    pub item: Option<PostId>,
    pub changed: bool,
}

/// Applies `change`; a new repost takes the id `id` (and the time in it).
/// A repost of a post reposted already, or an undoing of one not reposted,
/// changes nothing.
pub async fn change_repost<T: Txn>(
    txn: &mut T,
    change: &RepostChange,
    id: PostId,
) -> Result<Reposted, T::Error> {
    let RepostChange { user, post, repost } = change;
    if txn.existing_users(&[user]).await?.is_empty() {
        return Err(user_not_found(user).into());
    }
    let Some(original) = original_of(txn, *post).await? else {
        if *repost {
            return Err(post_not_found(*post).into());
        }
        // The post is gone; its repost names nothing, but may still be
        // taken back.
        let held = txn.reposted(*post, user).await?;
        if let Some(item) = held {
            take_back(txn, item, false).await?;
        }
        return Ok(Reposted {
            item: held,
            changed: held.is_some(),
        });
    };
    let held = txn.reposted(original.id, user).await?;
    if held.is_some() == *repost {
        return Ok(Reposted {
            item: held,
            changed: false,
        });
    }
    if !*repost {
        let item = held.expect("checked above");
        take_back(txn, item, true).await?;
        return Ok(Reposted {
            item: Some(item),
            changed: true,
        });
    }
    let item = Post::repost(id, user.clone(), original);
    new_repost(txn, item, Blocks::Refuse).await?;
    Ok(Reposted {
        item: Some(id),
        changed: true,
    })
}

/// Stores `item`, a new repost of the post its `repost_of` names (stored,
/// not a repost), by a user known to exist who does not repost it yet:
/// refused when it is the user's own post, or across a block as `blocks`
/// says (a transfer decides that itself: `crate::transfer::mode`).
pub async fn new_repost<T: Txn>(txn: &mut T, item: Post, blocks: Blocks) -> Result<(), T::Error> {
    let user = &item.author;
    let original = item.repost_of.as_ref().expect("a repost's item");
    if &original.author == user {
        return Err(own_repost(user).into());
    }
    if blocks == Blocks::Refuse && txn.blocked_either_way(user, &original.author).await? {
        return Err(repost_blocked(user, &original.author).into());
    }
    let steps = [
        Step::PutPost(item.clone()),
        Step::Repost {
            post: original.id,
            user: user.clone(),
            repost: item.id,
            active: true,
        },
        count(original.id, user, 1),
        Step::Emit(Event::post_created(item.clone())),
    ];
    txn.apply(&steps).await
}

/// Takes back the repost whose item is `item` (the original `stored` or
/// not), as stored: its item names the original and its author.
async fn take_back<T: Txn>(txn: &mut T, item: PostId, stored: bool) -> Result<(), T::Error> {
    match txn.post(item).await? {
        Some(held) => txn.apply(&undo_steps(&held, stored)).await,
        // Rows without their item (never left by a write): nothing to retract.
        None => Ok(()),
    }
}

/// The post a repost of `post` carries: `post` itself, or the original of
/// a repost; `None` when it is not stored.
async fn original_of<T: Txn>(txn: &mut T, post: PostId) -> Result<Option<PostRef>, T::Error> {
    match txn.post(post).await? {
        Some(stored) => carried(txn, &stored).await,
        None => Ok(None),
    }
}

/// The post a repost of the stored post `stored` carries: `stored` itself,
/// or the original of a repost; `None` when that original is gone.
pub async fn carried<T: Txn>(txn: &mut T, stored: &Post) -> Result<Option<PostRef>, T::Error> {
    match &stored.repost_of {
        None => Ok(Some(stored.shown())),
        Some(original) => Ok(txn.post(original.id).await?.map(|p| p.shown())),
    }
}

/// The like `change` is, once a repost's item stands for its original
/// ([`liked_post`]); any other post (or none) is left to the like's plan.
/// Only the write path maps: an import or a replay restores a like where
/// it was stored.
pub async fn like_of_original<T: Txn>(
    txn: &mut T,
    change: &LikeChange,
) -> Result<LikeChange, T::Error> {
    let Some(item) = txn.post(change.post).await? else {
        return Ok(change.clone());
    };
    let Some(original) = item.repost_of else {
        return Ok(change.clone());
    };
    let original_stored = txn.post(original.id).await?.is_some();
    let held_on_item = !change.like && txn.liked(item.id, &change.user).await?.is_some();
    let post = liked_post(
        item.id,
        original.id,
        original_stored,
        held_on_item,
        change.like,
    )
    .ok_or_else(|| post_not_found(item.id))?;
    Ok(LikeChange {
        post,
        ..change.clone()
    })
}

/// The steps that take back a repost (its `item`, whose original's count
/// goes down while it is `stored`), with the item's retraction.
pub fn undo_steps(item: &Post, stored: bool) -> Vec<Step> {
    let user = &item.author;
    let original = item.repost_of.as_ref().expect("a repost's item").id;
    let mut steps = vec![
        Step::RemovePosts {
            author: user.clone(),
            posts: vec![item.id],
        },
        Step::ForgetCounts(vec![item.id]),
        Step::ForgetKeptPosts(vec![item.id]),
        Step::Repost {
            post: original,
            user: user.clone(),
            repost: item.id,
            active: false,
        },
    ];
    if stored {
        steps.push(count(original, user, -1));
    }
    steps.push(Step::Emit(post_deleted(item)));
    steps
}

pub fn count(post: PostId, user: &UserId, step: i64) -> Step {
    Step::Tally {
        post,
        tally: Tally::Reposts,
        shard: tally_shard(user),
        step,
    }
}
