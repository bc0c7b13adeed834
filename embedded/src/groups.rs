//! Groups in the embedded store: members by group, groups by member and
//! each group's size, written in the transaction that changes a membership.

use crate::tables::*;
use redb::{ReadableTable, WriteTransaction};
use socialite_core::checks::Membership;
use socialite_core::error::Result;
use socialite_core::ids::GroupName;

/// The groups `user` is in, in name order.
pub(crate) fn groups_of<T: ReadableTable<(&'static str, &'static str), ()>>(
    table: &T,
    user: &str,
) -> Result<Vec<GroupName>> {
    let mut out = Vec::new();
    for item in table.range((user, "")..).store()? {
        let (k, _) = item.store()?;
        let (u, group) = k.value();
        if u != user {
            break;
        }
        out.push(GroupName::from_stored(group));
    }
    Ok(out)
}

pub(crate) fn is_member(txn: &WriteTransaction, group: &str, user: &str) -> Result<bool> {
    let members = txn.open_table(GROUP_MEMBERS).store()?;
    let found = members.get((group, user)).store()?.is_some();
    Ok(found)
}

/// Writes a join or a leave that changes the membership: the rows, both
/// ways, and the group's size.
pub(crate) fn put(txn: &WriteTransaction, change: &Membership) -> Result<()> {
    let (g, u) = (change.group.as_str(), change.user.as_str());
    let mut members = txn.open_table(GROUP_MEMBERS).store()?;
    let mut by_user = txn.open_table(USER_GROUPS).store()?;
    let mut sizes = txn.open_table(GROUP_SIZES).store()?;
    let n = sizes.get(g).store()?.map_or(0, |v| v.value());
    if change.join {
        members.insert((g, u), ()).store()?;
        by_user.insert((u, g), ()).store()?;
        sizes.insert(g, n + 1).store()?;
    } else {
        members.remove((g, u)).store()?;
        by_user.remove((u, g)).store()?;
        if n <= 1 {
            sizes.remove(g).store()?;
        } else {
            sizes.insert(g, n - 1).store()?;
        }
    }
    Ok(())
}
