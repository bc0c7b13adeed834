//! Webhook delivery's metrics, one series per endpoint (endpoints are
//! capped, so the series are too; a deleted endpoint's are removed).

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// An `endpoint` label.
type Labels = Vec<(&'static str, String)>;

#[derive(Default)]
pub struct WebhookMetrics {
    /// Requests answered 2xx, by endpoint.
    pub delivered: Family<Labels, Counter>,
    /// Requests that failed (status, timeout, connection, refused address).
    pub failed: Family<Labels, Counter>,
    /// Events delivered, by endpoint.
    pub events: Family<Labels, Counter>,
    /// Age of the oldest event waiting for the endpoint, in seconds (0: none).
    pub queue_age: Family<Labels, Gauge>,
}

impl WebhookMetrics {
    pub(super) fn register(&self, r: &mut Registry) {
        r.register(
            "webhook_delivered",
            "Webhook requests answered 2xx, by endpoint",
            self.delivered.clone(),
        );
        r.register(
            "webhook_failed",
            "Webhook requests that failed (an answer not 2xx, a timeout, a connection refused or an address refused), by endpoint",
            self.failed.clone(),
        );
        r.register(
            "webhook_events",
            "Events delivered to webhook endpoints, by endpoint",
            self.events.clone(),
        );
        r.register(
            "webhook_queue_age_seconds",
            "Age of the oldest event waiting for a webhook endpoint (0: none waits), by endpoint",
            self.queue_age.clone(),
        );
    }

    pub fn label(endpoint: &str) -> Labels {
        vec![("endpoint", endpoint.to_owned())]
    }

    /// Forgets a deleted endpoint's series.
    pub fn forget(&self, endpoint: &str) {
        let l = Self::label(endpoint);
        self.delivered.remove(&l);
        self.failed.remove(&l);
        self.events.remove(&l);
        self.queue_age.remove(&l);
    }
}
