//! A record loaded into a store (`socialite_core::transfer`), with no events (an
//! import's ledger is quiet: [`super::write::Write::emits`]), idempotent: a
//! record the store holds already changes nothing, so a rerun of an import
//! neither doubles nor loses a record.
//!
//! An import restores what the source *held*; it does not decide again
//! acts that were valid when they were made. A like, a repost or a reply
//! made before a block stands with it, a reply outlives the post it
//! answers, a relation outlives the account it names. It still refuses
//! what no write could have made: the limits of the write path (checked
//! before, in [`crate::format::admit`]), a post under an id a different
//! post holds, a like or a repost of a post the store does not hold, a
//! reply to one it does not hold unless the stream marks it gone, a follow
//! past the cap or across a block. The graph's writes (follows, relations,
//! memberships, markers) are planned as those writes are, with every
//! check: nothing a later act could undo stands between them and what
//! the source held.

use super::{edge, marker, membership, notify, post, relation, repost, Step, Txn};
use crate::error::Error;
use crate::event::Event;
pub use crate::format::admit::Caps;
use crate::format::record::Record;
use crate::ids::{PostId, UserId};
use crate::model::{Post, PostRef};
use crate::rules::checks::{
    post_id_taken, user_being_deleted, user_not_found, EdgeChange, EdgeOp, Membership,
};
use crate::rules::likes::{tally_shard, Tally};
use crate::rules::mentions::kept;
use crate::rules::notifications::changes_of;
use crate::rules::relations::{Relation, RelationChange, MAX_RELATIONS};
use crate::rules::reposts::own_repost;

/// Loads `records` in `txn`, in order, under `caps`; how many changed
/// something.
pub async fn import_records<T: Txn>(
    txn: &mut T,
    records: &[Record],
    caps: &Caps,
) -> Result<usize, T::Error> {
    let mut changed = 0;
    for r in records {
        changed += usize::from(import_record(txn, r, caps).await?);
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
        Record::Post { post: p, .. } => match txn.post(p.id).await? {
            Some(stored) => Event::post_created(stored),
            None => return Ok(()),
        },
        _ => return Ok(()),
    };
    notify::apply_notices(txn, &changes_of(&event)).await?;
    Ok(())
}

/// Loads `record` in `txn` under `caps`; whether it changed anything.
pub async fn import_record<T: Txn>(
    txn: &mut T,
    record: &Record,
    caps: &Caps,
) -> Result<bool, T::Error> {
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
                .with_lists(lists.clone())
                .with_max_following(caps.max_following);
            Ok(edge::change_edge_at(txn, &change, *at_ms).await?.changed())
        }
        Record::Relation {
            user,
            relation,
            target,
        } => import_relation(txn, user, *relation, target).await,
        Record::Member { group, user } => {
            let join = Membership {
                group: group.clone(),
                user: user.clone(),
                join: true,
            };
            membership::change_membership(txn, &join).await
        }
        Record::Post {
            post,
            answered_gone,
        } => import_post(txn, post, *answered_gone).await,
        Record::Like { post, user, at_ms } => import_like(txn, *post, user, *at_ms).await,
        Record::Marker { user, marker: m } => Ok(marker::set_marker(txn, user, *m, true).await?.1),
    }
}

/// A mute or block, planned as the write that made it; one kept on an id
/// whose account is gone stands alone.
async fn import_relation<T: Txn>(
    txn: &mut T,
    user: &UserId,
    relation: Relation,
    target: &UserId,
) -> Result<bool, T::Error> {
    let change = RelationChange::new(user.clone(), target.clone(), relation, true)?;
    let found = txn.existing_users(&[user, target]).await?;
    if found.contains(user) && !found.contains(target) {
        // Kept on an id whose account is gone (a deletion leaves the
        // relations others keep to it): no edge can stand with it, so the
        // relation alone is what the source held.
        if txn.relation_exists(user, relation, target).await? {
            return Ok(false);
        }
        let count = txn.relation_count(user, relation, MAX_RELATIONS).await?;
        change.transition(false, None).check_count(&change, count)?;
        let row = Step::Relation {
            user: user.clone(),
            relation,
            target: target.clone(),
            active: true,
        };
        txn.apply(&[row]).await?;
        return Ok(true);
    }
    Ok(relation::change_relation(txn, &change).await?.changed)
}

/// A like as held: its row and the post's count, whatever stands between
/// the two users since.
async fn import_like<T: Txn>(
    txn: &mut T,
    post: PostId,
    user: &UserId,
    at_ms: u64,
) -> Result<bool, T::Error> {
    if txn.existing_users(&[user]).await?.is_empty() {
        return Err(user_not_found(user).into());
    }
    if txn.post(post).await?.is_none() {
        return Err(not_held(post, "a like").into());
    }
    if txn.liked(post, user).await?.is_some() {
        return Ok(false);
    }
    let steps = [
        Step::Like {
            post,
            user: user.clone(),
            at_ms,
            active: true,
        },
        Step::Tally {
            post,
            tally: Tally::Likes,
            shard: tally_shard(user),
            step: 1,
        },
    ];
    txn.apply(&steps).await?;
    Ok(true)
}

/// A post under its id, with its mentions of users that exist; a reply
/// counted on the post it answers where that is held (it may be gone, if
/// the stream says so); a repost as a repost. Nothing changes when the
/// post is held already; a different post under its id is refused.
async fn import_post<T: Txn>(txn: &mut T, p: &Post, answered_gone: bool) -> Result<bool, T::Error> {
    if let Some(held) = txn.post(p.id).await? {
        // The same post, but for mentions of users deleted since.
        let same = Post {
            mentions: held.mentions.clone(),
            ..p.clone()
        };
        return match held == same {
            true => Ok(false),
            false => Err(post_id_taken(p.id).into()),
        };
    }
    let named: Vec<_> = std::iter::once(&p.author).chain(&p.mentions).collect();
    let found = txn.existing_users(&named).await?;
    if !found.contains(&p.author) {
        return Err(user_not_found(&p.author).into());
    }
    if let Some(original) = &p.repost_of {
        return import_repost(txn, p, original).await;
    }
    let mut stored = p.clone();
    stored.mentions = kept(&p.mentions, |u| Ok(found.contains(u)))?;
    let mut steps = vec![Step::PutPost(stored)];
    if let Some(answered) = &p.reply_to {
        match txn.post(answered.id).await? {
            Some(held) => {
                same_ref(p, answered, &held)?;
                steps.push(post::replies(answered.id, &p.author, 1));
            }
            None if answered_gone => {}
            None => return Err(not_held(answered.id, "a reply (not marked gone)").into()),
        }
    }
    txn.apply(&steps).await?;
    Ok(true)
}

/// The repost `item` of `original`: the original must be held, as the
/// post it names, and not the reposter's own; one repost of a post per
/// user.
async fn import_repost<T: Txn>(
    txn: &mut T,
    item: &Post,
    original: &PostRef,
) -> Result<bool, T::Error> {
    let held = txn.post(original.id).await?;
    let held = held.ok_or_else(|| not_held(original.id, "a repost"))?;
    same_ref(item, original, &held)?;
    if original.author == item.author {
        return Err(own_repost(&item.author).into());
    }
    if let Some(other) = txn.reposted(original.id, &item.author).await? {
        return Err(Error::conflict(
            "already_reposted",
            format!(
                "{} reposted post {} already, as {other}; the repost {} is another",
                item.author, original.id, item.id
            ),
        )
        .into());
    }
    let steps = [
        Step::PutPost(item.clone()),
        Step::Repost {
            post: original.id,
            user: item.author.clone(),
            repost: item.id,
            active: true,
        },
        repost::count(original.id, &item.author, 1),
    ];
    txn.apply(&steps).await?;
    Ok(true)
}

/// Refuses a post that names `named` as another than the store holds
/// (another author, or a repost's item where a post is meant).
fn same_ref(post: &Post, named: &PostRef, held: &Post) -> Result<(), Error> {
    if held.repost_of.is_some() || held.author != named.author {
        return Err(Error::invalid(
            "invalid_reply",
            format!(
                "post {} names post {} by {}; the post held under that id is {}",
                post.id,
                named.id,
                named.author,
                match &held.repost_of {
                    Some(_) => format!("a repost by {}", held.author),
                    None => format!("by {}", held.author),
                }
            ),
        ));
    }
    Ok(())
}

/// A record naming a post that neither the store nor the stream before it
/// holds.
fn not_held(post: PostId, what: &str) -> Error {
    Error::not_found(
        "post_not_found",
        format!("{what} of post {post}, which the stream does not hold before it"),
    )
}
