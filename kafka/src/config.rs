//! The `kafka://` URI: brokers, topics and partitioning.

use crate::security::{KafkaSecurity, Options, SASL_PASSWORD_ENV};
use rdkafka::config::ClientConfig;
use socialite_core::error::{Error, Result};

/// Where the log lives on Kafka and how its topics are laid out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaConfig {
    /// `host:port[,host:port...]`.
    pub brokers: String,
    /// Topics are `<prefix>.posts` and `<prefix>.graph`.
    pub topic_prefix: String,
    /// Partitions of each topic when it is created at start-up.
    pub partitions: i32,
    /// Replication factor of each topic when it is created.
    pub replication: i32,
    /// When set, a fanout worker that sees a partition of its group's topics
    /// with events waiting, not assigned to it and not committed for this
    /// long since it was last given its partitions, leaves the group and
    /// joins again (never while the group rebalances). Off by default: Kafka moves a
    /// dead member's partitions by itself. For coordinators that keep a dead
    /// member's assignment (tansu 0.6 does), this recovers them.
    pub stale_partition_rejoin: Option<std::time::Duration>,
    /// How long the group coordinator waits without a heartbeat from a
    /// fanout worker before it counts the worker gone and moves its
    /// partitions (Kafka's `session.timeout.ms`; 10 s unless
    /// `session_timeout_ms` says otherwise). Shorter moves a dead worker's
    /// partitions sooner; too short for the brokers' network counts a live
    /// worker gone.
    pub session_timeout: std::time::Duration,
    /// How long the producer keeps trying to deliver an event before the
    /// append fails, and the outbox keeps the event for the relay to try
    /// again (librdkafka's `message.timeout.ms`; 15 s unless
    /// `delivery_timeout_ms` says otherwise).
    pub delivery_timeout: std::time::Duration,
    /// TLS and SASL (see [`crate::security`]).
    pub security: KafkaSecurity,
}

/// Kafka's own default is 45 s; a dead fanout worker's partitions wait
/// that long.
pub const DEFAULT_SESSION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// See [`KafkaConfig::delivery_timeout`].
pub const DEFAULT_DELIVERY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

impl KafkaConfig {
    /// Parses `kafka://host:port[,host:port]?partitions=N&replication=N&topic_prefix=P`
    /// (and `stale_partition_rejoin_ms=N`, `session_timeout_ms=N` and
    /// `delivery_timeout_ms=N`, see the fields, and the TLS and
    /// SASL options of [`crate::security`]).
    pub fn from_uri(uri: &str) -> Result<KafkaConfig> {
        let bad = |why: &str| {
            Error::invalid(
                "invalid_log_uri",
                format!("{}: {why}", socialite_core::redact::uri(uri)),
            )
        };
        let rest = uri
            .strip_prefix("kafka://")
            .ok_or_else(|| bad("expected kafka://host:port"))?;
        let (brokers, query) = rest.split_once('?').unwrap_or((rest, ""));
        let brokers = brokers.trim_end_matches('/');
        if brokers.is_empty() || brokers.split(',').any(|b| !b.contains(':')) {
            return Err(bad("every broker needs host:port"));
        }
        let mut config = KafkaConfig {
            brokers: brokers.to_owned(),
            topic_prefix: "socialite".into(),
            partitions: 8,
            replication: 1,
            stale_partition_rejoin: None,
            session_timeout: DEFAULT_SESSION_TIMEOUT,
            delivery_timeout: DEFAULT_DELIVERY_TIMEOUT,
            security: KafkaSecurity::default(),
        };
        let mut security = Options::default();
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair
                .split_once('=')
                .ok_or_else(|| bad("query parameters are name=value"))?;
            let number = |v: &str| -> Result<i32> {
                v.parse::<i32>()
                    .ok()
                    .filter(|n| (1..=10_000).contains(n))
                    .ok_or_else(|| bad(&format!("{k} must be a number from 1 to 10000")))
            };
            match k {
                "partitions" => config.partitions = number(v)?,
                "replication" => config.replication = number(v)?,
                "topic_prefix" if !v.is_empty() && v.chars().all(topic_char) => {
                    config.topic_prefix = v.to_owned()
                }
                "topic_prefix" => return Err(bad("topic_prefix takes [A-Za-z0-9._-]")),
                "stale_partition_rejoin_ms" => {
                    let ms = v
                        .parse::<u64>()
                        .ok()
                        .filter(|ms| (1000..=3_600_000).contains(ms));
                    let ms = ms.ok_or_else(|| {
                        bad("stale_partition_rejoin_ms must be from 1000 to 3600000")
                    })?;
                    config.stale_partition_rejoin = Some(std::time::Duration::from_millis(ms));
                }
                "session_timeout_ms" => {
                    let ms = v
                        .parse::<u64>()
                        .ok()
                        .filter(|ms| (3000..=300_000).contains(ms));
                    let ms =
                        ms.ok_or_else(|| bad("session_timeout_ms must be from 3000 to 300000"))?;
                    config.session_timeout = std::time::Duration::from_millis(ms);
                }
                "delivery_timeout_ms" => {
                    let ms = v
                        .parse::<u64>()
                        .ok()
                        .filter(|ms| (1000..=300_000).contains(ms));
                    let ms =
                        ms.ok_or_else(|| bad("delivery_timeout_ms must be from 1000 to 300000"))?;
                    config.delivery_timeout = std::time::Duration::from_millis(ms);
                }
                other if security.take(other, v)? => {}
                other => return Err(bad(&format!("unknown parameter `{other}`"))),
            }
        }
        config.security = security.finish(std::env::var(SASL_PASSWORD_ENV).ok())?;
        Ok(config)
    }

    /// The settings every client of the brokers starts from: where they
    /// are and how to reach them (TLS, SASL).
    pub(crate) fn client(&self) -> ClientConfig {
        let mut client = ClientConfig::new();
        client.set("bootstrap.servers", &self.brokers);
        // librdkafka waits up to 10 s between tries to reach a broker that
        // is down, so a broker back from a restart would be seen (and the
        // process ready again) up to 10 s late; a try a second at most.
        client.set("reconnect.backoff.max.ms", "1000");
        self.security.apply(&mut client);
        client
    }

    /// The group settings of a consumer that joins with the others: the
    /// session timeout, and heartbeats a third of it apart (at most 1 s).
    pub(crate) fn group_session(&self, client: &mut ClientConfig) {
        let session = self.session_timeout.as_millis();
        client
            .set("session.timeout.ms", session.to_string())
            .set("heartbeat.interval.ms", (session / 3).min(1000).to_string());
    }

    /// Post events, keyed by author.
    pub fn posts_topic(&self) -> String {
        format!("{}.posts", self.topic_prefix)
    }

    /// Follow, unfollow and account-removal events, keyed by the followed account.
    pub fn graph_topic(&self) -> String {
        format!("{}.graph", self.topic_prefix)
    }
}

impl KafkaConfig {
    /// What fanout workers applied, read by every process that pushes live
    /// timelines.
    pub fn applied_topic(&self) -> String {
        format!("{}.applied", self.topic_prefix)
    }
}

fn topic_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_brokers_and_parameters() {
        let c =
            KafkaConfig::from_uri("kafka://a:9092,b:9093?partitions=3&topic_prefix=t1").unwrap();
        assert_eq!(c.brokers, "a:9092,b:9093");
        assert_eq!(c.partitions, 3);
        assert_eq!(c.posts_topic(), "t1.posts");
        assert_eq!(c.graph_topic(), "t1.graph");
        let plain = KafkaConfig::from_uri("kafka://h:1").unwrap();
        assert_eq!((plain.partitions, plain.stale_partition_rejoin), (8, None));
        assert_eq!(plain.session_timeout, DEFAULT_SESSION_TIMEOUT);
        let c = KafkaConfig::from_uri("kafka://h:1?session_timeout_ms=4000").unwrap();
        assert_eq!(c.session_timeout, std::time::Duration::from_secs(4));
        assert_eq!(plain.delivery_timeout, DEFAULT_DELIVERY_TIMEOUT);
        let c = KafkaConfig::from_uri("kafka://h:1?delivery_timeout_ms=3000").unwrap();
        assert_eq!(c.delivery_timeout, std::time::Duration::from_secs(3));
        let c = KafkaConfig::from_uri("kafka://h:1?stale_partition_rejoin_ms=5000").unwrap();
        assert_eq!(
            c.stale_partition_rejoin,
            Some(std::time::Duration::from_secs(5))
        );
    }

    #[test]
    fn rejects_what_it_cannot_use() {
        for uri in [
            "kafka://",
            "kafka://host",
            "http://h:1",
            "kafka://h:1?partitions=0",
            "kafka://h:1?partitions=x",
            "kafka://h:1?colour=red",
            "kafka://h:1?topic_prefix=a/b",
            "kafka://h:1?stale_partition_rejoin_ms=5",
            "kafka://h:1?session_timeout_ms=100",
            "kafka://h:1?session_timeout_ms=x",
            "kafka://h:1?delivery_timeout_ms=10",
        ] {
            let e = KafkaConfig::from_uri(uri).unwrap_err();
            assert_eq!(e.code(), "invalid_log_uri", "{uri}");
        }
    }
}
