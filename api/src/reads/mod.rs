//! Reads over REST and gRPC: profiles, the graph, posts, timelines and
//! notifications,
//! mapped onto `socialite_core::reads::Reads`.

mod grpc;
mod notices;
mod ranked;
mod reading;
mod rest;
mod state;

pub use grpc::{grpc_service, ReadsGrpc, GRPC_NAME};
pub use rest::{rest_router, rest_routes};
pub use state::ReadsState;
