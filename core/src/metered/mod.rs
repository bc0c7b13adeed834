//! Store metrics for any backend: wrappers that time every port call and
//! count its failures (`socialite_store_operation_duration_seconds`,
//! `socialite_store_errors_total`), labelled by store and operation.

use crate::error::Result;
use crate::event::Event;
use crate::fault::StoreFault;
use crate::ids::{PostId, TimelineId, UserId};
use crate::metrics::metrics;
use crate::model::{Entry, Post, PostCounts, User};
use crate::plan::write::{Done, Write};
use crate::ports::*;
use crate::rules::markers::Marker;
use crate::rules::notifications::{GroupKey, NoticeGroup};
use async_trait::async_trait;
use std::future::Future;
use std::sync::Arc;
use std::time::Instant;
use tokio::sync::Notify;
use tracing::Instrument;

mod graph;

async fn timed<T>(
    store: &'static str,
    op: &'static str,
    call: impl Future<Output = Result<T>>,
) -> Result<T> {
    let start = Instant::now();
    // A round trip is a child span when traces are exported and it serves
    // a traced operation (a request, a fanout batch); the background loops'
    // polls would otherwise each be a trace of one span.
    let traced = crate::trace::hooks().is_some() && !tracing::Span::current().is_none();
    let result = if traced {
        let span = tracing::info_span!("store", otel.name = %format_args!("{store}.{op}"));
        call.instrument(span).await
    } else {
        call.await
    };
    metrics().observe_store(store, op, start.elapsed(), result.is_err());
    result
}

/// A port with every call metered.
pub struct Metered<T: ?Sized>(pub Arc<T>);

/// The writes of a port, each timed under its own name ([`Write::name`]).
macro_rules! metered_writes {
    ($($port:ident => $store:literal),* $(,)?) => {$(
        #[async_trait]
        impl Transact for Metered<dyn $port> {
            async fn transact(&self, write: Write) -> Result<Done> {
                timed($store, write.name(), self.0.transact(write)).await
            }
        }
    )*};
}

metered_writes!(
    Accounts => "accounts",
    Transfer => "transfer",
    ContentStore => "content",
    GraphStore => "graph",
);

#[async_trait]
impl Accounts for Metered<dyn Accounts> {
    async fn standing(&self, id: &UserId) -> Result<Standing> {
        timed("accounts", "standing", self.0.standing(id)).await
    }
    async fn suspended(&self) -> Result<Vec<UserId>> {
        timed("accounts", "suspended", self.0.suspended()).await
    }
}

#[async_trait]
impl Transfer for Metered<dyn Transfer> {
    async fn export_view(&self) -> Result<Box<dyn ExportView>> {
        timed("transfer", "export_view", self.0.export_view()).await
    }
}

#[async_trait]
impl ContentStore for Metered<dyn ContentStore> {
    fn fault(&self) -> Option<StoreFault> {
        self.0.fault()
    }
    async fn get_user(&self, id: &UserId) -> Result<Option<User>> {
        timed("content", "get_user", self.0.get_user(id)).await
    }
    async fn most_followed(&self, at_least: u64, limit: usize) -> Result<Vec<(UserId, u64)>> {
        timed(
            "content",
            "most_followed",
            self.0.most_followed(at_least, limit),
        )
        .await
    }
    async fn pending_deletions(&self) -> Result<Vec<UserId>> {
        timed("content", "pending_deletions", self.0.pending_deletions()).await
    }
    async fn delete_user(&self, id: &UserId) -> Result<bool> {
        timed("content", "delete_user", self.0.delete_user(id)).await
    }
    async fn mentions_of(
        &self,
        user: &UserId,
        range: IdRange,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        timed(
            "content",
            "mentions_of",
            self.0.mentions_of(user, range, limit),
        )
        .await
    }
    async fn get_posts(&self, ids: &[PostId]) -> Result<Vec<Post>> {
        timed("content", "get_posts", self.0.get_posts(ids)).await
    }
    async fn post_ids_by(
        &self,
        authors: &[UserId],
        range: IdRange,
        limit_each: usize,
    ) -> Result<Vec<Entry>> {
        timed(
            "content",
            "post_ids_by",
            self.0.post_ids_by(authors, range, limit_each),
        )
        .await
    }
    async fn newest_by(
        &self,
        authors: &[UserId],
        range: IdRange,
        limit: usize,
    ) -> Result<Vec<Entry>> {
        let call = self.0.newest_by(authors, range, limit);
        timed("content", "newest_by", call).await
    }
    async fn newest_post_id(&self) -> Result<Option<PostId>> {
        timed("content", "newest_post_id", self.0.newest_post_id()).await
    }
    async fn likers(
        &self,
        post: PostId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        timed("content", "likers", self.0.likers(post, after, limit)).await
    }
    async fn post_counts(&self, posts: &[PostId]) -> Result<Vec<PostCounts>> {
        timed("content", "post_counts", self.0.post_counts(posts)).await
    }
    async fn reposted_among(&self, posts: &[PostId]) -> Result<Vec<PostId>> {
        timed("content", "reposted_among", self.0.reposted_among(posts)).await
    }
    async fn reposters(&self, post: PostId, limit: usize) -> Result<Vec<(UserId, PostId)>> {
        timed("content", "reposters", self.0.reposters(post, limit)).await
    }
    async fn reposts_among(&self, post: PostId, users: &[UserId]) -> Result<Vec<(UserId, PostId)>> {
        timed(
            "content",
            "reposts_among",
            self.0.reposts_among(post, users),
        )
        .await
    }
    async fn replies_of(
        &self,
        post: PostId,
        after: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        timed(
            "content",
            "replies_of",
            self.0.replies_of(post, after, limit),
        )
        .await
    }
    async fn notice_groups(
        &self,
        user: &UserId,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<NoticeGroup>> {
        timed(
            "content",
            "notice_groups",
            self.0.notice_groups(user, before, limit),
        )
        .await
    }
    async fn entry_notices(
        &self,
        user: &UserId,
        group: GroupKey,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<(PostId, UserId)>> {
        let read = self.0.entry_notices(user, group, before, limit);
        timed("content", "entry_notices", read).await
    }
    async fn entry_notices_by(
        &self,
        user: &UserId,
        group: GroupKey,
        actors: &[UserId],
    ) -> Result<Vec<(PostId, UserId)>> {
        let read = self.0.entry_notices_by(user, group, actors);
        timed("content", "entry_notices_by", read).await
    }
    async fn markers(&self, user: &UserId) -> Result<Vec<Marker>> {
        timed("content", "markers", self.0.markers(user)).await
    }
}

#[async_trait]
impl Outbox for Metered<dyn Outbox> {
    async fn pending(&self, limit: usize) -> Result<Vec<(u64, Event)>> {
        timed("outbox", "pending", self.0.pending(limit)).await
    }
    async fn ack(&self, seqs: &[u64]) -> Result<()> {
        timed("outbox", "ack", self.0.ack(seqs)).await
    }
    async fn lease(&self) -> Result<bool> {
        timed("outbox", "lease", self.0.lease()).await
    }
    async fn backlog(&self) -> Result<u64> {
        timed("outbox", "backlog", self.0.backlog()).await
    }
    fn notifier(&self) -> Arc<Notify> {
        self.0.notifier()
    }
}

#[async_trait]
impl EventLog for Metered<dyn EventLog> {
    async fn append(&self, events: &[Event]) -> Result<()> {
        timed("log", "append", self.0.append(events)).await
    }
    async fn ping(&self) -> Result<()> {
        timed("log", "ping", self.0.ping()).await
    }
    fn fault(&self) -> Option<StoreFault> {
        self.0.fault()
    }
    async fn consumer(&self, group: &str) -> Result<Box<dyn LogConsumer>> {
        let inner = timed("log", "join", self.0.consumer(group)).await?;
        Ok(Box::new(MeteredConsumer(inner)))
    }
}

struct MeteredConsumer(Box<dyn LogConsumer>);

#[async_trait]
impl LogConsumer for MeteredConsumer {
    async fn poll(
        &mut self,
        max: usize,
        wait: std::time::Duration,
        linger: std::time::Duration,
    ) -> Result<Vec<Event>> {
        // Waiting for events is not store latency: only failures are counted.
        let result = self.0.poll(max, wait, linger).await;
        if result.is_err() {
            metrics().observe_store("log", "poll", Default::default(), true);
        }
        result
    }
    async fn commit(&mut self) -> Result<()> {
        timed("log", "commit", self.0.commit()).await
    }
    async fn backlog(&self) -> Result<u64> {
        timed("log", "backlog", self.0.backlog()).await
    }
    fn reassigned(&mut self) -> bool {
        self.0.reassigned()
    }
}

#[async_trait]
impl TimelineStore for Metered<dyn TimelineStore> {
    fn capacity(&self) -> usize {
        self.0.capacity()
    }
    async fn read(
        &self,
        user: &TimelineId,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<CacheRead> {
        timed("timelines", "read", self.0.read(user, before, limit)).await
    }
    async fn version(&self, user: &TimelineId) -> Result<Option<u64>> {
        timed("timelines", "version", self.0.version(user)).await
    }
    async fn create(&self, user: &TimelineId) -> Result<()> {
        timed("timelines", "create", self.0.create(user)).await
    }
    async fn fill(&self, user: &TimelineId, entries: Vec<Entry>, coverage: Coverage) -> Result<()> {
        timed("timelines", "fill", self.0.fill(user, entries, coverage)).await
    }
    async fn deliver(&self, deliveries: &[Delivery]) -> Result<usize> {
        timed("timelines", "deliver", self.0.deliver(deliveries)).await
    }
    async fn coverage(&self, user: &TimelineId) -> Result<Option<Coverage>> {
        timed("timelines", "coverage", self.0.coverage(user)).await
    }
    async fn backfill(
        &self,
        user: &TimelineId,
        author: &UserId,
        entries: Vec<Entry>,
        coverage: Coverage,
    ) -> Result<()> {
        timed(
            "timelines",
            "backfill",
            self.0.backfill(user, author, entries, coverage),
        )
        .await
    }
    async fn purge_author(&self, user: &TimelineId, author: &UserId) -> Result<()> {
        timed(
            "timelines",
            "purge_author",
            self.0.purge_author(user, author),
        )
        .await
    }
    async fn retract_post(&self, users: &[TimelineId], post: PostId) -> Result<()> {
        timed(
            "timelines",
            "retract_post",
            self.0.retract_post(users, post),
        )
        .await
    }
    async fn drop_timeline(&self, user: &TimelineId) -> Result<()> {
        timed("timelines", "drop_timeline", self.0.drop_timeline(user)).await
    }
    async fn footprint(&self) -> Result<Footprint> {
        self.0.footprint().await
    }
    async fn expire(&self) -> Result<u64> {
        timed("timelines", "expire", self.0.expire()).await
    }
}
