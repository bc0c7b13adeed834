//! Mutes and blocks on the embedded store: each relation in both directions
//! (`RELATIONS` by the user who keeps it, `RELATED` by its target). A
//! change is planned in `socialite_domain::graph::relate`; here are its rows.

use crate::tables::*;
use redb::{ReadableTable, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_domain::graph::relations::{FollowOption, Relation};

type RelationTable = (&'static str, u8, &'static str);

/// Makes (`active`) or lifts a relation's rows, both directions.
pub(crate) fn put(
    txn: &WriteTransaction,
    user: &UserId,
    relation: Relation,
    target: &UserId,
    active: bool,
) -> Result<()> {
    let (u, t, code) = (user.as_str(), target.as_str(), relation.code());
    let mut relations = txn.open_table(RELATIONS).store()?;
    let mut related = txn.open_table(RELATED).store()?;
    if active {
        relations.insert((u, code, t), ()).store()?;
        related.insert((t, code, u), ()).store()?;
    } else {
        relations.remove((u, code, t)).store()?;
        related.remove((t, code, u)).store()?;
        if relation == Relation::Option(FollowOption::Notify) {
            // The option's time goes with it.
            let mut since = txn.open_table(NOTIFY_SINCE).store()?;
            since.remove((u, t)).store()?;
        }
    }
    Ok(())
}

/// One page of the second ids under (`first`, relation), after `after`.
pub(crate) fn page<T: ReadableTable<RelationTable, ()>>(
    table: &T,
    first: &str,
    relation: Relation,
    after: Option<&UserId>,
    limit: usize,
) -> Result<Vec<UserId>> {
    let code = relation.code();
    let from = after.map_or("", |a| a.as_str());
    let mut out = Vec::new();
    for item in table.range((first, code, from)..).store()? {
        let (k, _) = item.store()?;
        let (a, c, b) = k.value();
        if a != first || c != code || out.len() >= limit {
            break;
        }
        if after.is_some_and(|x| x.as_str() == b) {
            continue;
        }
        out.push(UserId::from_stored(b.to_owned()));
    }
    Ok(out)
}

/// Up to `limit` of the relations `user` keeps (a deletion's page).
pub(crate) fn kept(
    txn: &WriteTransaction,
    user: &str,
    limit: usize,
) -> Result<Vec<(Relation, UserId)>> {
    let table = txn.open_table(RELATIONS).store()?;
    let keys = first_keys(&table, user, limit)?;
    Ok(keys
        .into_iter()
        .filter_map(|(code, t)| Some((Relation::from_code(code)?, UserId::from_stored(t))))
        .collect())
}

/// The first `limit` (code, other) keys under `user`.
fn first_keys<T: ReadableTable<RelationTable, ()>>(
    table: &T,
    user: &str,
    limit: usize,
) -> Result<Vec<(u8, String)>> {
    let mut out = Vec::new();
    for item in table.range((user, 0u8, "")..).store()? {
        let (k, _) = item.store()?;
        let (a, code, b) = k.value();
        if a != user || out.len() >= limit {
            break;
        }
        out.push((code, b.to_owned()));
    }
    Ok(out)
}
