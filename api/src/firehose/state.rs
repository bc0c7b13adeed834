//! What the firehose routes of both transports share: the log, the caps
//! on open connections, and the loop that forwards a reader's acts.

use crate::auth::Grant;
use crate::limits::Limits;
use socialite_core::error::{Error, ErrorKind, Result};
use socialite_core::firehose::filter::Filter;
use socialite_core::firehose::{Delivered, Reader};
use socialite_core::metrics::{metrics, reason};
use socialite_core::ports::EventLog;
use socialite_domain::accounts::access::{check, Act, Caller};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;

/// Most events of the log one read takes.
const READ_MAX: usize = 256;
/// How long one read waits for the log to grow: also how soon a client
/// that left, or a credential that stopped holding, is noticed.
const READ_WAIT: Duration = Duration::from_secs(1);
/// Acts queued for a client at most: with one read of the log, what a
/// connection holds in memory.
pub const QUEUED: usize = 64;

/// What the firehose routes need: the log and the connection caps.
#[derive(Clone)]
pub struct Firehose {
    log: Arc<dyn EventLog>,
    slots: Arc<Slots>,
}

impl Firehose {
    pub fn new(log: Arc<dyn EventLog>, limits: &Limits) -> Firehose {
        Firehose {
            log,
            slots: Arc::new(Slots {
                limits: *limits,
                held: Mutex::default(),
            }),
        }
    }

    /// Whether `caller` may follow the firehose: checked before anything
    /// a request carries is parsed.
    pub(crate) fn may(caller: &Caller) -> Result<()> {
        check(caller, Act::Firehose)
    }

    /// How long a client may read nothing before it is cut off.
    pub(crate) fn stall(&self) -> Duration {
        self.slots.limits.firehose_stall
    }

    /// A reader for the caller, in a slot.
    pub(crate) async fn open(
        &self,
        caller: &Caller,
        cursor: Option<&str>,
        filter: Filter,
    ) -> Result<(Reader, Slot)> {
        // The scope first: who may not follow learns nothing of the caps.
        Firehose::may(caller)?;
        let slot = self.slots.take(caller)?;
        let reader = Reader::open(caller, self.log.as_ref(), cursor, filter).await?;
        Ok((reader, slot))
    }
}

/// The open firehose connections, per process and per API key.
struct Slots {
    limits: Limits,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    total: usize,
    keys: HashMap<Arc<str>, usize>,
}

/// One connection's place; given back when dropped.
pub(crate) struct Slot {
    slots: Arc<Slots>,
    key: Option<Arc<str>>,
}

impl Slots {
    /// 503 `too_many_firehoses` past the process's cap, 429 past the key's.
    fn take(self: &Arc<Self>, caller: &Caller) -> Result<Slot> {
        let key = match caller {
            Caller::Server { key, .. } => Some(key.clone()),
            _ => None,
        };
        let l = &self.limits;
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let refuse = |which: &'static str, limit: usize, kind: ErrorKind| {
            metrics()
                .firehose
                .refused
                .get_or_create(&reason(which))
                .inc();
            Error::new(
                kind,
                "too_many_firehoses",
                format!("at most {limit} firehose connections are open per {which}"),
            )
        };
        if held.total >= l.max_firehoses {
            return Err(refuse("process", l.max_firehoses, ErrorKind::Unavailable));
        }
        if let Some(k) = &key {
            if held.keys.get(k).copied().unwrap_or(0) >= l.max_firehoses_per_key {
                let limit = l.max_firehoses_per_key;
                return Err(refuse("key", limit, ErrorKind::RateLimited));
            }
            *held.keys.entry(k.clone()).or_default() += 1;
        }
        held.total += 1;
        metrics().firehose.connections.set(held.total as i64);
        Ok(Slot {
            slots: self.clone(),
            key,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.slots.held.lock().unwrap_or_else(|p| p.into_inner());
        held.total -= 1;
        metrics().firehose.connections.set(held.total as i64);
        if let Some(k) = &self.key {
            if let Some(n) = held.keys.get_mut(k) {
                *n -= 1;
                if *n == 0 {
                    held.keys.remove(k);
                }
            }
        }
    }
}

/// What a connection sends: acts (and checkpoints), then, if the server
/// ends it, why.
pub(crate) enum Out {
    Act(Delivered),
    /// New filters apply from here on (a WebSocket's answer to them).
    Applied(String),
    /// The last message: `slow_reader`, `cursor_too_old`, `stream_lifetime`,
    /// `invalid_api_key`, `unavailable`, ...
    End(Error),
}

/// Forwards the reader's acts into `tx` until the client leaves, stalls
/// for [`Limits::firehose_stall`], the key stops holding (checked every read), the log
/// fails or the connection's lifetime is over; the last ones send
/// [`Out::End`]. One slot of the channel is always kept for it. Runs as a
/// task of its own.
pub(crate) fn forward<T: Send + 'static>(
    firehose: &Firehose,
    (mut reader, slot): (Reader, Slot),
    grant: Option<Grant>,
    tx: mpsc::Sender<T>,
    mut filters: Option<Filters>,
    map: fn(Out) -> T,
) {
    let limits = firehose.slots.limits;
    let deadline = Instant::now() + limits.stream_lifetime;
    tokio::spawn(async move {
        let _slot = slot;
        let ending = loop {
            if tx.is_closed() {
                break None;
            }
            if Instant::now() >= deadline {
                break Some(lifetime_over());
            }
            if let Some(Err(e)) = match &grant {
                Some(g) => Some(still_may(g).await),
                None => None,
            } {
                break Some(e);
            }
            let mut out = Vec::new();
            if let Some((filter, ack)) = filters.as_mut().and_then(taken) {
                reader.set_filter(filter);
                out.push(Out::Applied(ack));
            }
            match reader.next(READ_MAX, READ_WAIT).await {
                Ok(batch) => out.extend(batch.into_iter().map(Out::Act)),
                Err(e) => break Some(e),
            };
            match send_all(&tx, out, map, limits.firehose_stall).await {
                Sent::All => {}
                Sent::Gone => break None,
                Sent::Stalled => break Some(stalled(limits.firehose_stall)),
            }
        };
        if let Some(e) = ending {
            metrics()
                .firehose
                .ended
                .get_or_create(&reason(e.code()))
                .inc();
            let _ = tx.try_send(map(Out::End(e)));
        }
    });
}

/// Filters a client sends while connected, each with the answer that
/// tells it they apply from then on.
pub(crate) type Filters = watch::Receiver<Option<(Filter, String)>>;

/// Whether the connection's credential still holds and still has the
/// `firehose` scope (a key's scopes change with the keys file).
async fn still_may(grant: &Grant) -> Result<()> {
    let caller = grant.caller_now().await?;
    check(&caller, Act::Firehose)
}

/// New filters a client sent since the last read, if any.
fn taken(filters: &mut Filters) -> Option<(Filter, String)> {
    match filters.has_changed() {
        Ok(true) => filters.borrow_and_update().clone(),
        _ => None,
    }
}

enum Sent {
    All,
    Gone,
    Stalled,
}

async fn send_all<T>(
    tx: &mpsc::Sender<T>,
    batch: Vec<Out>,
    map: fn(Out) -> T,
    stall: Duration,
) -> Sent {
    for d in batch {
        // Two places free: one for this act, one kept for the end.
        match tokio::time::timeout(stall, tx.reserve_many(2)).await {
            Ok(Ok(mut permits)) => {
                if let Some(p) = permits.next() {
                    p.send(map(d));
                    metrics().firehose.sent.inc();
                }
            }
            Ok(Err(_)) => return Sent::Gone,
            Err(_) => return Sent::Stalled,
        }
    }
    Sent::All
}

fn stalled(stall: Duration) -> Error {
    Error::new(
        ErrorKind::Unavailable,
        "slow_reader",
        format!(
            "the client read nothing for {:?}; reconnect with the last cursor",
            stall
        ),
    )
}

fn lifetime_over() -> Error {
    Error::new(
        ErrorKind::Unavailable,
        "stream_lifetime",
        "the connection has lived its longest; reconnect with the last cursor",
    )
}
