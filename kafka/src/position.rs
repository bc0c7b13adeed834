//! A consumer group's place on the topics, read from outside the group:
//! its committed offsets (an offset fetch, which does not join the group)
//! against each partition's high watermark. A producer reads it to see how
//! far fanout is behind.

use crate::config::KafkaConfig;
use crate::error::unavailable;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::{Offset, TopicPartitionList};
use socialite_core::error::Result;
use socialite_core::ports::{LogPosition, PartitionPosition};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// One reading client per group, made on first use and kept.
#[derive(Default)]
pub(crate) struct Positions(Mutex<HashMap<String, Arc<BaseConsumer>>>);

impl Positions {
    fn client(&self, config: &KafkaConfig, group: &str) -> Result<Arc<BaseConsumer>> {
        let mut clients = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = clients.get(group) {
            return Ok(c.clone());
        }
        let client: BaseConsumer = config
            .client()
            .set("group.id", group)
            .set("enable.auto.commit", "false")
            .create()
            .map_err(|e| unavailable("creating a Kafka client to read offsets", e))?;
        let client = Arc::new(client);
        clients.insert(group.to_owned(), client.clone());
        Ok(client)
    }

    /// `group`'s committed offsets and the watermarks of `topics`, summed.
    pub(crate) async fn read(
        &self,
        config: &KafkaConfig,
        topics: &[String],
        group: &str,
    ) -> Result<LogPosition> {
        let client = self.client(config, group)?;
        let topics = topics.to_vec();
        tokio::task::spawn_blocking(move || position(&client, &topics))
            .await
            .map_err(|e| socialite_core::error::Error::internal(e.to_string()))?
    }
}

fn position(client: &BaseConsumer, topics: &[String]) -> Result<LogPosition> {
    let mut wanted = TopicPartitionList::new();
    for topic in topics {
        let metadata = client
            .fetch_metadata(Some(topic), ASK_TIMEOUT)
            .map_err(|e| unavailable("reading Kafka topic metadata", e))?;
        for t in metadata.topics() {
            for p in t.partitions() {
                wanted.add_partition(t.name(), p.id());
            }
        }
    }
    let committed = client
        .committed_offsets(wanted, ASK_TIMEOUT)
        .map_err(|e| unavailable("reading Kafka committed offsets", e))?;
    let mut elements = committed.elements();
    // The same order at every reading: a watcher compares partitions.
    elements.sort_by_key(|e| (e.topic().to_owned(), e.partition()));
    let mut out = LogPosition::default();
    for e in elements {
        let (low, high) = client
            .fetch_watermarks(e.topic(), e.partition(), ASK_TIMEOUT)
            .map_err(|err| unavailable("reading Kafka watermarks", err))?;
        // A group that never committed here starts at the oldest offset.
        let at = match e.offset() {
            Offset::Offset(o) => o,
            _ => low,
        };
        out.partitions.push(PartitionPosition {
            committed: at.max(0) as u64,
            end: high.max(0) as u64,
        });
    }
    Ok(out)
}
