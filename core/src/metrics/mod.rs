//! Every metric of the pipeline, defined in this one module (the transports'
//! own, HTTP and gRPC requests and connections, are the API crate's, in a
//! registry of their own rendered beside this one). Names follow
//! `socialite_<thing>_<unit>` (counters gain `_total` when rendered); labels
//! come from small fixed sets, never raw ids or error text. All processes
//! share the layout; each renders its own values at `/metrics`.

mod firehose;
mod follower_index;
mod webhooks;
pub use firehose::FirehoseMetrics;
pub use follower_index::FollowerIndexMetrics;
pub use webhooks::WebhookMetrics;

use prometheus_client::encoding::text::{encode_eof, encode_registry};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};
use std::sync::atomic::AtomicU64;
use std::sync::OnceLock;
use std::time::Duration;

pub type Labels = Vec<(&'static str, String)>;
pub type Histograms = Family<Labels, Histogram, fn() -> Histogram>;

/// A store call's labels.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StoreOp {
    pub store: &'static str,
    pub op: &'static str,
}

/// Where a timeline read was answered from (`cache`, `past_cache`, `late`, `merge`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ReadSource {
    pub source: &'static str,
}

/// How a ranked timeline page was served: its order, and `ranked`, or in
/// latest order past the `deadline`, after an `error`, or while the
/// rankings the process allows all run (`busy`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RankedLabels {
    pub order: &'static str,
    pub served: &'static str,
}

/// A store's fault by reason (`socialite_store_fault`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StoreFaultLabels {
    pub store: &'static str,
    pub reason: &'static str,
}

/// A store by its readiness check's name (`content_store`, `event_log`).
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct StoreLabel {
    pub store: &'static str,
}

/// Latency buckets from 50 µs to about 3.3 s.
pub fn latency() -> Histogram {
    Histogram::new(exponential_buckets(0.000_05, 2.0, 17))
}

pub struct Metrics {
    registry: Registry,
    pub posts_ingested: Counter,
    pub notices_applied: Counter,
    pub events_published: Counter,
    pub event_publish_failures: Counter,
    pub outbox_pending: Gauge,
    pub fanout_batches: Counter,
    pub fanout_events: Counter,
    pub fanout_deliveries: Counter,
    pub fanout_skipped_dormant: Counter,
    pub fanout_hybrid_skipped: Counter,
    pub fanout_batch_duration: Histogram,
    pub log_backlog: Gauge,
    /// How late a post written now would be seen, as the producer
    /// estimates it ([`crate::load`]).
    pub fanout_lag: Gauge<f64, AtomicU64>,
    /// How long ago the oldest write fanout may not have delivered was
    /// acknowledged ([`crate::feed::late`]).
    pub fanout_behind: Gauge<f64, AtomicU64>,
    /// The share of new writes being shed.
    pub shed_share: Gauge<f64, AtomicU64>,
    /// Writes refused with 503 `overloaded`, by `reason`: `lag` (fanout's,
    /// [`crate::load`]) or `reads` (their latency, [`crate::reads_first`]).
    pub writes_shed: Family<Labels, Counter>,
    /// The reads' p99 in the last window, and in quiet windows, seconds
    /// ([`crate::reads_first`]).
    pub read_p99: Gauge<f64, AtomicU64>,
    pub read_baseline: Gauge<f64, AtomicU64>,
    /// Writes a second the reads allow; 0: no limit.
    pub write_allowance: Gauge<f64, AtomicU64>,
    pub log_partition_lag: Family<Labels, Gauge>,
    pub log_undecodable: Counter,
    pub timeline_bulk_writes: Counter,
    pub timeline_bulk_ops: Histogram,
    pub timeline_round_trips: Counter,
    pub timeline_reads: Family<ReadSource, Counter>,
    pub ranked_reads: Family<RankedLabels, Counter>,
    pub post_visible: Histogram,
    pub post_taken: Histogram,
    pub live_streams: Gauge,
    pub live_push: Histogram,
    pub store_duration: Family<StoreOp, Histogram, fn() -> Histogram>,
    pub store_errors: Family<StoreOp, Counter>,
    /// 1 while a store cannot serve for a reason, by store and reason.
    pub store_faults: Family<StoreFaultLabels, Gauge>,
    /// Reopenings of an embedded store after an I/O error, by store.
    pub store_recoveries: Family<StoreLabel, Counter>,
    pub resident_memory: Gauge,
    pub peak_resident_memory: Gauge,
    /// 1 when the APIs check credentials, 0 under `--auth none`.
    pub auth_checks: Gauge,
    /// Lines of the credential files skipped as malformed, as last read.
    pub credential_lines_skipped: Gauge,
    /// Live streams refused, by `reason` (`user`, `key`, `process`).
    pub live_streams_refused: Family<Labels, Counter>,
    /// Live streams the server ended, by `reason` (an error code).
    pub live_streams_ended: Family<Labels, Counter>,
    pub firehose: FirehoseMetrics,
    pub follower_index: FollowerIndexMetrics,
    pub webhooks: WebhookMetrics,
}

impl Metrics {
    fn new() -> Metrics {
        let m = Metrics {
            registry: Registry::with_prefix("socialite"),
            posts_ingested: Counter::default(),
            notices_applied: Counter::default(),
            events_published: Counter::default(),
            event_publish_failures: Counter::default(),
            outbox_pending: Gauge::default(),
            fanout_batches: Counter::default(),
            fanout_events: Counter::default(),
            fanout_deliveries: Counter::default(),
            fanout_skipped_dormant: Counter::default(),
            fanout_hybrid_skipped: Counter::default(),
            fanout_batch_duration: latency(),
            log_backlog: Gauge::default(),
            fanout_lag: Gauge::default(),
            fanout_behind: Gauge::default(),
            shed_share: Gauge::default(),
            writes_shed: Family::default(),
            read_p99: Gauge::default(),
            read_baseline: Gauge::default(),
            write_allowance: Gauge::default(),
            log_partition_lag: Family::default(),
            log_undecodable: Counter::default(),
            timeline_bulk_writes: Counter::default(),
            timeline_bulk_ops: Histogram::new(exponential_buckets(1.0, 2.0, 16)),
            timeline_round_trips: Counter::default(),
            timeline_reads: Family::default(),
            ranked_reads: Family::default(),
            post_visible: Histogram::new(exponential_buckets(0.000_5, 2.0, 16)),
            post_taken: Histogram::new(exponential_buckets(0.000_5, 2.0, 16)),
            live_streams: Gauge::default(),
            live_push: Histogram::new(exponential_buckets(0.000_5, 2.0, 16)),
            store_duration: Family::new_with_constructor(latency),
            store_errors: Family::default(),
            store_faults: Family::default(),
            store_recoveries: Family::default(),
            resident_memory: Gauge::default(),
            peak_resident_memory: Gauge::default(),
            auth_checks: Gauge::default(),
            credential_lines_skipped: Gauge::default(),
            live_streams_refused: Family::default(),
            live_streams_ended: Family::default(),
            firehose: FirehoseMetrics::default(),
            follower_index: FollowerIndexMetrics::default(),
            webhooks: WebhookMetrics::default(),
        };
        m.register()
    }

    fn register(mut self) -> Metrics {
        self.register_access();
        self.register_pipeline();
        self.firehose.register(&mut self.registry);
        self.follower_index.register(&mut self.registry);
        self.webhooks.register(&mut self.registry);
        self
    }

    /// Credentials and live streams.
    fn register_access(&mut self) {
        let r = &mut self.registry;
        r.register(
            "auth_checks",
            "1 when the APIs check credentials; 0 when they run with --auth none",
            self.auth_checks.clone(),
        );
        r.register(
            "credential_lines_skipped",
            "Lines of the API keys and token secrets skipped as malformed when last read",
            self.credential_lines_skipped.clone(),
        );
        r.register(
            "live_streams_refused",
            "Live streams refused by the per-user, per-key or per-process cap",
            self.live_streams_refused.clone(),
        );
        r.register(
            "live_streams_ended",
            "Live streams ended by the server, by reason (credential expired or revoked, lifetime)",
            self.live_streams_ended.clone(),
        );
    }

    /// Writes, the relay and fanout (then the stores').
    fn register_pipeline(&mut self) {
        let r = &mut self.registry;
        r.register(
            "posts_ingested",
            "Posts stored and acknowledged",
            self.posts_ingested.clone(),
        );
        r.register(
            "notices_applied",
            "Notifications made or taken back by fanout workers",
            self.notices_applied.clone(),
        );
        r.register(
            "events_published",
            "Events relayed from the outbox to the log",
            self.events_published.clone(),
        );
        r.register(
            "event_publish_failures",
            "Failed attempts to relay events to the log",
            self.event_publish_failures.clone(),
        );
        r.register_with_unit(
            "outbox_pending",
            "Events in the outbox not yet on the log",
            Unit::Other("events".into()),
            self.outbox_pending.clone(),
        );
        r.register(
            "fanout_batches",
            "Fanout batches applied",
            self.fanout_batches.clone(),
        );
        r.register(
            "fanout_events",
            "Log events applied by fanout",
            self.fanout_events.clone(),
        );
        r.register(
            "fanout_deliveries",
            "Entries written into active users' timeline caches",
            self.fanout_deliveries.clone(),
        );
        r.register(
            "fanout_skipped_dormant",
            "Deliveries skipped because the follower is dormant",
            self.fanout_skipped_dormant.clone(),
        );
        r.register(
            "fanout_hybrid_skipped",
            "Follower timelines not delivered to because the author is past the hybrid threshold (merged at read time instead)",
            self.fanout_hybrid_skipped.clone(),
        );
        r.register_with_unit(
            "fanout_batch_duration",
            "Time to apply one fanout batch",
            Unit::Seconds,
            self.fanout_batch_duration.clone(),
        );
        r.register_with_unit(
            "log_backlog",
            "Events on the log that the fanout group has not committed",
            Unit::Other("events".into()),
            self.log_backlog.clone(),
        );
        r.register_with_unit(
            "fanout_lag",
            "How late a post written now would reach its followers' timelines: the fanout group's backlog over the rate it drains at",
            Unit::Seconds,
            self.fanout_lag.clone(),
        );
        r.register_with_unit(
            "fanout_behind",
            "How long ago the oldest write that fanout may not have delivered was acknowledged; past the freshness target, reads merge such writes",
            Unit::Seconds,
            self.fanout_behind.clone(),
        );
        r.register(
            "shed_share",
            "Share of new writes refused with 503 overloaded to hold the freshness target (0 to 1)",
            self.shed_share.clone(),
        );
        r.register(
            "writes_shed",
            "Writes refused with 503 overloaded, by reason: fanout was behind (lag) or reads were slow beside writes (reads)",
            self.writes_shed.clone(),
        );
        r.register_with_unit(
            "log_partition_lag",
            "Events per log partition that this worker has not processed (partitioned logs)",
            Unit::Other("events".into()),
            self.log_partition_lag.clone(),
        );
        self.register_guard();
        self.register_stores();
    }

    /// The read guard's ([`crate::reads_first`]).
    fn register_guard(&mut self) {
        let r = &mut self.registry;
        r.register_with_unit(
            "read_p99",
            "Reads' 99th percentile in the last quarter second, where one process serves reads and writes",
            Unit::Seconds,
            self.read_p99.clone(),
        );
        r.register_with_unit(
            "read_baseline",
            "Reads' 99th percentile while writes are quiet: what the read guard holds reads to a multiple of",
            Unit::Seconds,
            self.read_baseline.clone(),
        );
        r.register(
            "write_allowance",
            "Writes a second the read guard admits while reads are slow beside them; 0: no limit",
            self.write_allowance.clone(),
        );
    }

    /// The log, the stores, the timelines and the process.
    fn register_stores(&mut self) {
        let r = &mut self.registry;
        r.register(
            "log_undecodable_events",
            "Events on the log that could not be decoded and were skipped",
            self.log_undecodable.clone(),
        );
        r.register(
            "timeline_bulk_writes",
            "Round trips that wrote timeline deliveries to a remote store",
            self.timeline_bulk_writes.clone(),
        );
        r.register(
            "timeline_bulk_write_operations",
            "Deliveries (follower, post) sent in one round trip to a remote timeline store",
            self.timeline_bulk_ops.clone(),
        );
        r.register(
            "timeline_delivery_round_trips",
            "Round trips to a remote timeline store made by fanout: reads of which timelines exist, the writes, and the bucket retention they need",
            self.timeline_round_trips.clone(),
        );
        r.register(
            "timeline_reads",
            "Home timeline reads by source (cache, past_cache, late, merge)",
            self.timeline_reads.clone(),
        );
        r.register(
            "ranked_timeline_reads",
            "First pages of ranked home timelines (balanced, catchup) by how they were served: ranked, kept (a first page served again while nothing changed), or in latest order past the deadline, after an error, or while every ranking slot is taken (busy)",
            self.ranked_reads.clone(),
        );
        r.register_with_unit(
            "post_visible",
            "Time from a post's creation to its delivery into followers' caches",
            Unit::Seconds,
            self.post_visible.clone(),
        );
        r.register_with_unit(
            "post_taken",
            "Time from a post's creation until a fanout worker takes it from the log (the part of post_visible before fanout starts)",
            Unit::Seconds,
            self.post_taken.clone(),
        );
        r.register(
            "live_streams",
            "Open live timeline streams (SSE and gRPC) in this process",
            self.live_streams.clone(),
        );
        r.register_with_unit(
            "live_push",
            "Time from a post's creation to its push to the open streams of this process",
            Unit::Seconds,
            self.live_push.clone(),
        );
        r.register_with_unit(
            "store_operation_duration",
            "Store operation latency by store and operation",
            Unit::Seconds,
            self.store_duration.clone(),
        );
        r.register(
            "store_errors",
            "Failed store operations by store and operation",
            self.store_errors.clone(),
        );
        r.register(
            "store_fault",
            "1 while the store (content_store, event_log) cannot serve, by reason (no_space, io_error, unreachable, failing); 0 otherwise",
            self.store_faults.clone(),
        );
        r.register(
            "store_recoveries",
            "Times an embedded store reopened by itself after an I/O error",
            self.store_recoveries.clone(),
        );
        r.register_with_unit(
            "process_resident_memory",
            "Resident memory of this process",
            Unit::Bytes,
            self.resident_memory.clone(),
        );
        r.register_with_unit(
            "process_peak_resident_memory",
            "Highest resident memory of this process so far",
            Unit::Bytes,
            self.peak_resident_memory.clone(),
        );
    }

    /// The Prometheus text exposition of every metric: core's, then those
    /// the crates above register apart (the transports').
    pub fn render(&self, more: &[&Registry]) -> String {
        if let Some((rss, peak)) = process_memory() {
            self.resident_memory.set(rss as i64);
            self.peak_resident_memory.set(peak as i64);
        }
        let mut out = String::new();
        let fail = "writing to a String cannot fail";
        encode_registry(&mut out, &self.registry).expect(fail);
        for r in more {
            encode_registry(&mut out, r).expect(fail);
        }
        encode_eof(&mut out).expect(fail);
        out
    }

    pub fn observe_store(
        &self,
        store: &'static str,
        op: &'static str,
        took: Duration,
        failed: bool,
    ) {
        // Typed labels of fixed text: a store call allocates nothing to count.
        let labels = StoreOp { store, op };
        self.store_duration
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
        if failed {
            self.store_errors.get_or_create(&labels).inc();
        }
    }

    /// The fault gauge of a store for one reason.
    pub fn store_fault(&self, store: &'static str, reason: &'static str) -> Gauge {
        self.store_faults
            .get_or_create(&StoreFaultLabels { store, reason })
            .clone()
    }

    /// A ranked first page served (`served`: `ranked`, `kept`, `deadline`,
    /// `error`, `busy`).
    pub fn ranked_read(&self, order: &'static str, served: &'static str) {
        self.ranked_reads
            .get_or_create(&RankedLabels { order, served })
            .inc();
    }

    pub fn timeline_read(&self, source: &'static str) {
        self.timeline_reads
            .get_or_create(&ReadSource { source })
            .inc();
    }
}

/// Resident and peak resident memory in bytes, from `/proc/self/status`
/// (Linux; `None` elsewhere).
pub(crate) fn process_memory() -> Option<(u64, u64)> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib = |key: &str| -> Option<u64> {
        let line = status.lines().find(|l| l.starts_with(key))?;
        line.split_whitespace().nth(1)?.parse().ok()
    };
    Some((kib("VmRSS:")? * 1024, kib("VmHWM:")? * 1024))
}

/// The process's metrics.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(Metrics::new)
}

/// `(reason, value)` as a label set, for the counters by reason.
pub fn reason(value: &'static str) -> Labels {
    vec![("reason", value.to_owned())]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_prometheus_text_with_units_and_totals() {
        let m = metrics();
        m.fanout_deliveries.inc_by(3);
        m.observe_store("content", "get_user", Duration::from_micros(120), true);
        m.timeline_read("cache");
        let text = m.render(&[]);
        for needle in [
            "socialite_fanout_deliveries_total ",
            "socialite_store_operation_duration_seconds_bucket{",
            "socialite_store_errors_total{store=\"content\",op=\"get_user\"} ",
            "socialite_timeline_reads_total{source=\"cache\"} ",
            "# TYPE socialite_post_visible_seconds histogram",
            "socialite_log_backlog_events ",
        ] {
            assert!(text.contains(needle), "{needle} missing from\n{text}");
        }
    }
}
