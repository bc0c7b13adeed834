//! Sending one request to an endpoint: a port, so core knows no HTTP
//! client. The runtime's follows no redirect, refuses internal addresses
//! on every connection (after name resolution), times out, and reads at
//! most [`super::MAX_ANSWER_BYTES`] of an answer.

use async_trait::async_trait;
use std::time::Duration;

/// A signed POST.
#[derive(Debug, Clone)]
pub struct Request {
    pub url: String,
    pub headers: Vec<(&'static str, String)>,
    pub body: Vec<u8>,
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The endpoint answered: its status and any `Retry-After`.
    Status {
        status: u16,
        retry_after: Option<Duration>,
    },
    /// No answer: why (a timeout, a refused connection or address).
    Failed(String),
}

#[async_trait]
pub trait Outbound: Send + Sync + 'static {
    async fn post(&self, request: Request) -> Answer;
}
