//! A record loaded into a store ([`crate::transfer`]): planned as the write
//! that made it (a follow at its time, with its lists; a mute or block; a
//! join; a post under its id; a like at its time; a marker), with every check of that write and no events
//! ([`Quiet`]), and idempotent: a record the store holds already changes
//! nothing, so a rerun of an import neither doubles nor loses a record.

use super::quiet::Quiet;
use super::{edge, like, marker, membership, notify, post, relation, repost, Step, Txn};
use crate::event::Event;
use crate::model::Post;
use crate::rules::checks::{user_being_deleted, EdgeChange, EdgeOp, Membership};
use crate::rules::likes::LikeChange;
use crate::rules::notifications::changes_of;
use crate::rules::relations::{RelationChange, MAX_RELATIONS};
use crate::rules::reposts::RepostChange;
use crate::transfer::record::Record;

/// Loads `records` in `txn`, in order; how many changed something.
pub async fn import_records<T: Txn>(txn: &mut T, records: &[Record]) -> Result<usize, T::Error> {
    let mut changed = 0;
    for r in records {
        changed += usize::from(import_record(txn, r).await?);
        tell(txn, r).await?;
    }
    Ok(changed)
}

/// The notices the act a record holds made, as the log's event of it made
/// them where it was written ([`crate::rules::notifications`]): an import
/// queues no events, so no worker would make them. Idempotent, as they are.
async fn tell<T: Txn>(txn: &mut T, record: &Record) -> Result<(), T::Error> {
    let event = match record {
        Record::Follow {
            follower,
            followee,
            at_ms,
            lists,
        } => Event::Followed {
            follower: follower.clone(),
            followee: followee.clone(),
            lists: lists.clone(),
            at_ms: *at_ms,
        },
        Record::Like { post, user, at_ms } => {
            let Some(liked) = txn.post(*post).await? else {
                return Ok(());
            };
            Event::Liked {
                user: user.clone(),
                post: *post,
                author: liked.author,
                at_ms: *at_ms,
            }
        }
        Record::Post(p) => match txn.post(p.id).await? {
            Some(stored) => Event::post_created(stored),
            None => return Ok(()),
        },
        _ => return Ok(()),
    };
    notify::apply_notices(txn, &changes_of(&event)).await?;
    Ok(())
}

/// Loads `record` in `txn`; whether it changed anything.
pub async fn import_record<T: Txn>(txn: &mut T, record: &Record) -> Result<bool, T::Error> {
    let txn = &mut Quiet(txn);
    match record {
        Record::User { id, profile } => {
            if txn.deleting(id).await?.is_some() {
                return Err(user_being_deleted(id).into());
            }
            let unchanged = match txn.profile(id).await? {
                None => false,
                Some(held) => profile.is_none() || *profile == held,
            };
            if unchanged {
                return Ok(false);
            }
            let put = Step::PutUser {
                user: id.clone(),
                profile: profile.clone(),
            };
            txn.apply(&[put]).await?;
            Ok(true)
        }
        Record::Account { id, standing } => {
            let held = txn.standing(id).await?;
            let next = held.merged(*standing);
            if next == held {
                return Ok(false);
            }
            let set = Step::SetStanding {
                user: id.clone(),
                standing: next,
            };
            txn.apply(&[set]).await?;
            Ok(true)
        }
        Record::Follow {
            follower,
            followee,
            at_ms,
            lists,
        } => {
            let change = EdgeChange::new(follower.clone(), followee.clone(), EdgeOp::Follow)?
                .with_lists(lists.clone());
            Ok(edge::change_edge_at(txn, &change, *at_ms).await?.changed())
        }
        Record::Relation {
            user,
            relation,
            target,
        } => {
            let change = RelationChange::new(user.clone(), target.clone(), *relation, true)?;
            let found = txn.existing_users(&[user, target]).await?;
            if found.contains(user) && !found.contains(target) {
                // Kept on an id whose account is gone (a deletion leaves the
                // relations others keep to it): no edge can stand with it,
                // so the relation alone is what the source held.
                if txn.relation_exists(user, *relation, target).await? {
                    return Ok(false);
                }
                let count = txn.relation_count(user, *relation, MAX_RELATIONS).await?;
                change.transition(false, None).check_count(&change, count)?;
                let row = Step::Relation {
                    user: user.clone(),
                    relation: *relation,
                    target: target.clone(),
                    active: true,
                };
                txn.apply(&[row]).await?;
                return Ok(true);
            }
            Ok(relation::change_relation(txn, &change).await?.changed)
        }
        Record::Member { group, user } => {
            let join = Membership {
                group: group.clone(),
                user: user.clone(),
                join: true,
            };
            membership::change_membership(txn, &join).await
        }
        Record::Post(p) => import_post(txn, p).await,
        Record::Like { post, user, at_ms } => {
            let change = LikeChange {
                user: user.clone(),
                post: *post,
                like: true,
            };
            like::change_like_at(txn, &change, *at_ms).await
        }
        Record::Marker { user, marker: m } => Ok(marker::set_marker(txn, user, *m, true).await?.1),
    }
}

/// A post under its id, unless held: a repost as a repost (its row and
/// the post's count), a reply as a reply.
async fn import_post<T: Txn>(txn: &mut T, p: &Post) -> Result<bool, T::Error> {
    if txn.post(p.id).await?.is_some() {
        return Ok(false);
    }
    let Some(original) = &p.repost_of else {
        post::restore_post(txn, p.clone()).await?;
        return Ok(true);
    };
    let change = RepostChange {
        user: p.author.clone(),
        post: original.id,
        repost: true,
    };
    Ok(repost::change_repost(txn, &change, p.id).await?.changed)
}
