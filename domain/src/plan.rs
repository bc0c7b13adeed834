//! Writes planned once, applied by every backend. A backend implements
//! [`Txn`]: the facts a rule needs, read inside its write transaction, and
//! [`Step`]s applied in that same transaction. The sequence between them
//! (which facts are read, which checks run on them, which steps follow) is
//! decided once, by the feature the write belongs to (a follow in
//! [`crate::graph::edge`], a post in [`crate::posts::post`], a like in
//! [`crate::interactions::like`], a deletion's steps in
//! [`crate::deletion::plan`], ...). A backend holds no sequence of its own,
//! so two backends cannot drift apart, and a new one is correct once its
//! primitives are.

use crate::checks::Membership;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::ids::{GroupName, ListName, PostId, UserId};
use crate::model::collection::{Collection, Kept};
use crate::model::filter::FilterSet;
use crate::model::marker::{Marker, MarkerTimeline};
use crate::model::notice::{GroupKey, Notice, NoticeGroup, NoticeKey};
use crate::model::relation::Relation;
use crate::model::standing::Standing;
use crate::model::tally::Tally;
use crate::model::Post;
use serde_json::{Map, Value};
use std::future::Future;

/// One row-level change of a plan. Each is applied in the transaction that
/// read the facts, in the plan's order; together they are atomic.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A new follow edge, in both directions, filed under `lists`, made at
    /// `at_ms` (the follow time that read-time merges order by).
    AddEdge {
        follower: UserId,
        followee: UserId,
        lists: Vec<ListName>,
        at_ms: u64,
    },
    /// An existing edge now filed under `lists` (maybe none).
    RefileEdge {
        follower: UserId,
        followee: UserId,
        lists: Vec<ListName>,
    },
    /// The edge gone, in both directions, with its lists and follow time.
    RemoveEdge { follower: UserId, followee: UserId },
    /// The followee joins the follower's lists `added` and leaves `removed`:
    /// list members and each list's size.
    MoveLists {
        follower: UserId,
        followee: UserId,
        added: Vec<ListName>,
        removed: Vec<ListName>,
    },
    /// The follower's `following` and the followee's `followers` move by
    /// `step` (+1 or -1).
    FollowCounts {
        follower: UserId,
        followee: UserId,
        step: i64,
    },
    /// A mute or block made (`active`) or lifted, in both index directions.
    Relation {
        user: UserId,
        relation: Relation,
        target: UserId,
        active: bool,
    },
    /// When `user`'s mute of `target` ends (ms since the epoch; `None`:
    /// it has no end kept, its rows gone): by pair and by time.
    MuteEnd {
        user: UserId,
        target: UserId,
        at_ms: Option<u64>,
    },
    /// When `user` turned the `notify` option for `target` on (ms since
    /// the epoch): the first moment of posts that tell them
    /// ([`crate::notifications::alerts`]). Kept with the option's row, made
    /// in the same plan just before, and gone with it.
    NotifySince {
        user: UserId,
        target: UserId,
        at_ms: u64,
    },
    /// A join or a leave that changes the membership: its rows, both ways,
    /// and the group's size (a group whose last member leaves is gone).
    Membership(Membership),
    /// A new post, with its mentions (of users that exist). Refused with
    /// [`crate::checks::post_id_taken`], before anything is
    /// written, when a post holds its id: a store never overwrites one.
    PutPost(crate::model::Post),
    /// Posts of `author` gone, with their mentions of others. Their
    /// counts are a step of their own ([`Step::ForgetCounts`]).
    RemovePosts { author: UserId, posts: Vec<PostId> },
    /// Every count of these posts (likes, reposts, replies, every part)
    /// gone: the planner emits it beside the posts' removal.
    ForgetCounts(Vec<PostId>),
    /// These posts no longer mention `user`.
    Unmention { user: UserId, posts: Vec<PostId> },
    /// The user created with no follows (counts at 0) if there is none, and
    /// given `profile` if it is `Some` (`None` keeps the profile they have).
    PutUser {
        user: UserId,
        profile: Option<Map<String, Value>>,
    },
    /// The id's standing set (an imported account).
    SetStanding { user: UserId, standing: Standing },
    /// The user marked as being deleted, with the lists they have now
    /// (the deletion's last event names them; its steps empty them).
    MarkDeleting { user: UserId, lists: Vec<ListName> },
    /// The last of a deleted user: their record, counts and deletion mark
    /// (the id is free again; its standing stays, see `accounts::lifecycle`).
    /// Their markers are a step of their own ([`Step::ForgetMarkers`]).
    RemoveUser(UserId),
    /// Every marker of the user gone (their deletion's last step).
    ForgetMarkers(UserId),
    /// A like of `post` made by `user` at `at_ms` (`active`), or undone
    /// (`at_ms` unused: the store finds the row's own): its row, by post
    /// newest first and by user.
    Like {
        post: PostId,
        user: UserId,
        at_ms: u64,
        active: bool,
    },
    /// The part `shard` of the post's `tally` moves by `step` (+1 or -1);
    /// see [`crate::interactions::likes`].
    Tally {
        post: PostId,
        tally: Tally,
        shard: u8,
        step: i64,
    },
    /// The rows of `user`'s repost of `post` (whose item is the post
    /// `repost`), made (`active`) or removed: by user and by post.
    Repost {
        post: PostId,
        user: UserId,
        repost: PostId,
        active: bool,
    },
    /// A notice kept: its row by key, by its entry, and by its actor.
    PutNotice(Notice),
    /// A notice gone, with its rows.
    RemoveNotice(Notice),
    /// The recipient's entry `group` as it is now; `was` is its newest
    /// notice before (where its place in the entries' order was).
    PutNoticeGroup {
        recipient: UserId,
        group: NoticeGroup,
        was: Option<PostId>,
    },
    /// The recipient's entry gone (its last notice went); `latest` is its place.
    RemoveNoticeGroup {
        recipient: UserId,
        group: GroupKey,
        latest: PostId,
    },
    /// The user's marker of a timeline set to `marker`.
    PutMarker { user: UserId, marker: Marker },
    /// The user's keyword filters, as a whole ([`crate::filters::plan`]).
    PutFilters { user: UserId, set: FilterSet },
    /// The user's filters gone (their deletion's last step).
    ForgetFilters(UserId),
    /// The thread whose first post is `post` muted (`active`) for the
    /// user's notifications, or no longer.
    ThreadMute {
        user: UserId,
        post: PostId,
        active: bool,
    },
    /// Every thread mute of the user gone (their deletion's last step).
    ForgetThreadMutes(UserId),
    /// The user's `list` marked exclusive (`on`) or no longer.
    ExclusiveList {
        user: UserId,
        list: ListName,
        on: bool,
    },
    /// Every exclusive mark of the user gone (their deletion's last step).
    ForgetExclusiveLists(UserId),
    /// `post` in the user's `collection`, kept at `at_ms` (it is not there).
    Keep {
        collection: Collection,
        user: UserId,
        kept: Kept,
    },
    /// `post` out of the user's `collection` (it is there).
    Unkeep {
        collection: Collection,
        user: UserId,
        post: PostId,
    },
    /// Every collection of the user gone (their deletion's last step).
    ForgetKept(UserId),
    /// These posts out of every user's collections (the posts are gone).
    ForgetKeptPosts(Vec<PostId>),
    /// The event queued on the outbox, for the relay to put on the log.
    Emit(Event),
}

/// A backend's write transaction, as the planners see it. Every read sees
/// the transaction's own earlier steps.
// The planners are generic over the backend, so each call is made on a
// concrete type and its future is `Send` exactly when the backend's is.
#[allow(async_fn_in_trait)]
pub trait Txn {
    /// The backend's error; a rule's refusal converts into it and ends the
    /// transaction without a retry.
    type Error: From<Error>;

    /// Those of `users` that exist and are not being deleted.
    async fn existing_users(&mut self, users: &[&UserId]) -> Result<Vec<UserId>, Self::Error>;
    /// The lists of the edge `follower → followee`; `None` when there is no edge.
    async fn edge_lists(
        &mut self,
        follower: &UserId,
        followee: &UserId,
    ) -> Result<Option<Vec<ListName>>, Self::Error>;
    /// Whether either user blocks the other.
    async fn blocked_either_way(&mut self, a: &UserId, b: &UserId) -> Result<bool, Self::Error>;
    /// How many accounts `user` follows.
    async fn following_count(&mut self, user: &UserId) -> Result<u64, Self::Error>;
    /// The user's lists marked exclusive, in name order.
    async fn exclusive_lists(&mut self, user: &UserId) -> Result<Vec<ListName>, Self::Error>;
    /// The names of `user`'s lists (those with members).
    async fn list_names(&mut self, user: &UserId) -> Result<Vec<ListName>, Self::Error>;
    /// Whether `user` keeps `relation` to `target`.
    async fn relation_exists(
        &mut self,
        user: &UserId,
        relation: Relation,
        target: &UserId,
    ) -> Result<bool, Self::Error>;
    /// When `user`'s mute of `target` ends, if it has an end.
    async fn mute_end(
        &mut self,
        user: &UserId,
        target: &UserId,
    ) -> Result<Option<u64>, Self::Error>;
    /// How many relations of a kind `user` keeps, counted up to `cap`.
    async fn relation_count(
        &mut self,
        user: &UserId,
        relation: Relation,
        cap: usize,
    ) -> Result<usize, Self::Error>;
    /// Whether `user` is a member of `group`.
    async fn is_member(&mut self, group: &GroupName, user: &UserId) -> Result<bool, Self::Error>;
    /// How many groups `user` is in, counted up to `cap`.
    async fn group_count(&mut self, user: &UserId, cap: usize) -> Result<usize, Self::Error>;
    /// The lists `user` had when their deletion began, while it runs;
    /// `None` when no deletion of `user` is under way.
    async fn deleting(&mut self, user: &UserId) -> Result<Option<Vec<ListName>>, Self::Error>;
    /// Up to `limit` of `user`'s edges on `side`, in id order of the other
    /// end, with the lists each is filed under.
    async fn edge_page(
        &mut self,
        user: &UserId,
        side: Side,
        limit: usize,
    ) -> Result<Vec<(UserId, Vec<ListName>)>, Self::Error>;
    /// The groups `user` is in.
    async fn groups_of(&mut self, user: &UserId) -> Result<Vec<GroupName>, Self::Error>;
    /// Up to `limit` of the relations `user` keeps.
    async fn relations_kept(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(Relation, UserId)>, Self::Error>;
    /// Up to `limit` of `user`'s posts.
    async fn posts_by(&mut self, user: &UserId, limit: usize) -> Result<Vec<PostId>, Self::Error>;
    /// The posts that those of `posts` that are replies answer, where still
    /// stored: one per reply.
    async fn answered_among(&mut self, posts: &[PostId]) -> Result<Vec<PostId>, Self::Error>;
    /// Up to `limit` of the posts that mention `user`.
    async fn posts_mentioning(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<PostId>, Self::Error>;
    /// The profile of `user` (`Some(None)`: they have none); `None` when
    /// there is no such user, or they are being deleted.
    async fn profile(
        &mut self,
        user: &UserId,
    ) -> Result<Option<Option<Map<String, Value>>>, Self::Error>;
    /// The id's standing (the default for an id never touched).
    async fn standing(&mut self, user: &UserId) -> Result<Standing, Self::Error>;
    /// When `user` liked `post`; `None` if they do not like it.
    async fn liked(&mut self, post: PostId, user: &UserId) -> Result<Option<u64>, Self::Error>;
    /// Up to `limit` of the posts `user` likes (any order), each with
    /// whether the post is still stored.
    async fn likes_by(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(PostId, bool)>, Self::Error>;
    /// The item of `user`'s repost of `post`, if they reposted it.
    async fn reposted(
        &mut self,
        post: PostId,
        user: &UserId,
    ) -> Result<Option<PostId>, Self::Error>;
    /// Up to `limit` of `user`'s reposts (any order): each item, the post
    /// it reposts, and whether that post is still stored.
    async fn reposts_by(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(PostId, PostId, bool)>, Self::Error>;
    /// The id of the notice `key`, if it is kept.
    async fn notice(&mut self, key: &NoticeKey) -> Result<Option<PostId>, Self::Error>;
    /// The recipient's entry `group`, if it has notices.
    async fn notice_group(
        &mut self,
        recipient: &UserId,
        group: GroupKey,
    ) -> Result<Option<NoticeGroup>, Self::Error>;
    /// The newest `limit` notices of the recipient's entry `group`, newest
    /// first: (id, actor).
    async fn group_notices(
        &mut self,
        recipient: &UserId,
        group: GroupKey,
        limit: usize,
    ) -> Result<Vec<(PostId, UserId)>, Self::Error>;
    /// Up to `limit` of the notices to or by `user` (any order).
    async fn notices_of(&mut self, user: &UserId, limit: usize)
        -> Result<Vec<Notice>, Self::Error>;
    /// The user's marker of `timeline`, if they set one.
    async fn marker(
        &mut self,
        user: &UserId,
        timeline: MarkerTimeline,
    ) -> Result<Option<Marker>, Self::Error>;
    /// Up to `limit` of the threads the user muted (their first posts),
    /// in id order.
    async fn thread_mutes(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<PostId>, Self::Error>;
    /// The user's keyword filters, if they ever had any.
    async fn filters(&mut self, user: &UserId) -> Result<Option<FilterSet>, Self::Error>;
    /// When the user kept `post` in `collection`, if it is there.
    async fn kept_at(
        &mut self,
        collection: &Collection,
        user: &UserId,
        post: PostId,
    ) -> Result<Option<u64>, Self::Error>;
    /// How many posts the user's `collection` holds.
    async fn kept_count(
        &mut self,
        collection: &Collection,
        user: &UserId,
    ) -> Result<u64, Self::Error>;
    /// The post `id`, if it is stored.
    async fn post(&mut self, id: PostId) -> Result<Option<crate::model::Post>, Self::Error>;
    /// A hint, before the rules of a run of edge changes are read (a bulk
    /// load's, an import's): [`Txn::edge_lists`] and
    /// [`Txn::blocked_either_way`] of each pair, then
    /// [`Txn::following_count`] and [`Txn::list_names`] of its follower.
    /// A store whose reads are round trips reads them all at once here;
    /// the reads that follow answer as they would have without it, until
    /// the next write. By default nothing is read ahead.
    async fn read_ahead_edges(&mut self, _pairs: &[(&UserId, &UserId)]) -> Result<(), Self::Error> {
        Ok(())
    }
    /// The same hint before a run of posts is imported: [`Txn::post`] of
    /// each of `posts` and [`Txn::existing_users`] of each of `users`.
    /// Each post of the run writes, so a store that reads ahead keeps what
    /// it read true across the writes that follow (a post written is then
    /// held) or forgets it.
    async fn read_ahead_posts(
        &mut self,
        _posts: &[PostId],
        _users: &[&UserId],
    ) -> Result<(), Self::Error> {
        Ok(())
    }
    /// The same hint before a run of memberships is imported:
    /// [`Txn::existing_users`], [`Txn::is_member`] and [`Txn::group_count`]
    /// of each pair. Kept true across the run's own writes, or forgotten,
    /// as [`Txn::read_ahead_posts`].
    async fn read_ahead_members(
        &mut self,
        _pairs: &[(&GroupName, &UserId)],
    ) -> Result<(), Self::Error> {
        Ok(())
    }
    /// The same hint before a run of notices is made: [`Txn::notice`] of
    /// each key and [`Txn::notice_group`] of each recipient's entry.
    async fn read_ahead_notices(
        &mut self,
        _keys: &[&NoticeKey],
        _groups: &[(&UserId, GroupKey)],
    ) -> Result<(), Self::Error> {
        Ok(())
    }
    /// Writes `steps` in order (the backend's part of [`Txn::apply`]).
    async fn write_steps(&mut self, steps: &[Step]) -> Result<(), Self::Error>;
    /// The ledger of this transaction's steps, which the backend acts on
    /// once it commits ([`Ledger`]).
    fn ledger(&mut self) -> &mut Ledger;
    /// Applies `steps` in order, less the events where the ledger says the
    /// transaction queues none, and notes them in the ledger.
    async fn apply(&mut self, steps: &[Step]) -> Result<(), Self::Error> {
        let ledger = self.ledger();
        if steps.iter().all(|s| ledger.keeps(s)) {
            self.write_steps(steps).await?;
            steps.iter().for_each(|s| self.ledger().note(s));
        } else {
            let kept: Vec<Step> = steps.iter().filter(|s| ledger.keeps(s)).cloned().collect();
            self.write_steps(&kept).await?;
            kept.iter().for_each(|s| self.ledger().note(s));
        }
        Ok(())
    }
}

/// Runs a plan whose backend never waits (a synchronous transaction, as the
/// embedded store's writer holds) to its end on the calling thread.
pub fn run_ready<F: Future>(plan: F) -> F::Output {
    let mut plan = std::pin::pin!(plan);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match plan.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(out) => out,
        // Nothing could ever wake it: a synchronous backend that returned
        // `Pending` broke the contract of `run_ready`, not a request.
        std::task::Poll::Pending => panic!("a synchronous transaction waited"),
    }
}

/// Which side of the user's edges a page reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// Edges from followers to the user.
    Followers,
    /// Edges from the user to followees.
    Following,
}

/// What a transaction applied, as the effects after its commit need it:
/// a backend's transaction keeps one ([`Txn::ledger`]), and once the
/// transaction commits the backend acts on it (wakes its relay, refreshes
/// its caches) in one place, whichever write it was.
#[derive(Debug, Default)]
pub struct Ledger {
    quiet: bool,
    /// Events queued on the outbox.
    pub emitted: usize,
    /// Posts stored, as stored.
    pub posted: Vec<Post>,
    /// Posts removed: (author, post).
    pub removed: Vec<(UserId, PostId)>,
    /// Posts whose stored form changed (mentions dropped).
    pub rewritten: Vec<PostId>,
    /// Users whose record is gone (a deletion's last step).
    pub users_removed: Vec<UserId>,
    /// Steps written: a write refused after it wrote some (an import's
    /// batch, refused at a later record) must not commit them.
    pub steps: usize,
}

impl Ledger {
    /// A ledger whose transaction queues no events: the bulk paths' (see
    /// [`crate::write::Write::emits`]).
    pub fn quiet() -> Ledger {
        Ledger {
            quiet: true,
            ..Ledger::default()
        }
    }

    /// Whether the transaction keeps `step`: a quiet one drops its events.
    pub fn keeps(&self, step: &Step) -> bool {
        !(self.quiet && matches!(step, Step::Emit(_)))
    }

    /// Notes an applied step.
    pub fn note(&mut self, step: &Step) {
        self.steps += 1;
        match step {
            Step::Emit(_) => self.emitted += 1,
            Step::PutPost(post) => self.posted.push(post.clone()),
            Step::RemovePosts { author, posts } => self
                .removed
                .extend(posts.iter().map(|p| (author.clone(), *p))),
            Step::Unmention { posts, .. } => self.rewritten.extend_from_slice(posts),
            Step::RemoveUser(user) => self.users_removed.push(user.clone()),
            _ => {}
        }
    }
}
