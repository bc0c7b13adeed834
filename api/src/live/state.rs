//! What the live routes of both transports share: the reads, the hub, the
//! caps on open streams, and the loop that forwards a stream's events until
//! its client leaves, its credential stops holding or its lifetime ends.

use crate::auth::Grant;
use crate::limits::Limits;
use socialite_core::error::{Error, ErrorKind, Result};
use socialite_core::ids::UserId;
use socialite_core::live::hub::LiveHub;
use socialite_core::live::stream::LiveStream;
use socialite_core::live::LiveEvent;
use socialite_core::metrics::{metrics, reason};
use socialite_core::reads::Reads;
use socialite_domain::accounts::access::{check, Act, Caller};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc;
use tokio::time::Instant;

/// How often an open stream's credential is checked again.
const RECHECK: Duration = Duration::from_secs(1);

/// What the live routes need: the reads (checks and resumes), the hub and
/// the stream caps.
#[derive(Clone)]
pub struct Live {
    pub reads: Arc<Reads>,
    pub hub: Arc<LiveHub>,
    pub slots: Arc<StreamSlots>,
}

impl Live {
    pub fn new(reads: Arc<Reads>, hub: Arc<LiveHub>, limits: &Limits) -> Live {
        Live {
            reads,
            hub,
            slots: Arc::new(StreamSlots::new(limits)),
        }
    }
}

/// The open streams, counted per process, per timeline user and per API
/// key.
pub struct StreamSlots {
    limits: Limits,
    held: Mutex<Held>,
}

#[derive(Default)]
struct Held {
    total: usize,
    users: HashMap<UserId, usize>,
    keys: HashMap<Arc<str>, usize>,
}

/// One open stream's place; given back when dropped.
pub struct Slot {
    slots: Arc<StreamSlots>,
    user: UserId,
    key: Option<Arc<str>>,
}

fn too_many(which: &'static str, limit: usize, kind: ErrorKind) -> Error {
    metrics()
        .live_streams_refused
        .get_or_create(&reason(which))
        .inc();
    Error::new(
        kind,
        "too_many_streams",
        format!("at most {limit} live streams are open per {which}"),
    )
}

impl StreamSlots {
    pub fn new(limits: &Limits) -> StreamSlots {
        StreamSlots {
            limits: *limits,
            held: Mutex::default(),
        }
    }

    /// A place for a stream of `user`'s timeline opened by `caller`: 429
    /// `too_many_streams` past the user's or the key's cap, 503 past the
    /// process's.
    pub fn take(self: &Arc<Self>, user: &UserId, caller: &Caller) -> Result<Slot> {
        let key = match caller {
            Caller::Server { key, .. } => Some(key.clone()),
            _ => None,
        };
        let l = &self.limits;
        let mut held = self.held.lock().expect("not poisoned");
        if held.total >= l.max_streams {
            return Err(too_many("process", l.max_streams, ErrorKind::Unavailable));
        }
        if held.users.get(user).copied().unwrap_or(0) >= l.max_streams_per_user {
            return Err(too_many(
                "user",
                l.max_streams_per_user,
                ErrorKind::RateLimited,
            ));
        }
        if let Some(k) = &key {
            if held.keys.get(k).copied().unwrap_or(0) >= l.max_streams_per_key {
                return Err(too_many(
                    "key",
                    l.max_streams_per_key,
                    ErrorKind::RateLimited,
                ));
            }
            *held.keys.entry(k.clone()).or_default() += 1;
        }
        *held.users.entry(user.clone()).or_default() += 1;
        held.total += 1;
        Ok(Slot {
            slots: self.clone(),
            user: user.clone(),
            key,
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut held = self.slots.held.lock().expect("not poisoned");
        held.total -= 1;
        fn release<K: std::hash::Hash + Eq>(map: &mut HashMap<K, usize>, k: &K) {
            if let Some(n) = map.get_mut(k) {
                *n -= 1;
                if *n == 0 {
                    map.remove(k);
                }
            }
        }
        release(&mut held.users, &self.user);
        if let Some(k) = &self.key {
            release(&mut held.keys, k);
        }
    }
}

/// What a stream sends: its events, then, if the server ends it, why.
pub enum Out {
    Event(LiveEvent),
    /// The last message: an error whose code says why (`token_expired`,
    /// `token_revoked`, `account_suspended`, `invalid_api_key`,
    /// `stream_lifetime`, ...).
    End(Error),
}

/// Opens `user`'s stream for the request's caller, in a slot.
pub async fn open(
    live: &Live,
    caller: &Caller,
    user: &str,
    last_event_id: Option<&str>,
) -> Result<(LiveStream, Slot)> {
    let id = UserId::parse(user)?;
    // Who may not read the timeline learns nothing of its streams.
    check(caller, Act::ReadOwn(&id))?;
    let slot = live.slots.take(&id, caller)?;
    let stream = LiveStream::open(&live.hub, &live.reads, caller, user, last_event_id).await?;
    Ok((stream, slot))
}

/// Forwards the stream's events into `tx` until the client leaves (the
/// channel closes), the stream ends, the credential stops holding (checked
/// every second; a token also at its expiry), or the stream's lifetime is
/// over; the last two send [`Out::End`]. Runs as a task of its own.
pub fn forward<T: Send + 'static>(
    live: &Live,
    (mut stream, slot): (LiveStream, Slot),
    grant: Option<Grant>,
    tx: mpsc::Sender<T>,
    map: fn(Out) -> T,
) {
    let reads = live.reads.clone();
    let mut deadline = Instant::now() + live.slots.limits.stream_lifetime;
    let mut end_reason = "stream_lifetime";
    if let Some(exp) = grant.as_ref().and_then(|g| g.identity.expires_at) {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let left = Instant::now() + Duration::from_secs(exp.saturating_sub(now));
        if left < deadline {
            deadline = left;
            end_reason = "expired_token";
        }
    }
    tokio::spawn(async move {
        let mut recheck = tokio::time::interval_at(Instant::now() + RECHECK, RECHECK);
        let ending = loop {
            tokio::select! {
                event = stream.next() => match event {
                    Some(e) => {
                        if tx.send(map(Out::Event(e))).await.is_err() {
                            break None;
                        }
                    }
                    None => break None,
                },
                // Ends when the client leaves, even while no event comes.
                _ = tx.closed() => break None,
                _ = tokio::time::sleep_until(deadline) => break Some(ended(end_reason)),
                _ = recheck.tick() => {
                    if let Err(e) = still_holds(grant.as_ref(), &reads, &slot.user).await {
                        break Some(e);
                    }
                }
            }
        };
        if let Some(e) = ending {
            metrics()
                .live_streams_ended
                .get_or_create(&reason(e.code()))
                .inc();
            let _ = tx.send(map(Out::End(e))).await;
        }
    });
}

/// Whether a stream may go on: its credential still holds, and its
/// timeline's owner is not suspended.
async fn still_holds(grant: Option<&Grant>, reads: &Reads, user: &UserId) -> Result<()> {
    if let Some(g) = grant {
        g.recheck().await?;
    }
    reads.not_suspended(user).await.map_err(|_| {
        Error::new(
            ErrorKind::Forbidden,
            "account_suspended",
            format!("the account {user} is suspended"),
        )
    })
}

fn ended(code: &'static str) -> Error {
    match code {
        "expired_token" => Error::new(
            ErrorKind::Unauthenticated,
            "expired_token",
            "the stream's token has expired; reconnect with a new one",
        ),
        _ => Error::new(
            ErrorKind::Unavailable,
            "stream_lifetime",
            "the stream has lived its longest; reconnect (with Last-Event-ID) to continue",
        ),
    }
}
