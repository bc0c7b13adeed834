//! Live timelines over REST (Server-Sent Events, [`rest`]) and gRPC (server
//! streaming, [`grpc`]): both open a `socialite_core::live::stream::LiveStream`
//! and forward its events until the client leaves or the stream ends.

mod grpc;
mod rest;

pub use grpc::{grpc_service, GRPC_NAME};
pub use rest::{rest_router, rest_routes};

use socialite_core::live::hub::LiveHub;
use socialite_core::reads::Reads;
use std::sync::Arc;

/// What the live routes need: the reads (checks and resumes) and the hub.
#[derive(Clone)]
pub struct Live {
    pub reads: Arc<Reads>,
    pub hub: Arc<LiveHub>,
}
