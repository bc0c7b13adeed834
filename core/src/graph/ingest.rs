use crate::budgets::Cost;
use crate::checks::{
    check_edge_count, edge_lists, EdgeChange, EdgeOp, EdgeRequest, EdgeTransition, Membership,
};
use crate::error::Result;
use crate::ids::{GroupName, ListName, UserId};
use crate::ingest::Ingest;
use socialite_domain::accounts::access::Caller;
use socialite_domain::graph::mute_ends;
use socialite_domain::graph::relations::{
    FollowOption, Priority, Relation, RelationChange, RelationTransition,
};
use socialite_domain::ids::now_ms;

impl Ingest {
    /// Follows `target`, filed under `lists` when they are given (replacing
    /// the lists of an existing edge; `None` keeps them).
    pub async fn follow(
        &self,
        caller: &Caller,
        user: &str,
        target: &str,
        lists: Option<&[&str]>,
    ) -> Result<EdgeTransition> {
        self.change_edge(caller, user, target, EdgeOp::Follow, lists)
            .await
    }

    /// [`Self::follow`], then the follow's options turned on or off as
    /// `options` say ([`Self::set_follow_options`]): the edge, and whether
    /// any option changed.
    pub async fn follow_with_options(
        &self,
        caller: &Caller,
        user: &str,
        target: &str,
        lists: Option<&[&str]>,
        options: &[(FollowOption, bool)],
    ) -> Result<(EdgeTransition, bool)> {
        let edge = self.follow(caller, user, target, lists).await?;
        let changed = self
            .set_follow_options(caller, user, target, options)
            .await?;
        Ok((edge, changed))
    }

    pub async fn unfollow(
        &self,
        caller: &Caller,
        user: &str,
        target: &str,
    ) -> Result<EdgeTransition> {
        self.change_edge(caller, user, target, EdgeOp::Unfollow, None)
            .await
    }

    /// Follows and unfollows many accounts for `user` at once: the caller
    /// must act as `user` (else the whole call is refused), at most
    /// [`crate::checks::MAX_EDGES_PER_CALL`] edges, and then each edge is changed as one
    /// follow or unfollow changes it, with the same checks and events, in
    /// order. One answer per edge: its transition, or why it was refused.
    pub async fn change_edges(
        &self,
        caller: &Caller,
        user: &str,
        edges: &[EdgeRequest],
    ) -> Result<Vec<Result<(EdgeTransition, bool)>>> {
        let u = UserId::parse(user)?;
        check_edge_count(edges.len())?;
        self.acting_as(caller, &u).await?;
        let mut out = Vec::with_capacity(edges.len());
        for e in edges {
            let lists: Option<Vec<&str>> = e
                .lists
                .as_ref()
                .map(|l| l.iter().map(String::as_str).collect());
            let lists = lists.as_deref();
            out.push(match e.op {
                EdgeOp::Follow => {
                    self.follow_with_options(caller, user, &e.target, lists, &e.options)
                        .await
                }
                EdgeOp::Unfollow => self
                    .unfollow(caller, user, &e.target)
                    .await
                    .map(|t| (t, false)),
            });
        }
        Ok(out)
    }

    pub(crate) async fn change_edge(
        &self,
        caller: &Caller,
        user: &str,
        target: &str,
        op: EdgeOp,
        lists: Option<&[&str]>,
    ) -> Result<EdgeTransition> {
        let (u, t) = (UserId::parse(user)?, UserId::parse(target)?);
        let lists = lists.map(edge_lists).transpose()?;
        self.acting_as(caller, &u).await?;
        if op == EdgeOp::Follow {
            self.accounts.visible(&t).await?;
        }
        let follows = Cost::making(op == EdgeOp::Follow);
        let _write = self.enter_changing_for(caller, follows, vec![u.clone()])?;
        let mut change = EdgeChange::new(u, t, op)?.with_max_following(self.max_following);
        if let Some(lists) = lists {
            change = change.with_lists(lists);
        }
        self.graph.change_edge(&change).await
    }

    /// Makes (`make`) or lifts the user's mute or block of `target`
    /// (idempotent).
    pub async fn relation(
        &self,
        caller: &Caller,
        user: &str,
        target: &str,
        relation: Relation,
        make: bool,
    ) -> Result<RelationTransition> {
        let (u, t) = (UserId::parse(user)?, UserId::parse(target)?);
        self.acting_as(caller, &u).await?;
        // A block hides each from the other.
        let readers = match relation {
            Relation::Block => vec![u.clone(), t.clone()],
            _ => vec![u.clone()],
        };
        let _write = self.enter_changing_for(caller, Cost::making(make), readers)?;
        let change = RelationChange::new(u, t, relation, make)?;
        self.graph.change_relation(&change).await
    }

    /// Mutes `target` until `expires_in_s` seconds from now (1 s to a
    /// year), when the mute ends by itself; muting again replaces the end.
    pub async fn mute_for(
        &self,
        caller: &Caller,
        user: &str,
        target: &str,
        expires_in_s: u64,
    ) -> Result<(RelationTransition, u64)> {
        let (u, t) = (UserId::parse(user)?, UserId::parse(target)?);
        let until = mute_ends::end_after(now_ms(), expires_in_s)?;
        self.acting_as(caller, &u).await?;
        let _write = self.enter_changing_for(caller, Cost::making(true), vec![u.clone()])?;
        let change = RelationChange::mute_until(u, t, until)?;
        Ok((self.graph.change_relation(&change).await?, until))
    }

    /// Marks the user's `list` exclusive (`on`): its accounts leave their
    /// home timeline at the next read; whether it changed.
    pub async fn set_list_exclusive(
        &self,
        caller: &Caller,
        user: &str,
        list: &str,
        on: bool,
    ) -> Result<bool> {
        let (u, l) = (UserId::parse(user)?, ListName::parse(list)?);
        self.acting_as(caller, &u).await?;
        let _write = self.enter_changing_for(caller, Cost::Update, vec![u.clone()])?;
        self.graph.set_list_exclusive(&u, &l, on).await
    }

    /// Sets the user's priority for `target` in their ranked timelines
    /// (-2 to 2; 0 clears it); whether it changed.
    pub async fn set_priority(
        &self,
        caller: &Caller,
        user: &str,
        target: &str,
        level: i64,
    ) -> Result<bool> {
        let (u, t) = (UserId::parse(user)?, UserId::parse(target)?);
        let level = Priority::new(level)?;
        self.acting_as(caller, &u).await?;
        let cost = Cost::making(level.is_some());
        let _write = self.enter_changing_for(caller, cost, vec![u.clone()])?;
        self.graph.set_priority(&u, &t, level).await
    }

    /// Turns the user's follow options for `target` on or off (those not
    /// named stay as they are); the user must follow `target` to turn one
    /// on. Whether any changed.
    pub async fn set_follow_options(
        &self,
        caller: &Caller,
        user: &str,
        target: &str,
        changes: &[(FollowOption, bool)],
    ) -> Result<bool> {
        let (u, t) = (UserId::parse(user)?, UserId::parse(target)?);
        self.acting_as(caller, &u).await?;
        if changes.is_empty() {
            return Ok(false);
        }
        let cost = Cost::making(changes.iter().any(|c| c.1));
        let _write = self.enter_changing_for(caller, cost, vec![u.clone()])?;
        self.graph.set_follow_options(&u, &t, changes).await
    }

    /// Joins (`join`) or leaves a group as the user; returns whether the
    /// membership changed.
    pub async fn membership(
        &self,
        caller: &Caller,
        group: &str,
        user: &str,
        join: bool,
    ) -> Result<bool> {
        let group = GroupName::parse(group)?;
        let user = UserId::parse(user)?;
        self.acting_as(caller, &user).await?;
        let _write = self.enter_changing(caller, Cost::making(join))?;
        let change = Membership { group, user, join };
        self.graph.change_membership(&change).await
    }
}
