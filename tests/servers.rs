//! The Kafka and MongoDB servers that production-backend tests run against,
//! named by `SOCIALITE_TEST_KAFKA` and `SOCIALITE_TEST_MONGODB` (host:port).
//! `SOCIALITE_TEST_TANSU` names the tansu binary for a test that runs a broker
//! of its own. Without them those tests say so on the terminal and pass, unless
//! `SOCIALITE_REQUIRE_SERVERS=1` (as in CI) makes their absence a failure.

use std::io::Write;
use std::sync::atomic::{AtomicU32, Ordering};

pub struct Servers {
    pub kafka: String,
    pub mongodb: String,
    /// The tansu binary (`SOCIALITE_TEST_TANSU`), for tests that stop and
    /// start a broker of their own.
    pub tansu: Option<String>,
}

impl Servers {
    /// The servers, or `None` after printing why the test is skipped.
    pub fn from_env(test: &str) -> Option<Servers> {
        let kafka = std::env::var("SOCIALITE_TEST_KAFKA").ok();
        let mongodb = std::env::var("SOCIALITE_TEST_MONGODB").ok();
        match (kafka, mongodb) {
            (Some(kafka), Some(mongodb)) => Some(Servers {
                kafka,
                mongodb,
                tansu: std::env::var("SOCIALITE_TEST_TANSU").ok(),
            }),
            _ => {
                if std::env::var("SOCIALITE_REQUIRE_SERVERS").as_deref() == Ok("1") {
                    panic!("{test}: SOCIALITE_REQUIRE_SERVERS=1 but SOCIALITE_TEST_KAFKA or SOCIALITE_TEST_MONGODB is unset");
                }
                // Straight to the terminal: the test harness captures print!.
                let _ = writeln!(
                    std::io::stderr(),
                    "SKIPPED {test}: set SOCIALITE_TEST_KAFKA and SOCIALITE_TEST_MONGODB (host:port) to run it"
                );
                None
            }
        }
    }

    /// A name no other test or run uses, for a database or topic prefix.
    pub fn unique(what: &str) -> String {
        static N: AtomicU32 = AtomicU32::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        format!(
            "{what}_{}_{}_{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed),
            nanos % 1_000_000_000
        )
    }

    /// A MongoDB URI for a fresh database.
    pub fn mongodb_uri(&self, db: &str) -> String {
        format!("mongodb://{}/{db}?directConnection=true", self.mongodb)
    }

    /// A Kafka URI for fresh topics.
    pub fn kafka_uri(&self, prefix: &str, partitions: u32) -> String {
        format!(
            "kafka://{}?partitions={partitions}&topic_prefix={prefix}",
            self.kafka
        )
    }
}
