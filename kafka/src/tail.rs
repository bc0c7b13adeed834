//! The log read from a place of one's own (the firehose): every partition
//! of both topics assigned to one client at the offsets of a cursor, in the
//! order `<prefix>.posts` 0..n then `<prefix>.graph` 0..n. No group is
//! joined and no offset committed; the fanout group never sees it.

use crate::config::KafkaConfig;
use crate::error::unavailable;
use async_trait::async_trait;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::error::KafkaError;
use rdkafka::message::Message;
use rdkafka::types::RDKafkaErrorCode;
use rdkafka::{Offset, TopicPartitionList};
use socialite_core::error::{Error, Result};
use socialite_core::event::Event;
use socialite_core::metrics::metrics;
use socialite_core::ports::{cursor_too_old, Extent, LogTail, Placed};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ASK_TIMEOUT: Duration = Duration::from_secs(5);

/// A partition: its topic and number.
type Part = (String, i32);

/// The client that reads partitions and watermarks, made on first use.
#[derive(Default)]
pub(crate) struct Tails(Mutex<Option<Arc<BaseConsumer>>>);

impl Tails {
    fn client(&self, config: &KafkaConfig) -> Result<Arc<BaseConsumer>> {
        let mut held = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = held.as_ref() {
            return Ok(c.clone());
        }
        let client = Arc::new(reader(config)?);
        *held = Some(client.clone());
        Ok(client)
    }

    /// Each partition's low and high watermarks, in cursor order.
    pub(crate) async fn extent(
        &self,
        config: &KafkaConfig,
        topics: &[String],
    ) -> Result<Vec<Extent>> {
        let client = self.client(config)?;
        let topics = topics.to_vec();
        blocking(move || {
            let parts = partitions(&client, &topics)?;
            watermarks(&client, &parts)
        })
        .await
    }

    /// A reader of every partition from `next`.
    pub(crate) async fn open(
        &self,
        config: &KafkaConfig,
        topics: &[String],
        next: &[u64],
    ) -> Result<Box<dyn LogTail>> {
        let client = self.client(config)?;
        let topics = topics.to_vec();
        let parts = blocking(move || partitions(&client, &topics)).await?;
        if parts.len() != next.len() {
            return Err(Error::invalid(
                "invalid_cursor",
                "the cursor does not name the log's partitions",
            ));
        }
        let consumer = reader(config)?;
        let mut assigned = TopicPartitionList::new();
        for ((topic, p), n) in parts.iter().zip(next) {
            assigned
                .add_partition_offset(topic, *p, Offset::Offset(*n as i64))
                .map_err(|e| unavailable("naming the partitions to read", e))?;
        }
        consumer
            .assign(&assigned)
            .map_err(|e| unavailable("assigning the log's partitions", e))?;
        let index = parts.iter().cloned().zip(0..).collect();
        Ok(Box::new(Tail {
            consumer: Arc::new(consumer),
            parts: Arc::new(parts),
            index: Arc::new(index),
        }))
    }
}

fn reader(config: &KafkaConfig) -> Result<BaseConsumer> {
    config
        .client()
        .set("group.id", format!("{}.firehose", config.topic_prefix))
        .set("enable.auto.commit", "false")
        // An offset no longer kept is an error the reader is told of, not
        // a jump to another place.
        .set("auto.offset.reset", "error")
        // What a connection prefetches is bounded (librdkafka's default is
        // up to 64 MiB a client): about 1 MiB, or 1,000 messages.
        .set("queued.max.messages.kbytes", "1024")
        .set("queued.min.messages", "1000")
        .set("fetch.max.bytes", "1048576")
        .create()
        .map_err(|e| unavailable("creating a Kafka client to follow the log", e))
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::internal(format!("Kafka read task: {e}")))?
}

fn partitions(client: &BaseConsumer, topics: &[String]) -> Result<Vec<Part>> {
    let mut parts = Vec::new();
    for topic in topics {
        let metadata = client
            .fetch_metadata(Some(topic), ASK_TIMEOUT)
            .map_err(|e| unavailable("reading Kafka topic metadata", e))?;
        // A topic the brokers cannot describe now is an outage, not a
        // topic of no partitions (which would refuse every cursor).
        if let Some(e) = metadata.topics().iter().find_map(|t| t.error()) {
            return Err(Error::unavailable(format!(
                "Kafka cannot describe the topic {topic} now ({e:?})"
            )));
        }
        let mut ids: Vec<i32> = metadata
            .topics()
            .iter()
            .flat_map(|t| t.partitions().iter().map(|p| p.id()))
            .collect();
        ids.sort_unstable();
        parts.extend(ids.into_iter().map(|id| (topic.clone(), id)));
    }
    Ok(parts)
}

fn watermarks(client: &BaseConsumer, parts: &[Part]) -> Result<Vec<Extent>> {
    parts
        .iter()
        .map(|(topic, p)| {
            let (low, high) = client
                .fetch_watermarks(topic, *p, ASK_TIMEOUT)
                .map_err(|e| unavailable("reading Kafka watermarks", e))?;
            Ok(Extent {
                oldest: low.max(0) as u64,
                next: high.max(0) as u64,
            })
        })
        .collect()
}

struct Tail {
    consumer: Arc<BaseConsumer>,
    parts: Arc<Vec<Part>>,
    index: Arc<HashMap<Part, usize>>,
}

#[async_trait]
impl LogTail for Tail {
    async fn read(&mut self, max: usize, wait: Duration) -> Result<Vec<Placed>> {
        let (consumer, parts, index) = (
            self.consumer.clone(),
            self.parts.clone(),
            self.index.clone(),
        );
        blocking(move || {
            let mut out = Vec::new();
            let mut wait = wait;
            while out.len() < max {
                let m = match consumer.poll(wait) {
                    None => break,
                    Some(Ok(m)) => m,
                    Some(Err(e)) if gone(&e) => {
                        let kept = watermarks(&consumer, &parts)?;
                        return Err(cursor_too_old(kept.iter().map(|e| e.oldest).collect()));
                    }
                    Some(Err(e)) => return Err(unavailable("reading the log", e)),
                };
                wait = Duration::ZERO;
                let key = (m.topic().to_owned(), m.partition());
                let Some(&partition) = index.get(&key) else {
                    continue;
                };
                match m.payload().map(Event::decode) {
                    Some(Ok(event)) => out.push(Placed {
                        partition,
                        offset: m.offset().max(0) as u64,
                        event,
                    }),
                    _ => {
                        metrics().log_undecodable.inc();
                    }
                }
            }
            Ok(out)
        })
        .await
    }
}

impl Drop for Tail {
    /// Closing a Kafka client waits on its threads: done apart from the
    /// async threads, which a broker outage ending every connection at
    /// once would otherwise stall.
    fn drop(&mut self) {
        let consumer = self.consumer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn_blocking(move || drop(consumer));
        }
    }
}

/// Whether the error says the offset read is no longer kept.
fn gone(e: &KafkaError) -> bool {
    matches!(
        e.rdkafka_error_code(),
        Some(RDKafkaErrorCode::AutoOffsetReset | RDKafkaErrorCode::OffsetOutOfRange)
    )
}
