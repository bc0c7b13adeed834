//! Chooses and opens the backends by URI, from one registry of schemes:
//! `--store` is `embedded://[PATH]` (the default; the path defaults to
//! `--data-dir`) or `mongodb://...`, and `--event-log` is
//! `embedded://[PATH]` or `kafka://host:port[,...]`. Each backend opens
//! itself from its URI, its feed model's timelines included. MongoDB and
//! Kafka are cargo features (`mongodb`, `kafka`); a build without one
//! refuses its URIs with a message that says so.

use socialite_core::backends::{Backends, Parts};
use socialite_core::error::{Error, Result};
use socialite_core::live::in_process::InProcessFeed;
use socialite_core::ports::{
    Accounts, AppliedFeed, Backup, ContentStore, EventLog, GraphStore, Outbox, RankSnapshots,
    Rewind, TimelineStore, Transfer, Webhooks,
};
use socialite_core::redact;
use socialite_embedded::backup::EmbeddedBackup;
use socialite_embedded::{EmbeddedConfig, EmbeddedLog, EmbeddedStore};
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
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

/// What a store URI opens: every port but the log's.
struct Stores {
    content: Arc<dyn ContentStore>,
    graph: Arc<dyn GraphStore>,
    outbox: Arc<dyn Outbox>,
    accounts: Arc<dyn Accounts>,
    timelines: Arc<dyn TimelineStore>,
    transfer: Arc<dyn Transfer>,
    webhooks: Arc<dyn Webhooks>,
    /// Ranked orders' snapshots, where processes share them.
    snapshots: Option<Arc<dyn RankSnapshots>>,
    /// The embedded store, for backups while it serves.
    embedded: Option<Arc<EmbeddedStore>>,
}

/// What a log URI opens: the log, its rewind where it has one, and the
/// feed of what fanout applied, which goes with the log (in process beside
/// the embedded one, a topic beside Kafka's).
struct Log {
    log: Arc<dyn EventLog>,
    rewind: Option<Arc<dyn Rewind>>,
    applied: Arc<dyn AppliedFeed>,
    /// The embedded log, for backups while it serves.
    embedded: Option<Arc<EmbeddedLog>>,
}

impl Stores {
    /// One store that serves every port but the timelines'.
    fn of<S>(s: Arc<S>, timelines: Arc<dyn TimelineStore>) -> Stores
    where
        S: ContentStore + GraphStore + Outbox + Accounts + Transfer + Webhooks,
    {
        Stores {
            content: s.clone(),
            graph: s.clone(),
            outbox: s.clone(),
            accounts: s.clone(),
            webhooks: s.clone(),
            transfer: s,
            timelines,
            snapshots: None,
            embedded: None,
        }
    }
}

type Opening<T> = Pin<Box<dyn Future<Output = Result<T>> + Send>>;

/// A backend, known by the scheme its URIs start with.
struct Scheme<T> {
    prefix: &'static str,
    /// The shape of its URIs, for the refusal of a URI no scheme takes.
    shape: &'static str,
    /// Opens it from the whole URI, given the embedded default's settings
    /// (its data directory, and the feed model every backend serves).
    open: fn(String, EmbeddedConfig) -> Opening<T>,
}

/// Every store backend.
const STORES: [Scheme<Stores>; 3] = [
    Scheme {
        prefix: "embedded://",
        shape: "embedded://[PATH]",
        open: embedded_store,
    },
    Scheme {
        prefix: "mongodb://",
        shape: "mongodb://HOST[:PORT][/DATABASE][?OPTIONS]",
        open: mongodb_store,
    },
    Scheme {
        prefix: "mongodb+srv://",
        shape: "mongodb+srv://[USER:PASSWORD@]NAME[/DATABASE][?OPTIONS]",
        open: mongodb_store,
    },
];

/// Every event log backend.
const LOGS: [Scheme<Log>; 2] = [
    Scheme {
        prefix: "embedded://",
        shape: "embedded://[PATH]",
        open: embedded_log,
    },
    Scheme {
        prefix: "kafka://",
        shape: "kafka://HOST:PORT[,HOST:PORT][?partitions=N&replication=N&topic_prefix=P]",
        open: kafka_log,
    },
];

/// The scheme that takes `uri`, or the refusal `code` listing those there are.
fn scheme_of<'a, T>(
    schemes: &'a [Scheme<T>],
    uri: &str,
    code: &'static str,
) -> Result<&'a Scheme<T>> {
    if let Some(s) = schemes.iter().find(|s| uri.starts_with(s.prefix)) {
        return Ok(s);
    }
    let shapes: Vec<&str> = schemes
        .iter()
        .map(|s| s.shape)
        .filter(|s| !s.is_empty())
        .collect();
    Err(Error::invalid(
        code,
        format!("{}: expected {}", redact::uri(uri), shapes.join(" or ")),
    ))
}

/// `embedded://` alone keeps the data directory; `embedded://PATH` names one.
fn embedded_at(mut base: EmbeddedConfig, uri: &str) -> EmbeddedConfig {
    let path = uri.trim_start_matches("embedded://");
    if !path.is_empty() {
        base.data_dir = PathBuf::from(path);
    }
    base
}

fn embedded_store(uri: String, base: EmbeddedConfig) -> Opening<Stores> {
    Box::pin(async move {
        let e = embedded_at(base, &uri);
        let s = e.open_store()?;
        let embedded = Some(s.clone());
        Ok(Stores {
            embedded,
            ..Stores::of(s, e.memory_timelines())
        })
    })
}

fn embedded_log(uri: String, base: EmbeddedConfig) -> Opening<Log> {
    Box::pin(async move {
        let l = embedded_at(base, &uri).open_log()?;
        Ok(Log {
            log: l.clone(),
            rewind: Some(l.clone()),
            applied: Arc::new(InProcessFeed::new()),
            embedded: Some(l),
        })
    })
}

#[cfg(feature = "mongodb")]
fn mongodb_store(uri: String, base: EmbeddedConfig) -> Opening<Stores> {
    Box::pin(async move {
        let (s, timelines) = socialite_mongo::open(&uri, &base.feed).await?;
        // Several processes serve the same readers: their ranked orders'
        // snapshots are shared through the store.
        Ok(Stores {
            snapshots: Some(s.clone()),
            ..Stores::of(s, timelines)
        })
    })
}

#[cfg(not(feature = "mongodb"))]
fn mongodb_store(uri: String, _: EmbeddedConfig) -> Opening<Stores> {
    Box::pin(async move { Err(left_out("invalid_store_uri", &uri, "mongodb")) })
}

#[cfg(feature = "kafka")]
fn kafka_log(uri: String, _: EmbeddedConfig) -> Opening<Log> {
    use socialite_kafka::{KafkaApplied, KafkaConfig, KafkaLog};
    Box::pin(async move {
        let k = KafkaConfig::from_uri(&uri)?;
        let applied = Arc::new(KafkaApplied::open(&k).await?);
        Ok(Log {
            log: Arc::new(KafkaLog::open(k).await?),
            rewind: None,
            applied,
            embedded: None,
        })
    })
}

#[cfg(not(feature = "kafka"))]
fn kafka_log(uri: String, _: EmbeddedConfig) -> Opening<Log> {
    Box::pin(async move { Err(left_out("invalid_log_uri", &uri, "kafka")) })
}

/// The refusal of a URI whose backend this build leaves out.
#[allow(dead_code)] // unused when every backend is built in
fn left_out(code: &'static str, uri: &str, feature: &str) -> Error {
    Error::invalid(
        code,
        format!("{}: this build of Socialite leaves out {feature}; build with the `{feature}` cargo feature", redact::uri(uri)),
    )
}

/// Opens only the store `uri` names, metered, for moving its data (export,
/// import, migration).
pub async fn open_transfer(uri: &str, embedded: &EmbeddedConfig) -> Result<Arc<dyn Transfer>> {
    let scheme = scheme_of(&STORES, uri, "invalid_store_uri")?;
    let stores = (scheme.open)(uri.to_owned(), embedded.clone()).await?;
    Ok(Arc::new(socialite_core::ports::Metered(stores.transfer)))
}

/// Opens the backends the URIs name, metered, with topics and indexes created.
pub async fn open_backends(config: &BackendConfig) -> Result<Backends> {
    Ok(open_keeping_embedded(config).await?.0)
}

/// The embedded store and log among the backends, where they are.
pub type EmbeddedParts = (Option<Arc<EmbeddedStore>>, Option<Arc<EmbeddedLog>>);

/// [`open_backends`], and the embedded store and log among them (a
/// migration reads a backup's log directly).
pub async fn open_keeping_embedded(config: &BackendConfig) -> Result<(Backends, EmbeddedParts)> {
    let feed = config.embedded.feed;
    feed.validate()?;
    let store = scheme_of(&STORES, &config.store, "invalid_store_uri")?;
    let log = scheme_of(&LOGS, &config.event_log, "invalid_log_uri")?;
    let stores = (store.open)(config.store.clone(), config.embedded.clone()).await?;
    let log = (log.open)(config.event_log.clone(), config.embedded.clone()).await?;
    let embedded = (stores.embedded, log.embedded);
    let backup: Option<Arc<dyn Backup>> = match embedded.clone() {
        (None, None) => None,
        (store, log) => Some(Arc::new(EmbeddedBackup {
            store,
            log,
            root: config.embedded.data_dir.join("backups"),
        })),
    };
    let parts = Parts {
        backup,
        content: stores.content,
        graph: stores.graph,
        outbox: stores.outbox,
        accounts: stores.accounts,
        timelines: stores.timelines,
        transfer: stores.transfer,
        webhooks: stores.webhooks,
        snapshots: stores.snapshots,
        log: log.log,
        rewind: log.rewind,
        applied: log.applied,
    };
    Ok((Backends::assemble(parts, feed), embedded))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A `mongodb+srv://` name is looked up in DNS at start; one that does
    /// not resolve stops the start with the URI (its password masked).
    #[cfg(feature = "mongodb")]
    #[tokio::test]
    async fn an_srv_name_that_does_not_resolve_is_refused_naming_it() {
        let uri = "mongodb+srv://app:pw@cluster0.nosuch.invalid/feed";
        let e = open_transfer(uri, &base()).await.err().expect("refused");
        assert_eq!(e.code(), "invalid_store_uri");
        assert!(
            e.message()
                .starts_with("mongodb+srv://app:***@cluster0.nosuch.invalid/feed: "),
            "{e}"
        );
        assert!(!e.chain().contains("pw@"), "{e}");
    }

    fn base() -> EmbeddedConfig {
        EmbeddedConfig {
            data_dir: "./data".into(),
            log_retention: 10,
            feed: Default::default(),
            bulk: false,
        }
    }

    #[test]
    fn uris_choose_the_backends() {
        let store = |uri| scheme_of(&STORES, uri, "invalid_store_uri").map(|s| s.prefix);
        let log = |uri| scheme_of(&LOGS, uri, "invalid_log_uri").map(|s| s.prefix);
        assert_eq!(store("embedded://").unwrap(), "embedded://");
        assert_eq!(store("mongodb://h:27017/db").unwrap(), "mongodb://");
        assert_eq!(log("kafka://h:9092").unwrap(), "kafka://");
        assert_eq!(
            embedded_at(base(), "embedded://").data_dir,
            PathBuf::from("./data")
        );
        assert_eq!(
            embedded_at(base(), "embedded:///srv/s").data_dir,
            PathBuf::from("/srv/s")
        );
        let refused = store("postgres://h").err().unwrap();
        assert_eq!(refused.code(), "invalid_store_uri");
        assert!(
            refused
                .message()
                .contains("embedded://[PATH] or mongodb://"),
            "{refused}"
        );
        assert_eq!(log("nats://h:1").err().unwrap().code(), "invalid_log_uri");
    }

    #[tokio::test]
    async fn malformed_or_left_out_uris_are_refused_before_connecting() {
        for (store, log, code) in [
            ("mongodb+srv://cluster", "embedded://", "invalid_store_uri"),
            ("embedded://", "kafka://nohostport", "invalid_log_uri"),
        ] {
            let dir = tempfile::tempdir().unwrap();
            let mut config = BackendConfig::embedded(EmbeddedConfig {
                data_dir: dir.path().into(),
                ..base()
            });
            (config.store, config.event_log) = (store.into(), log.into());
            let err = open_backends(&config).await.err().unwrap();
            assert_eq!(err.code(), code, "{store} {log}");
        }
    }
}
