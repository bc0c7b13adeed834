//! A fanout worker's watch, when enabled, for partitions of its group that
//! nobody consumes ([`crate::config::KafkaConfig::stale_partition_rejoin`]):
//! a broker that keeps a dead member's partitions (tansu) leaves them so
//! until a member leaves and joins again.

use rdkafka::consumer::{BaseConsumer, Consumer, ConsumerContext};
use rdkafka::error::KafkaResult;
use rdkafka::{Offset, TopicPartitionList};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Watches, when enabled, for partitions that nobody consumes (see
/// [`crate::config::KafkaConfig::stale_partition_rejoin`]).
pub(crate) struct StaleWatch {
    pub after: Duration,
    pub backoff: Backoff,
    pub checked: Instant,
    /// Partitions with events waiting, by their committed offset, since when.
    pub waiting: BTreeMap<(String, i32), (i64, Instant)>,
}

pub(crate) const STALE_CHECK_EVERY: Duration = Duration::from_secs(2);

/// How the wait before a rejoin grows: each rejoin within
/// [`Backoff::MEMORY`] of the one before doubles it, up to
/// 2^[`Backoff::MAX_STRIKES`] times. A rejoin unsettles the whole group,
/// and a group slow to settle (on a broker that holds a follower's join
/// for seconds, a new owner may not commit within the wait) was otherwise
/// unsettled again by its own members' rejoins, each finding the other's
/// partitions idle, for minutes.
#[derive(Default)]
pub(crate) struct Backoff {
    strikes: u32,
    last: Option<Instant>,
}

impl Backoff {
    const MEMORY: Duration = Duration::from_secs(60);
    const MAX_STRIKES: u32 = 4;

    pub fn wait(&mut self, base: Duration, now: Instant) -> Duration {
        if self
            .last
            .is_some_and(|at| now.duration_since(at) >= Self::MEMORY)
        {
            *self = Backoff::default();
        }
        base * 2u32.pow(self.strikes)
    }

    pub fn rejoined(&mut self, now: Instant) {
        self.strikes = (self.strikes + 1).min(Self::MAX_STRIKES);
        self.last = Some(now);
    }
}

/// Whether some partition of `topics` outside this member's assignment
/// (`owned`) has had events waiting at an unchanged committed offset for
/// `after`, since this member was last given its partitions (`settled`). Never while the group
/// rebalances: every partition is outside an assignment not yet made, and
/// leaving then would only start the rebalance over (a member that left
/// and joined again each time its join took longer than `after` never
/// settled).
pub(crate) fn stale_partition<C: ConsumerContext>(
    consumer: &BaseConsumer<C>,
    (owned, settled): (&BTreeSet<(String, i32)>, Option<Instant>),
    topics: &[String],
    waiting: &mut BTreeMap<(String, i32), (i64, Instant)>,
    after: Duration,
) -> KafkaResult<Option<(String, i32)>> {
    let Some(settled) = settled else {
        waiting.clear();
        return Ok(None);
    };
    let timeout = Duration::from_secs(2);
    let mut others = TopicPartitionList::new();
    for topic in topics {
        let metadata = consumer.fetch_metadata(Some(topic), timeout)?;
        for t in metadata.topics() {
            for p in t.partitions() {
                if !owned.contains(&(t.name().to_owned(), p.id())) {
                    others.add_partition(t.name(), p.id());
                }
            }
        }
    }
    if others.count() == 0 {
        waiting.clear();
        return Ok(None);
    }
    let committed = consumer.committed_offsets(others, timeout)?;
    let mut still = BTreeMap::new();
    let mut stale = None;
    for e in committed.elements() {
        let key = (e.topic().to_owned(), e.partition());
        let (low, high) = consumer.fetch_watermarks(e.topic(), e.partition(), timeout)?;
        let at = match e.offset() {
            Offset::Offset(o) => o,
            _ => low,
        };
        if high <= at {
            continue;
        }
        let since = match waiting.get(&key) {
            Some(&(seen, since)) if seen == at => since.max(settled),
            _ => Instant::now(),
        };
        if since.elapsed() >= after {
            stale = Some(key.clone());
        }
        still.insert(key, (at, since));
    }
    *waiting = still;
    Ok(stale)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejoins_in_quick_succession_wait_longer_until_a_quiet_minute() {
        let (base, t0) = (Duration::from_secs(3), Instant::now());
        let at = |s: u64| t0 + Duration::from_secs(s);
        let mut b = Backoff::default();
        assert_eq!(b.wait(base, at(0)), base);
        b.rejoined(at(3));
        assert_eq!(b.wait(base, at(4)), base * 2);
        b.rejoined(at(10));
        b.rejoined(at(20));
        assert_eq!(b.wait(base, at(21)), base * 8);
        for n in 0..5 {
            b.rejoined(at(30 + n));
        }
        assert_eq!(b.wait(base, at(40)), base * 16, "the wait has a ceiling");
        assert_eq!(b.wait(base, at(34 + 59)), base * 16);
        assert_eq!(b.wait(base, at(34 + 60)), base, "a quiet minute forgets");
    }
}
