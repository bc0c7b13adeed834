//! Exclusive lists on the embedded store: (user, list) rows, a user's in
//! name order. The rules are `socialite_domain::graph::exclusive`'.

use crate::tables::*;
use redb::{ReadableTable, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::ListName;

pub(crate) fn of<T: ReadableTable<(&'static str, &'static str), ()>>(
    table: &T,
    user: &str,
) -> Result<Vec<ListName>> {
    let mut out = Vec::new();
    for item in table.range((user, "")..).store()? {
        let (k, _) = item.store()?;
        let (u, list) = k.value();
        if u != user {
            break;
        }
        out.push(ListName::from_stored(list));
    }
    Ok(out)
}

pub(crate) fn put(txn: &WriteTransaction, user: &str, list: &ListName, on: bool) -> Result<()> {
    let mut table = txn.open_table(EXCLUSIVE_LISTS).store()?;
    match on {
        true => table.insert((user, list.as_str()), ()).store()?,
        false => table.remove((user, list.as_str())).store()?,
    };
    Ok(())
}

/// Forgets a deleted user's marks.
pub(crate) fn forget(txn: &WriteTransaction, user: &str) -> Result<()> {
    let mut table = txn.open_table(EXCLUSIVE_LISTS).store()?;
    for list in of(&table, user)? {
        table.remove((user, list.as_str())).store()?;
    }
    Ok(())
}
