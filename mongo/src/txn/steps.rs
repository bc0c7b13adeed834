//! How the planned steps are stored: each step as the documents it touches,
//! and runs of like steps (a deletion's pages) as one command each.

use super::MongoTxn;
use crate::db::TxnError;
use crate::edge_pages::edge_docs;
use crate::lists::names;
use crate::relations::code;
use crate::store::id_bson;
use mongodb::bson::doc;
use mongodb::ClientSession;
use socialite_core::ids::{PostId, UserId};
use socialite_core::plan::Step;

impl MongoTxn<'_> {
    pub(super) async fn apply_runs(&mut self, steps: &[Step]) -> Result<(), TxnError> {
        let mut rest = steps;
        while let Some(first) = rest.first() {
            // A run of edge removals or count moves (a deletion's page) is
            // one command per collection, however long.
            let run = rest
                .iter()
                .take_while(|s| std::mem::discriminant(*s) == std::mem::discriminant(first))
                .count();
            let (now, later) = rest.split_at(run);
            match first {
                Step::RemoveEdge { .. } => self.store.remove_edges(self.s, &edges_of(now)).await?,
                // A bulk import's new edges: one insert per collection.
                Step::AddEdge { .. } if now.len() > 1 => self.store.add_edges(self.s, now).await?,
                // A deletion's page of likes: one command for the rows, one
                // for the counts.
                Step::Like { .. } if now.len() > 1 => match unlikes(now) {
                    Some((user, posts)) => self.store.remove_likes_in(self.s, user, &posts).await?,
                    None => {
                        for step in now {
                            self.apply_step(step).await?;
                        }
                    }
                },
                // A deletion's page of reposts: one command for the rows.
                Step::Repost { .. } if now.len() > 1 => match unreposts(now) {
                    Some((user, posts)) => {
                        self.store.remove_reposts_in(self.s, user, &posts).await?
                    }
                    None => {
                        for step in now {
                            self.apply_step(step).await?;
                        }
                    }
                },
                Step::Tally { .. } => self.store.move_tallies_in(self.s, now).await?,
                Step::MoveLists { .. } if now.len() > 1 => {
                    let moves: Vec<_> = now
                        .iter()
                        .filter_map(|s| match s {
                            Step::MoveLists {
                                follower,
                                added,
                                removed,
                                ..
                            } => Some((follower.as_str(), &added[..], &removed[..])),
                            _ => None,
                        })
                        .collect();
                    self.store.move_list_sizes_run(self.s, &moves).await?
                }
                // A run of new notices (an import's follows), then their
                // entries: one command for each run.
                Step::PutNotice(_) if now.len() > 1 => {
                    let notices: Vec<_> = now
                        .iter()
                        .filter_map(|s| match s {
                            Step::PutNotice(n) => Some(n),
                            _ => None,
                        })
                        .collect();
                    self.store.put_notices_in(self.s, &notices, &[]).await?
                }
                Step::PutNoticeGroup { .. } if now.len() > 1 => {
                    let entries: Vec<_> = now
                        .iter()
                        .filter_map(|s| match s {
                            Step::PutNoticeGroup {
                                recipient, group, ..
                            } => Some((recipient.as_str(), group)),
                            _ => None,
                        })
                        .collect();
                    self.store.put_notices_in(self.s, &[], &entries).await?
                }
                Step::FollowCounts { .. } => {
                    let moves: Vec<(&str, &str, i64)> = now
                        .iter()
                        .filter_map(|s| match s {
                            Step::FollowCounts {
                                follower,
                                followee,
                                step,
                            } => Some((follower.as_str(), followee.as_str(), *step)),
                            _ => None,
                        })
                        .collect();
                    self.store.move_follow_counts(self.s, &moves).await?
                }
                _ => {
                    for step in now {
                        self.apply_step(step).await?;
                    }
                }
            }
            rest = later;
        }
        Ok(())
    }

    async fn apply_step(&mut self, step: &Step) -> Result<(), TxnError> {
        let (db, s) = (&self.store.db, &mut *self.s);
        match step {
            Step::AddEdge {
                follower,
                followee,
                lists,
                at_ms,
            } => {
                let (edge, reverse) = edge_docs(follower, followee, lists, *at_ms);
                db.following.insert_one(edge).session(&mut *s).await?;
                db.followers.insert_one(reverse).session(&mut *s).await?;
            }
            Step::RefileEdge {
                follower,
                followee,
                lists,
            } => {
                let (f, t) = (follower.as_str(), followee.as_str());
                let set = match lists.is_empty() {
                    true => doc! { "$unset": { "_g": "" } },
                    false => doc! { "$set": { "_g": names(lists) } },
                };
                let edge = doc! { "user": f, "followee": t };
                db.following
                    .update_one(edge, set.clone())
                    .session(&mut *s)
                    .await?;
                let reverse = doc! { "user": t, "follower": f };
                db.followers
                    .update_one(reverse, set)
                    .session(&mut *s)
                    .await?;
            }
            Step::MoveLists {
                follower,
                added,
                removed,
                ..
            } => {
                // A list's members are the edges filed under it: only the
                // sizes are kept apart.
                let user = follower.as_str();
                self.store.move_list_sizes(s, user, added, removed).await?;
            }
            // Applied in runs by `apply`.
            Step::RemoveEdge { .. } | Step::FollowCounts { .. } | Step::Tally { .. } => {}
            Step::Relation { .. } | Step::MuteEnd { .. } | Step::NotifySince { .. } => {
                self.apply_relation_step(step).await?
            }
            Step::Membership(change) => self.store.put_membership(s, change).await?,
            Step::PutPost(post) => self.store.put_post(s, post).await?,
            Step::RemovePosts { posts, .. } => {
                let ids: Vec<i64> = posts.iter().map(|p| id_bson(*p)).collect();
                let filter = doc! { "_id": { "$in": &ids } };
                db.content.delete_many(filter).session(&mut *s).await?;
            }
            Step::ForgetCounts(_)
            | Step::ForgetMarkers(_)
            | Step::ForgetFilters(_)
            | Step::ForgetThreadMutes(_)
            | Step::ForgetExclusiveLists(_) => self.apply_cascade(step).await?,
            Step::Like { .. } | Step::Repost { .. } => self.apply_row_step(step).await?,
            Step::PutNotice(_)
            | Step::RemoveNotice(_)
            | Step::PutNoticeGroup { .. }
            | Step::RemoveNoticeGroup { .. } => self.apply_notice_step(step).await?,
            Step::PutMarker { .. }
            | Step::PutFilters { .. }
            | Step::ThreadMute { .. }
            | Step::ExclusiveList { .. }
            | Step::Keep { .. }
            | Step::Unkeep { .. }
            | Step::ForgetKept(_)
            | Step::ForgetKeptPosts(_) => self.apply_reader_step(step).await?,
            Step::Unmention { user, posts } => unmention(db, s, user, posts).await?,
            Step::PutUser { user, profile } => self.store.put_user_in(s, user, profile).await?,
            Step::SetStanding { user, standing } => {
                self.store.set_standing_in(s, user, *standing).await?
            }
            Step::MarkDeleting { user, lists } => {
                self.store.mark_deleting(s, user.as_str(), lists).await?
            }
            Step::RemoveUser(user) => self.store.remove_user(s, user.as_str()).await?,
            Step::Emit(event) => self.store.emit(s, std::slice::from_ref(event)).await?,
        }
        Ok(())
    }

    /// A notice's rows, or its entry's, kept or removed.
    async fn apply_notice_step(&mut self, step: &Step) -> Result<(), TxnError> {
        let (store, s) = (self.store, &mut *self.s);
        match step {
            Step::PutNotice(n) => store.put_notice_in(s, n, true).await,
            Step::RemoveNotice(n) => store.put_notice_in(s, n, false).await,
            Step::PutNoticeGroup {
                recipient, group, ..
            } => {
                let r = recipient.as_str();
                store
                    .put_notice_group_in(s, r, group.group, Some(group))
                    .await
            }
            Step::RemoveNoticeGroup {
                recipient, group, ..
            } => {
                store
                    .put_notice_group_in(s, recipient.as_str(), *group, None)
                    .await
            }
            _ => unreachable!("not a notice's step"),
        }
    }

    /// A mute's or block's row, or a mute's end (on the same document).
    async fn apply_relation_step(&mut self, step: &Step) -> Result<(), TxnError> {
        let (store, s) = (&self.store, &mut *self.s);
        match step {
            Step::Relation {
                user,
                relation,
                target,
                active,
            } => {
                let key = doc! { "u": user.as_str(), "k": code(*relation), "t": target.as_str() };
                store.put_relation_in(s, key, *active).await
            }
            Step::MuteEnd {
                user,
                target,
                at_ms,
            } => {
                let (u, t) = (user.as_str(), target.as_str());
                store.put_mute_end_in(s, u, t, *at_ms).await
            }
            Step::NotifySince {
                user,
                target,
                at_ms,
            } => {
                let (u, t) = (user.as_str(), target.as_str());
                store.put_notify_since_in(s, u, t, *at_ms).await
            }
            _ => unreachable!("not a relation's step"),
        }
    }

    /// A step of a reader's own rows: their markers and collections.
    async fn apply_reader_step(&mut self, step: &Step) -> Result<(), TxnError> {
        let (store, s) = (&self.store, &mut *self.s);
        match step {
            Step::PutMarker { user, marker } => store.put_marker_in(s, user.as_str(), marker).await,
            Step::PutFilters { user, set } => store.put_filters_in(s, user.as_str(), set).await,
            Step::ExclusiveList { user, list, on } => {
                store.put_exclusive_in(s, user.as_str(), list, *on).await
            }
            Step::ThreadMute { user, post, active } => {
                store
                    .put_thread_mute_in(s, user.as_str(), *post, *active)
                    .await
            }
            Step::Keep {
                collection,
                user,
                kept,
            } => {
                let (user, post) = (user.as_str(), kept.post);
                store
                    .put_kept_in(s, collection, user, post, Some(*kept))
                    .await
            }
            Step::Unkeep {
                collection,
                user,
                post,
            } => {
                store
                    .put_kept_in(s, collection, user.as_str(), *post, None)
                    .await
            }
            Step::ForgetKept(user) => store.forget_kept_in(s, user.as_str()).await,
            Step::ForgetKeptPosts(posts) => store.forget_kept_posts_in(s, posts).await,
            _ => unreachable!("not a step of a reader's rows"),
        }
    }

    /// What a removal takes with it, as the planner emits it beside.
    async fn apply_cascade(&mut self, step: &Step) -> Result<(), TxnError> {
        match step {
            Step::ForgetCounts(posts) => {
                let ids: Vec<i64> = posts.iter().map(|p| id_bson(*p)).collect();
                self.store.forget_tallies_in(self.s, &ids).await
            }
            Step::ForgetMarkers(user) => self.store.forget_markers_in(self.s, user.as_str()).await,
            Step::ForgetFilters(user) => self.store.forget_filters_in(self.s, user.as_str()).await,
            Step::ForgetThreadMutes(user) => {
                let user = user.as_str();
                self.store.forget_thread_mutes_in(self.s, user).await
            }
            Step::ForgetExclusiveLists(user) => {
                let user = user.as_str();
                self.store.forget_exclusive_in(self.s, user).await
            }
            _ => unreachable!("not a cascade's step"),
        }
    }

    /// A like's or a repost's row made or removed.
    async fn apply_row_step(&mut self, step: &Step) -> Result<(), TxnError> {
        match step {
            Step::Like {
                post,
                user,
                at_ms,
                active,
            } => {
                let user = user.as_str();
                let put = self.store.put_like_in(self.s, *post, user, *at_ms, *active);
                put.await
            }
            Step::Repost {
                post,
                user,
                repost,
                active,
            } => {
                let user = user.as_str();
                let put = self
                    .store
                    .put_repost_in(self.s, *post, user, *repost, *active);
                put.await
            }
            _ => unreachable!("not a like's or a repost's row"),
        }
    }
}

/// The user and posts of a run of likes undone by one user, if it is one.
fn unlikes(steps: &[Step]) -> Option<(&str, Vec<PostId>)> {
    undone_by_one(steps, |s| match s {
        Step::Like {
            post,
            user,
            active: false,
            ..
        } => Some((user.as_str(), *post)),
        _ => None,
    })
}

/// The user and posts of a run of reposts undone by one user, if it is one.
fn unreposts(steps: &[Step]) -> Option<(&str, Vec<PostId>)> {
    undone_by_one(steps, |s| match s {
        Step::Repost {
            post,
            user,
            active: false,
            ..
        } => Some((user.as_str(), *post)),
        _ => None,
    })
}

/// The user and posts of a run of steps that `undone` reads as one row of
/// that user's undone, if every step is one and the user is the same.
fn undone_by_one<'s>(
    steps: &'s [Step],
    undone: impl Fn(&'s Step) -> Option<(&'s str, PostId)>,
) -> Option<(&'s str, Vec<PostId>)> {
    let mut user = None;
    let mut posts = Vec::with_capacity(steps.len());
    for s in steps {
        let (u, post) = undone(s)?;
        if *user.get_or_insert(u) != u {
            return None;
        }
        posts.push(post);
    }
    Some((user?, posts))
}

/// The `(follower, followee)` pairs of a run of edge removals.
fn edges_of(steps: &[Step]) -> Vec<(&str, &str)> {
    steps
        .iter()
        .filter_map(|s| match s {
            Step::RemoveEdge { follower, followee } => Some((follower.as_str(), followee.as_str())),
            _ => None,
        })
        .collect()
}

/// Takes `user` out of the mentions of `posts` (the user is gone).
async fn unmention(
    db: &crate::db::Db,
    s: &mut ClientSession,
    user: &UserId,
    posts: &[PostId],
) -> Result<(), TxnError> {
    let ids: Vec<i64> = posts.iter().map(|p| id_bson(*p)).collect();
    let pull = doc! { "$pull": { "mentions": user.as_str() } };
    let filter = doc! { "_id": { "$in": ids } };
    db.content.update_many(filter, pull).session(s).await?;
    Ok(())
}
