//! TLS to Kafka and MongoDB, through stunnel in front of the stand-ins
//! (`socialite_e2e::tls`): the stores and the log open through TLS with a
//! client certificate; a CA that did not sign the server's certificate, a
//! certificate for another host, a missing client certificate and a login
//! the broker refuses each stop the opening within seconds, with a message
//! naming the setting to change. The shared conformance suite over TLS is
//! in `conformance.rs`, the multi-process test over TLS in `production.rs`.

mod common;

use common::servers::Servers;
use socialite_core::error::Error;
use socialite_e2e::tls::{mongodb_tls_uri, TlsServers};
use socialite_embedded::EmbeddedConfig;
use socialite_runtime::backends::{open_backends, BackendConfig};
use std::time::{Duration, Instant};

/// Opens the backends of `store` and `log`.
async fn try_open(store: &str, log: &str) -> Result<(), Error> {
    let dir = tempfile::tempdir().unwrap();
    let mut config = BackendConfig::embedded(EmbeddedConfig {
        data_dir: dir.path().into(),
        log_retention: 1_000_000,
        feed: Default::default(),
        bulk: false,
    });
    config.store = store.to_owned();
    config.event_log = log.to_owned();
    open_backends(&config).await.map(drop)
}

async fn open(store: &str, log: &str) {
    try_open(store, log).await.map_err(|e| e.chain()).unwrap();
}

/// The refusal to open `store` and `log`, and how long it took.
async fn refusal(store: &str, log: &str) -> (Error, Duration) {
    let started = Instant::now();
    let Err(e) = try_open(store, log).await else {
        panic!("{store} with {log} opened");
    };
    (e, started.elapsed())
}

fn kafka(host: &str, ca: &std::path::Path, tls: &TlsServers, extra: &str) -> String {
    format!(
        "kafka://{host}?topic_prefix={}&tls_ca_file={}&tls_cert_file={}&tls_key_file={}{extra}",
        Servers::unique("tls"),
        ca.display(),
        tls.client_cert.display(),
        tls.client_key.display()
    )
}

fn assert_names(e: &Error, took: Duration, words: &[&str]) {
    let text = e.chain();
    for w in words {
        assert!(text.contains(w), "`{w}` is not in: {text}");
    }
    // A start-up check, not a retry loop: the first contact's limit is 10 s.
    assert!(took < Duration::from_secs(25), "took {took:?}: {text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kafka_refusals_name_the_setting() {
    let Some(tls) = TlsServers::start("kafka_refusals_name_the_setting") else {
        return;
    };
    let store = "embedded://";
    let (e, took) = refusal(store, &kafka(&tls.kafka, &tls.other_ca, &tls, "")).await;
    assert_names(&e, took, &["Kafka", "tls_ca_file", "other-ca.pem"]);

    // OpenSSL does not tell a wrong host from a wrong CA; the message
    // names both settings.
    let (e, took) = refusal(store, &kafka(&tls.kafka_elsewhere, &tls.ca, &tls, "")).await;
    assert_names(&e, took, &["Kafka", "tls_verify_hostname"]);
    // Without the check, the same endpoint is reached.
    let unchecked = kafka(
        &tls.kafka_elsewhere,
        &tls.ca,
        &tls,
        "&tls_verify_hostname=false",
    );
    open(store, &unchecked).await;

    let no_client_cert = format!("kafka://{}?tls_ca_file={}", tls.kafka, tls.ca.display());
    let (e, took) = refusal(store, &no_client_cert).await;
    assert_names(&e, took, &["Kafka", "TLS"]);

    // The stand-in broker has no SASL: a login is refused, and the
    // password is not in the message.
    let dir = tempfile::tempdir().unwrap();
    let password = dir.path().join("password");
    std::fs::write(&password, "hunter2-do-not-print\n").unwrap();
    let sasl = format!(
        "&sasl_mechanism=SCRAM-SHA-256&sasl_username=app&sasl_password_file={}",
        password.display()
    );
    let (e, took) = refusal(store, &kafka(&tls.kafka, &tls.ca, &tls, &sasl)).await;
    assert_names(&e, took, &["Kafka", "SASL", "sasl_username"]);
    assert!(!e.chain().contains("hunter2"), "{}", e.chain());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mongodb_refusals_name_the_setting() {
    let Some(tls) = TlsServers::start("mongodb_refusals_name_the_setting") else {
        return;
    };
    let db = Servers::unique("tls");
    let log = "embedded://";
    let wrong_ca = mongodb_tls_uri(&tls.mongodb, &db, &tls.other_ca, &tls.client_pem);
    let elsewhere = mongodb_tls_uri(&tls.mongodb_elsewhere, &db, &tls.ca, &tls.client_pem);
    let no_client_cert = format!(
        "mongodb://{}/{db}?directConnection=true&tls=true&tlsCAFile={}",
        tls.mongodb,
        tls.ca.display()
    );
    // The three at once: the driver gives up on a server whose handshake
    // fails only when its first contact's limit (10 s) runs out.
    let (wrong_ca, elsewhere, no_client_cert) = tokio::join!(
        refusal(&wrong_ca, log),
        refusal(&elsewhere, log),
        refusal(&no_client_cert, log)
    );
    let (e, took) = wrong_ca;
    assert_names(&e, took, &["MongoDB", "tlsCAFile", "not signed"]);
    let (e, took) = elsewhere;
    assert_names(&e, took, &["MongoDB", "does not name the host"]);
    let (e, took) = no_client_cert;
    assert_names(&e, took, &["MongoDB"]);

    // Less than majority writes, or no retryable writes, is refused.
    for weak in ["w=1", "retryWrites=false"] {
        let (e, _) = refusal(&format!("{}&{weak}", tls.mongodb_plain_uri(&db)), log).await;
        assert_names(&e, Duration::ZERO, &["majority"]);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stores_and_log_open_through_tls() {
    let Some(tls) = TlsServers::start("stores_and_log_open_through_tls") else {
        return;
    };
    let store = tls.mongodb_uri(&Servers::unique("tls"));
    open(&store, &tls.kafka_uri(&Servers::unique("tls"), 2)).await;
}
