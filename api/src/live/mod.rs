//! Live timelines over REST (Server-Sent Events, [`rest`]) and gRPC (server
//! streaming, [`grpc`]): both open a `socialite_core::live::stream::LiveStream`
//! and forward its events until the client leaves or the stream ends.

mod grpc;
mod rest;
mod state;

pub use grpc::{grpc_service, GRPC_NAME};
pub use rest::{rest_router, rest_routes};
pub use state::{Live, StreamSlots};
