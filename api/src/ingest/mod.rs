//! Ingestion over REST and gRPC: users, follows, posts, likes, reposts and markers, mapped onto
//! `socialite_core::ingest::Ingest`.

mod bulk;
mod grpc;
mod likes;
mod lists;
mod markers;
mod moderation;
mod preferences;
mod reposts;
mod rest;

pub use grpc::{grpc_service, IngestGrpc, GRPC_NAME};
pub use rest::{rest_router, rest_routes};
