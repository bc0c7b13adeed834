//! An endpoint as the stores keep it: what an admin set ([`Settings`],
//! [`Secrets`], [`State`]) beside how far delivery went (the cursors, the
//! pending retry, the lease of the process delivering). Every change is a
//! [`Change`], applied by [`Endpoint::apply`]; a store that cannot run it
//! in one step must do what it does (the conformance suite checks).

use crate::error::{Error, Result};
use crate::firehose::cursor::Cursor;
use crate::firehose::filter::Filter;
use serde::{Deserialize, Serialize};

/// Longest description.
pub const MAX_DESCRIPTION_CHARS: usize = 256;
/// Most events one request may carry.
pub const MAX_BATCH: u32 = 100;
/// Delivery attempts kept per endpoint, newest first.
pub const KEPT_ATTEMPTS: usize = 1_000;

/// 400 `invalid_webhook_id` unless `id` could be an endpoint's: `wh_`
/// and 1 to 64 lower-case letters and digits.
pub fn check_id(id: &str) -> Result<()> {
    let ok = id.strip_prefix("wh_").is_some_and(|rest| {
        (1..=64).contains(&rest.len())
            && rest
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    });
    match ok {
        true => Ok(()),
        false => Err(Error::invalid(
            "invalid_webhook_id",
            "a webhook endpoint's id is `wh_` and 1 to 64 lower-case letters and digits",
        )),
    }
}

/// What an admin sets of an endpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settings {
    /// `http` or `https`, without credentials.
    pub url: String,
    /// Kinds of acts delivered (names of `firehose::Kind`); empty: all.
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Accounts whose acts are delivered; empty: all.
    #[serde(default)]
    pub authors: Vec<String>,
    #[serde(default)]
    pub description: String,
    /// Most events one request carries (1: one event per request, not a
    /// batch).
    pub batch: u32,
}

impl Settings {
    /// 400 naming what is wrong: the URL (see [`super::address::url`]), a
    /// kind or author the firehose refuses, the description's length, the
    /// batch size.
    pub fn check(&self) -> Result<()> {
        super::address::url(&self.url)?;
        self.filter()?;
        if self.description.chars().count() > MAX_DESCRIPTION_CHARS
            || self.description.chars().any(char::is_control)
        {
            return Err(Error::invalid(
                "invalid_description",
                format!("a description is at most {MAX_DESCRIPTION_CHARS} characters, none a control character"),
            ));
        }
        if !(1..=MAX_BATCH).contains(&self.batch) {
            return Err(Error::invalid(
                "invalid_batch",
                format!("batch is 1 to {MAX_BATCH} events"),
            ));
        }
        Ok(())
    }

    /// The firehose filter the endpoint's acts pass.
    pub fn filter(&self) -> Result<Filter> {
        Filter::new(
            self.kinds.iter().map(String::as_str),
            self.authors.iter().map(String::as_str),
        )
    }
}

/// The secrets requests are signed with: the current one, and while a
/// rotation's grace lasts the one before it. Never printed: `Debug` shows
/// only whether each is set.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Secrets {
    pub current: String,
    #[serde(default)]
    pub previous: Option<String>,
    /// Until when `previous` signs too.
    #[serde(default)]
    pub previous_until_ms: u64,
}

impl std::fmt::Debug for Secrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secrets")
            .field("current", &"<secret>")
            .field("previous", &self.previous.as_ref().map(|_| "<secret>"))
            .field("previous_until_ms", &self.previous_until_ms)
            .finish()
    }
}

impl Secrets {
    pub fn new(current: String) -> Secrets {
        Secrets {
            current,
            previous: None,
            previous_until_ms: 0,
        }
    }

    /// Every secret that signs at `now_ms`, the current one first.
    pub fn signing(&self, now_ms: u64) -> Vec<&str> {
        let mut out = vec![self.current.as_str()];
        if let Some(p) = &self.previous {
            if now_ms < self.previous_until_ms {
                out.push(p);
            }
        }
        out
    }

    /// `new` current, the current one signing beside it for `grace_ms`.
    pub fn rotated(&self, new: String, now_ms: u64, grace_ms: u64) -> Secrets {
        Secrets {
            current: new,
            previous: (grace_ms > 0).then(|| self.current.clone()),
            previous_until_ms: now_ms.saturating_add(grace_ms),
        }
    }
}

/// Whether deliveries go out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum State {
    Active,
    /// Off until an admin turns it on: by the admin, by a 410 answer, or
    /// when a batch's retries ran out.
    Disabled {
        reason: String,
        at_ms: u64,
    },
}

impl State {
    /// Why and since when (ms) deliveries are off; `None` while on.
    pub fn off(&self) -> Option<(&str, u64)> {
        match self {
            State::Active => None,
            State::Disabled { reason, at_ms } => Some((reason, *at_ms)),
        }
    }
}

/// A cursor range delivered again on an admin's request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Replay {
    /// The next event to deliver again.
    pub next: String,
    /// Where the replay ends (a cursor: the events before it).
    pub until: String,
    /// When it was asked for (ms): each replay's `webhook-id`s are its own.
    #[serde(default)]
    pub started_ms: u64,
}

/// A batch that failed, waiting for its next try.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Retry {
    /// Tries made so far.
    pub attempts: u32,
    pub next_try_ms: u64,
    /// When the first try failed.
    pub since_ms: u64,
}

/// The process delivering to the endpoint, until the lease ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    pub owner: String,
    pub until_ms: u64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    pub id: String,
    pub created_ms: u64,
    pub settings: Settings,
    pub secrets: Secrets,
    pub state: State,
    /// The cursor of the next live event to deliver.
    pub live: String,
    #[serde(default)]
    pub replay: Option<Replay>,
    #[serde(default)]
    pub retry: Option<Retry>,
    #[serde(default)]
    pub lease: Option<Lease>,
}

/// One change to a stored endpoint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Settings(Settings),
    Secrets(Secrets),
    /// Turning an endpoint on forgets its pending retry: it is tried at once.
    State(State),
    Replay(Option<Replay>),
    Retry(Option<Retry>),
    /// Moves a cursor from `from` to `to`, if it is still at `from` (a
    /// process whose lease lapsed must not move it back). `replay`: the
    /// replay's cursor; reaching its end ([`covers`]) ends the replay.
    Advance {
        replay: bool,
        from: String,
        to: String,
    },
    /// Takes the lease for `owner` until `until_ms`, if it is free at
    /// `now_ms` or already `owner`'s.
    Claim {
        owner: String,
        now_ms: u64,
        until_ms: u64,
    },
    /// Gives the lease up, if `owner` holds it.
    Release {
        owner: String,
    },
}

impl Endpoint {
    /// Applies `change`; false if its condition did not hold (nothing
    /// changed).
    pub fn apply(&mut self, change: &Change) -> bool {
        match change {
            Change::Settings(s) => self.settings = s.clone(),
            Change::Secrets(s) => self.secrets = s.clone(),
            Change::State(s) => {
                if *s == State::Active {
                    self.retry = None;
                }
                self.state = s.clone();
            }
            Change::Replay(r) => self.replay = r.clone(),
            Change::Retry(r) => self.retry = *r,
            Change::Advance { replay, from, to } => return self.advance(*replay, from, to),
            Change::Claim {
                owner,
                now_ms,
                until_ms,
            } => {
                let free = match &self.lease {
                    None => true,
                    Some(l) => l.until_ms <= *now_ms || l.owner == *owner,
                };
                if !free {
                    return false;
                }
                self.lease = Some(Lease {
                    owner: owner.clone(),
                    until_ms: *until_ms,
                });
            }
            Change::Release { owner } => {
                if self.lease.as_ref().is_none_or(|l| l.owner != *owner) {
                    return false;
                }
                self.lease = None;
            }
        }
        true
    }

    fn advance(&mut self, replay: bool, from: &str, to: &str) -> bool {
        if !replay {
            if self.live != from {
                return false;
            }
            self.live = to.to_owned();
            return true;
        }
        match &mut self.replay {
            Some(r) if r.next == from => {
                if covers(to, &r.until) {
                    self.replay = None;
                } else {
                    r.next = to.to_owned();
                }
                true
            }
            _ => false,
        }
    }
}

/// Whether cursor `to` is at or past `until` in every partition (a
/// replay read on Kafka can pass its end in some partitions first).
pub fn covers(to: &str, until: &str) -> bool {
    match (Cursor::parse(to), Cursor::parse(until)) {
        (Ok(to), Ok(until)) => {
            to.next().len() == until.next().len()
                && to.next().iter().zip(until.next()).all(|(t, u)| t >= u)
        }
        _ => to == until,
    }
}

/// How one delivery attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A 2xx answer.
    Delivered,
    /// Failed; tried again at `next_try_ms`.
    Retrying,
    /// Failed, and the schedule's tries ran out: the endpoint is disabled.
    Exhausted,
    /// A 410 answer: the endpoint is disabled.
    Gone,
    /// The events were no longer on the log (the endpoint was off longer
    /// than the log keeps them): skipped to the oldest kept.
    Skipped,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Delivered => "delivered",
            Outcome::Retrying => "retrying",
            Outcome::Exhausted => "exhausted",
            Outcome::Gone => "gone",
            Outcome::Skipped => "skipped",
        }
    }
}

/// One delivery attempt, for the endpoint's delivery log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attempt {
    /// Orders an endpoint's attempts: later ones are greater.
    pub seq: u64,
    pub at_ms: u64,
    /// The `webhook-id` sent.
    pub message_id: String,
    /// The cursor of the batch's first event, and the one after its last.
    pub from: String,
    pub to: String,
    pub events: u32,
    /// A replay's delivery, not the live one.
    pub replay: bool,
    /// 1 for the first try of the batch.
    pub attempt: u32,
    pub outcome: Outcome,
    /// The answer's status, if there was one.
    pub status: Option<u16>,
    /// Why it failed, without the answer's body.
    pub error: Option<String>,
    pub latency_ms: u64,
    pub next_try_ms: Option<u64>,
}
