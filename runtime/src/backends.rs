//! Chooses and opens the backends by URI: `--store` is `embedded://[PATH]`
//! (the default; the path defaults to `--data-dir`) or `mongodb://...`, and
//! `--event-log` is `embedded://[PATH]` or `kafka://host:port[,...]`. MongoDB
//! and Kafka are cargo features (`mongodb`, `kafka`); a build without one
//! refuses its URIs with a message that says so.

use socialite_core::backends::{Backends, Parts};
use socialite_core::error::{Error, Result};
use socialite_core::live::in_process::InProcessFeed;
use socialite_core::ports::{AppliedFeed, Rewind, TimelineStore};
use socialite_embedded::EmbeddedConfig;
#[cfg(feature = "kafka")]
use socialite_kafka::{KafkaApplied, KafkaConfig, KafkaLog};
use std::path::PathBuf;
use std::sync::Arc;

#[derive(Debug, Clone)]
pub struct BackendConfig {
    /// The embedded default's settings (data directory, retention, feed model).
    pub embedded: EmbeddedConfig,
    /// Users, graph, posts, outbox and timeline caches.
    pub store: String,
    /// The event log.
    pub event_log: String,
}

impl BackendConfig {
    /// Everything embedded, in `embedded.data_dir`.
    pub fn embedded(embedded: EmbeddedConfig) -> BackendConfig {
        BackendConfig {
            embedded,
            store: "embedded://".into(),
            event_log: "embedded://".into(),
        }
    }
}

enum Store {
    Embedded(EmbeddedConfig),
    #[cfg(feature = "mongodb")]
    Mongo(String),
}

enum Log {
    Embedded(EmbeddedConfig),
    #[cfg(feature = "kafka")]
    Kafka(KafkaConfig),
}

/// The refusal of a URI whose backend this build leaves out.
#[allow(dead_code)] // unused when every backend is built in
fn left_out(code: &'static str, uri: &str, feature: &str) -> Error {
    Error::invalid(
        code,
        format!("{uri}: this build of Socialite leaves out {feature}; build with the `{feature}` cargo feature"),
    )
}

/// `embedded://` alone keeps the data directory; `embedded://PATH` names one.
fn embedded_at(base: &EmbeddedConfig, path: &str) -> EmbeddedConfig {
    let mut config = base.clone();
    if !path.is_empty() {
        config.data_dir = PathBuf::from(path);
    }
    config
}

fn parse_store(uri: &str, base: &EmbeddedConfig) -> Result<Store> {
    if let Some(path) = uri.strip_prefix("embedded://") {
        return Ok(Store::Embedded(embedded_at(base, path)));
    }
    if uri.starts_with("mongodb://") {
        #[cfg(feature = "mongodb")]
        return Ok(Store::Mongo(uri.to_owned()));
        #[cfg(not(feature = "mongodb"))]
        return Err(left_out("invalid_store_uri", uri, "mongodb"));
    }
    if uri.starts_with("mongodb+srv://") {
        return Err(Error::invalid(
            "invalid_store_uri",
            format!("{uri}: mongodb+srv:// needs DNS SRV lookups, which this build leaves out; list the hosts in a mongodb:// URI"),
        ));
    }
    Err(Error::invalid(
        "invalid_store_uri",
        format!("{uri}: expected embedded://[PATH] or mongodb://HOST[:PORT][/DATABASE][?OPTIONS]"),
    ))
}

fn parse_log(uri: &str, base: &EmbeddedConfig) -> Result<Log> {
    if let Some(path) = uri.strip_prefix("embedded://") {
        return Ok(Log::Embedded(embedded_at(base, path)));
    }
    if uri.starts_with("kafka://") {
        #[cfg(feature = "kafka")]
        return Ok(Log::Kafka(KafkaConfig::from_uri(uri)?));
        #[cfg(not(feature = "kafka"))]
        return Err(left_out("invalid_log_uri", uri, "kafka"));
    }
    Err(Error::invalid(
        "invalid_log_uri",
        format!("{uri}: expected embedded://[PATH] or kafka://HOST:PORT[,HOST:PORT][?partitions=N&replication=N&topic_prefix=P]"),
    ))
}

/// Opens the backends the URIs name, metered, with topics and indexes created.
pub async fn open_backends(config: &BackendConfig) -> Result<Backends> {
    let feed = config.embedded.feed;
    feed.validate()?;
    let store = parse_store(&config.store, &config.embedded)?;
    let log = parse_log(&config.event_log, &config.embedded)?;
    let (content, graph, outbox, accounts, timelines): (_, _, _, _, Arc<dyn TimelineStore>) =
        match store {
            Store::Embedded(e) => {
                let s = e.open_store()?;
                (
                    s.clone() as _,
                    s.clone() as _,
                    s.clone() as _,
                    s as _,
                    e.memory_timelines(),
                )
            }
            #[cfg(feature = "mongodb")]
            Store::Mongo(uri) => {
                let (s, timelines) = socialite_mongo::open(&uri, &feed).await?;
                (
                    s.clone() as _,
                    s.clone() as _,
                    s.clone() as _,
                    s as _,
                    timelines,
                )
            }
        };
    // The applied feed goes with the log: in process beside the embedded
    // one (one process runs everything), a topic beside Kafka's.
    let (log, rewind, applied): (_, Option<Arc<dyn Rewind>>, Arc<dyn AppliedFeed>) = match log {
        Log::Embedded(e) => {
            let l = e.open_log()?;
            (l.clone() as _, Some(l), Arc::new(InProcessFeed::new()))
        }
        #[cfg(feature = "kafka")]
        Log::Kafka(k) => {
            let applied = Arc::new(KafkaApplied::open(&k).await?);
            (Arc::new(KafkaLog::open(k).await?) as _, None, applied)
        }
    };
    let parts = Parts {
        content,
        graph,
        outbox,
        log,
        timelines,
        rewind,
        applied,
        accounts,
    };
    Ok(Backends::assemble(parts, feed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> EmbeddedConfig {
        EmbeddedConfig {
            data_dir: "./data".into(),
            log_retention: 10,
            feed: Default::default(),
        }
    }

    #[test]
    fn uris_choose_the_backends() {
        assert!(
            matches!(parse_store("embedded://", &base()), Ok(Store::Embedded(e)) if e.data_dir == std::path::Path::new("./data"))
        );
        assert!(
            matches!(parse_store("embedded:///srv/s", &base()), Ok(Store::Embedded(e)) if e.data_dir == std::path::Path::new("/srv/s"))
        );
        #[cfg(feature = "mongodb")]
        assert!(matches!(
            parse_store("mongodb://h:27017/db", &base()),
            Ok(Store::Mongo(_))
        ));
        #[cfg(feature = "kafka")]
        assert!(matches!(
            parse_log("kafka://h:9092", &base()),
            Ok(Log::Kafka(_))
        ));
        for (uri, code) in [
            ("postgres://h", "invalid_store_uri"),
            ("mongodb+srv://cluster", "invalid_store_uri"),
        ] {
            assert_eq!(parse_store(uri, &base()).err().unwrap().code(), code);
        }
        // Malformed, or left out of this build: refused either way.
        assert_eq!(
            parse_log("kafka://nohostport", &base())
                .err()
                .unwrap()
                .code(),
            "invalid_log_uri"
        );
        assert_eq!(
            parse_log("nats://h:1", &base()).err().unwrap().code(),
            "invalid_log_uri"
        );
    }
}
