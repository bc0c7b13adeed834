//! The embedded log read from a sequence of one's own (the firehose): one
//! partition, whose offsets are the log's sequence numbers.

use crate::recovery::RecoverableDb;
use crate::tables::*;
use async_trait::async_trait;
use redb::{ReadTransaction, ReadableDatabase, ReadableTable};
use socialite_core::error::{Error, Result};
use socialite_core::event::Event;
use socialite_core::metrics::metrics;
use socialite_core::ports::{cursor_too_old, Extent, LogTail, Placed};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// What reading the log from a sequence needs: its file and its head (the
/// sequence of the newest durable event).
#[derive(Clone)]
pub(crate) struct Source {
    pub(crate) db: Arc<RecoverableDb>,
    pub(crate) head: watch::Receiver<u64>,
}

impl Source {
    /// A read of the log; its I/O failure is recorded as the log's fault.
    fn read<R>(&self, f: impl FnOnce(&ReadTransaction) -> Result<R>) -> Result<R> {
        let read = || f(&self.db.db()?.begin_read().store()?);
        self.db.check(read())
    }
}

/// The sequences kept: from the oldest on the log (or, with none left,
/// the next) to the next to be written.
pub(crate) fn extent(source: &Source) -> Result<Extent> {
    let next = *source.head.borrow() + 1;
    source.read(|txn| kept(txn, next))
}

fn kept(txn: &ReadTransaction, next: u64) -> Result<Extent> {
    let log = txn.open_table(LOG).store()?;
    let oldest = log.first().store()?.map_or(next, |(k, _)| k.value());
    Ok(Extent { oldest, next })
}

pub(crate) fn open(source: Source, next: &[u64]) -> Result<Box<dyn LogTail>> {
    let [next] = next else {
        return Err(Error::internal("the embedded log has one partition"));
    };
    Ok(Box::new(Tail {
        source,
        next: *next,
    }))
}

struct Tail {
    source: Source,
    next: u64,
}

#[async_trait]
impl LogTail for Tail {
    async fn read(&mut self, max: usize, wait: Duration) -> Result<Vec<Placed>> {
        let mut head = self.source.head.clone();
        if *head.borrow_and_update() < self.next {
            let _ = tokio::time::timeout(wait, head.wait_for(|h| *h >= self.next)).await;
        }
        let (source, next) = (&self.source, self.next);
        let (placed, after) = source.read(|txn| {
            // Truncation runs behind the slowest consumer group, not behind
            // a firehose reader: one it overtook is told so, never skipped.
            let kept = kept(txn, *source.head.borrow() + 1)?;
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
