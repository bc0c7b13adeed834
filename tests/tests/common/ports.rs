//! The ports of one backend under test, for the suites that run each check
//! on every backend: the embedded default, and MongoDB with Kafka.

use super::servers::Servers;
use socialite_core::backends::Backends;
use socialite_core::feed::config::FeedConfig;
use socialite_embedded::EmbeddedConfig;
use socialite_runtime::backends::{open_backends, BackendConfig};

/// A backend under test, with what keeps it alive.
pub struct Under {
    pub backends: Backends,
    _dir: tempfile::TempDir,
}

#[derive(Clone, Copy, Debug)]
pub enum Kind {
    Embedded,
    MongoKafka,
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
    });
    if let Kind::MongoKafka = kind {
        let servers = Servers::from_env(test)?;
        config.store = servers.mongodb_uri(&Servers::unique(tag));
        config.event_log = servers.kafka_uri(&Servers::unique(tag), 3);
    }
    let backends = open_backends(&config).await.unwrap();
    Some(Under {
        backends,
        _dir: dir,
    })
}
