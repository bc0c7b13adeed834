//! The embedded log read from a sequence of one's own (the firehose): one
//! partition, whose offsets are the log's sequence numbers.

use crate::log::Inner;
use crate::tables::*;
use async_trait::async_trait;
use redb::{ReadTransaction, ReadableTable};
use socialite_core::error::{Error, Result};
use socialite_core::event::Event;
use socialite_core::metrics::metrics;
use socialite_core::ports::{cursor_too_old, Extent, LogTail, Placed};
use std::sync::Arc;
use std::time::Duration;

/// The sequences kept: from the oldest on the log (or, with none left,
/// the next) to the next to be written.
pub(crate) fn extent(inner: &Inner) -> Result<Extent> {
    let next = *inner.head.borrow() + 1;
    inner.read(|txn| kept(txn, next))
}

fn kept(txn: &ReadTransaction, next: u64) -> Result<Extent> {
    let log = txn.open_table(LOG).store()?;
    let oldest = log.first().store()?.map_or(next, |(k, _)| k.value());
    Ok(Extent { oldest, next })
}

pub(crate) fn open(inner: &Arc<Inner>, next: &[u64]) -> Result<Box<dyn LogTail>> {
    let [next] = next else {
        return Err(Error::internal("the embedded log has one partition"));
    };
    Ok(Box::new(Tail {
        inner: inner.clone(),
        next: *next,
    }))
}

struct Tail {
    inner: Arc<Inner>,
    next: u64,
}

#[async_trait]
impl LogTail for Tail {
    async fn read(&mut self, max: usize, wait: Duration) -> Result<Vec<Placed>> {
        let mut head = self.inner.head.clone();
        if *head.borrow_and_update() < self.next {
            let _ = tokio::time::timeout(wait, head.wait_for(|h| *h >= self.next)).await;
        }
        let (inner, next) = (&self.inner, self.next);
        let (placed, after) = inner.read(|txn| {
            // Truncation runs behind the slowest consumer group, not behind
            // a firehose reader: one it overtook is told so, never skipped.
            let kept = kept(txn, *inner.head.borrow() + 1)?;
            if kept.oldest > next {
                return Err(cursor_too_old(vec![kept.oldest]));
            }
            let log = txn.open_table(LOG).store()?;
            let (mut out, mut after) = (Vec::new(), next);
            for item in log.range(next..).store()?.take(max) {
                let (k, v) = item.store()?;
                let offset = k.value();
                after = offset + 1;
                let Ok(event) = Event::decode(v.value()) else {
                    metrics().log_undecodable.inc();
                    continue;
                };
                out.push(Placed {
                    partition: 0,
                    offset,
                    event,
                });
            }
            Ok((out, after))
        })?;
        self.next = after;
        Ok(placed)
    }
}
