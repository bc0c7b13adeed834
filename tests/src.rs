//! End-to-end tests of Socialite live in `tests/`: they start the app or its
//! services and drive them over REST and gRPC. This library holds what those
//! tests and the core crate's backend tests share: where the test servers are, and TLS in front of them.

pub mod servers;
pub mod tls;
