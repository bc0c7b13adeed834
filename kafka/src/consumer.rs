//! A fanout worker's membership of its Kafka consumer group.
//!
//! Offsets are stored by hand (`enable.auto.offset.store=false`) only when the
//! worker commits, that is after the batch's timeline writes are done, and
//! committed then and on every revocation. Rebalance callbacks run inside
//! `poll`, which the worker calls only between batches, so no batch is in
//! flight when partitions are revoked; events of a revoked partition that
//! were fetched but not yet handed out are abandoned for the new owner.

use crate::config::KafkaConfig;
use crate::error::unavailable;
use crate::stale::{stale_partition, Backoff, StaleWatch, STALE_CHECK_EVERY};
use async_trait::async_trait;
use rdkafka::consumer::{BaseConsumer, CommitMode, Consumer, ConsumerContext, Rebalance};
use rdkafka::error::{KafkaError, KafkaResult};
use rdkafka::message::Message;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{ClientContext, Offset, TopicPartitionList};
use socialite_core::error::{Error, Result};
use socialite_core::event::Event;
use socialite_core::metrics::metrics;
use socialite_core::ports::LogConsumer;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How often the per-partition lag is measured (it asks the brokers).
const LAG_EVERY: Duration = Duration::from_secs(2);

pub struct GroupContext {
    group: String,
    reassigned: AtomicBool,
    /// When this member was last given its partitions; `None` from its
    /// start or a revocation until then, while the group rebalances.
    settled: std::sync::Mutex<Option<Instant>>,
}

impl GroupContext {
    fn settled(&self) -> Option<Instant> {
        *self.settled.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn settle(&self, at: Option<Instant>) {
        *self.settled.lock().unwrap_or_else(|p| p.into_inner()) = at;
    }
}

impl ClientContext for GroupContext {}

impl ConsumerContext for GroupContext {
    fn pre_rebalance(&self, consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        if let Rebalance::Revoke(partitions) = rebalance {
            // Commit what is stored before the partitions go to another worker.
            if let Err(e) = ignore_nothing_stored(consumer.commit_consumer_state(CommitMode::Sync))
            {
                tracing::warn!(group = %self.group, error = %e, "commit before revocation failed");
            }
            tracing::info!(group = %self.group, partitions = %describe(partitions), "partitions revoked");
            self.settle(None);
            self.reassigned.store(true, Ordering::SeqCst);
        }
    }

    fn post_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        match rebalance {
            Rebalance::Assign(partitions) => {
                tracing::info!(group = %self.group, partitions = %describe(partitions), "partitions assigned");
                self.settle(Some(Instant::now()));
                self.reassigned.store(true, Ordering::SeqCst);
            }
            Rebalance::Error(e) => {
                tracing::warn!(group = %self.group, error = %e, "rebalance failed")
            }
            Rebalance::Revoke(_) => {}
        }
    }

    /// A commit that fails leaves its partitions' committed offsets behind
    /// what was applied: their events are delivered again, and the
    /// producers, which estimate fanout's lag from the committed offsets,
    /// see a backlog that is not there until a later commit lands.
    fn commit_callback(&self, result: KafkaResult<()>, offsets: &TopicPartitionList) {
        if let Err(e) = ignore_nothing_stored(result) {
            tracing::warn!(group = %self.group, partitions = %describe(offsets), error = %e, "an offset commit failed");
        }
    }
}

fn describe(list: &TopicPartitionList) -> String {
    let parts: Vec<String> = list
        .elements()
        .iter()
        .map(|e| format!("{}/{}", e.topic(), e.partition()))
        .collect();
    parts.join(",")
}

/// A commit with nothing new to commit is not a failure.
fn ignore_nothing_stored(result: KafkaResult<()>) -> KafkaResult<()> {
    match result {
        Err(KafkaError::ConsumerCommit(RDKafkaErrorCode::NoOffset)) => Ok(()),
        other => other,
    }
}

pub struct KafkaConsumer {
    inner: Arc<BaseConsumer<GroupContext>>,
    config: KafkaConfig,
    group: String,
    topics: Vec<String>,
    stale: Option<StaleWatch>,
    /// Highest offset handed out per partition since the last commit.
    handed_out: BTreeMap<(String, i32), i64>,
    /// When the lag was last measured, and the total then.
    lag: std::sync::Mutex<Option<(Instant, u64)>>,
}

/// One fetched message, owned so it can leave the blocking poll.
struct Fetched {
    topic: String,
    partition: i32,
    offset: i64,
    event: Option<Event>,
}

impl KafkaConsumer {
    pub fn join(config: &KafkaConfig, group: &str, topics: &[String]) -> Result<KafkaConsumer> {
        Ok(KafkaConsumer {
            inner: Arc::new(Self::subscribe(config, group, topics)?),
            config: config.clone(),
            group: group.to_owned(),
            topics: topics.to_vec(),
            stale: config.stale_partition_rejoin.map(|after| StaleWatch {
                after,
                backoff: Backoff::default(),
                checked: Instant::now(),
                waiting: BTreeMap::new(),
            }),
            handed_out: BTreeMap::new(),
            lag: std::sync::Mutex::new(None),
        })
    }

    fn subscribe(
        config: &KafkaConfig,
        group: &str,
        topics: &[String],
    ) -> Result<BaseConsumer<GroupContext>> {
        let context = GroupContext {
            group: group.to_owned(),
            reassigned: AtomicBool::new(false),
            settled: std::sync::Mutex::new(None),
        };
        let mut client = config.client();
        config.group_session(&mut client);
        let consumer: BaseConsumer<GroupContext> = client
            .set("group.id", group)
            .set("enable.auto.commit", "true")
            .set("auto.commit.interval.ms", "1000")
            .set("enable.auto.offset.store", "false")
            .set("auto.offset.reset", "earliest")
            // Range assignment gives one worker the same partition number of
            // both topics, so one account's posts and follows meet there.
            .set("partition.assignment.strategy", "range")
            .create_with_context(context)
            .map_err(|e| unavailable("creating the Kafka consumer", e))?;
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        consumer
            .subscribe(&names)
            .map_err(|e| unavailable("subscribing to the Kafka topics", e))?;
        Ok(consumer)
    }

    /// Leaves the group and joins again as a new member if a partition has
    /// been left unconsumed for the configured time (off by default).
    async fn rejoin_if_stale(&mut self) -> Result<()> {
        let Some(watch) = self.stale.as_mut() else {
            return Ok(());
        };
        if watch.checked.elapsed() < STALE_CHECK_EVERY {
            return Ok(());
        }
        watch.checked = Instant::now();
        let after = watch.backoff.wait(watch.after, Instant::now());
        let mut waiting = std::mem::take(&mut watch.waiting);
        let topics = self.topics.clone();
        let (found, waiting) = self
            .blocking(move |c| {
                let found = owned(c).and_then(|owned| {
                    let member = (&owned, c.context().settled());
                    stale_partition(c, member, &topics, &mut waiting, after)
                });
                (found, waiting)
            })
            .await?;
        let watch = self.stale.as_mut().expect("checked above");
        watch.waiting = waiting;
        let Some((topic, partition)) =
            found.map_err(|e| unavailable("checking the group's partitions", e))?
        else {
            return Ok(());
        };
        tracing::warn!(group = %self.group, %topic, partition, waited_ms = after.as_millis() as u64, "a partition has events that nobody consumes; leaving the group and joining again");
        watch.waiting.clear();
        watch.backoff.rejoined(Instant::now());
        let fresh = Arc::new(Self::subscribe(&self.config, &self.group, &self.topics)?);
        let old = std::mem::replace(&mut self.inner, fresh);
        self.handed_out.clear();
        // Dropping the old member commits what it stored and leaves the group.
        tokio::task::spawn_blocking(move || leave(&old))
            .await
            .map_err(|e| Error::internal(format!("leaving the group: {e}")))?;
        self.inner
            .context()
            .reassigned
            .store(true, Ordering::SeqCst);
        Ok(())
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce(&BaseConsumer<GroupContext>) -> T + Send + 'static,
    ) -> Result<T> {
        let consumer = self.inner.clone();
        tokio::task::spawn_blocking(move || f(&consumer))
            .await
            .map_err(|e| Error::internal(format!("Kafka consumer task: {e}")))
    }
}

/// The partitions assigned to this member.
fn owned(consumer: &BaseConsumer<GroupContext>) -> KafkaResult<BTreeSet<(String, i32)>> {
    Ok(consumer
        .assignment()?
        .elements()
        .iter()
        .map(|e| (e.topic().to_owned(), e.partition()))
        .collect())
}

/// Polls up to `max` messages: waits `wait` for the first, `linger` for the rest.
fn gather(
    consumer: &BaseConsumer<GroupContext>,
    max: usize,
    wait: Duration,
    linger: Duration,
) -> KafkaResult<Vec<Fetched>> {
    let mut out: Vec<Fetched> = Vec::new();
    let mut deadline = Instant::now() + wait;
    while out.len() < max {
        let left = deadline.saturating_duration_since(Instant::now());
        let Some(polled) = consumer.poll(left) else {
            break;
        };
        let message = match polled {
            Ok(m) => m,
            Err(KafkaError::PartitionEOF(_)) => continue,
            Err(e) if out.is_empty() => return Err(e),
            Err(_) => break,
        };
        if out.is_empty() {
            deadline = Instant::now() + linger;
        }
        let event = message.payload().and_then(|p| match Event::decode(p) {
            Ok(e) => Some(e),
            Err(e) => {
                tracing::error!(topic = message.topic(), partition = message.partition(), offset = message.offset(), error = %e.chain(), "skipping an undecodable event");
                metrics().log_undecodable.inc();
                None
            }
        });
        out.push(Fetched {
            topic: message.topic().to_owned(),
            partition: message.partition(),
            offset: message.offset(),
            event,
        });
        if Instant::now() >= deadline {
            break;
        }
    }
    if consumer.context().reassigned.load(Ordering::SeqCst) {
        // A rebalance ran during this poll: hand out only what this worker
        // still owns; the new owners resume from the committed offsets.
        let owned = owned(consumer)?;
        out.retain(|f| owned.contains(&(f.topic.clone(), f.partition)));
    }
    Ok(out)
}

#[async_trait]
impl LogConsumer for KafkaConsumer {
    async fn poll(&mut self, max: usize, wait: Duration, linger: Duration) -> Result<Vec<Event>> {
        self.rejoin_if_stale().await?;
        let fetched = self
            .blocking(move |c| gather(c, max, wait, linger))
            .await?
            .map_err(|e| unavailable("polling Kafka", e))?;
        let mut events = Vec::with_capacity(fetched.len());
        for f in fetched {
            let at = self.handed_out.entry((f.topic, f.partition)).or_insert(-1);
            *at = (*at).max(f.offset);
            events.extend(f.event);
        }
        Ok(events)
    }

    async fn commit(&mut self) -> Result<()> {
        if self.handed_out.is_empty() {
            return Ok(());
        }
        let handed_out = std::mem::take(&mut self.handed_out);
        self.blocking(move |c| {
            for ((topic, partition), offset) in &handed_out {
                // librdkafka commits offset + 1, the next to read. A partition
                // revoked meanwhile refuses the store: its new owner replays.
                if let Err(e) = c.store_offset(topic, *partition, *offset) {
                    tracing::debug!(%topic, partition, error = %e, "offset not stored");
                }
            }
            ignore_nothing_stored(c.commit_consumer_state(CommitMode::Async))
        })
        .await?
        .map_err(|e| unavailable("committing Kafka offsets", e))
    }

    async fn backlog(&self) -> Result<u64> {
        let cached = *self.lag.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, total)) = cached.filter(|(at, _)| at.elapsed() < LAG_EVERY) {
            return Ok(total);
        }
        let lags = self.blocking(partition_lags).await??;
        let mut total = 0;
        for ((topic, partition), lag) in lags {
            total += lag;
            metrics()
                .log_partition_lag
                .get_or_create(&vec![
                    ("topic", topic),
                    ("partition", partition.to_string()),
                ])
                .set(lag as i64);
        }
        *self.lag.lock().unwrap_or_else(|p| p.into_inner()) = Some((Instant::now(), total));
        Ok(total)
    }

    fn reassigned(&mut self) -> bool {
        let changed = self
            .inner
            .context()
            .reassigned
            .swap(false, Ordering::SeqCst);
        if changed {
            // Offsets handed out for partitions now gone cannot be stored.
            self.handed_out.clear();
        }
        changed
    }
}

/// Commits what is stored and leaves the group.
fn leave(consumer: &BaseConsumer<GroupContext>) {
    let _ = ignore_nothing_stored(consumer.commit_consumer_state(CommitMode::Sync));
    consumer.unsubscribe();
}

/// Unprocessed events per assigned partition: the high watermark less the
/// consumer's position (or its committed offset before the first fetch).
fn partition_lags(consumer: &BaseConsumer<GroupContext>) -> Result<Vec<((String, i32), u64)>> {
    let position = consumer
        .position()
        .map_err(|e| unavailable("reading Kafka positions", e))?;
    let mut out = Vec::new();
    for e in position.elements() {
        let (low, high) = consumer
            .fetch_watermarks(e.topic(), e.partition(), Duration::from_secs(2))
            .map_err(|err| unavailable("reading Kafka watermarks", err))?;
        let at = match e.offset() {
            Offset::Offset(o) => o,
            _ => low,
        };
        out.push((
            (e.topic().to_owned(), e.partition()),
            (high - at).max(0) as u64,
        ));
    }
    Ok(out)
}

impl Drop for KafkaConsumer {
    fn drop(&mut self) {
        // Leaving at once moves the partitions to the other workers now
        // rather than after the session timeout.
        let multi_thread = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if multi_thread {
            tokio::task::block_in_place(|| leave(&self.inner))
        } else {
            leave(&self.inner)
        }
    }
}
