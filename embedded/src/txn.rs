//! The embedded store's primitives for the planned writes
//! (`socialite_core::plan`): facts read in the writer's transaction, and
//! each step written to its tables. The planner decides the sequence; here
//! is only how a fact is read and a step stored.

use crate::store::{add_counts, emit, user_exists, Ctx};
use crate::tables::*;
use crate::{
    accounts, content, edge_runs, exclusive, filters, groups, kept, likes, lists, markers,
    mute_ends, notices, notify_since, post_rows, relations, reposts, thread_mutes,
};
use redb::{ReadableTable, WriteTransaction};
use serde_json::{Map, Value};
use socialite_core::error::{Error, Result};
use socialite_core::ids::{GroupName, ListName, PostId, UserId};
use socialite_core::model::collection::Collection;
use socialite_core::model::filter::FilterSet;
use socialite_core::model::Post;
use socialite_core::plan::Ledger;
use socialite_core::plan::Side;
use socialite_core::plan::{Step, Txn};
use socialite_core::ports::Standing;
use socialite_domain::feed::markers::{Marker, MarkerTimeline};
use socialite_domain::graph::relations::Relation;
use socialite_domain::notifications::notified::{GroupKey, Notice, NoticeGroup, NoticeKey};

impl Txn for Ctx<'_> {
    type Error = Error;

    async fn existing_users(&mut self, users: &[&UserId]) -> Result<Vec<UserId>> {
        let mut found = Vec::with_capacity(users.len());
        for u in users {
            if user_exists(self.txn, u.as_str())? {
                found.push((*u).clone());
            }
        }
        Ok(found)
    }

    async fn edge_lists(
        &mut self,
        follower: &UserId,
        followee: &UserId,
    ) -> Result<Option<Vec<ListName>>> {
        let (f, t) = (follower.as_str(), followee.as_str());
        if self
            .txn
            .open_table(FOLLOWING)
            .store()?
            .get((f, t))
            .store()?
            .is_none()
        {
            return Ok(None);
        }
        let table = self.txn.open_table(EDGE_LISTS).store()?;
        Ok(Some(lists::edge_lists(&table, f, t)?))
    }

    async fn blocked_either_way(&mut self, a: &UserId, b: &UserId) -> Result<bool> {
        let table = self.txn.open_table(RELATIONS).store()?;
        let (a, b, code) = (a.as_str(), b.as_str(), Relation::Block.code());
        Ok(
            table.get((a, code, b)).store()?.is_some()
                || table.get((b, code, a)).store()?.is_some(),
        )
    }

    async fn following_count(&mut self, user: &UserId) -> Result<u64> {
        let counts = self.txn.open_table(COUNTS).store()?;
        let count = counts.get(user.as_str()).store()?;
        Ok(count.map_or(0, |c| c.value().1))
    }

    async fn list_names(&mut self, user: &UserId) -> Result<Vec<ListName>> {
        let sizes = self.txn.open_table(USER_LISTS).store()?;
        let held = lists::user_lists(&sizes, user.as_str())?;
        Ok(held.into_iter().map(|(l, _)| l).collect())
    }

    async fn relation_exists(
        &mut self,
        user: &UserId,
        relation: Relation,
        target: &UserId,
    ) -> Result<bool> {
        let table = self.txn.open_table(RELATIONS).store()?;
        let key = (user.as_str(), relation.code(), target.as_str());
        let exists = table.get(key).store()?.is_some();
        Ok(exists)
    }

    async fn mute_end(&mut self, user: &UserId, target: &UserId) -> Result<Option<u64>> {
        let table = self.txn.open_table(MUTE_ENDS).store()?;
        time_of_pair(&table, user.as_str(), target.as_str())
    }

    async fn relation_count(
        &mut self,
        user: &UserId,
        relation: Relation,
        cap: usize,
    ) -> Result<usize> {
        let table = self.txn.open_table(RELATIONS).store()?;
        Ok(relations::page(&table, user.as_str(), relation, None, cap)?.len())
    }

    async fn is_member(&mut self, group: &GroupName, user: &UserId) -> Result<bool> {
        groups::is_member(self.txn, group.as_str(), user.as_str())
    }

    async fn group_count(&mut self, user: &UserId, cap: usize) -> Result<usize> {
        let table = self.txn.open_table(USER_GROUPS).store()?;
        Ok(groups::groups_of(&table, user.as_str())?.len().min(cap))
    }

    async fn deleting(&mut self, user: &UserId) -> Result<Option<Vec<ListName>>> {
        deleting(self.txn, user.as_str())
    }

    async fn edge_page(
        &mut self,
        user: &UserId,
        side: Side,
        limit: usize,
    ) -> Result<Vec<(UserId, Vec<ListName>)>> {
        lists::edges_with_lists(self.txn, user.as_str(), side, limit)
    }

    async fn groups_of(&mut self, user: &UserId) -> Result<Vec<GroupName>> {
        groups::groups_of(&self.txn.open_table(USER_GROUPS).store()?, user.as_str())
    }

    async fn relations_kept(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(Relation, UserId)>> {
        relations::kept(self.txn, user.as_str(), limit)
    }

    async fn posts_by(&mut self, user: &UserId, limit: usize) -> Result<Vec<PostId>> {
        post_rows::first_posts(self.txn, AUTHOR_POSTS, user.as_str(), limit)
    }

    async fn answered_among(&mut self, posts: &[PostId]) -> Result<Vec<PostId>> {
        let table = self.txn.open_table(POSTS).store()?;
        let mut out = Vec::new();
        for p in posts {
            let Some(bytes) = table.get(p.0).store()? else {
                continue;
            };
            let answered = content::to_post(p.0, bytes.value())?.reply_to;
            if let Some(a) = answered {
                if table.get(a.id.0).store()?.is_some() {
                    out.push(a.id);
                }
            }
        }
        Ok(out)
    }

    async fn posts_mentioning(&mut self, user: &UserId, limit: usize) -> Result<Vec<PostId>> {
        post_rows::first_posts(self.txn, MENTIONS, user.as_str(), limit)
    }

    async fn profile(&mut self, user: &UserId) -> Result<Option<Option<Map<String, Value>>>> {
        if !user_exists(self.txn, user.as_str())? {
            return Ok(None);
        }
        let users = self.txn.open_table(USERS).store()?;
        let held = users.get(user.as_str()).store()?;
        match held.as_ref().map(|g| g.value()) {
            None | Some([]) => Ok(Some(None)),
            Some(bytes) => Ok(Some(Some(decode(bytes)?))),
        }
    }

    async fn standing(&mut self, user: &UserId) -> Result<Standing> {
        accounts::load(&self.txn.open_table(ACCOUNTS).store()?, user.as_str())
    }

    async fn post(&mut self, id: PostId) -> Result<Option<Post>> {
        let posts = self.txn.open_table(POSTS).store()?;
        let found = posts.get(id.0).store()?;
        found.map(|b| content::to_post(id.0, b.value())).transpose()
    }

    async fn marker(&mut self, user: &UserId, timeline: MarkerTimeline) -> Result<Option<Marker>> {
        let table = self.txn.open_table(MARKERS).store()?;
        let held = markers::of(&table, user.as_str())?;
        Ok(held.into_iter().find(|m| m.timeline == timeline))
    }

    async fn exclusive_lists(&mut self, user: &UserId) -> Result<Vec<ListName>> {
        exclusive::of(
            &self.txn.open_table(EXCLUSIVE_LISTS).store()?,
            user.as_str(),
        )
    }

    async fn thread_mutes(&mut self, user: &UserId, limit: usize) -> Result<Vec<PostId>> {
        let table = self.txn.open_table(THREAD_MUTES).store()?;
        thread_mutes::of(&table, user.as_str(), None, limit)
    }

    async fn filters(&mut self, user: &UserId) -> Result<Option<FilterSet>> {
        filters::of(&self.txn.open_table(FILTERS).store()?, user.as_str())
    }

    async fn kept_at(
        &mut self,
        collection: &Collection,
        user: &UserId,
        post: PostId,
    ) -> Result<Option<u64>> {
        kept::kept_at(self.txn, collection, user.as_str(), post)
    }

    async fn kept_count(&mut self, collection: &Collection, user: &UserId) -> Result<u64> {
        kept::count(self.txn, collection, user.as_str())
    }

    async fn liked(&mut self, post: PostId, user: &UserId) -> Result<Option<u64>> {
        likes::liked(self.txn, post, user.as_str())
    }

    async fn likes_by(&mut self, user: &UserId, limit: usize) -> Result<Vec<(PostId, bool)>> {
        likes::likes_by(self.txn, user.as_str(), limit)
    }

    async fn notice(&mut self, key: &NoticeKey) -> Result<Option<PostId>> {
        notices::get(self.txn, key)
    }

    async fn notice_group(
        &mut self,
        recipient: &UserId,
        group: GroupKey,
    ) -> Result<Option<NoticeGroup>> {
        let table = self.txn.open_table(NOTICE_GROUPS).store()?;
        notices::group(&table, recipient.as_str(), group)
    }

    async fn group_notices(
        &mut self,
        recipient: &UserId,
        group: GroupKey,
        limit: usize,
    ) -> Result<Vec<(PostId, UserId)>> {
        let table = self.txn.open_table(ENTRY_NOTICES).store()?;
        notices::entry_notices(&table, recipient.as_str(), group, None, limit)
    }

    async fn notices_of(&mut self, user: &UserId, limit: usize) -> Result<Vec<Notice>> {
        notices::of_user(self.txn, user.as_str(), limit)
    }

    async fn reposted(&mut self, post: PostId, user: &UserId) -> Result<Option<PostId>> {
        reposts::item(self.txn, post, user.as_str())
    }

    async fn reposts_by(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(PostId, PostId, bool)>> {
        reposts::by_user(self.txn, user.as_str(), limit)
    }

    async fn write_steps(&mut self, steps: &[Step]) -> Result<()> {
        let mut rest = steps;
        while let Some(first) = rest.first() {
            let kind = std::mem::discriminant(first);
            let n = rest
                .iter()
                .take_while(|s| std::mem::discriminant(*s) == kind)
                .count();
            let (run, after) = rest.split_at(n);
            match first {
                Step::AddEdge { .. } if n > 1 => edge_runs::add_edges(self.txn, run)?,
                Step::FollowCounts { .. } if n > 1 => edge_runs::follow_counts(self.txn, run)?,
                Step::MoveLists { .. } if n > 1 => edge_runs::move_lists(self.txn, run)?,
                Step::PutNotice(_) if n > 1 => notices::put_run(self.txn, run)?,
                _ => {
                    for step in run {
                        apply_step(self, step)?;
                    }
                }
            }
            rest = after;
        }
        Ok(())
    }

    fn ledger(&mut self) -> &mut Ledger {
        &mut self.ledger
    }
}

/// A mute's, block's or follow option's row, or the time it keeps.
fn relation_step(txn: &WriteTransaction, step: &Step) -> Result<()> {
    match step {
        Step::Relation {
            user,
            relation,
            target,
            active,
        } => relations::put(txn, user, *relation, target, *active),
        Step::MuteEnd {
            user,
            target,
            at_ms,
        } => mute_ends::put(txn, user.as_str(), target.as_str(), *at_ms),
        Step::NotifySince {
            user,
            target,
            at_ms,
        } => notify_since::put(txn, user.as_str(), target.as_str(), *at_ms),
        _ => unreachable!("not a relation's step"),
    }
}

fn apply_step(ctx: &mut Ctx<'_>, step: &Step) -> Result<()> {
    let txn = ctx.txn;
    match step {
        Step::AddEdge {
            follower,
            followee,
            lists,
            at_ms,
        } => edge_runs::add_edge(txn, follower, followee, lists, *at_ms),
        Step::RefileEdge {
            follower,
            followee,
            lists,
        } => lists::file_edge(txn, follower.as_str(), followee.as_str(), lists),
        Step::RemoveEdge { follower, followee } => edge_runs::remove_edge(txn, follower, followee),
        Step::MoveLists {
            follower,
            followee,
            added,
            removed,
        } => lists::move_members(txn, follower.as_str(), followee.as_str(), added, removed),
        Step::FollowCounts {
            follower,
            followee,
            step,
        } => {
            add_counts(txn, follower.as_str(), 0, *step)?;
            add_counts(txn, followee.as_str(), *step, 0)
        }
        Step::Relation { .. } | Step::MuteEnd { .. } | Step::NotifySince { .. } => {
            relation_step(txn, step)
        }
        Step::Membership(change) => groups::put(txn, change),
        Step::PutPost(post) => post_rows::put_post(txn, post),
        Step::RemovePosts { author, posts } => post_rows::remove_posts(txn, author.as_str(), posts),
        Step::ForgetCounts(posts) => likes::forget(txn, posts),
        Step::Like {
            post,
            user,
            at_ms,
            active,
        } => likes::put(txn, *post, user.as_str(), *at_ms, *active),
        Step::Tally {
            post, tally, step, ..
        } => likes::add(txn, *post, *tally, *step),
        Step::Repost {
            post,
            user,
            repost,
            active,
        } => {
            if *active {
                ctx.state.reposted.add(*post);
            }
            reposts::put(txn, *post, user.as_str(), *repost, *active)
        }
        Step::Unmention { user, posts } => post_rows::unmention(txn, user.as_str(), posts),
        Step::PutUser { user, profile } => put_user(txn, user.as_str(), profile.as_ref()),
        Step::SetStanding { user, standing } => {
            let mut table = txn.open_table(ACCOUNTS).store()?;
            accounts::save(&mut table, user.as_str(), *standing)
        }
        Step::MarkDeleting { user, lists } => mark_deleting(txn, user.as_str(), lists),
        Step::RemoveUser(user) => remove_user(txn, user.as_str()),
        Step::ForgetMarkers(_)
        | Step::PutMarker { .. }
        | Step::PutFilters { .. }
        | Step::ForgetFilters(_)
        | Step::ThreadMute { .. }
        | Step::ForgetThreadMutes(_)
        | Step::ExclusiveList { .. }
        | Step::ForgetExclusiveLists(_) => reader_step(txn, step),
        Step::Keep { .. }
        | Step::Unkeep { .. }
        | Step::ForgetKept(_)
        | Step::ForgetKeptPosts(_) => kept::apply(txn, step),
        Step::PutNotice(n) => notices::put(txn, n, true),
        Step::RemoveNotice(n) => notices::put(txn, n, false),
        Step::PutNoticeGroup {
            recipient,
            group,
            was,
        } => notices::put_group(txn, recipient.as_str(), group.group, Some(group), *was),
        Step::RemoveNoticeGroup {
            recipient,
            group,
            latest,
        } => notices::put_group(txn, recipient.as_str(), *group, None, Some(*latest)),
        Step::Emit(event) => emit(ctx, event),
    }
}

/// A step of a reader's own settings: markers, filters, muted threads,
/// exclusive lists.
fn reader_step(txn: &WriteTransaction, step: &Step) -> Result<()> {
    match step {
        Step::ForgetMarkers(user) => markers::forget(txn, user.as_str()),
        Step::PutMarker { user, marker } => markers::put(txn, user.as_str(), marker),
        Step::PutFilters { user, set } => filters::put(txn, user.as_str(), set),
        Step::ForgetFilters(user) => filters::forget(txn, user.as_str()),
        Step::ThreadMute { user, post, active } => {
            thread_mutes::put(txn, user.as_str(), *post, *active)
        }
        Step::ForgetThreadMutes(user) => thread_mutes::forget(txn, user.as_str()),
        Step::ExclusiveList { user, list, on } => exclusive::put(txn, user.as_str(), list, *on),
        Step::ForgetExclusiveLists(user) => exclusive::forget(txn, user.as_str()),
        _ => unreachable!("not a reader's setting"),
    }
}

/// The lists the user had when their deletion began; `None` if none runs.
fn deleting(txn: &WriteTransaction, user: &str) -> Result<Option<Vec<ListName>>> {
    let table = txn.open_table(DELETING).store()?;
    let found = table.get(user).store()?;
    Ok(found.map(|g| lists::decode_lists(g.value())))
}

/// Marks the user as being deleted, keeping `own` (their lists).
fn mark_deleting(txn: &WriteTransaction, user: &str, own: &[ListName]) -> Result<()> {
    let mut table = txn.open_table(DELETING).store()?;
    table
        .insert(user, lists::encode_lists(own).as_str())
        .store()?;
    Ok(())
}

/// The user's record, counts and deletion mark.
fn remove_user(txn: &WriteTransaction, user: &str) -> Result<()> {
    txn.open_table(DELETING).store()?.remove(user).store()?;
    txn.open_table(USERS).store()?.remove(user).store()?;
    txn.open_table(COUNTS).store()?.remove(user).store()?;
    Ok(())
}

/// Creates the user (counts at 0) if there is none, and gives them
/// `profile` if there is one.
fn put_user(
    txn: &WriteTransaction,
    user: &str,
    profile: Option<&Map<String, Value>>,
) -> Result<()> {
    let mut users = txn.open_table(USERS).store()?;
    let known = users.get(user).store()?.is_some();
    match profile {
        Some(p) => users.insert(user, encode(p).as_slice()).store()?,
        None if !known => users.insert(user, [].as_slice()).store()?,
        None => None,
    };
    if !known {
        txn.open_table(COUNTS)
            .store()?
            .insert(user, (0, 0))
            .store()?;
    }
    Ok(())
}
