//! How Kafka's errors reach the ports: every client error is `Unavailable`
//! (a broker that does not answer, a rebalance, a timeout), so callers retry.

use rdkafka::error::KafkaError;
use socialite_core::error::{Error, ErrorKind};

pub(crate) fn unavailable(what: &str, e: KafkaError) -> Error {
    Error::backend(ErrorKind::Unavailable, what, e)
}
