//! The event log on Kafka: an idempotent producer (acks=all) appends each
//! event to its topic, keyed by the account it concerns, so one account's
//! events stay in order on one partition.

use crate::config::KafkaConfig;
use crate::consumer::KafkaConsumer;
use crate::error::unavailable;
use async_trait::async_trait;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{FutureProducer, FutureRecord, Producer, PurgeConfig};
use rdkafka::types::RDKafkaErrorCode as Code;
use socialite_core::error::{Error, Result};
use socialite_core::event::Event;
use socialite_core::ports::{EventLog, Extent, LogConsumer, LogPosition, LogTail};
use std::time::Duration;

const ADMIN_TIMEOUT: Duration = Duration::from_secs(10);

pub struct KafkaLog {
    config: KafkaConfig,
    /// Replaced after a failed append (see [`KafkaLog::renew_producer`]).
    producer: std::sync::RwLock<FutureProducer>,
    topics: [String; 2],
    positions: crate::position::Positions,
    tails: crate::tail::Tails,
}

fn new_producer(config: &KafkaConfig) -> Result<FutureProducer> {
    config
        .client()
        .set("enable.idempotence", "true")
        .set("acks", "all")
        .set("linger.ms", "2")
        .set("compression.type", "lz4")
        .set(
            "message.timeout.ms",
            config.delivery_timeout.as_millis().to_string(),
        )
        .create()
        .map_err(|e| unavailable("creating the Kafka producer", e))
}

impl KafkaLog {
    /// Connects, and creates the topics if they are missing.
    pub async fn open(config: KafkaConfig) -> Result<KafkaLog> {
        let log = KafkaLog {
            topics: [config.posts_topic(), config.graph_topic()],
            producer: std::sync::RwLock::new(new_producer(&config)?),
            positions: Default::default(),
            tails: Default::default(),
            config,
        };
        create_topics(&log.config, &log.topics).await?;
        Ok(log)
    }

    fn producer(&self) -> FutureProducer {
        self.producer
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// A failed append starts over with a new producer: an idempotent
    /// producer whose broker lost its state (a restart without it, a fatal
    /// sequence error) may otherwise refuse every later message. The relay
    /// appends the whole batch again, in order, so nothing is lost.
    fn renew_producer(&self) {
        match new_producer(&self.config) {
            Ok(fresh) => {
                let old = std::mem::replace(
                    &mut *self.producer.write().unwrap_or_else(|p| p.into_inner()),
                    fresh,
                );
                // Whatever the old one still holds is in the retried batch;
                // dropped, so it cannot land after the retry and reorder.
                old.purge(PurgeConfig::default().queue().inflight());
            }
            Err(e) => tracing::warn!(error = %e.chain(), "renewing the Kafka producer failed"),
        }
    }

    pub fn config(&self) -> &KafkaConfig {
        &self.config
    }

    fn topic_of(&self, event: &Event) -> &str {
        match event {
            Event::PostCreated { .. } | Event::PostDeleted { .. } => &self.topics[0],
            _ => &self.topics[1],
        }
    }
}

/// Reaches the brokers (stopping with the setting to change if they refuse
/// the connection) and creates the topics that are missing, with the
/// configured partitions and replication.
pub(crate) async fn create_topics(config: &KafkaConfig, names: &[String]) -> Result<()> {
    crate::probe::reach(config).await?;
    let admin: AdminClient<DefaultClientContext> = config
        .client()
        .create()
        .map_err(|e| unavailable("creating the Kafka admin client", e))?;
    let topics: Vec<NewTopic> = names
        .iter()
        .map(|t| {
            NewTopic::new(
                t,
                config.partitions,
                TopicReplication::Fixed(config.replication),
            )
        })
        .collect();
    let options = AdminOptions::new().operation_timeout(Some(ADMIN_TIMEOUT));
    let results = admin
        .create_topics(&topics, &options)
        .await
        .map_err(|e| unavailable("creating the Kafka topics", e))?;
    for result in results {
        match result {
            Ok(topic) => {
                tracing::info!(%topic, partitions = config.partitions, "created Kafka topic")
            }
            Err((_, Code::TopicAlreadyExists)) => {}
            Err((topic, code)) => {
                return Err(unavailable(
                    &format!("creating Kafka topic {topic}"),
                    KafkaError::AdminOp(code),
                ))
            }
        }
    }
    Ok(())
}

/// A post's W3C trace context as the record's `traceparent` header, where
/// tools that read the topic look for it (the event holds it too).
fn trace_headers(event: &Event) -> Option<OwnedHeaders> {
    let Event::PostCreated { trace, .. } = event else {
        return None;
    };
    let value = trace.parent()?;
    Some(OwnedHeaders::new().insert(Header {
        key: "traceparent",
        value: Some(value),
    }))
}

#[async_trait]
impl EventLog for KafkaLog {
    async fn append(&self, events: &[Event]) -> Result<()> {
        let result = self.send_all(events).await;
        if result.is_err() {
            self.renew_producer();
        }
        result
    }

    async fn ping(&self) -> Result<()> {
        let producer = self.producer();
        let topic = self.topics[0].clone();
        tokio::task::spawn_blocking(move || {
            producer
                .client()
                .fetch_metadata(Some(&topic), Duration::from_secs(2))
                .map(|_| ())
                .map_err(|e| unavailable("asking Kafka for metadata", e))
        })
        .await
        .map_err(|e| Error::internal(format!("metadata task: {e}")))?
    }

    async fn consumer(&self, group: &str) -> Result<Box<dyn LogConsumer>> {
        let consumer = KafkaConsumer::join(&self.config, group, &self.topics)?;
        Ok(Box::new(consumer))
    }

    async fn position(&self, group: &str) -> Result<LogPosition> {
        self.positions.read(&self.config, &self.topics, group).await
    }

    async fn extent(&self) -> Result<Vec<Extent>> {
        self.tails.extent(&self.config, &self.topics).await
    }

    async fn tail(&self, next: &[u64]) -> Result<Box<dyn LogTail>> {
        self.tails.open(&self.config, &self.topics, next).await
    }
}

impl KafkaLog {
    /// Sends every event and waits for all of them to be acknowledged.
    async fn send_all(&self, events: &[Event]) -> Result<()> {
        let producer = self.producer();
        let mut deliveries = Vec::with_capacity(events.len());
        for event in events {
            let payload = event.encode();
            let key = event.key().as_str();
            let topic = self.topic_of(event);
            let headers = trace_headers(event);
            // Enqueued one by one, in order; the idempotent producer keeps
            // that order on each partition through retries.
            loop {
                let mut record = FutureRecord::to(topic).key(key).payload(&payload);
                if let Some(headers) = &headers {
                    record = record.headers(headers.clone());
                }
                match producer.send_result(record) {
                    Ok(delivery) => {
                        deliveries.push(delivery);
                        break;
                    }
                    Err((KafkaError::MessageProduction(RDKafkaErrorCode::QueueFull), _)) => {
                        tokio::time::sleep(Duration::from_millis(5)).await
                    }
                    Err((e, _)) => return Err(unavailable("queueing an event for Kafka", e)),
                }
            }
        }
        for delivery in deliveries {
            match delivery.await {
                Ok(Ok(_)) => {}
                Ok(Err((e, _))) => return Err(unavailable("appending to Kafka", e)),
                Err(_) => return Err(Error::unavailable("the Kafka producer shut down")),
            }
        }
        Ok(())
    }
}

impl Drop for KafkaLog {
    fn drop(&mut self) {
        // Delivers what is queued; appends were awaited, so this is brief.
        let _ = self.producer().flush(Duration::from_secs(5));
    }
}
