//! A post stored or deleted: the users it names must exist (its mentions
//! keep only those that do), a reply's post must be stored and no block
//! stand between the two authors ([`crate::rules::replies`]), and the
//! event goes with it.

use super::{Step, Txn};
use crate::event::Event;
use crate::ids::{PostId, UserId};
use crate::model::{Post, PostRef};
use crate::rules::cascade::post_deleted;
use crate::rules::checks::{post_not_found, user_not_found};
use crate::rules::likes::{tally_shard, Tally};
use crate::rules::mentions::kept;
use crate::rules::replies::reply_blocked;

/// Stores `post` if its author exists, mentioning only those of its
/// mentions that exist; a reply answers the stored post it names (the
/// post a repost carries, for a repost), by its stored author. Returns the
/// post as stored.
pub async fn create_post<T: Txn>(txn: &mut T, post: Post) -> Result<Post, T::Error> {
    store_post(txn, post, false).await
}

/// Stores a post written elsewhere (an import, a replay), as
/// [`create_post`] does, but a reply whose post is gone since is kept as
/// it was, counted nowhere: a reply outlives the post it answers.
pub async fn restore_post<T: Txn>(txn: &mut T, post: Post) -> Result<Post, T::Error> {
    store_post(txn, post, true).await
}

async fn store_post<T: Txn>(
    txn: &mut T,
    mut post: Post,
    orphan_ok: bool,
) -> Result<Post, T::Error> {
    let named: Vec<&UserId> = std::iter::once(&post.author)
        .chain(&post.mentions)
        .collect();
    let found = txn.existing_users(&named).await?;
    if !found.contains(&post.author) {
        return Err(user_not_found(&post.author).into());
    }
    post.mentions = kept(&post.mentions, |u| Ok(found.contains(u)))?;
    let mut counted = None;
    if let Some(asked) = post.reply_to.take() {
        let orphan = orphan_ok && txn.post(asked.id).await?.is_none();
        post.reply_to = Some(asked.clone());
        if !orphan {
            let answered = answered(txn, asked.id).await?;
            if txn
                .blocked_either_way(&post.author, &answered.author)
                .await?
            {
                return Err(reply_blocked(&post.author, &answered.author).into());
            }
            counted = Some(answered.id);
            post.reply_to = Some(answered);
        }
    }
    let mut steps = vec![Step::PutPost(post.clone())];
    if let Some(answered) = counted {
        steps.push(replies(answered, &post.author, 1));
    }
    steps.push(Step::Emit(Event::post_created(post.clone())));
    txn.apply(&steps).await?;
    Ok(post)
}

/// The post a reply to `id` answers: `id`, or the post a repost carries.
async fn answered<T: Txn>(txn: &mut T, id: PostId) -> Result<PostRef, T::Error> {
    let stored = txn.post(id).await?.ok_or_else(|| post_not_found(id))?;
    let Some(original) = stored.repost_of else {
        return Ok(stored.shown());
    };
    let carried = txn.post(original.id).await?;
    Ok(carried.ok_or_else(|| post_not_found(original.id))?.shown())
}

/// Deletes the post `id`; the post it was, or `None` if there is none.
pub async fn delete_post<T: Txn>(txn: &mut T, id: PostId) -> Result<Option<Post>, T::Error> {
    let Some(post) = txn.post(id).await? else {
        return Ok(None);
    };
    if let Some(original) = &post.repost_of {
        // A repost's item: deleting it undoes the repost.
        let stored = txn.post(original.id).await?.is_some();
        let steps = super::repost::undo_steps(&post, stored);
        txn.apply(&steps).await?;
        return Ok(Some(post));
    }
    let mut steps = vec![
        Step::RemovePosts {
            author: post.author.clone(),
            posts: vec![id],
        },
        Step::ForgetCounts(vec![id]),
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
