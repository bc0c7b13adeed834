//! Mutes and blocks on the embedded store: each relation in both directions
//! (`RELATIONS` by the user who keeps it, `RELATED` by its target), written
//! in the writer's transaction with the unfollows and the event the rule
//! decides (`socialite_core::rules::relations`).

use crate::edges::apply_edge;
use crate::store::{emit, user_exists, Ctx};
use crate::tables::*;
use redb::ReadableTable;
use socialite_core::error::Result;
use socialite_core::ids::UserId;
use socialite_core::rules::relations::{
    Relation, RelationChange, RelationTransition, MAX_RELATIONS,
};

type RelationTable = (&'static str, u8, &'static str);

/// Makes or lifts a relation, with what its transition decides.
pub(crate) fn apply(ctx: &mut Ctx<'_>, change: &RelationChange) -> Result<RelationTransition> {
    change.check_users(|u| user_exists(ctx.txn, u.as_str()))?;
    let (u, t) = (change.user().as_str(), change.target().as_str());
    let code = change.relation().code();
    let (exists, count) = {
        let table = ctx.txn.open_table(RELATIONS).store()?;
        let exists = table.get((u, code, t)).store()?.is_some();
        (
            exists,
            page(&table, u, change.relation(), None, MAX_RELATIONS)?.len(),
        )
    };
    let edge = if ctx
        .txn
        .open_table(FOLLOWING)
        .store()?
        .get((u, t))
        .store()?
        .is_some()
    {
        let lists = ctx.txn.open_table(EDGE_LISTS).store()?;
        Some(crate::lists::edge_lists(&lists, u, t)?)
    } else {
        None
    };
    let transition = change.transition(exists, edge);
    transition.check_count(change, count)?;
    if !transition.changed {
        return Ok(transition);
    }
    let mut relations = ctx.txn.open_table(RELATIONS).store()?;
    let mut related = ctx.txn.open_table(RELATED).store()?;
    if transition.active {
        relations.insert((u, code, t), ()).store()?;
        related.insert((t, code, u), ()).store()?;
    } else {
        relations.remove((u, code, t)).store()?;
        related.remove((t, code, u)).store()?;
    }
    drop((relations, related));
    for cut in &transition.unfollows {
        apply_edge(ctx, cut)?;
    }
    if let Some(event) = &transition.event {
        emit(ctx, event)?;
    }
    Ok(transition)
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

/// A deletion step: removes up to `limit` of the relations the user keeps
/// (both index directions; those others keep to the user stay). Returns
/// whom the user muted among them, and whether any remain.
pub(crate) fn remove_some(
    ctx: &mut Ctx<'_>,
    user: &str,
    limit: usize,
) -> Result<(Vec<UserId>, bool)> {
    let mut relations = ctx.txn.open_table(RELATIONS).store()?;
    let mut related = ctx.txn.open_table(RELATED).store()?;
    let own = first_keys(&relations, user, limit)?;
    let mut muted = Vec::new();
    for (code, target) in &own {
        relations.remove((user, *code, target.as_str())).store()?;
        related.remove((target.as_str(), *code, user)).store()?;
        if Relation::from_code(*code) == Some(Relation::Mute) {
            muted.push(UserId::from_stored(target.clone()));
        }
    }
    Ok((muted, own.len() == limit))
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
