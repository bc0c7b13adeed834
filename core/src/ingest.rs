//! Ingestion: validates writes and stores them. The stores queue the matching
//! events in their outbox in the same transaction; the relay takes them to the
//! log. Everything here is shared by the REST and gRPC transports, and every
//! call is checked against its caller's permissions (`crate::rules::access`).

use crate::backends::Backends;
use crate::backups::Backups;
use crate::error::{Error, Result};
use crate::feed::hybrid::Marks;
use crate::feed::stamp::{Advance, WriteEpoch};
use crate::gate::{Passed, WriteGate};
use crate::ids::{GroupName, PostId, PostIdGen, UserId};
use crate::metrics::metrics;
use crate::model::{json_object, validate_message, Post, PostRef, User};
use crate::plan::marker::marker_now;
use crate::plan::repost::Reposted;
use crate::ports::{ContentStore, GraphStore};
use crate::rules::access::{authenticated, check, Act, Caller};
use crate::rules::backups::DEFAULT_MAX_BACKUPS;
use crate::rules::checks::{
    check_edge_count, edge_lists, post_not_found, user_not_found, EdgeChange, EdgeOp, EdgeRequest,
    EdgeTransition, Membership,
};
use crate::rules::hybrid::Hybrid;
use crate::rules::likes::LikeChange;
use crate::rules::markers::{Marker, MarkerTimeline};
use crate::rules::mentions::candidates;
use crate::rules::relations::{Relation, RelationChange, RelationTransition};
use crate::rules::reposts::RepostChange;
use crate::standings::Standings;
use serde_json::Value;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tracing::Instrument;

/// How long a put of a user waits for a deletion of the id's earlier user
/// to finish before answering `user_being_deleted`.
const RECREATE_WAIT: Duration = Duration::from_secs(5);

/// Ids tried for one new post when the store holds a post under them.
const NEW_ID_TRIES: u32 = 16;

pub use crate::rules::checks::DEFAULT_MAX_FOLLOWING;

pub struct Ingest {
    content: Arc<dyn ContentStore>,
    graph: Arc<dyn GraphStore>,
    accounts: Arc<Standings>,
    ids: PostIdGen,
    max_following: u64,
    /// Where the stores are files of this process: its backups.
    backups: Option<Backups>,
    gate: WriteGate,
    /// Advanced by the writes that change pages beside their timelines.
    epoch: Arc<WriteEpoch>,
    /// Whether posts may be merged at read time, and whose.
    hybrid: Hybrid,
    marks: Arc<Marks>,
}

impl Ingest {
    /// `node` tells producers apart in post ids (0..1024).
    pub async fn new(backends: &Backends, node: u16) -> Result<Ingest> {
        let ids = PostIdGen::new(node);
        if let Some(newest) = backends.content.newest_post_id().await? {
            ids.advance_past(newest);
        }
        Ok(Ingest {
            content: backends.content.clone(),
            graph: backends.graph.clone(),
            accounts: backends.accounts.clone(),
            ids,
            max_following: DEFAULT_MAX_FOLLOWING,
            backups: backends
                .backup
                .clone()
                .map(|b| Backups::new(b, DEFAULT_MAX_BACKUPS)),
            gate: WriteGate::default(),
            epoch: backends.epoch.clone(),
            hybrid: backends.feed.hybrid,
            marks: backends.marks.clone(),
        })
    }

    /// Refuses every write from the start, safety acts too: a data
    /// directory that was moved to `to` (see [`crate::gate`]).
    pub fn moved_from_start(mut self, to: &str) -> Ingest {
        self.gate = WriteGate::sealed(to);
        self
    }

    /// Stops (`on`) or resumes taking writes: an operator's act, made by
    /// `socialite migrate` at its switch-over. Stopping returns once the
    /// writes already under way have finished: every write acknowledged
    /// before is in any copy taken after. Account safety acts (revoking
    /// tokens, suspending) go on while writes are stopped, until the
    /// deployment is marked moved (`moved_to`: where it went), which stops
    /// them too, once those under way have finished ([`crate::gate`]).
    pub async fn set_read_only(
        &self,
        caller: &Caller,
        on: bool,
        moved_to: Option<&str>,
    ) -> Result<()> {
        check(caller, Act::Operate)?;
        if moved_to
            .is_some_and(|to| to.is_empty() || to.len() > 1024 || to.contains(char::is_control))
        {
            return Err(Error::invalid(
                "invalid_body",
                "moved_to is the address of the deployment moved to: 1 to 1,024 characters, no control characters",
            ));
        }
        match (on, moved_to) {
            (true, None) => self.gate.close().await,
            (true, Some(to)) => self.gate.seal(&crate::redact::uri(to)).await,
            (false, None) => self.gate.open(),
            (false, Some(_)) => {
                return Err(Error::invalid(
                    "invalid_body",
                    "moved_to marks a deployment moved, which takes no writes: send it with read_only true",
                ))
            }
        }
        Ok(())
    }

    pub fn is_read_only(&self) -> bool {
        self.gate.is_closed()
    }

    /// Backs the deployment's embedded stores up while it serves, into the
    /// new directory `name` under its backup directory: an operator's act,
    /// one at a time, after which the oldest backups past the cap go
    /// ([`crate::rules::backups`]). Returns where, and the rows copied.
    pub async fn backup(&self, caller: &Caller, name: &str) -> Result<(std::path::PathBuf, u64)> {
        check(caller, Act::Operate)?;
        crate::rules::checks::check_backup_name(name)?;
        let Some(backups) = &self.backups else {
            return Err(Error::invalid(
                "backup_unsupported",
                "this deployment's stores are MongoDB and Kafka: back them up with their own tools",
            ));
        };
        backups.make(name).await
    }

    /// Keeps at most `max` backups in the backup directory (0: all).
    pub fn with_max_backups(mut self, max: usize) -> Ingest {
        self.backups = self.backups.map(|b| b.keeping(max));
        self
    }

    /// Caps how many accounts one user may follow.
    pub fn with_max_following(mut self, max: u64) -> Ingest {
        self.max_following = max;
        self
    }

    /// Lets a write that changes what readers' pages show (beyond the
    /// timelines fanout changes) through the gate: the write epoch
    /// advances when it ends ([`crate::feed::stamp`]).
    fn enter_changing(&self) -> Result<(Passed<'_>, Advance<'_>)> {
        let passed = self.gate.enter()?;
        Ok((passed, self.epoch.advancing()))
    }

    /// The caller may act as `user`, and `user` may act at all.
    async fn acting_as(&self, caller: &Caller, user: &UserId) -> Result<()> {
        check(caller, Act::ActAs(user))?;
        self.accounts.may_act(user).await
    }

    /// Creates the user, or replaces the profile of an existing one. A
    /// write answers with what it wrote: a caller that may not read the
    /// user (a `write`-only key) gets the id and the profile it sent, with
    /// counts of 0, never the stored profile.
    pub async fn put_user(
        &self,
        caller: &Caller,
        id: &str,
        profile: Option<Value>,
    ) -> Result<(User, bool)> {
        let id = UserId::parse(id)?;
        self.acting_as(caller, &id).await?;
        let profile = profile.map(|p| json_object("profile", p)).transpose()?;
        let _write = self.enter_changing()?;
        // A deletion of the id's earlier user usually ends within
        // milliseconds: wait for it a little rather than refuse at once.
        let mut wait = Duration::from_millis(5);
        let give_up = Instant::now() + RECREATE_WAIT;
        loop {
            match self.content.put_user(&id, profile.clone()).await {
                Err(e) if e.code() == "user_being_deleted" && Instant::now() < give_up => {
                    tokio::time::sleep(wait).await;
                    wait = (wait * 2).min(Duration::from_millis(200));
                }
                Ok((user, created)) if check(caller, Act::ReadPublic).is_err() => {
                    let written = User {
                        id: user.id,
                        followers: 0,
                        following: 0,
                        profile,
                    };
                    return Ok((written, created));
                }
                answer => return answer,
            }
        }
    }

    /// Deletes the account. Its tokens are revoked first, so that none
    /// issued before the deletion acts for a later account under the id.
    pub async fn delete_user(&self, caller: &Caller, id: &str) -> Result<()> {
        let id = UserId::parse(id)?;
        check(caller, Act::Moderate)?;
        if self.content.get_user(&id).await?.is_none() {
            return Err(user_not_found(&id));
        }
        let _write = self.enter_changing()?;
        self.accounts.revoke_tokens(&id).await?;
        if self.content.delete_user(&id).await? {
            Ok(())
        } else {
            Err(user_not_found(&id))
        }
    }

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
    /// [`crate::rules::checks::MAX_EDGES_PER_CALL`] edges, and then each edge is changed as one
    /// follow or unfollow changes it, with the same checks and events, in
    /// order. One answer per edge: its transition, or why it was refused.
    pub async fn change_edges(
        &self,
        caller: &Caller,
        user: &str,
        edges: &[EdgeRequest],
    ) -> Result<Vec<Result<EdgeTransition>>> {
        let u = UserId::parse(user)?;
        check_edge_count(edges.len())?;
        self.acting_as(caller, &u).await?;
        let mut out = Vec::with_capacity(edges.len());
        for e in edges {
            let lists: Option<Vec<&str>> = e
                .lists
                .as_ref()
                .map(|l| l.iter().map(String::as_str).collect());
            out.push(
                self.change_edge(caller, user, &e.target, e.op, lists.as_deref())
                    .await,
            );
        }
        Ok(out)
    }

    async fn change_edge(
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
        let _write = self.enter_changing()?;
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
        let _write = self.enter_changing()?;
        let change = RelationChange::new(u, t, relation, make)?;
        self.graph.change_relation(&change).await
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
        let _write = self.enter_changing()?;
        let change = Membership { group, user, join };
        self.graph.change_membership(&change).await
    }

    pub async fn create_post(
        &self,
        caller: &Caller,
        author: &str,
        message: String,
        data: Option<Value>,
    ) -> Result<Post> {
        self.create_reply(caller, author, message, data, None).await
    }

    /// Posts as `author`; with `in_reply_to`, a reply to that post (the
    /// post a repost carries, for a repost): refused while either author
    /// blocks the other, and absent (`post_not_found`) when the post is
    /// not stored or its author is suspended.
    pub async fn create_reply(
        &self,
        caller: &Caller,
        author: &str,
        message: String,
        data: Option<Value>,
        in_reply_to: Option<&str>,
    ) -> Result<Post> {
        let author = UserId::parse(author)?;
        let in_reply_to = in_reply_to.map(PostId::parse).transpose()?;
        self.acting_as(caller, &author).await?;
        validate_message(&message)?;
        let mentions = candidates(&message)?;
        let data = data.map(|d| json_object("data", d)).transpose()?;
        let reply_to = match in_reply_to {
            None => None,
            Some(id) => Some(self.answerable(id).await?),
        };
        let _write = self.gate.enter()?;
        if let Some(answered) = &reply_to {
            // Newer than the post it answers, whichever producer made that.
            self.ids.advance_past(answered.id);
        }
        let mut post = Post::written(PostId(0), author, message, data, mentions);
        post.reply_to = reply_to;
        let post = self
            .with_new_id(|id| {
                // The post's span: its event carries this trace to the workers.
                let span = tracing::info_span!("post.create", post = %id, author = %post.author);
                let post = Post { id, ..post.clone() };
                self.content.create_post(post).instrument(span)
            })
            .await?;
        metrics().posts_ingested.inc();
        // A post reaches pages through its timelines, unless its author's
        // posts are merged at read time.
        if self.hybrid != Hybrid::Off && self.marks.may_hold(&post.author) {
            self.epoch.advance();
        }
        Ok(post)
    }

    /// Runs `write` with a new post id; again with the next id while the
    /// store holds a post under it (`post_id_taken`: one that an older
    /// version stored under an id ahead of the clock), a few times.
    async fn with_new_id<T, Fut>(&self, mut write: impl FnMut(PostId) -> Fut) -> Result<T>
    where
        Fut: std::future::Future<Output = Result<T>>,
    {
        let mut tries = 1;
        loop {
            match write(self.ids.next()).await {
                Err(e) if e.code() == "post_id_taken" && tries < NEW_ID_TRIES => tries += 1,
                done => return done,
            }
        }
    }

    /// The post a reply to `id` answers, as readers see it: stored, and
    /// its author not suspended (the store checks it again as it writes).
    async fn answerable(&self, id: PostId) -> Result<PostRef> {
        let stored = self.content.get_posts(&[id]).await?.pop();
        let answered = stored.ok_or_else(|| post_not_found(id))?.shown();
        if self.accounts.is_suspended(&answered.author).await? {
            return Err(post_not_found(id));
        }
        Ok(answered)
    }

    /// Likes (`like`) the post as the user, or undoes the like
    /// (idempotent); returns whether it changed. A post of a suspended
    /// author is absent, as to every reader.
    pub async fn like(&self, caller: &Caller, user: &str, post: &str, like: bool) -> Result<bool> {
        let (user, post) = (UserId::parse(user)?, PostId::parse(post)?);
        self.acting_as(caller, &user).await?;
        if like {
            let stored = self.content.get_posts(&[post]).await?.pop();
            let stored = stored.ok_or_else(|| post_not_found(post))?;
            if self.accounts.is_suspended(&stored.author).await? {
                return Err(post_not_found(post));
            }
        }
        let _write = self.gate.enter()?;
        let change = LikeChange { user, post, like };
        self.content.change_like(&change).await
    }

    /// Reposts (`repost`) the post as the user, or undoes the repost
    /// (idempotent): the reposter's item standing afterwards (none once
    /// undone) and whether it changed. A post of a suspended author is
    /// absent, as to every reader.
    pub async fn repost(
        &self,
        caller: &Caller,
        user: &str,
        post: &str,
        repost: bool,
    ) -> Result<Reposted> {
        let (user, post) = (UserId::parse(user)?, PostId::parse(post)?);
        self.acting_as(caller, &user).await?;
        if repost {
            let stored = self.content.get_posts(&[post]).await?.pop();
            let stored = stored.ok_or_else(|| post_not_found(post))?;
            if self.accounts.is_suspended(&stored.shown().author).await? {
                return Err(post_not_found(post));
            }
            // The item is newer than the post it carries.
            self.ids.advance_past(stored.shown().id);
        }
        let _write = self.enter_changing()?;
        let change = RepostChange { user, post, repost };
        let done = self
            .with_new_id(|id| {
                let span =
                    tracing::info_span!("post.repost", post = %change.post, user = %change.user);
                self.content.change_repost(&change, id).instrument(span)
            })
            .await?;
        if done.changed && repost {
            metrics().posts_ingested.inc();
        }
        Ok(done)
    }

    /// Sets the user's marker of `timeline` to the post `last_read_id`:
    /// forward only, back too when `force`. Returns the marker the user has
    /// afterwards and whether it moved. The post need not still exist.
    pub async fn set_marker(
        &self,
        caller: &Caller,
        user: &str,
        timeline: &str,
        last_read_id: &str,
        force: bool,
    ) -> Result<(Marker, bool)> {
        let user = UserId::parse(user)?;
        let timeline = MarkerTimeline::parse(timeline)?;
        let last_read = PostId::parse(last_read_id)?;
        // A place past every post to come would hide them all as read.
        last_read.check_not_ahead("last_read_id", crate::ids::now_ms())?;
        self.acting_as(caller, &user).await?;
        let _write = self.gate.enter()?;
        let to = marker_now(timeline, last_read);
        self.content.set_marker(&user, to, force).await
    }

    /// Who may delete a post depends on its author, so the post is read
    /// first (once the caller is known at all).
    pub async fn delete_post(&self, caller: &Caller, id: &str) -> Result<Post> {
        let id = PostId::parse(id)?;
        authenticated(caller)?;
        let post = self.content.get_posts(&[id]).await?.pop();
        let post = post.ok_or_else(|| post_not_found(id))?;
        check(caller, Act::DeletePostOf(&post.author))?;
        let _write = self.enter_changing()?;
        self.content
            .delete_post(id)
            .await?
            .ok_or_else(|| post_not_found(id))
    }

    /// Suspends the account (`on`) or lifts its suspension; returns whether
    /// it changed. Suspending refuses the account's tokens issued so far,
    /// hides it and its posts from every reader and keeps its id; lifting
    /// brings the posts back. The id need not exist: a deleted account's
    /// suspension keeps its id from being taken.
    ///
    /// Suspending is an account safety act: it goes on while writes are
    /// stopped for a move ([`crate::gate`]); lifting waits for writes.
    pub async fn suspend(&self, caller: &Caller, id: &str, on: bool) -> Result<bool> {
        let id = UserId::parse(id)?;
        check(caller, Act::Moderate)?;
        let _write = match on {
            true => (self.gate.enter_safety()?, self.epoch.advancing()),
            false => self.enter_changing()?,
        };
        self.accounts.set_suspended(&id, on).await
    }

    /// Refuses every token of the account issued up to now (one user's
    /// tokens, without rotating the shared secret). An account safety act:
    /// it goes on while writes are stopped for a move ([`crate::gate`]).
    pub async fn revoke_tokens(&self, caller: &Caller, id: &str) -> Result<()> {
        let id = UserId::parse(id)?;
        check(caller, Act::Moderate)?;
        let _write = self.gate.enter_safety()?;
        self.accounts.revoke_tokens(&id).await
    }
}
