//! The ports' conformance suite (`socialite_testkit::conformance`) on every
//! backend: the embedded default, and MongoDB with Kafka (see
//! `common/servers.rs`), and a part of it through TLS. The toy backend
//! runs it in `toy_backend.rs`.

mod common;

socialite_testkit::conformance_suite!(embedded, crate::common::ports::embedded);
socialite_testkit::conformance_suite!(mongodb_kafka, crate::common::ports::mongodb_kafka);

/// A part of the suite through TLS with client certificates (stunnel in
/// front of the stand-ins): the ports that write, read and move events.
mod mongodb_kafka_tls {
    socialite_testkit::conformance_suite!(@tests crate::common::ports::mongodb_kafka_tls;
        users_posts_and_outbox, follow_graph, event_log, timeline_caches_linked);
}
