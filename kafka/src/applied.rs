//! The applied feed on Kafka: fanout workers append the events they applied
//! to `<prefix>.applied`, keyed as on the log; every process that pushes
//! live timelines reads the whole topic, from its end when it subscribed, as
//! the only member of a consumer group of its own (no offsets are kept: a
//! restarted process starts from the end, and its clients resume from their
//! timelines).

use crate::config::KafkaConfig;
use crate::error::unavailable;
use crate::log::create_topics;
use async_trait::async_trait;
use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka::message::Message;
use rdkafka::producer::{FutureProducer, FutureRecord};
use socialite_core::error::{Error, Result};
use socialite_core::event::Event;
use socialite_core::ids::now_ms;
use socialite_core::metrics::metrics;
use socialite_core::ports::{Applied, AppliedFeed, AppliedStream};
use std::sync::Arc;
use std::time::Duration;

/// Most messages one read hands to the hub.
const BATCH: usize = 500;
const POLL: Duration = Duration::from_millis(200);
const SEND_TIMEOUT: Duration = Duration::from_secs(5);

pub struct KafkaApplied {
    config: KafkaConfig,
    producer: FutureProducer,
    topic: String,
}

impl KafkaApplied {
    pub async fn open(config: &KafkaConfig) -> Result<KafkaApplied> {
        let topic = config.applied_topic();
        create_topics(config, std::slice::from_ref(&topic)).await?;
        // Live pushes are best effort (a stream resumes from its timeline),
        // so one acknowledgement is enough.
        let producer = config
            .client()
            .set("acks", "1")
            .set("linger.ms", "1")
            .set("compression.type", "lz4")
            .create()
            .map_err(|e| unavailable("creating the applied feed's producer", e))?;
        Ok(KafkaApplied {
            config: config.clone(),
            producer,
            topic,
        })
    }
}

#[async_trait]
impl AppliedFeed for KafkaApplied {
    async fn publish(&self, events: &[Event]) -> Result<()> {
        let mut sent = Vec::with_capacity(events.len());
        for event in events {
            let payload = event.encode();
            let record = FutureRecord::to(&self.topic)
                .key(event.key().as_str())
                .payload(&payload);
            match self.producer.send_result(record) {
                Ok(delivery) => sent.push(delivery),
                Err((e, _)) => return Err(unavailable("publishing applied events", e)),
            }
        }
        for delivery in sent {
            match tokio::time::timeout(SEND_TIMEOUT, delivery).await {
                Ok(Ok(Ok(_))) => {}
                Ok(Ok(Err((e, _)))) => return Err(unavailable("publishing applied events", e)),
                _ => return Err(Error::unavailable("publishing applied events timed out")),
            }
        }
        Ok(())
    }

    async fn subscribe(&self) -> Result<Box<dyn AppliedStream>> {
        let group = format!("{}.live.{}.{}", self.topic, std::process::id(), now_ms());
        let consumer: BaseConsumer = self
            .config
            .client()
            .set("group.id", &group)
            .set("enable.auto.commit", "false")
            .set("auto.offset.reset", "latest")
            .set("session.timeout.ms", "10000")
            .create()
            .map_err(|e| unavailable("creating the applied feed's consumer", e))?;
        consumer
            .subscribe(&[&self.topic])
            .map_err(|e| unavailable("subscribing to the applied feed", e))?;
        Ok(Box::new(Subscriber(Arc::new(consumer))))
    }
}

struct Subscriber(Arc<BaseConsumer>);

#[async_trait]
impl AppliedStream for Subscriber {
    async fn next(&mut self) -> Applied {
        loop {
            let consumer = self.0.clone();
            let read = tokio::task::spawn_blocking(move || {
                let mut out = Vec::new();
                let mut wait = POLL;
                while out.len() < BATCH {
                    match consumer.poll(wait) {
                        Some(Ok(m)) => match m.payload().map(Event::decode) {
                            Some(Ok(e)) => out.push(e),
                            _ => {
                                metrics().log_undecodable.inc();
                            }
                        },
                        Some(Err(e)) => return Err(e),
                        None => break,
                    }
                    wait = Duration::ZERO;
                }
                Ok(out)
            })
            .await;
            match read {
                Ok(Ok(events)) if events.is_empty() => continue,
                Ok(Ok(events)) => return Applied::Events(events),
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "reading the applied feed failed");
                    tokio::time::sleep(POLL).await;
                    return Applied::Lost;
                }
                Err(e) => {
                    let e = Error::internal(format!("applied feed task: {e}"));
                    tracing::warn!(error = %e.chain(), "reading the applied feed failed");
                    return Applied::Lost;
                }
            }
        }
    }
}
