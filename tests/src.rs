//! End-to-end tests of Socialite live in `tests/`: they start the all-in-one
//! app on port 0 and drive it over REST and gRPC. This library is empty.
