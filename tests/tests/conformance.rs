//! The ports' conformance suite (`socialite_testkit::conformance`) on every
//! backend: the embedded default, and MongoDB with Kafka (see
//! `common/servers.rs`). The toy backend of `memory.rs` runs it too.

mod common;

socialite_testkit::conformance_suite!(embedded, crate::common::ports::embedded);
socialite_testkit::conformance_suite!(mongodb_kafka, crate::common::ports::mongodb_kafka);
