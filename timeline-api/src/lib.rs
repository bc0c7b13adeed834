//! The timeline-api: reads of profiles, the graph, posts and home timelines
//! over REST and gRPC. The logic is `socialite_core::reads` and
//! `socialite_core::feed`; this crate is transport and wiring.

mod grpc;
mod rest;

pub use grpc::{grpc_service, GRPC_NAME};
pub use rest::rest_routes;
