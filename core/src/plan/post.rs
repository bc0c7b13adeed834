//! A post stored or deleted: the users it names must exist (its mentions
//! keep only those that do), and the event goes with it.

use super::{Step, Txn};
use crate::event::Event;
use crate::ids::{PostId, UserId};
use crate::model::Post;
use crate::rules::cascade::post_deleted;
use crate::rules::checks::user_not_found;
use crate::rules::mentions::kept;

/// Stores `post` if its author exists, mentioning only those of its
/// mentions that exist; returns it as stored.
pub async fn create_post<T: Txn>(txn: &mut T, mut post: Post) -> Result<Post, T::Error> {
    let named: Vec<&UserId> = std::iter::once(&post.author)
        .chain(&post.mentions)
        .collect();
    let found = txn.existing_users(&named).await?;
    if !found.contains(&post.author) {
        return Err(user_not_found(&post.author).into());
    }
    post.mentions = kept(&post.mentions, |u| Ok(found.contains(u)))?;
    let created = Event::post_created(post.clone());
    txn.apply(&[Step::PutPost(post.clone()), Step::Emit(created)])
        .await?;
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
        let steps = super::repost::undo_steps(&post.author, id, original.id, stored);
        txn.apply(&steps).await?;
        return Ok(Some(post));
    }
    let remove = Step::RemovePosts {
        author: post.author.clone(),
        posts: vec![id],
    };
    txn.apply(&[remove, Step::Emit(post_deleted(id, &post.author))])
        .await?;
    Ok(Some(post))
}
