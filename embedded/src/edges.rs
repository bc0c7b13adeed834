//! One follow, refiling or unfollow in the writer's transaction: the edge
//! in both directions, its lists and follow time, the counts and the event,
//! as the rule's transition decides; a follow across a block is refused.
//! Used by follows and by the unfollows of a block.

use crate::store::{add_counts, emit, user_exists, Ctx};
use crate::tables::*;
use crate::{edge_times, lists};
use redb::{ReadableTable, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::now_ms;
use socialite_core::rules::checks::{EdgeChange, EdgeTransition};
use socialite_core::rules::relations::{check_not_blocked, Relation};

/// Applies an edge change in the writer's transaction (a follow, an
/// unfollow, or one of the unfollows of a block).
pub(crate) fn apply_edge(ctx: &mut Ctx<'_>, change: &EdgeChange) -> Result<EdgeTransition> {
    change.check_users(|u| user_exists(ctx.txn, u.as_str()))?;
    let (f, t) = (change.follower().as_str(), change.followee().as_str());
    if change.adds() {
        check_not_blocked(change, blocked_either_way(ctx.txn, f, t)?)?;
    }
    let mut following = ctx.txn.open_table(FOLLOWING).store()?;
    let mut followers = ctx.txn.open_table(FOLLOWERS).store()?;
    let existing = match following.get((f, t)).store()? {
        None => None,
        Some(_) => Some(lists::edge_lists(
            &ctx.txn.open_table(EDGE_LISTS).store()?,
            f,
            t,
        )?),
    };
    let transition = change.transition(existing);
    if !transition.changed() {
        return Ok(transition);
    }
    if transition.count_step > 0 {
        let counts = ctx.txn.open_table(COUNTS).store()?;
        let following = counts.get(f).store()?.map_or(0, |c| c.value().1);
        change.check_room(&transition, following)?;
    }
    lists::apply(ctx.txn, f, t, &transition)?;
    // The edge itself is written only when the graph changes.
    match transition.count_step {
        1 => {
            following.insert((f, t), ()).store()?;
            followers.insert((t, f), ()).store()?;
            edge_times::add(ctx.txn, &[(f, t)], now_ms())?;
        }
        -1 => {
            following.remove((f, t)).store()?;
            followers.remove((t, f)).store()?;
            edge_times::remove(ctx.txn, f, t)?;
        }
        _ => {}
    }
    drop((following, followers));
    if transition.count_step != 0 {
        let step = transition.count_step;
        add_counts(ctx.txn, f, 0, step)?;
        add_counts(ctx.txn, t, step, 0)?;
    }
    if let Some(event) = &transition.event {
        emit(ctx, event)?;
    }
    Ok(transition)
}

/// Whether either user blocks the other.
fn blocked_either_way(txn: &WriteTransaction, a: &str, b: &str) -> Result<bool> {
    let table = txn.open_table(RELATIONS).store()?;
    let code = Relation::Block.code();
    Ok(table.get((a, code, b)).store()?.is_some() || table.get((b, code, a)).store()?.is_some())
}
