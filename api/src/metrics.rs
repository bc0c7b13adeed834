//! The transports' metrics: REST and gRPC requests and client connections.
//! Kept here rather than in core, which knows no transport; `/metrics`
//! renders them after core's, with the same `socialite_` prefix and the
//! same rule for labels (small fixed sets, never raw ids or error text).

use axum::extract::MatchedPath;
use prometheus_client::encoding::{EncodeLabelSet, EncodeLabelValue, LabelValueEncoder};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::{Registry, Unit};
use socialite_core::metrics::{latency, metrics, Histograms, Labels};
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;
use std::time::Duration;

/// A REST request's `route` label: the template of the route it matched,
/// or a fixed word (`unmatched`, `unparsed`). Kept as the router's own
/// shared text, so labelling a request allocates nothing.
#[derive(Clone, Debug)]
pub enum RouteLabel {
    Matched(MatchedPath),
    Fixed(&'static str),
}

impl RouteLabel {
    pub fn as_str(&self) -> &str {
        match self {
            RouteLabel::Matched(m) => m.as_str(),
            RouteLabel::Fixed(s) => s,
        }
    }
}

impl PartialEq for RouteLabel {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for RouteLabel {}

impl Hash for RouteLabel {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state)
    }
}

impl EncodeLabelValue for RouteLabel {
    fn encode(&self, encoder: &mut LabelValueEncoder) -> Result<(), std::fmt::Error> {
        EncodeLabelValue::encode(&self.as_str(), encoder)
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpRequest {
    route: RouteLabel,
    method: &'static str,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct HttpRoute {
    route: RouteLabel,
    method: &'static str,
}

pub struct Transport {
    registry: Registry,
    http_requests: Family<HttpRequest, Counter>,
    http_duration: Family<HttpRoute, Histogram, fn() -> Histogram>,
    grpc_requests: Family<Labels, Counter>,
    grpc_duration: Histograms,
    /// Open client connections, REST and gRPC.
    pub connections_open: Gauge,
    /// REST requests being handled (at most `guard::MAX_IN_FLIGHT`).
    pub requests_in_flight: Gauge,
    /// Connections refused, by `reason` (`process`, `address`, `overflow`).
    pub connections_refused: Family<Labels, Counter>,
    /// Connections closed for going without a request past the idle timeout.
    pub connections_idle_closed: Counter,
    /// First pages served whole from the page cache ([`crate::pages`]).
    pub page_cache_hits: Counter,
    /// First pages the page cache could have served, read instead.
    pub page_cache_misses: Counter,
}

impl Transport {
    fn new() -> Transport {
        let t = Transport {
            registry: Registry::with_prefix("socialite"),
            http_requests: Family::default(),
            http_duration: Family::new_with_constructor(latency),
            grpc_requests: Family::default(),
            grpc_duration: Family::new_with_constructor(latency),
            connections_open: Gauge::default(),
            requests_in_flight: Gauge::default(),
            connections_refused: Family::default(),
            connections_idle_closed: Counter::default(),
            page_cache_hits: Counter::default(),
            page_cache_misses: Counter::default(),
        };
        t.register()
    }

    fn register(mut self) -> Transport {
        let r = &mut self.registry;
        r.register(
            "connections_open",
            "Open client connections, REST and gRPC",
            self.connections_open.clone(),
        );
        r.register(
            "requests_in_flight",
            "REST requests being handled; past the cap (2,048) one is refused with 503 overloaded",
            self.requests_in_flight.clone(),
        );
        r.register(
            "connections_refused",
            "Client connections refused: the process's or an address's cap, or the overflow's",
            self.connections_refused.clone(),
        );
        r.register(
            "connections_idle_closed",
            "Connections closed for going without a request past the idle timeout",
            self.connections_idle_closed.clone(),
        );
        r.register(
            "page_cache_hits",
            "First timeline pages served whole from the page cache",
            self.page_cache_hits.clone(),
        );
        r.register(
            "page_cache_misses",
            "First timeline pages the page cache did not hold as they are now, read instead",
            self.page_cache_misses.clone(),
        );
        r.register(
            "http_requests",
            "REST requests by route, method and status",
            self.http_requests.clone(),
        );
        r.register_with_unit(
            "http_request_duration",
            "REST request latency by route and method",
            Unit::Seconds,
            self.http_duration.clone(),
        );
        r.register(
            "grpc_requests",
            "gRPC requests by method and status code",
            self.grpc_requests.clone(),
        );
        r.register_with_unit(
            "grpc_request_duration",
            "gRPC request latency by method",
            Unit::Seconds,
            self.grpc_duration.clone(),
        );
        self
    }

    pub fn observe_http(
        &self,
        route: RouteLabel,
        method: &'static str,
        status: u16,
        took: Duration,
    ) {
        self.http_requests
            .get_or_create(&HttpRequest {
                route: route.clone(),
                method,
                status,
            })
            .inc();
        self.http_duration
            .get_or_create(&HttpRoute { route, method })
            .observe(took.as_secs_f64());
    }

    pub fn observe_grpc(&self, method: String, code: &str, took: Duration) {
        self.grpc_requests
            .get_or_create(&vec![("method", method.clone()), ("code", code.to_owned())])
            .inc();
        self.grpc_duration
            .get_or_create(&vec![("method", method)])
            .observe(took.as_secs_f64());
    }
}

/// The process's transport metrics.
pub fn transport() -> &'static Transport {
    static TRANSPORT: OnceLock<Transport> = OnceLock::new();
    TRANSPORT.get_or_init(Transport::new)
}

/// The Prometheus text of every metric of the process: core's and the
/// transports'.
pub fn render() -> String {
    metrics().render(&[&transport().registry])
}
