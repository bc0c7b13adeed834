//! REST and gRPC glue shared by Socialite's services: one mapping from
//! [`socialite_core::Error`] to HTTP and gRPC responses, JSON and query
//! extractors whose rejections use the API's error body, the JSON shapes, and
//! serving with a shutdown signal.

pub mod backends;
pub mod config;
pub mod error;
pub mod extract;
pub mod grpc;
pub mod json;
pub mod observe;
pub mod serve;
pub mod telemetry;

pub use error::ApiError;

/// The allocator of every Socialite binary (they all link this crate):
/// mimalloc serves the many small, short-lived objects of the request and
/// fanout paths faster than the system allocator (+23% on cached HTTP reads
/// in an A/B, BENCHMARKS.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Largest request body, REST and gRPC alike. A post of the longest message
/// with the largest data fits with room to spare.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
