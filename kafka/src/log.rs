//! The event log on Kafka: an idempotent producer (acks=all) appends each
//! event to its topic, keyed by the account it concerns, so one account's
//! events stay in order on one partition.

use crate::config::KafkaConfig;
use crate::consumer::KafkaConsumer;
use async_trait::async_trait;
use rdkafka::admin::{AdminClient, AdminOptions, NewTopic, TopicReplication};
use rdkafka::client::DefaultClientContext;
use rdkafka::config::ClientConfig;
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::producer::{FutureProducer, FutureRecord, Producer};
use rdkafka::types::RDKafkaErrorCode as Code;
use socialite_core::error::{Error, ErrorKind, Result};
use socialite_core::event::Event;
use socialite_core::ports::{EventLog, LogConsumer};
use std::time::Duration;

/// How long the producer keeps retrying a message before the append fails
/// (the outbox keeps the event and the relay tries again).
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(15);
const ADMIN_TIMEOUT: Duration = Duration::from_secs(10);

pub struct KafkaLog {
    config: KafkaConfig,
    producer: FutureProducer,
    topics: [String; 2],
}

pub(crate) fn unavailable(what: &str, e: KafkaError) -> Error {
    Error::backend(ErrorKind::Unavailable, what, e)
}

impl KafkaLog {
    /// Connects, and creates the topics if they are missing.
    pub async fn open(config: KafkaConfig) -> Result<KafkaLog> {
        let producer: FutureProducer = ClientConfig::new()
            .set("bootstrap.servers", &config.brokers)
            .set("enable.idempotence", "true")
            .set("acks", "all")
            .set("linger.ms", "2")
            .set("compression.type", "lz4")
            .set(
                "message.timeout.ms",
                DELIVERY_TIMEOUT.as_millis().to_string(),
            )
            .create()
            .map_err(|e| unavailable("creating the Kafka producer", e))?;
        let log = KafkaLog {
            topics: [config.posts_topic(), config.graph_topic()],
            config,
            producer,
        };
        log.create_topics().await?;
        Ok(log)
    }

    pub fn config(&self) -> &KafkaConfig {
        &self.config
    }

    async fn create_topics(&self) -> Result<()> {
        let admin: AdminClient<DefaultClientContext> = ClientConfig::new()
            .set("bootstrap.servers", &self.config.brokers)
            .create()
            .map_err(|e| unavailable("creating the Kafka admin client", e))?;
        let topics: Vec<NewTopic> = self
            .topics
            .iter()
            .map(|t| {
                NewTopic::new(
                    t,
                    self.config.partitions,
                    TopicReplication::Fixed(self.config.replication),
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
                    tracing::info!(%topic, partitions = self.config.partitions, "created Kafka topic")
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

    fn topic_of(&self, event: &Event) -> &str {
        match event {
            Event::PostCreated { .. } | Event::PostDeleted { .. } => &self.topics[0],
            _ => &self.topics[1],
        }
    }
}

#[async_trait]
impl EventLog for KafkaLog {
    async fn append(&self, events: &[Event]) -> Result<()> {
        let mut deliveries = Vec::with_capacity(events.len());
        for event in events {
            let payload = event.encode();
            let key = event.key().as_str();
            let topic = self.topic_of(event);
            // Enqueued one by one, in order; the idempotent producer keeps
            // that order on each partition through retries.
            loop {
                let record = FutureRecord::to(topic).key(key).payload(&payload);
                match self.producer.send_result(record) {
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

    async fn ping(&self) -> Result<()> {
        let producer = self.producer.clone();
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
}

impl Drop for KafkaLog {
    fn drop(&mut self) {
        // Delivers what is queued; appends were awaited, so this is brief.
        let _ = self.producer.flush(Duration::from_secs(5));
    }
}
