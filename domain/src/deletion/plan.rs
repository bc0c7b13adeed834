//! One step of a user's deletion (see [`DeletionStage`]): the page of
//! records the stage removes, read in the transaction, the steps that
//! remove them as any unfollow, leave or lift would, and the events
//! [`UserDeletion`] decides. A step of a deletion that has finished does
//! nothing, so a late step (two runners, or the id registered again) never
//! touches a newer account.

use crate::checks::Membership;
use crate::deletion::cascade::{timeline_dropped, DeletionStage, UserDeletion};
use crate::graph::edge::options_off;
use crate::graph::relations::Relation;
use crate::ids::{ListName, PostId, UserId};
use crate::interactions::likes::{tally_shard, Tally};
use crate::plan::{Side, Step, Txn};

/// What a deletion step did: whether its stage has more, and the posts it
/// removed or rewrote (for the stores' post caches).
#[derive(Debug, Default, PartialEq)]
pub struct DeletionStep {
    pub more: bool,
    pub posts: Vec<PostId>,
}

/// Begins deleting `user`: from this write on they are gone to readers and
/// writers, and a restarted process finds the deletion to resume. Keeps the
/// lists they have now, which the last step's event names. False when there
/// is no such user (or their deletion began already).
pub async fn begin_deletion<T: Txn>(txn: &mut T, user: &UserId) -> Result<bool, T::Error> {
    if txn.existing_users(&[user]).await?.is_empty() {
        return Ok(false);
    }
    let lists = txn.list_names(user).await?;
    let mark = Step::MarkDeleting {
        user: user.clone(),
        lists,
    };
    txn.apply(&[mark]).await?;
    Ok(true)
}

/// Runs one step of `stage` for `user` in `txn`: at most `limit` records.
pub async fn deletion_step<T: Txn>(
    txn: &mut T,
    user: &UserId,
    stage: DeletionStage,
    limit: usize,
) -> Result<DeletionStep, T::Error> {
    // The lists the user had, kept since the deletion began; `None` once
    // it finished.
    let Some(own_lists) = txn.deleting(user).await? else {
        return Ok(DeletionStep::default());
    };
    let mut steps = Vec::new();
    let mut done = DeletionStep::default();
    match stage {
        DeletionStage::Followers => {
            let page = txn.edge_page(user, Side::Followers, limit).await?;
            done.more = page.len() == limit;
            let followers: Vec<UserId> = page.iter().map(|(f, _)| f.clone()).collect();
            let listed: Vec<_> = page
                .iter()
                .flat_map(|(f, lists)| lists.iter().map(move |l| (f.clone(), l.clone())))
                .collect();
            let edges = page.iter().map(|(f, lists)| (f, user, &lists[..]));
            steps.extend(cut(edges));
            steps.extend(followers_options_off(txn, &followers, user).await?);
            let events = UserDeletion::of_followers(user, &followers, &listed).events();
            steps.extend(events.into_iter().map(Step::Emit));
        }
        DeletionStage::Following => {
            let page = txn.edge_page(user, Side::Following, limit).await?;
            done.more = page.len() == limit;
            let edges = page.iter().map(|(t, lists)| (user, t, &lists[..]));
            steps.extend(cut(edges));
            let events = UserDeletion::of_following(user, &page).events();
            steps.extend(events.into_iter().map(Step::Emit));
        }
        DeletionStage::Groups => {
            // At most `MAX_GROUPS_PER_USER`: one step.
            let groups = txn.groups_of(user).await?;
            for group in &groups {
                steps.push(Step::Membership(Membership {
                    group: group.clone(),
                    user: user.clone(),
                    join: false,
                }));
            }
            let events = UserDeletion::of_groups(user, &groups).events();
            steps.extend(events.into_iter().map(Step::Emit));
        }
        DeletionStage::Relations => {
            // The user's own; those others keep to the user stay theirs.
            let page = txn.relations_kept(user, limit).await?;
            done.more = page.len() == limit;
            let muted: Vec<UserId> = page
                .iter()
                .filter(|(r, _)| *r == Relation::Mute)
                .map(|(_, t)| t.clone())
                .collect();
            steps.extend(lifted(user, page));
            let events = UserDeletion::of_relations(user, &muted).events();
            steps.extend(events.into_iter().map(Step::Emit));
        }
        DeletionStage::Likes => {
            let page = txn.likes_by(user, limit).await?;
            done.more = page.len() == limit;
            steps.extend(unlike(user, &page));
        }
        DeletionStage::Reposts | DeletionStage::Posts => {
            (done, steps) = posts_page(txn, user, stage, limit).await?;
        }
        DeletionStage::Mentions => {
            // Others' posts no longer mention a user who is gone (so a user
            // created again under the id inherits none).
            done.posts = txn.posts_mentioning(user, limit).await?;
            done.more = done.posts.len() == limit;
            steps.push(Step::Unmention {
                user: user.clone(),
                posts: done.posts.clone(),
            });
        }
        DeletionStage::Finish => {
            steps.push(Step::ForgetMarkers(user.clone()));
            steps.push(Step::ForgetFilters(user.clone()));
            steps.push(Step::ForgetThreadMutes(user.clone()));
            steps.push(Step::ForgetExclusiveLists(user.clone()));
            steps.push(Step::ForgetKept(user.clone()));
            steps.push(Step::RemoveUser(user.clone()));
            steps.push(Step::Emit(timeline_dropped(user, own_lists)));
        }
    }
    txn.apply(&steps).await?;
    Ok(done)
}

/// The rows that turn off the follow options `followers` kept for `user`,
/// whose follows go: a follow's options go with it, so a user made again
/// under the id is followed plain.
async fn followers_options_off<T: Txn>(
    txn: &mut T,
    followers: &[UserId],
    user: &UserId,
) -> Result<Vec<Step>, T::Error> {
    let mut steps = Vec::new();
    for f in followers {
        steps.extend(options_off(txn, f, user).await?);
    }
    Ok(steps)
}

/// A page of `user`'s reposts (`Reposts`) or posts (`Posts`), and the steps
/// that remove it: the posts they reposted or answered count one fewer
/// (those removed here take their counts with them).
async fn posts_page<T: Txn>(
    txn: &mut T,
    user: &UserId,
    stage: DeletionStage,
    limit: usize,
) -> Result<(DeletionStep, Vec<Step>), T::Error> {
    let mut done = DeletionStep::default();
    let mut steps = Vec::new();
    if stage == DeletionStage::Reposts {
        let page = txn.reposts_by(user, limit).await?;
        done.more = page.len() == limit;
        done.posts = page.iter().map(|(item, _, _)| *item).collect();
        steps.extend(unrepost(user, &page));
        return Ok((done, steps));
    }
    done.posts = txn.posts_by(user, limit).await?;
    done.more = done.posts.len() == limit;
    steps.push(Step::RemovePosts {
        author: user.clone(),
        posts: done.posts.clone(),
    });
    steps.push(Step::ForgetCounts(done.posts.clone()));
    steps.push(Step::ForgetKeptPosts(done.posts.clone()));
    let mut answered = txn.answered_among(&done.posts).await?;
    answered.retain(|p| !done.posts.contains(p));
    steps.extend(
        answered
            .iter()
            .map(|p| crate::posts::post::replies(*p, user, -1)),
    );
    Ok((done, steps))
}

/// The steps of undoing `user`'s likes of `posts` (each with whether it is
/// still stored: a deleted post has no count to lower). Grouped by kind,
/// so that a backend may apply each group as one batch.
fn unlike(user: &UserId, posts: &[(PostId, bool)]) -> Vec<Step> {
    let shard = tally_shard(user);
    let rows = posts.iter().map(|&(post, _)| Step::Like {
        post,
        user: user.clone(),
        at_ms: 0,
        active: false,
    });
    let counts = posts
        .iter()
        .filter(|(_, stored)| *stored)
        .map(|&(post, _)| Step::Tally {
            post,
            tally: Tally::Likes,
            shard,
            step: -1,
        });
    rows.chain(counts).collect()
}

/// The steps of taking back `user`'s reposts `(item, post, post stored)`,
/// without the events (the followers' timelines dropped the items with
/// the stage that cut the edges). Grouped by kind, as [`unlike`].
fn unrepost(user: &UserId, page: &[(PostId, PostId, bool)]) -> Vec<Step> {
    let posts: Vec<PostId> = page.iter().map(|(item, _, _)| *item).collect();
    let items = [
        Step::RemovePosts {
            author: user.clone(),
            posts: posts.clone(),
        },
        Step::ForgetCounts(posts.clone()),
        Step::ForgetKeptPosts(posts),
    ];
    let rows = page.iter().map(|&(repost, post, _)| Step::Repost {
        post,
        user: user.clone(),
        repost,
        active: false,
    });
    let shard = tally_shard(user);
    let counts = page
        .iter()
        .filter(|(_, _, stored)| *stored)
        .map(|&(_, post, _)| Step::Tally {
            post,
            tally: Tally::Reposts,
            shard,
            step: -1,
        });
    items.into_iter().chain(rows).chain(counts).collect()
}

/// The steps of cutting edges `(follower, followee, lists)` as their
/// unfollows would, without the events (the stage queues its own). Grouped
/// by kind, so that a backend may apply each group as one batch.
fn cut<'a>(edges: impl Iterator<Item = (&'a UserId, &'a UserId, &'a [ListName])>) -> Vec<Step> {
    let (mut removes, mut unfiles, mut counts) = (Vec::new(), Vec::new(), Vec::new());
    for (follower, followee, lists) in edges {
        removes.push(Step::RemoveEdge {
            follower: follower.clone(),
            followee: followee.clone(),
        });
        if !lists.is_empty() {
            unfiles.push(Step::MoveLists {
                follower: follower.clone(),
                followee: followee.clone(),
                added: Vec::new(),
                removed: lists.to_vec(),
            });
        }
        counts.push(Step::FollowCounts {
            follower: follower.clone(),
            followee: followee.clone(),
            step: -1,
        });
    }
    removes.into_iter().chain(unfiles).chain(counts).collect()
}

/// The rows of `user`'s relations gone, each mute's end with it.
fn lifted(user: &UserId, page: Vec<(Relation, UserId)>) -> Vec<Step> {
    let mut steps = Vec::new();
    for (relation, target) in page {
        if relation == Relation::Mute {
            steps.push(Step::MuteEnd {
                user: user.clone(),
                target: target.clone(),
                at_ms: None,
            });
        }
        steps.push(Step::Relation {
            user: user.clone(),
            relation,
            target,
            active: false,
        });
    }
    steps
}
