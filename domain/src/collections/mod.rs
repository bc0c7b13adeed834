//! A post kept in, or taken out of, one of a user's collections
//! ([`crate::model::collection`]): the user must exist, a kept post must be
//! stored, a collection holds at most [`MAX_KEPT`] posts, and each post
//! once (keeping it again, or taking out one that is not there, changes
//! nothing). The rows and the event move together. A feature built on a
//! collection (bookmarks) decides who may keep what before it asks.

use crate::checks::{post_not_found, user_not_found};
use crate::error::Error;
use crate::event::Event;
use crate::ids::{PostId, UserId};
use crate::model::collection::{Collection, Kept};
use crate::plan::{Step, Txn};

/// Most posts one collection of one user holds: a reader pages through
/// them, and a user's deletion removes them in one step.
pub const MAX_KEPT: u64 = 10_000;

/// A post put in (`keep`) or taken out of the user's `collection`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeepChange {
    pub collection: Collection,
    pub user: UserId,
    pub post: PostId,
    pub keep: bool,
}

/// The refusal of a post past a full collection.
pub fn collection_full(collection: &Collection) -> Error {
    Error::conflict(
        "collection_full",
        format!("a user's {collection} hold at most {MAX_KEPT} posts: remove one first"),
    )
}

/// Applies `change` at `at_ms`; whether it changed the collection.
pub async fn change_kept<T: Txn>(
    txn: &mut T,
    change: &KeepChange,
    at_ms: u64,
) -> Result<bool, T::Error> {
    let KeepChange {
        collection,
        user,
        post,
        keep,
    } = change;
    if txn.existing_users(&[user]).await?.is_empty() {
        return Err(user_not_found(user).into());
    }
    let held = txn.kept_at(collection, user, *post).await?;
    let step = match (keep, held) {
        (true, Some(_)) | (false, None) => return Ok(false),
        (true, None) => {
            if txn.post(*post).await?.is_none() {
                return Err(post_not_found(*post).into());
            }
            if txn.kept_count(collection, user).await? >= MAX_KEPT {
                return Err(collection_full(collection).into());
            }
            let kept = Kept { post: *post, at_ms };
            Step::Keep {
                collection: collection.clone(),
                user: user.clone(),
                kept,
            }
        }
        (false, Some(_)) => Step::Unkeep {
            collection: collection.clone(),
            user: user.clone(),
            post: *post,
        },
    };
    let event = Event::KeptChanged {
        collection: collection.clone(),
        user: user.clone(),
        post: *post,
        at_ms,
        kept: *keep,
    };
    txn.apply(&[step, Step::Emit(event)]).await?;
    Ok(true)
}
