//! The graph store's ports: edges, lists, groups, mutes and blocks, and the
//! authors marked for hybrid fanout, each a port of its own.

use super::metered::{port, Metered, Port};
use super::transact::Transact;
use crate::checks::{EdgeChange, EdgeTransition, Membership};
use crate::error::Result;
use crate::ids::{GroupName, ListName, UserId};
use crate::write::Write;
use socialite_domain::graph::relations::{
    FollowOption, Priority, Relation, RelationChange, RelationTransition, Relations,
};

/// Edges read per call when walking a whole edge list.
const EDGE_PAGE: usize = 10_000;

/// The graph store: every concern of the follow graph, each a port of its
/// own so that each reads at once. A backend implements the five; anything
/// that does is a `GraphStore`.
pub trait GraphStore: Edges + Lists + Groups + Mutes + HybridMarks {}

impl<T: Edges + Lists + Groups + Mutes + HybridMarks + ?Sized> GraphStore for T {}

port! {
    /// The follow graph's edges, with maintained follower and following counts.
    pub trait Edges: Transact as "graph" for Metered<dyn GraphStore> {
        /// Applies a follow, a refiling or an unfollow as the rules admitted it
        /// ([`EdgeChange`]), atomically: checks that the users it requires exist
        /// ([`EdgeChange::check_users`]), refuses a follow across a block
        /// ([`socialite_domain::graph::relations::check_not_blocked`]), reads the edge's
        /// lists, and writes what
        /// [`EdgeChange::transition`] decides from them: both directions of the
        /// edge with its lists, the list memberships and list counts (refusing
        /// by [`EdgeTransition::check_list_count`]), the follower and following
        /// counts, and the event. Returns the transition.
        write async fn change_edge(&self, change: &EdgeChange) -> Result<EdgeTransition> {
            self.transact(Write::Edge(change.clone())).await?.edge()
        }
        /// The edge from `user` to `target`: `None` if `user` does not follow
        /// `target`, else the lists it is filed under. One indexed read.
        async fn edge(&self, user: &UserId, target: &UserId) -> Result<Option<Vec<ListName>>>;
        /// Who follows `user`, in id order, after `after`, at most `limit`.
        async fn followers(
            &self,
            user: &UserId,
            after: Option<&UserId>,
            limit: usize,
        ) -> Result<Vec<UserId>>;
        /// Whom `user` follows, in id order, after `after`, at most `limit`.
        async fn following(
            &self,
            user: &UserId,
            after: Option<&UserId>,
            limit: usize,
        ) -> Result<Vec<UserId>>;
        /// Who follows `user`, newest follow first, each with when the follow
        /// was made (ms since the Unix epoch; 0 for edges older than follow
        /// times), after `after` (a time and a follower, from a page before),
        /// at most `limit`. Ties in time come in id order.
        async fn followers_by_time(
            &self,
            user: &UserId,
            after: Option<&(u64, UserId)>,
            limit: usize,
        ) -> Result<Vec<(UserId, u64)>>;
        /// Whom `user` follows, newest follow first, likewise.
        async fn following_by_time(
            &self,
            user: &UserId,
            after: Option<&(u64, UserId)>,
            limit: usize,
        ) -> Result<Vec<(UserId, u64)>>;
        /// Which of `candidates` `user` follows, in the order given.
        async fn following_among(&self, user: &UserId, candidates: &[UserId]) -> Result<Vec<UserId>> {
            let mut out = Vec::new();
            for c in candidates {
                if self.is_following(user, c).await? {
                    out.push(c.clone());
                }
            }
            Ok(out)
        }
        /// Whether `user` follows `target`: one indexed read.
        async fn is_following(&self, user: &UserId, target: &UserId) -> Result<bool> {
            Ok(self.edge(user, target).await?.is_some())
        }
        /// Every follower of each of `users`, in one go where the store can.
        async fn followers_of(&self, users: &[UserId]) -> Result<Vec<Vec<UserId>>> {
            let mut out = Vec::with_capacity(users.len());
            for u in users {
                out.push(self.all_followers(u).await?);
            }
            Ok(out)
        }
        /// Everyone who follows `user`, page by page.
        async fn all_followers(&self, user: &UserId) -> Result<Vec<UserId>> {
            walk_edges(|after| async move { self.followers(user, after.as_ref(), EDGE_PAGE).await })
                .await
        }
        /// Everyone `user` follows, page by page.
        async fn all_following(&self, user: &UserId) -> Result<Vec<UserId>> {
            walk_edges(|after| async move { self.following(user, after.as_ref(), EDGE_PAGE).await })
                .await
        }
    }
}

port! {
    /// Lists: labels on follow edges, with each list's size, and which of a
    /// user's lists are exclusive ([`socialite_domain::graph::exclusive`]).
    pub trait Lists: Transact as "graph" for Metered<dyn GraphStore> {
        /// Marks the user's `list` exclusive (`on`) or not, as
        /// [`socialite_domain::graph::exclusive::set_exclusive`] plans it;
        /// whether it changed.
        write async fn set_list_exclusive(&self, user: &UserId, list: &ListName, on: bool) -> Result<bool> {
            let write = Write::ListExclusive {
                user: user.clone(),
                list: list.clone(),
                on,
            };
            self.transact(write).await?.changed()
        }
        /// The user's lists marked exclusive, in name order.
        async fn exclusive_lists(&self, user: &UserId) -> Result<Vec<ListName>>;
        /// The accounts the user files under any of their exclusive lists:
        /// those home leaves out.
        async fn exclusive_members(&self, user: &UserId) -> Result<Vec<UserId>> {
            let mut members = Vec::new();
            for list in self.exclusive_lists(user).await? {
                members.extend(self.all_list_members(user, &list).await?);
            }
            Ok(members)
        }
        /// The user's lists, in name order, with how many accounts each holds.
        async fn lists(&self, user: &UserId) -> Result<Vec<(ListName, u64)>>;
        /// The accounts `user` filed under `list`, in id order, after `after`,
        /// at most `limit`.
        async fn list_members(
            &self,
            user: &UserId,
            list: &ListName,
            after: Option<&UserId>,
            limit: usize,
        ) -> Result<Vec<UserId>>;
        /// For each of `users`, the (follower, list) pairs of the lists that
        /// file them, for the fanout worker's index.
        async fn listed_by(&self, users: &[UserId]) -> Result<Vec<Vec<(UserId, ListName)>>>;
        /// Every account `user` filed under `list`, page by page.
        async fn all_list_members(&self, user: &UserId, list: &ListName) -> Result<Vec<UserId>> {
            walk_edges(|after| async move {
                self.list_members(user, list, after.as_ref(), EDGE_PAGE)
                    .await
            })
            .await
        }
    }
}

port! {
    /// Groups and their members.
    pub trait Groups: Transact as "graph" for Metered<dyn GraphStore> {
        /// Applies a join or a leave as [`Membership`] says, atomically; returns
        /// whether the membership changed.
        write async fn change_membership(&self, change: &Membership) -> Result<bool> {
            self.transact(Write::Membership(change.clone()))
                .await?
                .changed()
        }
        /// How many members the group has (0: there is no such group).
        async fn group_size(&self, group: &GroupName) -> Result<u64>;
        /// The group's members, in id order, after `after`, at most `limit`.
        async fn group_members(
            &self,
            group: &GroupName,
            after: Option<&UserId>,
            limit: usize,
        ) -> Result<Vec<UserId>>;
        /// For each of `users`, the groups they are members of.
        async fn groups_of(&self, users: &[UserId]) -> Result<Vec<Vec<GroupName>>>;
        /// Every member of the group, page by page.
        async fn all_group_members(&self, group: &GroupName) -> Result<Vec<UserId>> {
            walk_edges(
                |after| async move { self.group_members(group, after.as_ref(), EDGE_PAGE).await },
            )
            .await
        }
    }
}

port! {
    /// Mutes and blocks.
    pub trait Mutes: Transact as "graph" for Metered<dyn GraphStore> {
        /// Applies a mute, a block or the lifting of one as the rules admitted
        /// it ([`RelationChange`]), atomically: checks that both users exist,
        /// reads whether the relation stands, how many of its kind the user
        /// keeps and the user's follow edge to the target, and writes what
        /// [`RelationChange::transition`] decides (refusing by
        /// [`RelationTransition::check_count`]): the relation, the unfollows of
        /// a block (applied as [`change_edge`](Edges::change_edge) applies one,
        /// counts, lists and events), and the event.
        write async fn change_relation(&self, change: &RelationChange) -> Result<RelationTransition> {
            self.transact(Write::Relation(change.clone()))
                .await?
                .relation()
        }
        /// Sets `user`'s priority for `target` (`None`: clears it), as
        /// [`socialite_domain::graph::relate::set_priority`] plans it; whether it changed.
        write async fn set_priority(&self, user: &UserId, target: &UserId, level: Option<Priority>) -> Result<bool> {
            let write = Write::Priority {
                user: user.clone(),
                target: target.clone(),
                level,
            };
            self.transact(write).await?.changed()
        }
        /// Turns `user`'s follow options for `target` on or off; whether any
        /// changed.
        write async fn set_follow_options(&self, user: &UserId, target: &UserId, changes: &[(FollowOption, bool)]) -> Result<bool> {
            let write = Write::FollowOptions {
                user: user.clone(),
                target: target.clone(),
                changes: changes.to_vec(),
                at_ms: crate::ids::now_ms(),
            };
            self.transact(write).await?.changed()
        }
        /// The accounts `user` mutes (or blocks), in id order, after `after`,
        /// at most `limit`.
        async fn relations(
            &self,
            user: &UserId,
            relation: Relation,
            after: Option<&UserId>,
            limit: usize,
        ) -> Result<Vec<UserId>>;
        /// Who mutes (or blocks) `target`, in id order, after `after`, at most
        /// `limit`.
        async fn related(
            &self,
            target: &UserId,
            relation: Relation,
            after: Option<&UserId>,
            limit: usize,
        ) -> Result<Vec<UserId>>;
        /// The accounts `user` follows with the `notify` option on, in id
        /// order, each with when it was turned on: whose posts alert them
        /// ([`socialite_domain::notifications::alerts`]).
        async fn subscriptions(&self, user: &UserId) -> Result<Vec<(UserId, u64)>>;
        /// When `user`'s mute of `target` ends, if it has an end.
        async fn mute_end(&self, user: &UserId, target: &UserId) -> Result<Option<u64>>;
        /// Up to `limit` of the (user, target) pairs whose mute ends by
        /// `now_ms`, soonest first: what the sweep lifts.
        async fn mutes_due(&self, now_ms: u64, limit: usize) -> Result<Vec<(UserId, UserId)>>;
        /// Whether `user` mutes (or blocks) `target`: one indexed read.
        async fn has_relation(
            &self,
            user: &UserId,
            relation: Relation,
            target: &UserId,
        ) -> Result<bool>;
        /// The relations that touch `user`: whom they mute and block, and who
        /// blocks them (each at most [`socialite_domain::graph::relations::MAX_RELATIONS`]
        /// for the first two).
        async fn relations_of(&self, user: &UserId) -> Result<Relations> {
            let (muted, blocked, blocked_by, reposts_off, replies_on) = tokio::try_join!(
                self.all_relations(user, Relation::Mute),
                self.all_relations(user, Relation::Block),
                self.all_related(user, Relation::Block),
                self.all_relations(user, Relation::Option(FollowOption::HideReposts)),
                self.all_relations(user, Relation::Option(FollowOption::AllReplies)),
            )?;
            Ok(Relations {
                muted,
                blocked,
                blocked_by,
                reposts_off,
                replies_on,
            })
        }
        /// Every account `user` mutes (or blocks), page by page.
        async fn all_relations(&self, user: &UserId, relation: Relation) -> Result<Vec<UserId>> {
            walk_edges(|after| async move {
                self.relations(user, relation, after.as_ref(), EDGE_PAGE)
                    .await
            })
            .await
        }
        /// Everyone who mutes (or blocks) `target`, page by page.
        async fn all_related(&self, target: &UserId, relation: Relation) -> Result<Vec<UserId>> {
            walk_edges(|after| async move {
                self.related(target, relation, after.as_ref(), EDGE_PAGE)
                    .await
            })
            .await
        }
        /// For each of `users`, who keeps `relation` to them (who mutes them,
        /// for the fanout worker's index; who follows them with `notify`),
        /// in one read where the backend can.
        async fn related_to_each(&self, users: &[UserId], relation: Relation) -> Result<Vec<Vec<UserId>>> {
            let mut out = Vec::with_capacity(users.len());
            for u in users {
                out.push(self.all_related(u, relation).await?);
            }
            Ok(out)
        }
    }
}

port! {
    /// The authors marked for hybrid fanout.
    pub trait HybridMarks: Port as "graph" for Metered<dyn GraphStore> {
        /// The authors marked for hybrid fanout ([`socialite_domain::feed::hybrid`]): their
        /// posts may be missing from stored timelines, so reads merge them.
        async fn hybrid_authors(&self) -> Result<Vec<UserId>>;
        /// Marks (or unmarks) an author for hybrid fanout; idempotent.
        async fn set_hybrid(&self, author: &UserId, on: bool) -> Result<()>;
    }
}

/// A whole edge list, read a page at a time after the last id seen.
async fn walk_edges<F, Fut>(mut page: F) -> Result<Vec<UserId>>
where
    F: FnMut(Option<UserId>) -> Fut,
    Fut: std::future::Future<Output = Result<Vec<UserId>>>,
{
    let mut all: Vec<UserId> = Vec::new();
    loop {
        let batch = page(all.last().cloned()).await?;
        let done = batch.len() < EDGE_PAGE;
        all.extend(batch);
        if done {
            return Ok(all);
        }
    }
}
