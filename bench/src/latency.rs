//! Latencies as a bench's readers or receivers see them: over the run,
//! and per second of it (for the plot of p99 per second).

use hdrhistogram::Histogram;

#[derive(Default)]
pub(crate) struct Latency {
    started_ms: Option<u64>,
    all: Option<Histogram<u64>>,
    per_second: Vec<Histogram<u64>>,
}

fn histogram() -> Histogram<u64> {
    Histogram::new(3).expect("histogram")
}

impl Latency {
    /// `took` ms, seen at `now_ms` (the first record starts the run).
    pub(crate) fn record(&mut self, now_ms: u64, took: u64) {
        let started = *self.started_ms.get_or_insert(now_ms);
        let second = (now_ms.saturating_sub(started) / 1000) as usize;
        while self.per_second.len() <= second {
            self.per_second.push(histogram());
        }
        let took = took.max(1);
        let _ = self.all.get_or_insert_with(histogram).record(took);
        let _ = self.per_second[second].record(took);
    }

    /// Over the whole run.
    pub(crate) fn all(&self) -> Histogram<u64> {
        self.all.clone().unwrap_or_else(histogram)
    }

    /// p99 per second: (the second's middle, ms).
    pub(crate) fn p99_per_second(&self) -> Vec<(f64, f64)> {
        let seconds = self.per_second.iter().enumerate();
        let ran = seconds.filter(|(_, h)| !h.is_empty());
        ran.map(|(i, h)| (i as f64 + 0.5, h.value_at_quantile(0.99) as f64))
            .collect()
    }
}
