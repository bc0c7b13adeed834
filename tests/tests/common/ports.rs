//! The backends under test, opened as the shared suites
//! (`socialite_testkit`) ask: the embedded default, MongoDB with Kafka, and
//! MongoDB's stores beside the embedded log (whose rewind the differential
//! test's replays use), and MongoDB with Kafka through TLS.

use super::servers::Servers;
use socialite_core::feed::config::FeedConfig;
use socialite_e2e::tls::TlsServers;
use socialite_embedded::EmbeddedConfig;
use socialite_runtime::backends::{open_backends, BackendConfig};
pub use socialite_testkit::Opened as Under;
use socialite_testkit::{Opened, Opening};

#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Embedded,
    MongoKafka,
    /// MongoDB's stores, the embedded log.
    MongoStores,
    /// MongoDB with Kafka through TLS (`socialite_e2e::tls`).
    MongoKafkaTls,
}

/// Opens the backend with `feed`, in a database and topics of its own
/// named after `tag`; `None` (the test is skipped) when MongoDB and Kafka
/// are asked for and not given.
pub async fn open(kind: Kind, feed: FeedConfig, test: &str, tag: &str) -> Option<Under> {
    let dir = tempfile::tempdir().unwrap();
    let mut config = BackendConfig::embedded(EmbeddedConfig {
        data_dir: dir.path().into(),
        log_retention: 1_000_000,
        feed,
        bulk: false,
    });
    match kind {
        Kind::Embedded => {}
        Kind::MongoKafka => {
            let servers = Servers::from_env(test)?;
            config.store = servers.mongodb_uri(&Servers::unique(tag));
            config.event_log = servers.kafka_uri(&Servers::unique(tag), 3);
        }
        Kind::MongoKafkaTls => {
            let tls = TlsServers::shared(test)?;
            config.store = tls.mongodb_uri(&Servers::unique(tag));
            config.event_log = tls.kafka_uri(&Servers::unique(tag), 3);
        }
        Kind::MongoStores => {
            let servers = Servers::from_env(test)?;
            config.store = servers.mongodb_uri(&Servers::unique(tag));
        }
    }
    let backends = open_backends(&config).await.unwrap();
    Some(Opened::new(backends, dir))
}

/// The embedded default, for the shared suites.
#[allow(dead_code)] // not every test binary runs a shared suite
pub fn embedded(feed: FeedConfig, test: &'static str) -> Opening {
    Box::pin(open(Kind::Embedded, feed, test, "conf"))
}

/// MongoDB with Kafka, for the shared suites.
#[allow(dead_code)]
pub fn mongodb_kafka(feed: FeedConfig, test: &'static str) -> Opening {
    Box::pin(open(Kind::MongoKafka, feed, test, "conf"))
}

/// MongoDB's stores with the embedded log, for the differential test.
#[allow(dead_code)]
pub fn mongodb_stores(feed: FeedConfig, test: &'static str) -> Opening {
    Box::pin(open(Kind::MongoStores, feed, test, "differential"))
}

/// MongoDB with Kafka, both through TLS with a client certificate.
#[allow(dead_code)]
pub fn mongodb_kafka_tls(feed: FeedConfig, test: &'static str) -> Opening {
    Box::pin(open(Kind::MongoKafkaTls, feed, test, "tls"))
}
