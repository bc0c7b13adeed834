//! A mute or block made or lifted: the facts its rules need, the relation's
//! rows, the unfollows a block makes (each planned as any unfollow) and the
//! event. A priority set: one level per pair, its row and its event. Follow
//! options set: their rows and one event.

use crate::checks::user_not_found;
use crate::error::Error;
use crate::event::Event;
use crate::graph::edge::change_edge;
use crate::graph::mute_ends;
use crate::graph::relations::{
    Priority, Relation, RelationChange, RelationTransition, MAX_RELATIONS,
};
use crate::ids::UserId;
use crate::model::relation::FollowOption;
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
    if !mute_ends::still_due(txn, change, exists).await? {
        // Not ended after all (made again since): left as it stands.
        return Ok(RelationTransition {
            active: exists,
            changed: false,
            unfollows: Vec::new(),
            event: None,
        });
    }
    let count = txn.relation_count(user, relation, MAX_RELATIONS).await?;
    let edge = txn.edge_lists(user, target).await?;
    let mut transition = change.transition(exists, edge.clone());
    transition.check_count(change, count)?;
    let row_changed = transition.changed;
    let end = mute_ends::end_steps(txn, change, exists, &mut transition, edge).await?;
    if !transition.changed {
        return Ok(transition);
    }
    let mut rows = Vec::new();
    if row_changed {
        rows.push(Step::Relation {
            user: user.clone(),
            relation,
            target: target.clone(),
            active: transition.active,
        });
    }
    rows.extend(end);
    txn.apply(&rows).await?;
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

/// Sets `user`'s priority for `target` to `level` (`None`: none): the
/// other levels' rows go, the level's row is made, under the count of
/// relations a user keeps, with one event naming the new level. Both
/// users must exist to set one (`to_gone`: a transfer keeps a priority
/// for an account that is gone), the user only to clear one; a user
/// cannot prioritize themselves. Whether it changed anything.
pub async fn set_priority<T: Txn>(
    txn: &mut T,
    user: &UserId,
    target: &UserId,
    level: Option<Priority>,
    to_gone: bool,
) -> Result<bool, T::Error> {
    if level.is_some() && user == target {
        return Err(Error::conflict(
            "cannot_prioritize_self",
            "a user cannot prioritize themselves",
        )
        .into());
    }
    let found = txn.existing_users(&[user, target]).await?;
    if !found.contains(user) {
        return Err(user_not_found(user).into());
    }
    if level.is_some() && !to_gone && !found.contains(target) {
        return Err(user_not_found(target).into());
    }
    let mut steps = Vec::new();
    for p in Priority::ALL {
        let relation = Relation::Priority(p);
        let held = txn.relation_exists(user, relation, target).await?;
        let wanted = level == Some(p);
        if held == wanted {
            continue;
        }
        if wanted {
            let count = txn.relation_count(user, relation, MAX_RELATIONS).await?;
            if count >= MAX_RELATIONS {
                return Err(Error::conflict(
                    "too_many_relations",
                    format!("a user can give at most {MAX_RELATIONS} accounts one priority"),
                )
                .into());
            }
        }
        steps.push(Step::Relation {
            user: user.clone(),
            relation,
            target: target.clone(),
            active: wanted,
        });
    }
    if steps.is_empty() {
        return Ok(false);
    }
    steps.push(Step::Emit(Event::PrioritySet {
        user: user.clone(),
        target: target.clone(),
        level: level.map_or(0, Priority::level),
    }));
    txn.apply(&steps).await?;
    Ok(true)
}

/// Turns `user`'s follow options for `target` on or off as `changes`
/// say (the others stay as they are). An option is kept only while `user`
/// follows `target`: turning one on needs the edge (`not_following`), and
/// an unfollow turns them all off (`crate::graph::edge`). One event names
/// the changes made. `notify` turned on keeps `at_ms`, from when its
/// posts tell `user`. Whether it changed anything.
pub async fn set_follow_options<T: Txn>(
    txn: &mut T,
    user: &UserId,
    target: &UserId,
    changes: &[(FollowOption, bool)],
    at_ms: u64,
) -> Result<bool, T::Error> {
    let found = txn.existing_users(&[user]).await?;
    if !found.contains(user) {
        return Err(user_not_found(user).into());
    }
    let turns_on = changes.iter().any(|(_, on)| *on);
    if turns_on && txn.edge_lists(user, target).await?.is_none() {
        return Err(Error::conflict(
            "not_following",
            format!("{user} does not follow {target}: follow options are set on a follow"),
        )
        .into());
    }
    let mut steps = Vec::new();
    let mut made = Vec::new();
    for option in FollowOption::ALL {
        let Some(&(_, wanted)) = changes.iter().rev().find(|(o, _)| *o == option) else {
            continue;
        };
        let relation = Relation::Option(option);
        if txn.relation_exists(user, relation, target).await? == wanted {
            continue;
        }
        steps.push(Step::Relation {
            user: user.clone(),
            relation,
            target: target.clone(),
            active: wanted,
        });
        if option == FollowOption::Notify && wanted {
            steps.push(Step::NotifySince {
                user: user.clone(),
                target: target.clone(),
                at_ms,
            });
        }
        made.push((option, wanted));
    }
    if steps.is_empty() {
        return Ok(false);
    }
    steps.push(Step::Emit(Event::FollowOptionsSet {
        user: user.clone(),
        target: target.clone(),
        changes: made,
        at_ms,
    }));
    txn.apply(&steps).await?;
    Ok(true)
}
