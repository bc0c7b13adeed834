//! An event of another deployment's log written again here: a migration's
//! catch-up (`socialite_core::transfer`). Each event is replayed as the write
//! that queued it, with its ids and times, under every rule of that write,
//! and queues its events here as that write does (fanout keeps the
//! timelines built so far right).
//!
//! Each replay makes its entity what the event says it became (a post
//! stored or gone, an edge made with its lists and time or gone, a relation,
//! a membership, a profile, a standing), so events replayed over a state
//! that already holds some of them end where the source ended: the
//! catch-up may start a little before the copy's point.
//! A user's deletion is replayed whole, by the caller, on its last event
//! ([`deleted_user`]): it runs in steps of its own transactions.

use super::{edge, like, marker, membership, post, relation, repost, user, Step, Txn};
use crate::event::Event;
use crate::ids::{check_time_not_ahead, now_ms, UserId};
use crate::model::Post;
use crate::rules::checks::{EdgeChange, EdgeOp, Membership};
use crate::rules::likes::LikeChange;
use crate::rules::relations::{Relation, RelationChange};
use crate::rules::reposts::RepostChange;

/// The user whose deletion `event` ends, to be deleted here whole.
pub fn deleted_user(event: &Event) -> Option<&UserId> {
    match event {
        Event::TimelineDropped { user, .. } => Some(user),
        _ => None,
    }
}

/// Replays `event` in `txn`; whether it changed anything. A deletion's
/// events replay as nothing here: the deletion is replayed whole on its
/// last ([`deleted_user`]), and its other events are its steps.
pub async fn replay_event<T: Txn>(txn: &mut T, event: &Event) -> Result<bool, T::Error> {
    not_ahead(event, now_ms())?;
    let edge_change = |follower: &UserId, followee: &UserId, op| {
        EdgeChange::new(follower.clone(), followee.clone(), op)
    };
    Ok(match event {
        Event::PostCreated { post: p, .. } if p.repost_of.is_some() => {
            replay_repost(txn, p).await?
        }
        Event::PostCreated { post: p, .. } => match txn.post(p.id).await? {
            // Stored as the event says, or with mentions a replayed
            // deletion took since (a later event takes them again).
            Some(held) if held.mentions == p.mentions => false,
            Some(held) => {
                let remove = Step::RemovePosts {
                    author: held.author,
                    posts: vec![p.id],
                };
                txn.apply(&[remove]).await?;
                post::restore_post(txn, p.clone()).await?.mentions != held.mentions
            }
            None => {
                post::restore_post(txn, p.clone()).await?;
                true
            }
        },
        Event::PostDeleted { post: id, .. } => post::delete_post(txn, *id).await?.is_some(),
        Event::Followed {
            follower,
            followee,
            lists,
            at_ms,
        } => {
            let change = edge_change(follower, followee, EdgeOp::Follow)?.with_lists(lists.clone());
            edge::change_edge_at(txn, &change, *at_ms).await?.changed()
        }
        Event::Unfollowed {
            follower, followee, ..
        } => {
            let change = edge_change(follower, followee, EdgeOp::Unfollow)?;
            edge::change_edge(txn, &change).await?.changed()
        }
        Event::Relisted {
            follower,
            followee,
            added,
            removed,
        } => match txn.edge_lists(follower, followee).await? {
            None => false,
            Some(mut lists) => {
                lists.retain(|l| !removed.contains(l));
                lists.extend(added.iter().cloned());
                let change = edge_change(follower, followee, EdgeOp::Follow)?.with_lists(lists);
                edge::change_edge(txn, &change).await?.changed()
            }
        },
        Event::Joined { group, user } | Event::Left { group, user } => {
            let change = Membership {
                group: group.clone(),
                user: user.clone(),
                join: matches!(event, Event::Joined { .. }),
            };
            membership::change_membership(txn, &change).await?
        }
        Event::Muted { user, target, .. } => {
            relate(txn, user, Relation::Mute, target, true).await?
        }
        Event::Unmuted { user, target, .. } => {
            relate(txn, user, Relation::Mute, target, false).await?
        }
        Event::Blocked { user, target } => relate(txn, user, Relation::Block, target, true).await?,
        Event::Unblocked { user, target } => {
            relate(txn, user, Relation::Block, target, false).await?
        }
        Event::UserPut { user, profile } => {
            user::put_user(txn, user, profile.clone()).await?;
            true
        }
        Event::StandingSet { user, standing } => {
            user::set_standing(txn, user, |_| *standing).await? != *standing
        }
        Event::Liked { .. } | Event::Unliked { .. } | Event::MarkerSet { .. } => {
            replay_reader_event(txn, event).await?
        }
        Event::AuthorRetracted { .. } | Event::TimelineDropped { .. } => false,
    })
}

/// Refuses an event whose post id or time is ahead of the clock (as an
/// import refuses such a record): no writer here made it, and taken in it
/// would date what follows in the future.
fn not_ahead(event: &Event, now: u64) -> crate::error::Result<()> {
    match event {
        Event::PostCreated { post, .. } => post.id.check_not_ahead("a replayed post", now),
        Event::Followed { at_ms, .. } | Event::Liked { at_ms, .. } => {
            check_time_not_ahead("a replayed event", *at_ms, now)
        }
        Event::MarkerSet { marker, .. } => {
            marker.last_read.check_not_ahead("a replayed marker", now)?;
            check_time_not_ahead("a replayed marker", marker.at_ms, now)
        }
        Event::StandingSet { standing, .. } => {
            check_time_not_ahead("a replayed standing", standing.tokens_after_ms, now)
        }
        _ => Ok(()),
    }
}

/// Replays a like, an unlike or a marker set; whether it changed anything.
async fn replay_reader_event<T: Txn>(txn: &mut T, event: &Event) -> Result<bool, T::Error> {
    Ok(match event {
        Event::Liked {
            user, post, at_ms, ..
        } => {
            let change = LikeChange {
                user: user.clone(),
                post: *post,
                like: true,
            };
            like_stands(txn, &change).await? && like::change_like_at(txn, &change, *at_ms).await?
        }
        Event::Unliked { user, post, .. } => {
            let change = LikeChange {
                user: user.clone(),
                post: *post,
                like: false,
            };
            like_stands(txn, &change).await? && like::change_like_at(txn, &change, now_ms()).await?
        }
        Event::MarkerSet { user, marker } => {
            // Set to what the event says, back too: the log holds the
            // order the source applied them in.
            !txn.existing_users(&[user]).await?.is_empty()
                && marker::set_marker(txn, user, *marker, true).await?.1
        }
        _ => unreachable!("not a reader's event"),
    })
}

/// Replays a repost: made with the event's item id unless the user
/// reposted the post already, or the user or the post is not here (a
/// replay from before the copy's point meets those).
async fn replay_repost<T: Txn>(txn: &mut T, item: &Post) -> Result<bool, T::Error> {
    let original = item.repost_of.as_ref().expect("a repost");
    if txn.post(item.id).await?.is_some()
        || txn.existing_users(&[&item.author]).await?.is_empty()
        || txn.post(original.id).await?.is_none()
    {
        return Ok(false);
    }
    let change = RepostChange {
        user: item.author.clone(),
        post: original.id,
        repost: true,
    };
    Ok(repost::change_repost(txn, &change, item.id).await?.changed)
}

async fn relate<T: Txn>(
    txn: &mut T,
    user: &UserId,
    relation: Relation,
    target: &UserId,
    make: bool,
) -> Result<bool, T::Error> {
    let change = RelationChange::new(user.clone(), target.clone(), relation, make)?;
    Ok(relation::change_relation(txn, &change).await?.changed)
}

/// Whether the user and the post of a replayed like are both here: a
/// replay that starts before the copy's point meets likes of posts and
/// users the copy no longer holds, which change nothing.
async fn like_stands<T: Txn>(txn: &mut T, change: &LikeChange) -> Result<bool, T::Error> {
    Ok(!txn.existing_users(&[&change.user]).await?.is_empty()
        && txn.post(change.post).await?.is_some())
}
