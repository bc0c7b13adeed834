//! The toy's event log: events in memory in append order, numbered from 1,
//! and each consumer group's committed position. Nothing is ever dropped
//! (a test's log is small), so any group can be rewound to the start.
//! Consumers wait for appends on a [`Notify`], never on a timer.

use async_trait::async_trait;
use socialite_core::error::Result;
use socialite_core::event::Event;
use socialite_core::ports::{EventLog, Extent, LogConsumer, LogPosition, LogTail, Placed, Rewind};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::Notify;

#[derive(Default)]
pub struct ToyLog {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    tape: Mutex<Tape>,
    /// Told after every append.
    appended: Notify,
}

#[derive(Default)]
struct Tape {
    /// The event numbered `n` is at `n - 1`.
    events: Vec<Event>,
    /// Group → the number of the next event it has not committed.
    committed: BTreeMap<String, u64>,
}

impl Inner {
    fn tape(&self) -> std::sync::MutexGuard<'_, Tape> {
        self.tape.lock().unwrap()
    }

    /// The number of the newest event (0: none yet).
    fn head(&self) -> u64 {
        self.tape().events.len() as u64
    }

    /// Waits at most `within` for the head to reach `at`.
    async fn until(&self, at: u64, within: Duration) {
        let reached = async {
            loop {
                // Registered before the head is read: an append between
                // the read and the wait still wakes it.
                let appended = self.appended.notified();
                tokio::pin!(appended);
                appended.as_mut().enable();
                if self.head() >= at {
                    return;
                }
                appended.await;
            }
        };
        let _ = tokio::time::timeout(within, reached).await;
    }
}

#[async_trait]
impl EventLog for ToyLog {
    async fn append(&self, events: &[Event]) -> Result<()> {
        self.inner.tape().events.extend_from_slice(events);
        self.inner.appended.notify_waiters();
        Ok(())
    }

    async fn ping(&self) -> Result<()> {
        Ok(())
    }

    async fn consumer(&self, group: &str) -> Result<Box<dyn LogConsumer>> {
        let next = *self.inner.tape().committed.get(group).unwrap_or(&1);
        Ok(Box::new(ToyConsumer {
            inner: self.inner.clone(),
            group: group.to_owned(),
            next,
            committed: next,
        }))
    }

    async fn position(&self, group: &str) -> Result<LogPosition> {
        let tape = self.inner.tape();
        Ok(LogPosition::single(
            tape.committed.get(group).unwrap_or(&1) - 1,
            tape.events.len() as u64,
        ))
    }

    async fn extent(&self) -> Result<Vec<Extent>> {
        let next = self.inner.head() + 1;
        Ok(vec![Extent { oldest: 1, next }])
    }

    async fn tail(&self, next: &[u64]) -> Result<Box<dyn LogTail>> {
        Ok(Box::new(ToyTail {
            inner: self.inner.clone(),
            next: next[0].max(1),
        }))
    }
}

/// A firehose reader of the toy's one partition, numbered as the events.
struct ToyTail {
    inner: Arc<Inner>,
    next: u64,
}

#[async_trait]
impl LogTail for ToyTail {
    async fn read(&mut self, max: usize, wait: Duration) -> Result<Vec<Placed>> {
        self.inner.until(self.next, wait).await;
        let tape = self.inner.tape();
        let from = (self.next - 1) as usize;
        let batch: Vec<Placed> = (self.next..)
            .zip(tape.events.iter().skip(from).take(max))
            .map(|(offset, event)| Placed {
                partition: 0,
                offset,
                event: event.clone(),
            })
            .collect();
        self.next += batch.len() as u64;
        Ok(batch)
    }
}

#[async_trait]
impl Rewind for ToyLog {
    fn first_retained(&self) -> Result<u64> {
        Ok(self.inner.head().min(1))
    }

    /// Moves the group back to `next`, never forward: skipping events
    /// would lose them. Open consumers of the group keep their position.
    async fn rewind(&self, group: &str, next: u64) -> Result<()> {
        let mut tape = self.inner.tape();
        let at = tape.committed.entry(group.to_owned()).or_insert(1);
        *at = next.clamp(1, *at);
        Ok(())
    }
}

struct ToyConsumer {
    inner: Arc<Inner>,
    group: String,
    /// The number of the next event to hand out.
    next: u64,
    /// And of the first this consumer has not committed.
    committed: u64,
}

#[async_trait]
impl LogConsumer for ToyConsumer {
    async fn poll(&mut self, max: usize, wait: Duration, linger: Duration) -> Result<Vec<Event>> {
        self.inner.until(self.next, wait).await;
        // Some events wait but not a full batch: give the rest `linger`.
        let full = self.next + max as u64 - 1;
        let head = self.inner.head();
        if !linger.is_zero() && (self.next..full).contains(&head) {
            self.inner.until(full, linger).await;
        }
        let tape = self.inner.tape();
        let from = (self.next - 1) as usize;
        let batch: Vec<Event> = tape.events.iter().skip(from).take(max).cloned().collect();
        self.next += batch.len() as u64;
        Ok(batch)
    }

    async fn commit(&mut self) -> Result<()> {
        let mut tape = self.inner.tape();
        tape.committed.insert(self.group.clone(), self.next);
        self.committed = self.next;
        Ok(())
    }

    async fn backlog(&self) -> Result<u64> {
        Ok((self.inner.head() + 1).saturating_sub(self.committed))
    }
}
