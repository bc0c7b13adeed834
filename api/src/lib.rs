//! Socialite's APIs: the REST routes and gRPC services of ingestion
//! ([`ingest`]), reads ([`reads`]), live timelines ([`live`]) and the
//! firehose of public acts ([`firehose`]) over the
//! core use cases, one mapping
//! of core errors to HTTP and gRPC ([`error`]), extractors whose rejections
//! use the API's error body ([`extract`]), the JSON and protobuf shapes
//! ([`json`], [`json_ranked`] for ranked timelines, [`pb`]), first pages kept whole ([`pages`]), the generated OpenAPI contract ([`openapi`],
//! with the refusals routes share, [`responses`]),
//! every REST request's way in ([`front`]: the guard, the caller, request
//! metrics), gRPC's request metrics ([`observe`]), who is calling ([`auth`]:
//! API keys, user tokens, rate limits), CORS ([`cors`]), and serving on given
//! listeners with the operators' endpoints ([`serve`]).
//!
//! This crate maps and verifies credentials; it decides nothing. Validation,
//! rules and permissions are in
//! `socialite_core`; which services run where, settings and backends are in
//! `socialite_runtime`. It must not know any backend.

pub mod auth;
pub mod bookmarks;
pub mod conn;
pub mod cors;
pub mod error;
pub mod extract;
pub mod filters;
pub mod firehose;
pub mod fragments;
pub mod front;
pub mod guard;
pub mod http;
pub mod ingest;
pub mod json;
pub mod json_ranked;
pub mod limits;
pub mod live;
pub mod metrics;
pub mod observe;
pub mod openapi;
pub mod pages;
pub mod pb;
pub mod reads;
pub mod refusals;
pub mod responses;
pub mod schema;
pub mod serve;
pub mod thread_mutes;
pub mod webhooks;

pub use error::ApiError;

/// Largest request body, REST and gRPC alike. A post of the longest message
/// with the largest data fits with room to spare.
pub const MAX_BODY_BYTES: usize = 64 * 1024;
