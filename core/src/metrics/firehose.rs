//! The firehose's metrics (`crate::firehose`), registered with the rest.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// A `reason` label (as `super::Labels`, named apart so this module
/// needs nothing of its parent's).
type Labels = Vec<(&'static str, String)>;

#[derive(Default)]
pub struct FirehoseMetrics {
    /// Open firehose connections (SSE and gRPC).
    pub connections: Gauge,
    /// Connections refused, by `reason` (`key`, `process`).
    pub refused: Family<Labels, Counter>,
    /// Connections the server ended, by `reason` (an error code).
    pub ended: Family<Labels, Counter>,
    /// Acts and checkpoints handed to connections.
    pub sent: Counter,
}

impl FirehoseMetrics {
    pub(super) fn register(&self, r: &mut Registry) {
        r.register(
            "firehose_connections",
            "Open firehose connections (SSE and gRPC) in this process",
            self.connections.clone(),
        );
        r.register(
            "firehose_refused",
            "Firehose connections refused by the per-key or per-process cap",
            self.refused.clone(),
        );
        r.register(
            "firehose_ended",
            "Firehose connections ended by the server, by reason (slow_reader, cursor_too_old, stream_lifetime, a credential no longer valid)",
            self.ended.clone(),
        );
        r.register(
            "firehose_sent",
            "Public acts and checkpoints handed to firehose connections",
            self.sent.clone(),
        );
    }
}
