//! Applies log events to timeline caches. Deliveries of consecutive posts are
//! gathered and written in one bulk call; any other event first flushes them,
//! so that each user's cache sees events in log order.

use super::followers::{edge_targets, FollowerIndex};
use super::merge::newest_exact;
use super::Stores;
use crate::error::Result;
use crate::event::Event;
use crate::ids::{now_ms, GroupName, ListName, PostId, TimelineId, UserId};
use crate::metrics::metrics;
use crate::model::Entry;
use crate::numbers::Targets;
use crate::ports::Delivery;
use crate::ports::{Coverage, IdRange};
use socialite_domain::feed::hybrid::is_big;
use socialite_domain::feed::timeline_change::TimelineChange;
use socialite_domain::graph::relations::Relation;
use std::collections::HashMap;
use std::sync::Arc;

/// What one batch did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FanoutStats {
    pub events: usize,
    /// (follower, post) pairs looked at.
    pub candidates: usize,
    /// Pairs written into a cache; the rest were dormant followers.
    pub delivered: usize,
    /// Follower timelines not delivered to because the author is big
    /// (hybrid fanout): their readers merge the post at read time.
    pub hybrid_skipped: usize,
}

/// Applies `events` in order. `followers` is the worker's follower index;
/// it is kept in step with the follow events applied here.
pub async fn apply(
    stores: &Stores,
    followers: &FollowerIndex,
    events: &[Event],
) -> Result<FanoutStats> {
    let mut stats = FanoutStats {
        events: events.len(),
        ..Default::default()
    };
    // Notifications first: they are kept whatever the feed model.
    super::notify::apply(stores, events).await?;
    if !stores.stores_timelines() {
        return Ok(stats); // fanout on read: nothing is stored per reader
    }
    let changes: Vec<TimelineChange> = events.iter().filter_map(TimelineChange::of).collect();
    let authors: Vec<&UserId> = changes
        .iter()
        .filter_map(|c| match c {
            TimelineChange::Posted(post) => Some(&post.author),
            TimelineChange::Retracted { author, .. } => Some(*author),
            _ => None,
        })
        .collect();
    let threshold = followers.hybrid_threshold(stores.feed.hybrid);
    followers.preload(stores, &authors, threshold).await?;
    let mut pending: Vec<Delivery> = Vec::new();
    let mut posts: Vec<PostId> = Vec::new();
    for change in changes {
        if let TimelineChange::Posted(post) = change {
            posts.push(post.id);
            let entry = if stores.feed.embed {
                Entry::embedded(post)
            } else {
                Entry::linked(post.id, post.author.clone())
            };
            if stores.to_own_timeline() {
                let own = TimelineId::home(&post.author);
                pending.push((entry.clone(), Arc::new(Targets::from(vec![own]))));
            }
            let (targets, skipped) = hybrid_targets(stores, followers, &post.author).await?;
            stats.hybrid_skipped += skipped;
            // A repost goes to home and list timelines: groups carry posts.
            let targets = match post.repost_of {
                None => targets,
                Some(_) => Arc::new(targets.iter().filter(|t| !t.is_group()).cloned().collect()),
            };
            pending.push((entry, targets));
            continue;
        }
        flush(stores, followers, &mut pending, &mut posts, &mut stats).await?;
        apply_graph_change(stores, followers, change).await?;
    }
    flush(stores, followers, &mut pending, &mut posts, &mut stats).await?;
    Ok(stats)
}

/// Applies one change other than a new post, after the posts before it
/// were delivered: retractions, follows, lists, groups, mutes and deletions.
async fn apply_graph_change(
    stores: &Stores,
    followers: &FollowerIndex,
    change: TimelineChange<'_>,
) -> Result<()> {
    match change {
        TimelineChange::Posted(_) => unreachable!("delivered in batches by `apply`"),
        // A block's unfollows are changes of their own.
        TimelineChange::Block { .. } => {}
        TimelineChange::Retracted { post, author } => {
            let list = followers.followers(&*stores.graph, author).await?;
            stores.timelines.retract_post(&list, post).await?;
            if stores.to_own_timeline() {
                let own = [TimelineId::home(author)];
                stores.timelines.retract_post(&own, post).await?;
            }
        }
        TimelineChange::Followed {
            follower,
            followee,
            lists,
        } => {
            followers.followed(follower, followee, lists);
            if !mutes(stores, follower, followee).await? {
                for t in edge_targets(follower, lists) {
                    backfill(stores, &t, followee).await?;
                }
            }
        }
        TimelineChange::Unfollowed {
            follower,
            followee,
            lists,
        } => {
            followers.unfollowed(follower, followee, lists);
            for t in edge_targets(follower, lists) {
                stores.timelines.purge_author(&t, followee).await?;
            }
        }
        TimelineChange::Relisted {
            follower,
            followee,
            added,
            removed,
        } => {
            followers.relisted(follower, followee, added, removed);
            relist(stores, follower, followee, added, removed).await?;
        }
        TimelineChange::Membership {
            group,
            user,
            joined,
        } => membership(stores, followers, group, user, joined).await?,
        TimelineChange::AuthorRetracted {
            author,
            followers: former,
            listed,
        } => {
            followers.forget(author);
            let homes = former.iter().map(TimelineId::home);
            let lists = listed.iter().map(|(f, l)| TimelineId::list(f, l));
            for t in homes.chain(lists) {
                stores.timelines.purge_author(&t, author).await?;
            }
        }
        TimelineChange::Dropped { user, lists } => {
            for t in edge_targets(user, lists) {
                stores.timelines.drop_timeline(&t).await?;
            }
        }
        TimelineChange::Mute {
            user,
            target,
            edge,
            muted: true,
        } => {
            followers.muted(user, target, edge);
            // Without an edge, none of the user's timelines holds the target.
            for t in edge.iter().flat_map(|lists| edge_targets(user, lists)) {
                stores.timelines.purge_author(&t, target).await?;
            }
        }
        TimelineChange::Mute {
            user,
            target,
            edge,
            muted: false,
        } => {
            followers.unmuted(user, target, edge);
            unmute(stores, user, target, edge).await?;
        }
    }
    Ok(())
}

/// A member's posts enter the group's timeline (`joined`) or leave it.
async fn membership(
    stores: &Stores,
    followers: &FollowerIndex,
    group: &GroupName,
    user: &UserId,
    joined: bool,
) -> Result<()> {
    let t = TimelineId::group(group);
    match joined {
        true => {
            followers.joined(group, user);
            backfill(stores, &t, user).await
        }
        false => {
            followers.left(group, user);
            stores.timelines.purge_author(&t, user).await
        }
    }
}

/// An edge filed under other lists: the followee's recent posts enter the
/// lists `added` (unless muted) and leave those `removed`.
async fn relist(
    stores: &Stores,
    follower: &UserId,
    followee: &UserId,
    added: &[ListName],
    removed: &[ListName],
) -> Result<()> {
    if !mutes(stores, follower, followee).await? {
        for l in added {
            let t = TimelineId::list(follower, l);
            backfill(stores, &t, followee).await?;
        }
    }
    for l in removed {
        let t = TimelineId::list(follower, l);
        stores.timelines.purge_author(&t, followee).await?;
    }
    Ok(())
}

/// What a lifted mute brings back into the user's timelines of the edge
/// (without an edge, there is nothing of the target's to bring back).
async fn unmute(
    stores: &Stores,
    user: &UserId,
    target: &UserId,
    lists: Option<&[ListName]>,
) -> Result<()> {
    let Some(lists) = lists else {
        return Ok(());
    };
    if !mutes(stores, user, target).await? {
        for t in edge_targets(user, lists) {
            backfill(stores, &t, target).await?;
        }
    }
    Ok(())
}

/// Where a post of `author` goes, by the hybrid rule: every target, or for
/// a big author only the groups' timelines (with how many were skipped).
/// An author turning big is marked in the store before the first post is
/// skipped; one turning small again first has their recent posts backfilled
/// into the active followers' timelines, then is unmarked.
async fn hybrid_targets(
    stores: &Stores,
    followers: &FollowerIndex,
    author: &UserId,
) -> Result<(Arc<Targets>, usize)> {
    let threshold = followers.hybrid_threshold(stores.feed.hybrid);
    let t = followers.post_targets(stores, author, threshold).await?;
    let big = is_big(threshold, t.homes as u64, t.marked);
    match (t.marked, big) {
        (false, false) => Ok((t.all, 0)),
        (_, true) => {
            if !t.marked {
                stores.graph.set_hybrid(author, true).await?;
                followers.set_marked(author, true);
                stores.marks.set(author, true);
            }
            let skipped = match t.whole {
                true => t.all.len() - t.groups.len(),
                false => t.homes,
            };
            Ok((t.groups.clone(), skipped))
        }
        (true, false) => {
            let homes: Vec<TimelineId> = t.all.iter().filter(|t| !t.is_group()).cloned().collect();
            // Marked, their posts were not delivered: nothing to replace.
            backfill_all(stores, &homes, author, false).await?;
            stores.graph.set_hybrid(author, false).await?;
            followers.set_marked(author, false);
            stores.marks.set(author, false);
            Ok((t.all, 0))
        }
    }
}

/// Writes the gathered deliveries, then records how long after their
/// creation the posts became visible.
async fn flush(
    stores: &Stores,
    followers: &FollowerIndex,
    pending: &mut Vec<Delivery>,
    posts: &mut Vec<PostId>,
    stats: &mut FanoutStats,
) -> Result<()> {
    if !pending.is_empty() {
        let candidates = pending.iter().map(|(_, f)| f.len()).sum::<usize>();
        let started = std::time::Instant::now();
        stats.candidates += candidates;
        stats.delivered += stores.timelines.deliver(pending).await?;
        followers.observe_delivery_cost(started.elapsed().as_secs_f64(), candidates);
        pending.clear();
    }
    let now = now_ms();
    for p in posts.drain(..) {
        metrics()
            .post_visible
            .observe(now.saturating_sub(p.unix_ms()) as f64 / 1000.0);
    }
    Ok(())
}

/// Whether `user` mutes `author` now. A backfill reads the graph as it is,
/// not as it was at the event's place in the log: when the two differ, a
/// later `Muted` or `Unmuted` event of the same pair, ordered after this
/// one, sets the timeline right.
async fn mutes(stores: &Stores, user: &UserId, author: &UserId) -> Result<bool> {
    stores
        .graph
        .has_relation(user, Relation::Mute, author)
        .await
}

/// Brings the followee's posts that the timeline's cache covers into it
/// (a follow, a join, a list, a lifted mute), in place of any of theirs it
/// held: it then holds their posts as they are. A replay of the log
/// delivers posts to the followers of now, so it may have brought in a
/// post of an earlier account under the id, which that account's deletion
/// retracted from its own followers only; the follow of the later account
/// comes after that deletion in the log, and puts it right.
async fn backfill(stores: &Stores, timeline: &TimelineId, followee: &UserId) -> Result<()> {
    backfill_all(stores, std::slice::from_ref(timeline), followee, true).await
}

/// Copies the followee's posts that each timeline's cache covers into it,
/// from one read of the followee's newest posts: a cache holds at most
/// its capacity of them, so the newest capacity and one more tell every
/// cache what it takes, and whether more lie below (an author turning
/// small backfills every active follower at once).
async fn backfill_all(
    stores: &Stores,
    timelines: &[TimelineId],
    followee: &UserId,
    replace: bool,
) -> Result<()> {
    let cap = stores.timelines.capacity();
    // The followee's newest, as listed and as stored (with embedding, the
    // posts' content; a post deleted meanwhile is left out of the latter
    // only, so the former still tells what lies below).
    let mut newest: Option<(Vec<Entry>, HashMap<PostId, Entry>)> = None;
    for timeline in timelines {
        let Some(coverage) = stores.timelines.coverage(timeline).await? else {
            continue; // dormant: the first read will merge
        };
        if replace {
            stores.timelines.purge_author(timeline, followee).await?;
        }
        if newest.is_none() {
            let listed = stores
                .content
                .post_ids_by(std::slice::from_ref(followee), IdRange::default(), cap + 1)
                .await?;
            let listed = newest_first(listed);
            let stored = stores.prepare(listed.clone()).await?;
            newest = Some((listed, stored.into_iter().map(|e| (e.post, e)).collect()));
        }
        let (listed, stored) = newest.as_ref().expect("read above");
        // Those the cache covers; when all that were read are, more may
        // lie below them, and `newest_exact` keeps the floor above those.
        let covered: Vec<Entry> = match coverage.floor() {
            Some(floor) => listed.iter().filter(|e| e.post >= floor).cloned().collect(),
            None => listed.clone(),
        };
        let (covered, exact) = match covered.len() == listed.len() && listed.len() > cap {
            true => newest_exact(covered, cap),
            false => (covered, Coverage::All),
        };
        let entries = covered
            .iter()
            .filter_map(|e| stored.get(&e.post).cloned())
            .collect();
        stores
            .timelines
            .backfill(timeline, followee, entries, exact)
            .await?;
    }
    Ok(())
}

/// Entries newest first.
fn newest_first(mut entries: Vec<Entry>) -> Vec<Entry> {
    entries.sort_unstable_by_key(|e| std::cmp::Reverse(e.post));
    entries
}
