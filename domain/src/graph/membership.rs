//! Joining or leaving a group: the facts its rules need, the membership's
//! rows and the group's size, and the event.

use crate::checks::{Membership, MAX_GROUPS_PER_USER};
use crate::plan::{Step, Txn};

/// Runs every check of `change` on what `txn` holds and applies it;
/// whether the membership changed.
pub async fn change_membership<T: Txn>(txn: &mut T, change: &Membership) -> Result<bool, T::Error> {
    let found = txn.existing_users(&[&change.user]).await?;
    change.check_user(found.contains(&change.user))?;
    if txn.is_member(&change.group, &change.user).await? == change.join {
        return Ok(false);
    }
    if change.join {
        let held = txn.group_count(&change.user, MAX_GROUPS_PER_USER).await?;
        change.check_group_count(held)?;
    }
    txn.apply(&[Step::Membership(change.clone()), Step::Emit(change.event())])
        .await?;
    Ok(true)
}
