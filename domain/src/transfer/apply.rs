//! The one planner of a transfer: an act of another store ([`Act`]) made
//! here, replayed as the write that queued its event or restored as the
//! record that holds it ([`Mode`], where every difference between the two
//! is decided). Each act is planned by the planner of the write it mirrors
//! (a follow by [`crate::graph::edge`], a like by
//! [`crate::interactions::like`], ...); here is only what a mode decides
//! about it. Each act makes its entity what the act says it became (a post
//! stored or gone, an edge made with its lists and time or gone, a
//! relation, a membership, a profile, a standing, a like, a marker), so an
//! act the store holds already changes nothing: a rerun of an import, or a
//! catch-up that starts a little before the copy's point, ends where the
//! source ended.
//!
//! A user's deletion is not an act here: a replay deletes the user whole on
//! its last event (`crate::transfer::replay::deleted_user`), and its other
//! events are its steps; an export holds nothing deleted.

use crate::accounts::user;
use crate::checks::{post_id_taken, post_not_found, user_not_found, EdgeChange, EdgeOp};
use crate::checks::{EdgeTransition, Membership};
use crate::collections::{self, KeepChange};
use crate::error::Error;
use crate::event::Event;
use crate::feed::marker;
use crate::feed::markers::Marker;
use crate::filters;
use crate::graph::relations::{Priority, Relation, RelationChange, MAX_RELATIONS};
use crate::graph::{edge, exclusive, membership, relate};
use crate::ids::{now_ms, UserId};
use crate::interactions::like;
use crate::interactions::likes::LikeChange;
use crate::interactions::repost::{carried, new_repost};
use crate::model::Post;
use crate::notifications::notified::{changes_of, NoticeChange};
use crate::notifications::notify;
use crate::notifications::thread_mutes;
use crate::plan::{Step, Txn};
use crate::posts::post;
use crate::transfer::act::Act;
use crate::transfer::mode::{not_held, same_ref, Held, Mode, Naming};

/// Makes `act` in `txn` as `mode` says, with the notices it makes;
/// whether it changed anything.
pub async fn apply<T: Txn>(txn: &mut T, act: &Act, mode: Mode) -> Result<bool, T::Error> {
    let changed = make(txn, act, mode).await?;
    if mode.tells() {
        let changes = told(txn, act).await?;
        notify::apply_notices(txn, &changes).await?;
    }
    Ok(changed)
}

/// Makes `act` in `txn` as `mode` says, without its notices (a run's are
/// made at once: [`told`]); whether it changed anything.
pub(crate) async fn make<T: Txn>(txn: &mut T, act: &Act, mode: Mode) -> Result<bool, T::Error> {
    mode.check(act)?;
    let changed = match act {
        Act::Event(event) => event_act(txn, event, mode).await?,
        Act::Like { user, post, at_ms } => {
            let change = LikeChange {
                user: user.clone(),
                post: *post,
                like: true,
            };
            like(txn, &change, *at_ms, mode).await?
        }
        Act::GoneReply(p) => post(txn, p, true, mode).await?,
        Act::Filters {
            user,
            filters,
            next_id,
        } => {
            if txn.existing_users(&[user]).await?.is_empty() {
                return Ok(mode.absent(user_not_found(user))?);
            }
            filters::plan::restore_filters(txn, user, filters, *next_id).await?
        }
    };
    Ok(changed)
}

/// An event's act.
async fn event_act<T: Txn>(txn: &mut T, event: &Event, mode: Mode) -> Result<bool, T::Error> {
    let like_change = |user: &UserId, post, like| LikeChange {
        user: user.clone(),
        post,
        like,
    };
    Ok(match event {
        Event::PostCreated { post: p, .. } => post(txn, p, false, mode).await?,
        Event::PostDeleted { post: id, .. } => post::delete_post(txn, *id).await?.is_some(),
        Event::Liked {
            user, post, at_ms, ..
        } => like(txn, &like_change(user, *post, true), *at_ms, mode).await?,
        Event::Unliked { user, post, .. } => {
            like(txn, &like_change(user, *post, false), now_ms(), mode).await?
        }
        Event::MarkerSet { user, marker } => set_marker(txn, user, *marker, mode).await?,
        Event::FilterPut { user, filter } => {
            if txn.existing_users(&[user]).await?.is_empty() {
                return Ok(mode.absent(user_not_found(user))?);
            }
            filters::plan::restore_filters(txn, user, std::slice::from_ref(filter), 0).await?
        }
        Event::FilterRemoved { user, filter } => {
            if txn.existing_users(&[user]).await?.is_empty() {
                return Ok(mode.absent(user_not_found(user))?);
            }
            filters::plan::remove_filter(txn, user, *filter).await?
        }
        Event::ListExclusiveSet {
            user,
            list,
            exclusive,
        } => {
            if txn.existing_users(&[user]).await?.is_empty() {
                return Ok(mode.absent(user_not_found(user))?);
            }
            exclusive::set_exclusive(txn, user, list, *exclusive, false).await?
        }
        Event::ThreadMuteSet { user, post, muted } => {
            if txn.existing_users(&[user]).await?.is_empty() {
                return Ok(mode.absent(user_not_found(user))?);
            }
            thread_mutes::mute_thread(txn, user, *post, *muted, false)
                .await?
                .0
        }
        Event::KeptChanged {
            collection,
            user,
            post,
            at_ms,
            kept,
        } => {
            let change = KeepChange {
                collection: collection.clone(),
                user: user.clone(),
                post: *post,
                keep: *kept,
            };
            keep(txn, &change, *at_ms, mode).await?
        }
        Event::UserPut { user, profile } => {
            user::store_user(txn, user, profile.clone()).await?.changed
        }
        Event::StandingSet { user, standing, .. } => {
            let held = user::set_standing(txn, user, |held| mode.standing(held, *standing)).await?;
            mode.standing(held, *standing) != held
        }
        Event::Followed { .. }
        | Event::Unfollowed { .. }
        | Event::Relisted { .. }
        | Event::Joined { .. }
        | Event::Left { .. }
        | Event::Muted { .. }
        | Event::Unmuted { .. }
        | Event::Blocked { .. }
        | Event::Unblocked { .. }
        | Event::PrioritySet { .. }
        | Event::FollowOptionsSet { .. } => graph_act(txn, event, mode).await?,
        // A deletion's own events: its steps, replayed whole elsewhere.
        Event::AuthorRetracted { .. } | Event::TimelineDropped { .. } => false,
    })
}

/// The edge change a [`Event::Followed`] makes under `mode`, and the
/// time its edge keeps; `None` for any other event.
pub(crate) fn followed(event: &Event, mode: Mode) -> Option<Result<(EdgeChange, u64), Error>> {
    let Event::Followed {
        follower,
        followee,
        lists,
        at_ms,
    } = event
    else {
        return None;
    };
    let change = EdgeChange::new(follower.clone(), followee.clone(), EdgeOp::Follow).map(|c| {
        let c = c.with_lists(lists.clone());
        match mode.follow_cap() {
            Some(max) => c.with_max_following(max),
            None => c,
        }
    });
    Some(change.map(|c| (c, *at_ms)))
}

/// A graph event's act: an edge, a membership, a relation.
async fn graph_act<T: Txn>(txn: &mut T, event: &Event, mode: Mode) -> Result<bool, T::Error> {
    let edge_change = |follower: &UserId, followee: &UserId, op| {
        EdgeChange::new(follower.clone(), followee.clone(), op)
    };
    let changed = |t: EdgeTransition| t.changed();
    Ok(match event {
        Event::Followed { .. } => {
            let Some(made) = followed(event, mode) else {
                unreachable!("a follow makes a follow's change")
            };
            let (change, at_ms) = made?;
            changed(edge::change_edge_at(txn, &change, at_ms).await?)
        }
        Event::Unfollowed {
            follower, followee, ..
        } => {
            let change = edge_change(follower, followee, EdgeOp::Unfollow)?;
            changed(edge::change_edge(txn, &change).await?)
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
                changed(edge::change_edge(txn, &change).await?)
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
        Event::Muted {
            user,
            target,
            until_ms,
            ..
        } => {
            let change = match until_ms {
                Some(at) => RelationChange::mute_until(user.clone(), target.clone(), *at)?,
                None => RelationChange::new(user.clone(), target.clone(), Relation::Mute, true)?,
            };
            relation(txn, &change, mode).await?
        }
        Event::Unmuted { user, target, .. } => {
            let change = RelationChange::new(user.clone(), target.clone(), Relation::Mute, false)?;
            relation(txn, &change, mode).await?
        }
        Event::Blocked { user, target } | Event::Unblocked { user, target } => {
            let make = matches!(event, Event::Blocked { .. });
            let change = RelationChange::new(user.clone(), target.clone(), Relation::Block, make)?;
            relation(txn, &change, mode).await?
        }
        Event::PrioritySet {
            user,
            target,
            level,
        } => {
            let level = Priority::new(i64::from(*level))?;
            let to_gone = mode.keeps_relation_to_gone();
            relate::set_priority(txn, user, target, level, to_gone).await?
        }
        Event::FollowOptionsSet {
            user,
            target,
            changes,
            at_ms,
        } => {
            // An event or record of before the time was carried: a
            // `notify` counts from now, so no earlier post tells anyone.
            let at_ms = if *at_ms == 0 { now_ms() } else { *at_ms };
            relate::set_follow_options(txn, user, target, changes, at_ms).await?
        }
        _ => unreachable!("not an event of the graph"),
    })
}

/// A mute or block made (`make`) or lifted, as the write does it; one made
/// on an id whose account is gone stands alone where `mode` keeps it.
async fn relation<T: Txn>(
    txn: &mut T,
    change: &RelationChange,
    mode: Mode,
) -> Result<bool, T::Error> {
    let (user, target) = (change.user(), change.target());
    if change.makes() && mode.keeps_relation_to_gone() {
        let found = txn.existing_users(&[user, target]).await?;
        if found.contains(user) && !found.contains(target) {
            return relation_alone(txn, change).await;
        }
    }
    Ok(relate::change_relation(txn, change).await?.changed)
}

/// The relation `change` makes, with no edge to cut (none stands with an
/// account that is gone), under the count of relations a user keeps.
async fn relation_alone<T: Txn>(txn: &mut T, change: &RelationChange) -> Result<bool, T::Error> {
    let (user, relation, target) = (change.user(), change.relation(), change.target());
    if txn.relation_exists(user, relation, target).await? {
        return Ok(false);
    }
    let count = txn.relation_count(user, relation, MAX_RELATIONS).await?;
    change.transition(false, None).check_count(change, count)?;
    let row = Step::Relation {
        user: user.clone(),
        relation,
        target: target.clone(),
        active: true,
    };
    let mut rows = vec![row];
    if let Some(at_ms) = change.ends_at() {
        rows.push(Step::MuteEnd {
            user: user.clone(),
            target: target.clone(),
            at_ms: Some(at_ms),
        });
    }
    txn.apply(&rows).await?;
    Ok(true)
}

/// A like made or undone as the write does it, at `at_ms`; what a user or
/// a post not held does, and a block, as `mode` says.
async fn like<T: Txn>(
    txn: &mut T,
    change: &LikeChange,
    at_ms: u64,
    mode: Mode,
) -> Result<bool, T::Error> {
    if txn.existing_users(&[&change.user]).await?.is_empty() {
        return Ok(mode.absent(user_not_found(&change.user))?);
    }
    let Some(stored) = txn.post(change.post).await? else {
        return Ok(mode.absent(not_held(change.post, "a like"))?);
    };
    like::like_stored(txn, change, &stored, at_ms, mode.blocks()).await
}

/// A post put in or taken out of a user's collection at `at_ms`, as the
/// write did; a user not held, or a kept post not held, as `mode` says.
async fn keep<T: Txn>(
    txn: &mut T,
    change: &KeepChange,
    at_ms: u64,
    mode: Mode,
) -> Result<bool, T::Error> {
    if txn.existing_users(&[&change.user]).await?.is_empty() {
        return Ok(mode.absent(user_not_found(&change.user))?);
    }
    if change.keep && txn.post(change.post).await?.is_none() {
        return Ok(mode.absent(post_not_found(change.post))?);
    }
    collections::change_kept(txn, change, at_ms).await
}

/// A marker set to what the act says, back too: a log holds the order the
/// source set them in, and a record where they ended. A user not held, as
/// `mode` says.
async fn set_marker<T: Txn>(
    txn: &mut T,
    user: &UserId,
    to: Marker,
    mode: Mode,
) -> Result<bool, T::Error> {
    if txn.existing_users(&[user]).await?.is_empty() {
        return Ok(mode.absent(user_not_found(user))?);
    }
    Ok(marker::move_marker(txn, user, to, true).await?.1)
}

/// A post (or a repost) stored under its id; `marked_gone` when the stream
/// marks the post a reply answers as gone. What a post held under its id
/// does, as `mode` says.
async fn post<T: Txn>(
    txn: &mut T,
    p: &Post,
    marked_gone: bool,
    mode: Mode,
) -> Result<bool, T::Error> {
    if let Some(held) = txn.post(p.id).await? {
        return match mode.held_post(&held, p) {
            Held::Same => Ok(false),
            Held::Taken => Err(post_id_taken(p.id).into()),
            Held::Rewrite => {
                let remove = Step::RemovePosts {
                    author: held.author.clone(),
                    posts: vec![p.id],
                };
                txn.apply(&[remove]).await?;
                let stored = new_post(txn, p, marked_gone, mode).await?;
                Ok(stored.mentions != held.mentions)
            }
        };
    }
    if p.repost_of.is_some() {
        return repost(txn, p, mode).await;
    }
    new_post(txn, p, marked_gone, mode).await?;
    Ok(true)
}

/// A post not held, stored as the write stores it: by an author who
/// exists, with its mentions of users who exist; a reply counted on the
/// post it answers. A reply whose post is not held, which post a reply
/// names, and a block, as `mode` says. Returns the post as stored.
async fn new_post<T: Txn>(
    txn: &mut T,
    p: &Post,
    marked_gone: bool,
    mode: Mode,
) -> Result<Post, T::Error> {
    let mut stored = post::with_mentions(txn, p.clone()).await?;
    let mut answered = None;
    if let Some(asked) = &p.reply_to {
        match txn.post(asked.id).await? {
            None => mode.reply_to_absent(asked.id, marked_gone)?,
            Some(held) => {
                let named = match mode.naming() {
                    Naming::AsWritten => post::answered_of(txn, &held).await?,
                    Naming::AsHeld => {
                        same_ref(p, asked, &held)?;
                        asked.clone()
                    }
                };
                post::check_reply_block(txn, &p.author, &named.author, mode.blocks()).await?;
                answered = Some(named.id);
                stored.reply_to = Some(named);
            }
        }
    }
    post::put_post(txn, stored, answered).await
}

/// A repost's item not held, made as the write makes a repost: by a user
/// who exists, of a post held, once per user. A user or a post not held,
/// which post it names, a repost held as another item and a block, as
/// `mode` says.
async fn repost<T: Txn>(txn: &mut T, item: &Post, mode: Mode) -> Result<bool, T::Error> {
    let named = item.repost_of.as_ref().expect("a repost");
    if txn.existing_users(&[&item.author]).await?.is_empty() {
        return Ok(mode.absent(user_not_found(&item.author))?);
    }
    let Some(held) = txn.post(named.id).await? else {
        return Ok(mode.absent(not_held(named.id, "a repost"))?);
    };
    let original = match mode.naming() {
        Naming::AsWritten => carried(txn, &held)
            .await?
            .ok_or_else(|| post_not_found(named.id))?,
        Naming::AsHeld => {
            same_ref(item, named, &held)?;
            named.clone()
        }
    };
    if let Some(other) = txn.reposted(original.id, &item.author).await? {
        return Ok(mode.reposted_already(item, other)?);
    }
    let made = Post {
        repost_of: Some(original),
        ..item.clone()
    };
    new_repost(txn, made, mode.blocks()).await?;
    Ok(true)
}

/// The notices the event of `act` makes (its post and like as stored),
/// as fanout makes them of a queued event: made where the act queues none
/// ([`Mode::tells`]). Idempotent, as they are.
pub(crate) async fn told<T: Txn>(txn: &mut T, act: &Act) -> Result<Vec<NoticeChange>, T::Error> {
    let changes = match act {
        Act::Like { user, post, at_ms } => {
            let Some(liked) = txn.post(*post).await? else {
                return Ok(Vec::new());
            };
            changes_of(&Event::Liked {
                user: user.clone(),
                post: *post,
                author: liked.author,
                at_ms: *at_ms,
            })
        }
        Act::GoneReply(p) | Act::Event(Event::PostCreated { post: p, .. }) => {
            match txn.post(p.id).await? {
                Some(stored) => changes_of(&Event::post_created(stored)),
                None => return Ok(Vec::new()),
            }
        }
        Act::Event(event @ Event::Followed { .. }) => changes_of(event),
        // The other events a record reads as, and filters, tell no one.
        Act::Event(_) | Act::Filters { .. } => return Ok(Vec::new()),
    };
    Ok(changes)
}
