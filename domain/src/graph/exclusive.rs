//! Exclusive lists (Mastodon 4.2): a list its owner marks exclusive takes
//! the accounts filed under it out of the owner's home timeline, while the
//! list's own timeline keeps them. Decided here for every backend:
//!
//! - **Marked on a list that exists** (one with members: `list_not_found`
//!   otherwise); the mark stays while the list empties and fills again,
//!   and goes with the owner. At most [`MAX_LISTS_PER_USER`] marks.
//! - **Applied when home is read**, on every feed model and in the live
//!   home stream: an author the reader files under any exclusive list is
//!   left out of home as a muted one is (`socialite_core::reads`), entries
//!   stored already included, so marking, unmarking and refiling hold at
//!   the next read without refanning anything.

use crate::checks::{list_not_found, user_not_found, MAX_LISTS_PER_USER};
use crate::error::Error;
use crate::event::Event;
use crate::ids::{ListName, UserId};
use crate::plan::{Step, Txn};

/// Marks `user`'s `list` exclusive (`on`) or not; whether it changed.
/// `live`: the list must have members, as a request marks one; a transfer
/// carries the marks of lists emptied since too.
pub async fn set_exclusive<T: Txn>(
    txn: &mut T,
    user: &UserId,
    list: &ListName,
    on: bool,
    live: bool,
) -> Result<bool, T::Error> {
    if txn.existing_users(&[user]).await?.is_empty() {
        return Err(user_not_found(user).into());
    }
    let marked = txn.exclusive_lists(user).await?;
    if marked.contains(list) == on {
        return Ok(false);
    }
    if on {
        if live && !txn.list_names(user).await?.contains(list) {
            return Err(list_not_found(user, list).into());
        }
        if marked.len() >= MAX_LISTS_PER_USER {
            return Err(Error::conflict(
                "too_many_lists",
                format!("a user marks at most {MAX_LISTS_PER_USER} lists exclusive"),
            )
            .into());
        }
    }
    let steps = [
        Step::ExclusiveList {
            user: user.clone(),
            list: list.clone(),
            on,
        },
        Step::Emit(Event::ListExclusiveSet {
            user: user.clone(),
            list: list.clone(),
            exclusive: on,
        }),
    ];
    txn.apply(&steps).await?;
    Ok(true)
}
