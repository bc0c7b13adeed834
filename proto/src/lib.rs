//! Protobuf messages of Socialite, generated at build time from `proto/`:
//! the events on the log (`events.proto`) and the gRPC API (`api.proto`).
//! The schema only: it must not know the domain types that map onto it.

/// The encoded descriptors of every message and service, for gRPC server
/// reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = tonic::include_file_descriptor_set!("socialite_descriptor");

#[allow(clippy::all, missing_docs)]
pub mod v1 {
    tonic::include_proto!("socialite.v1");
}
