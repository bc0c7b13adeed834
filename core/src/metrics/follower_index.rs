//! The fanout worker's follower index (`crate::feed::followers`): what it
//! holds against its budget, and what it dropped to stay within it.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

#[derive(Default)]
pub struct FollowerIndexMetrics {
    /// Targets held: timelines and muters, one more per author.
    pub targets: Gauge,
    /// Authors whose targets are held.
    pub authors: Gauge,
    /// Authors dropped to keep within the budget.
    pub evicted: Counter,
}

impl FollowerIndexMetrics {
    pub(super) fn register(&self, r: &mut Registry) {
        r.register(
            "follower_index_targets",
            "Targets the fanout worker's follower index holds (timelines and muters, one more per author), bounded by --follower-index-targets",
            self.targets.clone(),
        );
        r.register(
            "follower_index_authors",
            "Authors whose targets the fanout worker's follower index holds",
            self.authors.clone(),
        );
        r.register(
            "follower_index_evicted",
            "Authors the follower index dropped to keep within its budget (their next post loads their list again)",
            self.evicted.clone(),
        );
    }
}
