//! The first contact with the brokers at start-up. librdkafka retries a
//! refused TLS handshake or SASL login forever and only logs why; a
//! process that starts with a wrong CA or password should instead stop at
//! once and say which setting to change. So before anything else, a client
//! of its own asks for the cluster's metadata and keeps the errors and log
//! lines librdkafka reports meanwhile: if no answer comes within the limit,
//! the first of them explains why.

use crate::config::KafkaConfig;
use rdkafka::client::ClientContext;
use rdkafka::config::RDKafkaLogLevel;
use rdkafka::error::KafkaError;
use rdkafka::producer::{BaseProducer, DeliveryResult, Producer, ProducerContext};
use socialite_core::error::{Error, Result};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long the first metadata request may take before start-up stops.
const FIRST_CONTACT: Duration = Duration::from_secs(10);

/// Keeps the first errors librdkafka reports.
#[derive(Default)]
pub(crate) struct Probe {
    errors: Mutex<Vec<String>>,
}

impl ClientContext for Probe {
    // librdkafka tells why a connection failed in its log lines (called
    // from its own threads); its error callbacks wait for a poll of the
    // main queue, which an admin client does not do.
    fn log(&self, level: RDKafkaLogLevel, facility: &str, message: &str) {
        tracing::debug!(?level, facility, message, "Kafka client at start-up");
        if (level as i32) <= RDKafkaLogLevel::Warning as i32 {
            self.keep(message.to_owned());
        }
    }

    fn error(&self, error: KafkaError, reason: &str) {
        self.keep(format!("{error}: {reason}"));
    }
}

impl ProducerContext for Probe {
    type DeliveryOpaque = ();

    fn delivery(&self, _: &DeliveryResult<'_>, _: ()) {}
}

impl Probe {
    fn keep(&self, error: String) {
        let mut errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        if errors.len() < 16 {
            errors.push(error);
        }
    }

    /// A TLS or SASL refusal seen so far: a broker answered, and said no.
    fn refusal(&self) -> Option<String> {
        let errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        errors
            .iter()
            .find(|e| crate::security::refusal(e).is_some())
            .cloned()
    }

    /// The error that best explains a failure: the first one that is not
    /// the summary "all brokers are down".
    fn cause(&self) -> Option<String> {
        let errors = self.errors.lock().unwrap_or_else(|p| p.into_inner());
        errors
            .iter()
            .find(|e| !e.contains("brokers are down"))
            .or(errors.first())
            .cloned()
    }
}

/// Reaches the brokers, or returns the refusal naming the setting to change.
pub(crate) async fn reach(config: &KafkaConfig) -> Result<()> {
    let client: BaseProducer<Probe> = config
        .client()
        .create_with_context(Probe::default())
        .map_err(|e| refused(config, &e.to_string()))?;
    let reached = tokio::task::spawn_blocking(move || {
        let deadline = Instant::now() + FIRST_CONTACT;
        loop {
            let attempt = client.client().fetch_metadata(None, Duration::from_secs(1));
            // Serves the main queue, where the log lines wait.
            client.poll(Duration::from_millis(50));
            match attempt {
                Ok(_) => return Ok(()),
                Err(e) if Instant::now() >= deadline => {
                    return Err(client.context().cause().unwrap_or_else(|| e.to_string()))
                }
                Err(_) => {}
            }
            // A refused handshake or login will not pass on a retry.
            if let Some(cause) = client.context().refusal() {
                return Err(cause);
            }
        }
    })
    .await
    .map_err(|e| Error::internal(format!("the Kafka probe stopped: {e}")))?;
    reached.map_err(|cause| refused(config, &cause))
}

fn refused(config: &KafkaConfig, reason: &str) -> Error {
    let why = config.security.explain(&config.brokers, reason);
    Error::unavailable(format!("Kafka: {why}"))
}
