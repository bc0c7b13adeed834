//! Reads over REST and gRPC: profiles, the graph, posts and timelines,
//! mapped onto `socialite_core::reads::Reads`.

mod grpc;
mod reading;
mod rest;

pub use grpc::{grpc_service, ReadsGrpc, GRPC_NAME};
pub use rest::{rest_router, rest_routes};
