//! Protobuf messages of Socialite, generated at build time from `proto/`:
//! the events on the log (`events.proto`) and the gRPC API (`api.proto`).
//! The schema only: it must not know the domain types that map onto it.

#[allow(clippy::all, missing_docs)]
pub mod v1 {
    tonic::include_proto!("socialite.v1");
}
