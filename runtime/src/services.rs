//! The services a process runs and the settings it runs them with.

use crate::backends::BackendConfig;
use socialite_api::auth::AuthConfig;
use socialite_api::limits::Limits;
use socialite_core::worker::WorkerConfig;
use std::net::SocketAddr;

/// The three services of the pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Service {
    /// Writes over REST and gRPC, and the outbox relay to the log.
    Producer,
    /// A consumer-group member writing log events into stored timelines.
    FanoutWorker,
    /// Reads over REST and gRPC.
    TimelineApi,
}

impl Service {
    pub const ALL: [Service; 3] = [
        Service::Producer,
        Service::FanoutWorker,
        Service::TimelineApi,
    ];

    /// The gRPC services it serves, as health checks name them.
    pub(crate) fn grpc_names(self) -> &'static [&'static str] {
        match self {
            Service::Producer => &[
                socialite_api::ingest::GRPC_NAME,
                socialite_api::webhooks::GRPC_NAME,
            ],
            Service::TimelineApi => &[
                socialite_api::reads::GRPC_NAME,
                socialite_api::live::GRPC_NAME,
                socialite_api::firehose::GRPC_NAME,
            ],
            Service::FanoutWorker => &[],
        }
    }
}

#[derive(Debug, Clone)]
pub struct AppConfig {
    pub storage: BackendConfig,
    pub worker: WorkerConfig,
    /// Producer node id, part of every post id (0..1024).
    pub node_id: u16,
    /// Authentication of the APIs (a process serving none ignores it).
    pub auth: AuthConfig,
    /// Origins allowed by CORS; empty is CORS off.
    pub cors_origins: Vec<String>,
    /// Where `/metrics` and the status page are served apart, open; `None`
    /// serves them on the REST address behind an admin key.
    pub ops_addr: Option<SocketAddr>,
    /// What clients may hold: connections, streams, follows.
    pub limits: Limits,
    /// How ranked home timelines are made.
    pub ranking: socialite_core::reads::ranked::Ranking,
    /// How webhooks are delivered (by the producers).
    pub webhooks: socialite_core::webhooks::WebhookConfig,
}
