//! MongoDB's primitives for the planned writes (`socialite_core::plan`):
//! facts read in the session's transaction, and each step written as the
//! documents it touches. The planner decides the sequence; here is only how
//! a fact is read and a step stored.

use crate::db::TxnError;
use crate::lists::{lists_of, names};
use crate::store::{get_str, id_bson, MongoStore};
use mongodb::bson::doc;
use mongodb::ClientSession;
use socialite_core::ids::{GroupName, ListName, PostId, UserId};
use socialite_core::model::Post;
use socialite_core::plan::deletion::Side;
use socialite_core::plan::{Step, Txn};
use socialite_core::ports::Standing;
use socialite_core::rules::markers::{Marker, MarkerTimeline};
use socialite_core::rules::notifications::{GroupKey, Notice, NoticeGroup, NoticeKey};
use socialite_core::rules::relations::Relation;

/// One transaction of the store, as the planners see it.
pub(crate) struct MongoTxn<'a> {
    pub store: &'a MongoStore,
    pub s: &'a mut ClientSession,
}

/// Runs a planner on a [`MongoTxn`] in a transaction of the store
/// (retried as `Db::transaction` retries):
/// `planned!(store, "what it does", |txn| plan(txn, ...))`.
macro_rules! planned {
    ($store:expr, $what:expr, |$txn:ident| $plan:expr) => {{
        let store = $store;
        store
            .db
            .transaction($what, |mut s| async move {
                let $txn = &mut $crate::txn::MongoTxn { store, s: &mut s };
                let r = $plan.await;
                (s, r)
            })
            .await
    }};
}
pub(crate) use planned;

fn code(r: Relation) -> i32 {
    i32::from(r.code())
}

impl Txn for MongoTxn<'_> {
    type Error = TxnError;

    async fn existing_users(&mut self, users: &[&UserId]) -> Result<Vec<UserId>, TxnError> {
        let ids: Vec<&str> = users.iter().map(|u| u.as_str()).collect();
        let mut cursor = self
            .store
            .db
            .users
            .find(doc! { "_id": { "$in": &ids }, "deleting": { "$ne": true } })
            .projection(doc! { "_id": 1 })
            .session(&mut *self.s)
            .await?;
        let mut found = Vec::with_capacity(users.len());
        while let Some(d) = cursor.next(&mut *self.s).await {
            found.push(UserId::from_stored(get_str(&d?, "_id")?.to_owned()));
        }
        Ok(found)
    }

    async fn edge_lists(
        &mut self,
        follower: &UserId,
        followee: &UserId,
    ) -> Result<Option<Vec<ListName>>, TxnError> {
        let found = self
            .store
            .db
            .following
            .find_one(doc! { "user": follower.as_str(), "followee": followee.as_str() })
            .projection(doc! { "_id": 0, "_g": 1 })
            .session(&mut *self.s)
            .await?;
        Ok(found.as_ref().map(lists_of))
    }

    async fn blocked_either_way(&mut self, a: &UserId, b: &UserId) -> Result<bool, TxnError> {
        let (a, b) = (a.as_str(), b.as_str());
        self.store.blocked_either_way(self.s, a, b).await
    }

    async fn following_count(&mut self, user: &UserId) -> Result<u64, TxnError> {
        self.store.following_count(self.s, user.as_str()).await
    }

    async fn list_names(&mut self, user: &UserId) -> Result<Vec<ListName>, TxnError> {
        let held = self.store.list_sizes(Some(&mut *self.s), user.as_str());
        Ok(held.await?.into_iter().map(|(l, _)| l).collect())
    }

    async fn relation_exists(
        &mut self,
        user: &UserId,
        relation: Relation,
        target: &UserId,
    ) -> Result<bool, TxnError> {
        let key = doc! { "u": user.as_str(), "k": code(relation), "t": target.as_str() };
        let found = self.store.db.relations.find_one(key);
        Ok(found.session(&mut *self.s).await?.is_some())
    }

    async fn relation_count(
        &mut self,
        user: &UserId,
        relation: Relation,
        cap: usize,
    ) -> Result<usize, TxnError> {
        let n = self
            .store
            .db
            .relations
            .count_documents(doc! { "u": user.as_str(), "k": code(relation) })
            .limit(cap as u64)
            .session(&mut *self.s)
            .await?;
        Ok(n as usize)
    }

    async fn is_member(&mut self, group: &GroupName, user: &UserId) -> Result<bool, TxnError> {
        let member = doc! { "group": group.as_str(), "user": user.as_str() };
        let found = self.store.db.group_members.find_one(member);
        let found = found.projection(doc! { "_id": 1 }).session(&mut *self.s);
        Ok(found.await?.is_some())
    }

    async fn group_count(&mut self, user: &UserId, cap: usize) -> Result<usize, TxnError> {
        let n = self
            .store
            .db
            .group_members
            .count_documents(doc! { "user": user.as_str() })
            .limit(cap as u64)
            .session(&mut *self.s)
            .await?;
        Ok(n as usize)
    }

    async fn deleting(&mut self, user: &UserId) -> Result<Option<Vec<ListName>>, TxnError> {
        self.store.deleting_lists(self.s, user.as_str()).await
    }

    async fn edge_page(
        &mut self,
        user: &UserId,
        side: Side,
        limit: usize,
    ) -> Result<Vec<(UserId, Vec<ListName>)>, TxnError> {
        let collection = match side {
            Side::Followers => "followers",
            Side::Following => "following",
        };
        let page = self
            .store
            .edges_to_cut(self.s, collection, user.as_str(), limit);
        page.await
    }

    async fn groups_of(&mut self, user: &UserId) -> Result<Vec<GroupName>, TxnError> {
        self.store.groups_in(self.s, user.as_str()).await
    }

    async fn relations_kept(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(Relation, UserId)>, TxnError> {
        self.store
            .relations_kept(self.s, user.as_str(), limit)
            .await
    }

    async fn posts_by(&mut self, user: &UserId, limit: usize) -> Result<Vec<PostId>, TxnError> {
        let (filter, sort) = (
            doc! { "author": user.as_str() },
            doc! { "author": 1, "_id": 1 },
        );
        self.store.post_page(self.s, filter, sort, limit).await
    }

    async fn answered_among(&mut self, posts: &[PostId]) -> Result<Vec<PostId>, TxnError> {
        self.store.answered_among_in(self.s, posts).await
    }

    async fn posts_mentioning(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<PostId>, TxnError> {
        let (filter, sort) = (
            doc! { "mentions": user.as_str() },
            doc! { "mentions": 1, "_id": -1 },
        );
        self.store.post_page(self.s, filter, sort, limit).await
    }

    async fn profile(
        &mut self,
        user: &UserId,
    ) -> Result<Option<Option<serde_json::Map<String, serde_json::Value>>>, TxnError> {
        let filter = doc! { "_id": user.as_str(), "deleting": { "$ne": true } };
        let found = self
            .store
            .db
            .users
            .find_one(filter)
            .projection(doc! { "profile": 1 });
        let found = found.session(&mut *self.s).await?;
        Ok(found
            .map(|d| crate::store::json_map(&d, "profile"))
            .transpose()?)
    }

    async fn standing(&mut self, user: &UserId) -> Result<Standing, TxnError> {
        let found = self
            .store
            .db
            .accounts
            .find_one(doc! { "_id": user.as_str() });
        let found = found.session(&mut *self.s).await?;
        Ok(found
            .as_ref()
            .map(crate::store::standing)
            .unwrap_or_default())
    }

    async fn post(&mut self, id: PostId) -> Result<Option<Post>, TxnError> {
        self.store.post_in(self.s, id).await
    }

    async fn marker(
        &mut self,
        user: &UserId,
        timeline: MarkerTimeline,
    ) -> Result<Option<Marker>, TxnError> {
        self.store.marker_in(self.s, user.as_str(), timeline).await
    }

    async fn liked(&mut self, post: PostId, user: &UserId) -> Result<Option<u64>, TxnError> {
        self.store.liked_in(self.s, post, user.as_str()).await
    }

    async fn likes_by(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(PostId, bool)>, TxnError> {
        self.store.likes_by_in(self.s, user.as_str(), limit).await
    }

    async fn notice(&mut self, key: &NoticeKey) -> Result<Option<PostId>, TxnError> {
        self.store.notice_in(self.s, key).await
    }

    async fn notice_group(
        &mut self,
        recipient: &UserId,
        group: GroupKey,
    ) -> Result<Option<NoticeGroup>, TxnError> {
        let held = self
            .store
            .notice_group_in(self.s, recipient.as_str(), group);
        held.await
    }

    async fn group_notices(
        &mut self,
        recipient: &UserId,
        group: GroupKey,
        limit: usize,
    ) -> Result<Vec<(PostId, UserId)>, TxnError> {
        let newest = self
            .store
            .group_notices_in(self.s, recipient.as_str(), group, limit);
        newest.await
    }

    async fn notices_of(&mut self, user: &UserId, limit: usize) -> Result<Vec<Notice>, TxnError> {
        self.store.notices_of_in(self.s, user.as_str(), limit).await
    }

    async fn reposted(&mut self, post: PostId, user: &UserId) -> Result<Option<PostId>, TxnError> {
        self.store.reposted_in(self.s, post, user.as_str()).await
    }

    async fn reposts_by(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(PostId, PostId, bool)>, TxnError> {
        self.store.reposts_by_in(self.s, user.as_str(), limit).await
    }

    async fn apply(&mut self, steps: &[Step]) -> Result<(), TxnError> {
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
}

impl MongoTxn<'_> {
    async fn apply_step(&mut self, step: &Step) -> Result<(), TxnError> {
        let (db, s) = (&self.store.db, &mut *self.s);
        match step {
            Step::AddEdge {
                follower,
                followee,
                lists,
                at_ms,
            } => {
                let (f, t, at) = (follower.as_str(), followee.as_str(), *at_ms as i64);
                let mut edge = doc! { "user": f, "followee": t, "at": at };
                let mut reverse = doc! { "user": t, "follower": f, "at": at };
                if !lists.is_empty() {
                    edge.insert("_g", names(lists));
                    reverse.insert("_g", names(lists));
                }
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
            Step::Relation {
                user,
                relation,
                target,
                active,
            } => {
                let key = doc! { "u": user.as_str(), "k": code(*relation), "t": target.as_str() };
                self.store.put_relation_in(s, key, *active).await?
            }
            Step::Membership(change) => self.store.put_membership(s, change).await?,
            Step::PutPost(post) => self.store.put_post(s, post).await?,
            Step::RemovePosts { posts, .. } => {
                let ids: Vec<i64> = posts.iter().map(|p| id_bson(*p)).collect();
                let filter = doc! { "_id": { "$in": &ids } };
                db.content.delete_many(filter).session(&mut *s).await?;
                self.store.forget_tallies_in(s, &ids).await?;
            }
            Step::Like { .. } | Step::Repost { .. } => self.apply_row_step(step).await?,
            Step::PutNotice(_)
            | Step::RemoveNotice(_)
            | Step::PutNoticeGroup { .. }
            | Step::RemoveNoticeGroup { .. } => self.apply_notice_step(step).await?,
            Step::PutMarker { user, marker } => {
                self.store.put_marker_in(s, user.as_str(), marker).await?
            }
            Step::Unmention { user, posts } => {
                let ids: Vec<i64> = posts.iter().map(|p| id_bson(*p)).collect();
                let pull = doc! { "$pull": { "mentions": user.as_str() } };
                let filter = doc! { "_id": { "$in": ids } };
                db.content
                    .update_many(filter, pull)
                    .session(&mut *s)
                    .await?;
            }
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
}

impl MongoTxn<'_> {
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
    let mut user = None;
    let mut posts = Vec::with_capacity(steps.len());
    for s in steps {
        let Step::Like {
            post,
            user: u,
            active: false,
            ..
        } = s
        else {
            return None;
        };
        if *user.get_or_insert(u.as_str()) != u.as_str() {
            return None;
        }
        posts.push(*post);
    }
    Some((user?, posts))
}

/// The user and posts of a run of reposts undone by one user, if it is one.
fn unreposts(steps: &[Step]) -> Option<(&str, Vec<PostId>)> {
    let mut user = None;
    let mut posts = Vec::with_capacity(steps.len());
    for s in steps {
        let Step::Repost {
            post,
            user: u,
            active: false,
            ..
        } = s
        else {
            return None;
        };
        if *user.get_or_insert(u.as_str()) != u.as_str() {
            return None;
        }
        posts.push(*post);
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
