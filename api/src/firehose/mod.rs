//! The firehose over REST (`GET /firehose`, Server-Sent Events; `ws`: a
//! WebSocket whose client changes its filters while connected) and gRPC
//! (`Firehose.Subscribe`), sharing [`state`]: the connection caps and the
//! loop that forwards a reader's acts until its client leaves, stalls, its
//! key stops holding or the connection lives its longest.

mod grpc;
mod json;
mod rest;
pub mod state;
mod ws;

pub use grpc::{grpc_service, GRPC_NAME};
pub(crate) use json::act_json;
pub use json::FirehoseEventJson;
pub use state::Firehose;

use crate::guard::FIREHOSE_BODY_BYTES;
use axum::extract::DefaultBodyLimit;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub fn rest_router() -> OpenApiRouter<Firehose> {
    OpenApiRouter::new()
        .routes(routes!(rest::firehose, rest::firehose_posted))
        .routes(routes!(ws::firehose_ws))
        .layer(DefaultBodyLimit::max(FIREHOSE_BODY_BYTES))
}

pub fn rest_routes(firehose: Firehose) -> OpenApiRouter {
    rest_router().with_state(firehose)
}
