//! The firehose over REST (`GET /firehose`, Server-Sent Events) and gRPC
//! (`Firehose.Subscribe`), sharing [`state`]: the connection caps and the
//! loop that forwards a reader's acts until its client leaves, stalls, its
//! key stops holding or the connection lives its longest.

mod grpc;
mod rest;
pub mod state;

pub use grpc::{grpc_service, GRPC_NAME};
pub use rest::{rest_router, rest_routes, FirehoseEventJson};
pub use state::Firehose;
