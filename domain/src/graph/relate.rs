//! A mute or block made or lifted: the facts its rules need, the relation's
//! rows, the unfollows a block makes (each planned as any unfollow) and the
//! event.

use crate::graph::edge::change_edge;
use crate::graph::relations::{RelationChange, RelationTransition, MAX_RELATIONS};
use crate::plan::{Step, Txn};

/// Runs every check of `change` on what `txn` holds and applies what its
/// transition decides, in that transaction.
pub async fn change_relation<T: Txn>(
    txn: &mut T,
    change: &RelationChange,
) -> Result<RelationTransition, T::Error> {
    let found = txn.existing_users(&change.required()).await?;
    change.check_users(|u| Ok(found.contains(u)))?;
    let (user, target, relation) = (change.user(), change.target(), change.relation());
    let exists = txn.relation_exists(user, relation, target).await?;
    let count = txn.relation_count(user, relation, MAX_RELATIONS).await?;
    let edge = txn.edge_lists(user, target).await?;
    let transition = change.transition(exists, edge);
    transition.check_count(change, count)?;
    if !transition.changed {
        return Ok(transition);
    }
    let row = Step::Relation {
        user: user.clone(),
        relation,
        target: target.clone(),
        active: transition.active,
    };
    txn.apply(std::slice::from_ref(&row)).await?;
    for cut in &transition.unfollows {
        change_edge(txn, cut).await?;
    }
    let event: Vec<Step> = transition
        .event
        .clone()
        .map(Step::Emit)
        .into_iter()
        .collect();
    txn.apply(&event).await?;
    Ok(transition)
}
