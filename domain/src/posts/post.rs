//! A post stored or deleted: the users it names must exist (its mentions
//! keep only those that do), a reply's post must be stored and no block
//! stand between the two authors ([`crate::posts::replies`]), and the
//! event goes with it.

use crate::checks::{post_not_found, user_not_found, Blocks};
use crate::event::Event;
use crate::ids::{PostId, UserId};
use crate::interactions::likes::{tally_shard, Tally};
use crate::model::{Post, PostRef};
use crate::notifications::notified::post_deleted;
use crate::plan::{Step, Txn};
use crate::posts::mentions::kept;
use crate::posts::replies::reply_blocked;

/// Stores `post` if its author exists, mentioning only those of its
/// mentions that exist; a reply answers the stored post it names (the
/// post a repost carries, for a repost), by its stored author. Returns the
/// post as stored.
pub async fn create_post<T: Txn>(txn: &mut T, post: Post) -> Result<Post, T::Error> {
    let mut post = with_mentions(txn, post).await?;
    let mut answered = None;
    if let Some(asked) = &post.reply_to {
        let stored = txn.post(asked.id).await?;
        let stored = stored.ok_or_else(|| post_not_found(asked.id))?;
        let named = answered_of(txn, &stored).await?;
        check_reply_block(txn, &post.author, &named.author, Blocks::Refuse).await?;
        answered = Some(named.id);
        post.reply_to = Some(named);
    }
    put_post(txn, post, answered).await
}

/// `post`, if its author exists, mentioning only those of its mentions
/// that exist.
pub async fn with_mentions<T: Txn>(txn: &mut T, mut post: Post) -> Result<Post, T::Error> {
    let named: Vec<&UserId> = std::iter::once(&post.author)
        .chain(&post.mentions)
        .collect();
    let found = txn.existing_users(&named).await?;
    if !found.contains(&post.author) {
        return Err(user_not_found(&post.author).into());
    }
    post.mentions = kept(&post.mentions, |u| Ok(found.contains(u)))?;
    Ok(post)
}

/// The post a reply to the stored post `stored` answers: `stored`, or the
/// post a repost carries (refused when that is gone).
pub async fn answered_of<T: Txn>(txn: &mut T, stored: &Post) -> Result<PostRef, T::Error> {
    let Some(original) = &stored.repost_of else {
        return Ok(stored.shown());
    };
    let carried = txn.post(original.id).await?;
    Ok(carried.ok_or_else(|| post_not_found(original.id))?.shown())
}

/// Refuses a reply by `author` to a post of `answered` across a block, as
/// `blocks` says (a transfer decides that itself: `crate::transfer::mode`).
pub async fn check_reply_block<T: Txn>(
    txn: &mut T,
    author: &UserId,
    answered: &UserId,
    blocks: Blocks,
) -> Result<(), T::Error> {
    if blocks == Blocks::Refuse && txn.blocked_either_way(author, answered).await? {
        return Err(reply_blocked(author, answered).into());
    }
    Ok(())
}

/// Stores `post` as it is (its mentions and reply decided), counted as a
/// reply of `answered` when that is `Some`, and queues its event.
pub async fn put_post<T: Txn>(
    txn: &mut T,
    post: Post,
    answered: Option<PostId>,
) -> Result<Post, T::Error> {
    let mut steps = vec![Step::PutPost(post.clone())];
    if let Some(answered) = answered {
        steps.push(replies(answered, &post.author, 1));
    }
    steps.push(Step::Emit(Event::post_created(post.clone())));
    txn.apply(&steps).await?;
    Ok(post)
}

/// Deletes the post `id`; the post it was, or `None` if there is none.
pub async fn delete_post<T: Txn>(txn: &mut T, id: PostId) -> Result<Option<Post>, T::Error> {
    let Some(post) = txn.post(id).await? else {
        return Ok(None);
    };
    if let Some(original) = &post.repost_of {
        // A repost's item: deleting it undoes the repost.
        let stored = txn.post(original.id).await?.is_some();
        let steps = crate::interactions::repost::undo_steps(&post, stored);
        txn.apply(&steps).await?;
        return Ok(Some(post));
    }
    let mut steps = vec![
        Step::RemovePosts {
            author: post.author.clone(),
            posts: vec![id],
        },
        Step::ForgetCounts(vec![id]),
        Step::ForgetKeptPosts(vec![id]),
    ];
    if let Some(answered) = &post.reply_to {
        if txn.post(answered.id).await?.is_some() {
            steps.push(replies(answered.id, &post.author, -1));
        }
    }
    steps.push(Step::Emit(post_deleted(&post)));
    txn.apply(&steps).await?;
    Ok(Some(post))
}

/// The count of replies of `post` moved by `step` for a reply of `author`.
pub fn replies(post: PostId, author: &UserId, step: i64) -> Step {
    Step::Tally {
        post,
        tally: Tally::Replies,
        shard: tally_shard(author),
        step,
    }
}
