//! Keyword filters in `content.redb`: user → their set, its revision
//! first so a page read learns it without decoding the rest.

use crate::tables::*;
use redb::{ReadableTable, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::model::filter::FilterSet;

pub(crate) fn of<T: ReadableTable<&'static str, &'static [u8]>>(
    table: &T,
    user: &str,
) -> Result<Option<FilterSet>> {
    let found = table.get(user).store()?;
    found.map(|v| FilterSet::from_bytes(v.value())).transpose()
}

pub(crate) fn rev<T: ReadableTable<&'static str, &'static [u8]>>(
    table: &T,
    user: &str,
) -> Result<Option<u64>> {
    let found = table.get(user).store()?;
    Ok(found.and_then(|v| FilterSet::rev_of(v.value())))
}

pub(crate) fn put(txn: &WriteTransaction, user: &str, set: &FilterSet) -> Result<()> {
    let mut table = txn.open_table(FILTERS).store()?;
    table.insert(user, set.to_bytes().as_slice()).store()?;
    Ok(())
}

/// Forgets a deleted user's filters.
pub(crate) fn forget(txn: &WriteTransaction, user: &str) -> Result<()> {
    let mut table = txn.open_table(FILTERS).store()?;
    table.remove(user).store()?;
    Ok(())
}
