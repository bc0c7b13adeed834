//! The toy store's primitives: each fact a lookup in the state, each step a
//! change of it. Nothing here decides anything.

use super::{State, ToyTxn};
use serde_json::{Map, Value};
use socialite_core::checks::{post_id_taken, Membership};
use socialite_core::error::{Error, Result};
use socialite_core::ids::{GroupName, ListName, PostId, UserId};
use socialite_core::model::collection::Collection;
use socialite_core::model::Post;
use socialite_core::plan::Ledger;
use socialite_core::plan::Side;
use socialite_core::plan::{Step, Txn};
use socialite_core::ports::Standing;
use socialite_domain::deletion::cascade::present;
use socialite_domain::feed::markers::{Marker, MarkerTimeline};
use socialite_domain::graph::relations::{FollowOption, Relation};
use socialite_domain::notifications::notified::{GroupKey, Notice, NoticeGroup, NoticeKey};
use std::collections::{BTreeMap, BTreeSet};

impl State {
    /// Whether `user` is there, as the domain's rule says.
    pub(super) fn exists(&self, user: &UserId) -> bool {
        present(
            self.users.contains_key(user),
            self.deleting.contains_key(user),
        )
    }
}

/// The second halves of the pairs under `first`, in order.
pub(super) fn under<'a, A: Ord, B: Ord + Clone + 'a>(
    set: &'a BTreeSet<(A, B)>,
    first: &'a A,
) -> impl DoubleEndedIterator<Item = &'a B> + 'a {
    set.iter().filter(move |(a, _)| a == first).map(|(_, b)| b)
}

/// Moves a count kept per key by `step`; a count that reaches 0 is dropped.
fn move_size<K: Ord>(sizes: &mut BTreeMap<K, u64>, key: K, step: i64) {
    let n = sizes
        .get(&key)
        .copied()
        .unwrap_or(0)
        .saturating_add_signed(step);
    match n {
        0 => sizes.remove(&key),
        n => sizes.insert(key, n),
    };
}

impl Txn for ToyTxn {
    type Error = Error;

    async fn existing_users(&mut self, users: &[&UserId]) -> Result<Vec<UserId>> {
        let found = users.iter().filter(|u| self.state.exists(u));
        Ok(found.map(|u| (*u).clone()).collect())
    }

    async fn edge_lists(&mut self, f: &UserId, t: &UserId) -> Result<Option<Vec<ListName>>> {
        let edge = self.state.following.get(&(f.clone(), t.clone()));
        Ok(edge.map(|(lists, _)| lists.clone()))
    }

    async fn blocked_either_way(&mut self, a: &UserId, b: &UserId) -> Result<bool> {
        let code = Relation::Block.code();
        let r = &self.state.relations;
        Ok(r.contains(&(a.clone(), code, b.clone())) || r.contains(&(b.clone(), code, a.clone())))
    }

    async fn following_count(&mut self, user: &UserId) -> Result<u64> {
        Ok(self.state.counts.get(user).map_or(0, |c| c.1))
    }

    async fn list_names(&mut self, user: &UserId) -> Result<Vec<ListName>> {
        let sizes = self.state.list_sizes.keys();
        Ok(sizes
            .filter(|(u, _)| u == user)
            .map(|(_, l)| l.clone())
            .collect())
    }

    async fn relation_exists(&mut self, u: &UserId, r: Relation, t: &UserId) -> Result<bool> {
        Ok(self
            .state
            .relations
            .contains(&(u.clone(), r.code(), t.clone())))
    }

    async fn mute_end(&mut self, u: &UserId, t: &UserId) -> Result<Option<u64>> {
        Ok(self.state.mute_ends.get(&(u.clone(), t.clone())).copied())
    }

    async fn relation_count(&mut self, u: &UserId, r: Relation, cap: usize) -> Result<usize> {
        let kept = self.state.relations.iter();
        Ok(kept
            .filter(|(a, c, _)| a == u && *c == r.code())
            .take(cap)
            .count())
    }

    async fn is_member(&mut self, group: &GroupName, user: &UserId) -> Result<bool> {
        Ok(self.state.members.contains(&(group.clone(), user.clone())))
    }

    async fn group_count(&mut self, user: &UserId, cap: usize) -> Result<usize> {
        Ok(under(&self.state.memberships, user).take(cap).count())
    }

    async fn deleting(&mut self, user: &UserId) -> Result<Option<Vec<ListName>>> {
        Ok(self.state.deleting.get(user).cloned())
    }

    async fn edge_page(
        &mut self,
        user: &UserId,
        side: Side,
        limit: usize,
    ) -> Result<Vec<(UserId, Vec<ListName>)>> {
        let edges = self.state.following.iter();
        let mut page: Vec<(UserId, Vec<ListName>)> = edges
            .filter_map(|((f, t), (lists, _))| match side {
                Side::Followers => (t == user).then(|| (f.clone(), lists.clone())),
                Side::Following => (f == user).then(|| (t.clone(), lists.clone())),
            })
            .collect();
        page.sort_by(|a, b| a.0.cmp(&b.0));
        page.truncate(limit);
        Ok(page)
    }

    async fn groups_of(&mut self, user: &UserId) -> Result<Vec<GroupName>> {
        Ok(under(&self.state.memberships, user).cloned().collect())
    }

    async fn relations_kept(
        &mut self,
        u: &UserId,
        limit: usize,
    ) -> Result<Vec<(Relation, UserId)>> {
        let kept = self.state.relations.iter().filter(|(a, _, _)| a == u);
        let kept = kept.filter_map(|(_, c, t)| Some((Relation::from_code(*c)?, t.clone())));
        Ok(kept.take(limit).collect())
    }

    async fn posts_by(&mut self, user: &UserId, limit: usize) -> Result<Vec<PostId>> {
        Ok(under(&self.state.by_author, user)
            .take(limit)
            .copied()
            .collect())
    }

    async fn posts_mentioning(&mut self, user: &UserId, limit: usize) -> Result<Vec<PostId>> {
        Ok(under(&self.state.mentions, user)
            .take(limit)
            .copied()
            .collect())
    }

    async fn profile(&mut self, user: &UserId) -> Result<Option<Option<Map<String, Value>>>> {
        let s = &self.state;
        Ok(s.users.get(user).filter(|_| s.exists(user)).cloned())
    }

    async fn standing(&mut self, user: &UserId) -> Result<Standing> {
        Ok(self.state.accounts.get(user).copied().unwrap_or_default())
    }

    async fn post(&mut self, id: PostId) -> Result<Option<Post>> {
        Ok(self.state.posts.get(&id).cloned())
    }

    async fn kept_at(
        &mut self,
        collection: &Collection,
        user: &UserId,
        post: PostId,
    ) -> Result<Option<u64>> {
        let key = (user.clone(), collection.clone(), post);
        Ok(self.state.kept.get(&key).copied())
    }

    async fn kept_count(&mut self, collection: &Collection, user: &UserId) -> Result<u64> {
        let mine = self
            .state
            .kept
            .keys()
            .filter(|(u, c, _)| u == user && c == collection);
        Ok(mine.count() as u64)
    }

    async fn exclusive_lists(&mut self, user: &UserId) -> Result<Vec<ListName>> {
        let marked = self.state.exclusive.iter().filter(|(u, _)| u == user);
        Ok(marked.map(|(_, l)| l.clone()).collect())
    }

    async fn thread_mutes(&mut self, user: &UserId, limit: usize) -> Result<Vec<PostId>> {
        let held = self.state.thread_mutes.iter().filter(|(u, _)| u == user);
        Ok(held.take(limit).map(|(_, p)| *p).collect())
    }

    async fn filters(
        &mut self,
        user: &UserId,
    ) -> Result<Option<socialite_core::model::filter::FilterSet>> {
        Ok(self.state.filters.get(user).cloned())
    }

    async fn marker(&mut self, user: &UserId, timeline: MarkerTimeline) -> Result<Option<Marker>> {
        Ok(self.state.markers.get(&(user.clone(), timeline)).copied())
    }

    async fn liked(&mut self, post: PostId, user: &UserId) -> Result<Option<u64>> {
        Ok(self.state.likes.get(&(post, user.clone())).copied())
    }

    async fn likes_by(&mut self, user: &UserId, limit: usize) -> Result<Vec<(PostId, bool)>> {
        let s = &self.state;
        let mine = s.likes.keys().filter(|(_, u)| u == user).take(limit);
        Ok(mine.map(|(p, _)| (*p, s.posts.contains_key(p))).collect())
    }

    async fn notice(&mut self, key: &NoticeKey) -> Result<Option<PostId>> {
        Ok(self.state.notices.get(key).copied())
    }

    async fn notice_group(
        &mut self,
        recipient: &UserId,
        group: GroupKey,
    ) -> Result<Option<NoticeGroup>> {
        Ok(self
            .state
            .notice_groups
            .get(&(recipient.clone(), group))
            .cloned())
    }

    async fn group_notices(
        &mut self,
        recipient: &UserId,
        group: GroupKey,
        limit: usize,
    ) -> Result<Vec<(PostId, UserId)>> {
        Ok(super::entry_notices(
            &self.state,
            recipient,
            group,
            None,
            limit,
        ))
    }

    async fn notices_of(&mut self, user: &UserId, limit: usize) -> Result<Vec<Notice>> {
        let s = &self.state;
        let mine = s
            .notices
            .iter()
            .filter(|(k, _)| k.recipient == *user || k.actor == *user);
        Ok(mine
            .take(limit)
            .map(|(key, id)| Notice {
                key: key.clone(),
                id: *id,
            })
            .collect())
    }

    async fn answered_among(&mut self, posts: &[PostId]) -> Result<Vec<PostId>> {
        let s = &self.state;
        let answered = posts
            .iter()
            .filter_map(|p| s.posts.get(p)?.reply_to.as_ref());
        Ok(answered
            .filter(|a| s.posts.contains_key(&a.id))
            .map(|a| a.id)
            .collect())
    }

    async fn reposted(&mut self, post: PostId, user: &UserId) -> Result<Option<PostId>> {
        Ok(self.state.reposts.get(&(user.clone(), post)).copied())
    }

    async fn reposts_by(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(PostId, PostId, bool)>> {
        let s = &self.state;
        let mine = s.reposts.iter().filter(|((u, _), _)| u == user).take(limit);
        Ok(mine
            .map(|((_, p), item)| (*item, *p, s.posts.contains_key(p)))
            .collect())
    }

    fn ledger(&mut self) -> &mut Ledger {
        &mut self.ledger
    }

    async fn write_steps(&mut self, steps: &[Step]) -> Result<()> {
        for step in steps {
            self.apply_step(step)?;
        }
        Ok(())
    }
}

impl ToyTxn {
    fn apply_step(&mut self, step: &Step) -> Result<()> {
        let s = &mut self.state;
        match step {
            Step::AddEdge {
                follower: f,
                followee: t,
                lists,
                at_ms,
            } => {
                s.following
                    .insert((f.clone(), t.clone()), (lists.clone(), *at_ms));
                s.followers.insert((t.clone(), f.clone()));
            }
            Step::RefileEdge {
                follower: f,
                followee: t,
                lists,
            } => {
                if let Some(edge) = s.following.get_mut(&(f.clone(), t.clone())) {
                    edge.0 = lists.clone();
                }
            }
            Step::RemoveEdge {
                follower: f,
                followee: t,
            } => {
                s.following.remove(&(f.clone(), t.clone()));
                s.followers.remove(&(t.clone(), f.clone()));
            }
            Step::MoveLists {
                follower: f,
                followee: t,
                added,
                removed,
            } => {
                for l in added {
                    s.list_members.insert((f.clone(), l.clone(), t.clone()));
                    move_size(&mut s.list_sizes, (f.clone(), l.clone()), 1);
                }
                for l in removed {
                    s.list_members.remove(&(f.clone(), l.clone(), t.clone()));
                    move_size(&mut s.list_sizes, (f.clone(), l.clone()), -1);
                }
            }
            Step::FollowCounts {
                follower,
                followee,
                step,
            } => {
                let c = s.counts.entry(follower.clone()).or_default();
                c.1 = c.1.saturating_add_signed(*step);
                let c = s.counts.entry(followee.clone()).or_default();
                c.0 = c.0.saturating_add_signed(*step);
            }
            Step::Relation {
                user,
                relation,
                target,
                active,
            } => {
                let (ab, ba) = (
                    (user.clone(), relation.code(), target.clone()),
                    (target.clone(), relation.code(), user.clone()),
                );
                if *active {
                    s.relations.insert(ab);
                    s.related.insert(ba);
                } else {
                    s.relations.remove(&ab);
                    s.related.remove(&ba);
                    if *relation == Relation::Option(FollowOption::Notify) {
                        s.notify_since.remove(&(user.clone(), target.clone()));
                    }
                }
            }
            Step::NotifySince {
                user,
                target,
                at_ms,
            } => {
                s.notify_since
                    .insert((user.clone(), target.clone()), *at_ms);
            }
            Step::MuteEnd {
                user,
                target,
                at_ms,
            } => {
                let pair = (user.clone(), target.clone());
                match at_ms {
                    Some(at) => s.mute_ends.insert(pair, *at),
                    None => s.mute_ends.remove(&pair),
                };
            }
            Step::Membership(Membership { group, user, join }) => {
                let (gu, ug) = ((group.clone(), user.clone()), (user.clone(), group.clone()));
                if *join {
                    s.members.insert(gu);
                    s.memberships.insert(ug);
                    move_size(&mut s.group_sizes, group.clone(), 1);
                } else {
                    s.members.remove(&gu);
                    s.memberships.remove(&ug);
                    move_size(&mut s.group_sizes, group.clone(), -1);
                }
            }
            Step::PutPost(post) => {
                if s.posts.contains_key(&post.id) {
                    return Err(post_id_taken(post.id));
                }
                for m in &post.mentions {
                    s.mentions.insert((m.clone(), post.id));
                }
                s.by_author.insert((post.author.clone(), post.id));
                s.posts.insert(post.id, post.clone());
            }
            Step::ForgetCounts(posts) => {
                s.tallies.retain(|(p, _, _), _| !posts.contains(p));
            }
            Step::RemovePosts { author, posts } => {
                for p in posts {
                    s.by_author.remove(&(author.clone(), *p));
                    for m in s.posts.remove(p).map(|p| p.mentions).unwrap_or_default() {
                        s.mentions.remove(&(m, *p));
                    }
                }
            }
            Step::Unmention { user, posts } => {
                for p in posts {
                    s.mentions.remove(&(user.clone(), *p));
                    if let Some(post) = s.posts.get_mut(p) {
                        post.mentions.retain(|m| m != user);
                    }
                }
            }
            Step::PutUser { user, profile } => {
                if !s.users.contains_key(user) {
                    s.users.insert(user.clone(), None);
                    s.counts.insert(user.clone(), (0, 0));
                }
                if profile.is_some() {
                    s.users.insert(user.clone(), profile.clone());
                }
            }
            Step::SetStanding { user, standing } => {
                s.accounts.insert(user.clone(), *standing);
            }
            Step::MarkDeleting { user, lists } => {
                s.deleting.insert(user.clone(), lists.clone());
            }
            Step::ForgetMarkers(user) => {
                s.markers.retain(|(u, _), _| u != user);
            }
            Step::ForgetFilters(user) => {
                s.filters.remove(user);
            }
            Step::ThreadMute { user, post, active } => {
                let row = (user.clone(), *post);
                match active {
                    true => s.thread_mutes.insert(row),
                    false => s.thread_mutes.remove(&row),
                };
            }
            Step::ForgetThreadMutes(user) => s.thread_mutes.retain(|(u, _)| u != user),
            Step::ExclusiveList { user, list, on } => {
                let row = (user.clone(), list.clone());
                match on {
                    true => s.exclusive.insert(row),
                    false => s.exclusive.remove(&row),
                };
            }
            Step::ForgetExclusiveLists(user) => s.exclusive.retain(|(u, _)| u != user),
            Step::Keep {
                collection,
                user,
                kept,
            } => {
                let key = (user.clone(), collection.clone(), kept.post);
                s.kept.insert(key, kept.at_ms);
            }
            Step::Unkeep {
                collection,
                user,
                post,
            } => {
                s.kept.remove(&(user.clone(), collection.clone(), *post));
            }
            Step::ForgetKept(user) => s.kept.retain(|(u, _, _), _| u != user),
            Step::ForgetKeptPosts(posts) => s.kept.retain(|(_, _, p), _| !posts.contains(p)),
            Step::RemoveUser(user) => {
                s.deleting.remove(user);
                s.users.remove(user);
                s.counts.remove(user);
            }
            Step::Like {
                post,
                user,
                at_ms,
                active,
            } => {
                let key = (*post, user.clone());
                match active {
                    true => s.likes.insert(key, *at_ms),
                    false => s.likes.remove(&key),
                };
            }
            Step::Tally {
                post,
                tally,
                shard,
                step,
            } => *s.tallies.entry((*post, tally.code(), *shard)).or_default() += step,
            Step::Repost {
                post,
                user,
                repost,
                active,
            } => {
                if *active {
                    s.reposts.insert((user.clone(), *post), *repost);
                    s.reposters.insert((*post, *repost), user.clone());
                } else {
                    s.reposts.remove(&(user.clone(), *post));
                    s.reposters.remove(&(*post, *repost));
                }
            }
            Step::PutNotice(n) => {
                s.notices.insert(n.key.clone(), n.id);
            }
            Step::RemoveNotice(n) => {
                s.notices.remove(&n.key);
            }
            Step::PutNoticeGroup {
                recipient, group, ..
            } => {
                s.notice_groups
                    .insert((recipient.clone(), group.group), group.clone());
            }
            Step::RemoveNoticeGroup {
                recipient, group, ..
            } => {
                s.notice_groups.remove(&(recipient.clone(), *group));
            }
            Step::PutMarker { user, marker } => {
                s.markers.insert((user.clone(), marker.timeline), *marker);
            }
            Step::PutFilters { user, set } => {
                s.filters.insert(user.clone(), set.clone());
            }
            Step::Emit(event) => {
                s.outbox.insert(s.next_seq, event.clone());
                s.next_seq += 1;
            }
        }
        Ok(())
    }
}
