//! When each `notify` option was turned on, on the embedded store:
//! `NOTIFY_SINCE` by (user, target), a row beside the option's relation
//! row and gone with it (`crate::relations::put` removes both). Notifications read it to derive the user's alerts
//! (`socialite_domain::notifications::alerts`).

use crate::tables::*;
use redb::{ReadTransaction, ReadableTable, TableHandle, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_domain::graph::relations::{FollowOption, Relation};

const NOTIFY: Relation = Relation::Option(FollowOption::Notify);

/// Keeps when `user` turned `notify` on for `target`.
pub(crate) fn put(txn: &WriteTransaction, user: &str, target: &str, at_ms: u64) -> Result<()> {
    let mut table = txn.open_table(NOTIFY_SINCE).store()?;
    table.insert((user, target), at_ms).store()?;
    Ok(())
}

/// The accounts `user` follows with `notify` on, in id order, each with
/// when it was turned on: the options' rows, each with its time (one
/// without, written by a version that kept none after this store was
/// first opened by one that does, alerts of nothing).
pub(crate) fn subscriptions(txn: &ReadTransaction, user: &str) -> Result<Vec<(UserId, u64)>> {
    let relations = txn.open_table(RELATIONS).store()?;
    let since = txn.open_table(NOTIFY_SINCE).store()?;
    let targets = crate::relations::page(&relations, user, NOTIFY, None, usize::MAX)?;
    let mut out = Vec::with_capacity(targets.len());
    for target in targets {
        if let Some(at) = time_of_pair(&since, user, target.as_str())? {
            out.push((target, at));
        }
    }
    Ok(out)
}

/// On the first open of a store whose `notify` options were kept without
/// their time: they count from now (the notices made of earlier posts
/// stay as they were).
pub(crate) fn backfill(txn: &WriteTransaction, now_ms: u64) -> Result<()> {
    let had = txn
        .list_tables()
        .store()?
        .any(|t| t.name() == NOTIFY_SINCE.name());
    let mut since = txn.open_table(NOTIFY_SINCE).store()?;
    if had {
        return Ok(());
    }
    let relations = txn.open_table(RELATIONS).store()?;
    for item in relations.iter().store()? {
        let (k, _) = item.store()?;
        let (u, code, t) = k.value();
        if code == NOTIFY.code() {
            since.insert((u, t), now_ms).store()?;
        }
    }
    Ok(())
}
