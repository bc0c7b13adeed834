//! A fanout worker's membership of its Kafka consumer group.
//!
//! Offsets are stored by hand (`enable.auto.offset.store=false`) only when the
//! worker commits, that is after the batch's timeline writes are done, and
//! committed then and on every revocation. Rebalance callbacks run inside
//! `poll`, which the worker calls only between batches, so no batch is in
//! flight when partitions are revoked; events of a revoked partition that
//! were fetched but not yet handed out are abandoned for the new owner.

use crate::config::KafkaConfig;
use crate::log::unavailable;
use async_trait::async_trait;
use rdkafka::config::ClientConfig;
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
            self.reassigned.store(true, Ordering::SeqCst);
        }
    }

    fn post_rebalance(&self, _consumer: &BaseConsumer<Self>, rebalance: &Rebalance<'_>) {
        match rebalance {
            Rebalance::Assign(partitions) => {
                tracing::info!(group = %self.group, partitions = %describe(partitions), "partitions assigned");
                self.reassigned.store(true, Ordering::SeqCst);
            }
            Rebalance::Error(e) => {
                tracing::warn!(group = %self.group, error = %e, "rebalance failed")
            }
            Rebalance::Revoke(_) => {}
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
        let context = GroupContext {
            group: group.to_owned(),
            reassigned: AtomicBool::new(false),
        };
        let consumer: BaseConsumer<GroupContext> = ClientConfig::new()
            .set("bootstrap.servers", &config.brokers)
            .set("group.id", group)
            .set("enable.auto.commit", "true")
            .set("auto.commit.interval.ms", "1000")
            .set("enable.auto.offset.store", "false")
            .set("auto.offset.reset", "earliest")
            // Range assignment gives one worker the same partition number of
            // both topics, so one account's posts and follows meet there.
            .set("partition.assignment.strategy", "range")
            .set("session.timeout.ms", "10000")
            .set("heartbeat.interval.ms", "1000")
            .create_with_context(context)
            .map_err(|e| unavailable("creating the Kafka consumer", e))?;
        let names: Vec<&str> = topics.iter().map(String::as_str).collect();
        consumer
            .subscribe(&names)
            .map_err(|e| unavailable("subscribing to the Kafka topics", e))?;
        Ok(KafkaConsumer {
            inner: Arc::new(consumer),
            handed_out: BTreeMap::new(),
            lag: std::sync::Mutex::new(None),
        })
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
        let owned: BTreeSet<(String, i32)> = consumer
            .assignment()?
            .elements()
            .iter()
            .map(|e| (e.topic().to_owned(), e.partition()))
            .collect();
        out.retain(|f| owned.contains(&(f.topic.clone(), f.partition)));
    }
    Ok(out)
}

#[async_trait]
impl LogConsumer for KafkaConsumer {
    async fn poll(&mut self, max: usize, wait: Duration, linger: Duration) -> Result<Vec<Event>> {
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
        // Commits what is stored and leaves the group, so the partitions move
        // to the other workers at once rather than after the session timeout.
        let leave = || {
            let _ = ignore_nothing_stored(self.inner.commit_consumer_state(CommitMode::Sync));
            self.inner.unsubscribe();
        };
        let multi_thread = tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread);
        if multi_thread {
            tokio::task::block_in_place(leave)
        } else {
            leave()
        }
    }
}
