//! Webhook endpoints over REST ([`rest`]: `/admin/webhooks`) and gRPC
//! ([`grpc`]: the `Webhooks` service), for an `admin` key, mapped onto
//! `socialite_core::webhooks::WebhookAdmin`; and the body of a delivery
//! ([`body`]), the firehose's event JSON in a Standard Webhooks envelope.

mod grpc;
mod json;
pub(crate) mod rest;

pub use grpc::{grpc_service, GRPC_NAME};
pub use rest::rest_routes;

use socialite_core::firehose::Delivered;
use socialite_core::model::rfc3339_ms;

/// A delivery's body: one event as `{"type", "timestamp", "data"}`, or, to
/// an endpoint that takes batches, `{"type": "batch", "timestamp",
/// "data": {"events": [...]}}`; each event is the firehose's JSON, its
/// `cursor` included (receivers deduplicate by it).
pub fn body(acts: &[Delivered], batch: bool) -> Vec<u8> {
    let timestamp = rfc3339_ms(socialite_core::ids::now_ms());
    let events: Vec<_> = acts.iter().map(crate::firehose::act_json).collect();
    let value = match (batch, events.as_slice()) {
        (false, [one]) => serde_json::json!({
            "type": acts[0].act.as_ref().map_or("checkpoint", |a| a.kind().as_str()),
            "timestamp": timestamp,
            "data": one,
        }),
        _ => serde_json::json!({
            "type": "batch",
            "timestamp": timestamp,
            "data": { "events": events },
        }),
    };
    serde_json::to_vec(&value).expect("a webhook body serializes")
}
