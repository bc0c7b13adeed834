//! One endpoint's delivery, in a task of its own while this process holds
//! its lease: read a batch from the endpoint's cursor, sign it, post it,
//! log the attempt; on 2xx move the cursor, otherwise try the same batch
//! again on the schedule (a 410 or running out of tries turns the endpoint
//! off). Only this endpoint waits on its failures.

use super::batch::{read, Batch, Read};
use super::config::{hold_name, now_ms};
use super::outbound::{Answer, Request};
use super::shared::{Shared, RENEW_EVERY};
use crate::error::Result;
use crate::firehose::Reader;
use crate::metrics::{metrics, WebhookMetrics};
use crate::shutdown::Shutdown;
use socialite_domain::accounts::access::Caller;
use socialite_domain::firehose::cursor::Cursor;
use socialite_domain::webhooks::schedule::MAX_RETRY_AFTER;
use socialite_domain::webhooks::{sign, Attempt, Change, Endpoint, Outcome, Retry, State};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a read waits for the log.
const READ_WAIT: Duration = Duration::from_millis(500);
/// How long the endpoint as read serves before it is read again: an
/// admin's change (settings, secret, state, replay) reaches delivery within
/// this.
const FRESH: Duration = Duration::from_secs(1);
/// How often the log's hold follows the cursor (a stale hold keeps more).
const HOLD_EVERY: Duration = Duration::from_secs(2);
/// How often a cursor moved only past filtered-out events is saved.
const SAVE_PASSED_EVERY: Duration = Duration::from_secs(5);

pub(super) enum Step {
    Go,
    Stop,
}

/// Where an open reader stands: the stream, the filter it reads with, and
/// the stored cursor its next read continues from.
#[derive(PartialEq)]
struct Place {
    replay: bool,
    kinds: Vec<String>,
    authors: Vec<String>,
    at: String,
}

pub(super) struct Courier {
    id: String,
    shared: Arc<Shared>,
    reader: Option<(Place, Reader)>,
    pending: Option<Batch>,
    renewed: Option<Instant>,
    passed_saved: Instant,
    /// When the log's hold for the endpoint was last moved.
    held: Instant,
    /// The endpoint as last read, with this task's own changes since.
    known: Option<(Arc<Endpoint>, Instant)>,
    /// The endpoint was deleted.
    gone: bool,
}

impl Courier {
    pub(super) fn new(id: String, shared: Arc<Shared>) -> Courier {
        Courier {
            id,
            shared,
            reader: None,
            pending: None,
            renewed: Some(Instant::now()),
            passed_saved: Instant::now(),
            held: Instant::now() - HOLD_EVERY,
            known: None,
            gone: false,
        }
    }

    pub(super) async fn run(mut self, mut shutdown: Shutdown) {
        while !shutdown.fired() {
            match self.step(&mut shutdown).await {
                Ok(Step::Go) => {}
                Ok(Step::Stop) => break,
                Err(e) => {
                    tracing::warn!(endpoint = %self.id, error = %e.chain(), "webhook delivery failed; trying again");
                    self.reader = None;
                    if !shutdown.pause(Duration::from_secs(1)).await {
                        break;
                    }
                }
            }
        }
        let release = Change::Release {
            owner: self.shared.owner.clone(),
        };
        let _ = self.shared.store.change_endpoint(&self.id, &release).await;
        match self.gone {
            // Deleted (perhaps through another process): its series go.
            true => metrics().webhooks.forget(&self.id),
            false => {
                let age = &metrics().webhooks.queue_age;
                age.get_or_create(&WebhookMetrics::label(&self.id)).set(0);
            }
        }
    }

    async fn step(&mut self, shutdown: &mut Shutdown) -> Result<Step> {
        if !self.renew().await? {
            return Ok(Step::Stop);
        }
        let Some(ep) = self.endpoint().await? else {
            self.gone = true;
            return Ok(Step::Stop);
        };
        if ep.state != State::Active {
            return Ok(Step::Stop);
        }
        if let Some(retry) = ep.retry {
            let now = now_ms();
            if retry.next_try_ms > now {
                let wait = Duration::from_millis(retry.next_try_ms - now).min(RENEW_EVERY);
                shutdown.pause(wait).await;
                return Ok(Step::Go);
            }
        }
        let (replay, from, until) = match &ep.replay {
            Some(r) => (true, r.next.clone(), Some(r.until.clone())),
            None => (false, ep.live.clone(), None),
        };
        if self
            .pending
            .as_ref()
            .is_some_and(|b| b.replay != replay || b.from != from)
        {
            self.pending = None;
        }
        if self.pending.is_none() {
            match self.read(&ep, replay, &from, until.as_deref()).await? {
                Read::Acts(batch) => self.pending = Some(batch),
                Read::Passed(to) => {
                    self.passed(&ep, replay, &from, &to).await?;
                    return Ok(Step::Go);
                }
                Read::Nothing => return Ok(Step::Go),
            }
        }
        self.age();
        let batch = self.pending.clone().expect("a batch was read");
        let tries = ep.retry.map_or(1, |r| r.attempts + 1);
        self.deliver(&ep, &batch, tries).await
    }

    /// The endpoint: as known if read within [`FRESH`], else read again.
    async fn endpoint(&mut self) -> Result<Option<Arc<Endpoint>>> {
        if let Some((ep, at)) = &self.known {
            if at.elapsed() < FRESH {
                return Ok(Some(ep.clone()));
            }
        }
        let ep = self.shared.store.endpoint(&self.id).await?.map(Arc::new);
        self.known = ep.clone().map(|e| (e, Instant::now()));
        Ok(ep)
    }

    /// Applies this task's own change, to the store and to the endpoint as
    /// known; false if its condition did not hold.
    async fn change(&mut self, change: Change) -> Result<bool> {
        let done = self.shared.store.change_endpoint(&self.id, &change).await?;
        self.changed(&change, done);
        Ok(done)
    }

    /// Keeps the endpoint as known in step with a change the store took
    /// (`done`), or forgets it.
    fn changed(&mut self, change: &Change, done: bool) {
        match (&mut self.known, done) {
            (Some((ep, _)), true) => {
                Arc::make_mut(ep).apply(change);
            }
            _ => self.known = None,
        }
    }

    /// Renews the lease when due; false once another process holds it.
    async fn renew(&mut self) -> Result<bool> {
        if self.renewed.is_some_and(|at| at.elapsed() < RENEW_EVERY) {
            return Ok(true);
        }
        let now = now_ms();
        let claim = Change::Claim {
            owner: self.shared.owner.clone(),
            now_ms: now,
            until_ms: now + self.shared.lease().as_millis() as u64,
        };
        let held = self.shared.store.change_endpoint(&self.id, &claim).await?;
        self.renewed = held.then(Instant::now);
        Ok(held)
    }

    async fn read(
        &mut self,
        ep: &Endpoint,
        replay: bool,
        from: &str,
        until: Option<&str>,
    ) -> Result<Read> {
        let place = Place {
            replay,
            kinds: ep.settings.kinds.clone(),
            authors: ep.settings.authors.clone(),
            at: from.to_owned(),
        };
        if self.reader.as_ref().is_none_or(|(p, _)| *p != place) {
            self.reader = None;
            let filter = ep.settings.filter()?;
            let log = self.shared.log.as_ref();
            match Reader::open(&Caller::Trusted, log, Some(from), filter).await {
                Ok(r) => self.reader = Some((place, r)),
                Err(e) if e.code() == "cursor_too_old" => return self.skip(ep, replay, from).await,
                Err(e) => return Err(e),
            }
        }
        let (place, reader) = self.reader.as_mut().expect("a reader is open");
        let max = ep.settings.batch as usize;
        let got = read(reader, from, max, READ_WAIT, until).await;
        // The reader goes on from where it stands; `at` is the stored
        // cursor that leads there (passed-over events not yet saved lie
        // between).
        match &got {
            Ok(Read::Acts(b)) => place.at = b.to.clone(),
            Ok(Read::Passed(_) | Read::Nothing) => {}
            Err(_) => self.reader = None,
        }
        got
    }

    /// Saves a cursor moved past filtered-out events now and then (at
    /// once at a replay's end), so a restart need not read them again.
    async fn passed(&mut self, ep: &Endpoint, replay: bool, from: &str, to: &str) -> Result<()> {
        let ends = ep
            .replay
            .as_ref()
            .is_some_and(|r| socialite_domain::webhooks::endpoint::covers(to, &r.until));
        if ends || self.passed_saved.elapsed() >= SAVE_PASSED_EVERY {
            self.advance(&ep.id, replay, from, to).await?;
            self.passed_saved = Instant::now();
            if let Some((place, _)) = &mut self.reader {
                place.at = to.to_owned();
            }
        }
        Ok(())
    }

    /// The endpoint's next events are gone from the log (it was off longer
    /// than the log keeps them): logged, and delivery goes on from the
    /// oldest kept.
    async fn skip(&mut self, ep: &Endpoint, replay: bool, from: &str) -> Result<Read> {
        let extent = self.shared.log.extent().await?;
        // Only the partitions whose events are gone move; none goes back.
        let at = Cursor::parse(from)?;
        let next = at
            .next()
            .iter()
            .zip(&extent)
            .map(|(n, e)| (*n).max(e.oldest));
        let oldest = Cursor::new(next.collect()).to_string();
        let attempt = self.attempt(from, &oldest, 0, replay, 0, Outcome::Skipped);
        let attempt = Attempt {
            error: Some("these events are no longer on the log: skipped to the oldest kept".into()),
            ..attempt
        };
        self.shared.store.record_attempt(&ep.id, &attempt).await?;
        tracing::warn!(endpoint = %ep.id, from, to = %oldest, "webhook endpoint fell behind what the log keeps; events skipped");
        self.advance(&ep.id, replay, from, &oldest).await?;
        Ok(Read::Nothing)
    }

    async fn advance(&mut self, id: &str, replay: bool, from: &str, to: &str) -> Result<()> {
        let change = advance(replay, from, to);
        let done = self.change(change).await?;
        self.advanced(id, replay, to, done).await
    }

    /// After a move of the cursor to `to`: if it was `done`, the log's
    /// hold follows now and then; if not (moved by another hand: an admin's
    /// replay, a lapsed lease), delivery reads again from where it is.
    async fn advanced(&mut self, id: &str, replay: bool, to: &str, done: bool) -> Result<()> {
        if !done {
            self.reader = None;
            self.pending = None;
            return Ok(());
        }
        if !replay && self.held.elapsed() >= HOLD_EVERY {
            self.held = Instant::now();
            if let Ok(c) = Cursor::parse(to) {
                let hold = hold_name(id);
                self.shared.log.hold(&hold, Some(c.next())).await?;
            }
        }
        Ok(())
    }

    async fn deliver(&mut self, ep: &Endpoint, batch: &Batch, tries: u32) -> Result<Step> {
        let now = now_ms();
        // The same on every try of this batch, and only this batch: a
        // batch read again after a restart may hold more events, and gets
        // an id of its own (each replay too).
        let message_id = match &ep.replay {
            Some(r) if batch.replay => format!(
                "msg_{}_replay{}_{}_{}",
                ep.id, r.started_ms, batch.from, batch.to
            ),
            _ => format!("msg_{}_{}_{}", ep.id, batch.from, batch.to),
        };
        let body = (self.shared.encode)(&batch.acts, ep.settings.batch > 1);
        let timestamp = now / 1000;
        let signature = sign::header(&ep.secrets.signing(now), &message_id, timestamp, &body);
        let request = Request {
            url: ep.settings.url.clone(),
            headers: vec![
                ("webhook-id", message_id.clone()),
                ("webhook-timestamp", timestamp.to_string()),
                ("webhook-signature", signature),
                ("content-type", "application/json".into()),
            ],
            body,
        };
        let started = Instant::now();
        let answer = self.shared.outbound.post(request).await;
        let latency = started.elapsed().as_millis() as u64;
        let (outcome, status, error, next_try) = self.judge(&answer, tries, now);
        let mut attempt = self.attempt(
            &batch.from,
            &batch.to,
            batch.acts.len() as u32,
            batch.replay,
            tries,
            outcome,
        );
        attempt.message_id = message_id;
        (
            attempt.status,
            attempt.error,
            attempt.latency_ms,
            attempt.next_try_ms,
        ) = (status, error, latency, next_try);
        self.count(outcome, batch.acts.len());
        if outcome == Outcome::Delivered {
            self.pending = None;
            if ep.retry.is_some() {
                self.change(Change::Retry(None)).await?;
            }
            // The log entry and the cursor's move in one round of writes.
            let change = advance(batch.replay, &batch.from, &batch.to);
            let store = &self.shared.store;
            let (logged, moved) = tokio::join!(
                store.record_attempt(&ep.id, &attempt),
                store.change_endpoint(&ep.id, &change)
            );
            logged?;
            let done = moved?;
            self.changed(&change, done);
            self.advanced(&ep.id, batch.replay, &batch.to, done).await?;
            self.age();
            return Ok(Step::Go);
        }
        self.shared.store.record_attempt(&ep.id, &attempt).await?;
        match outcome {
            Outcome::Retrying => {
                let retry = Retry {
                    attempts: tries,
                    next_try_ms: next_try.unwrap_or(now),
                    since_ms: ep.retry.map_or(now, |r| r.since_ms),
                };
                self.change(Change::Retry(Some(retry))).await?;
                Ok(Step::Go)
            }
            // Gone, or the tries ran out.
            _ => {
                let reason = match outcome {
                    Outcome::Gone => "the endpoint answered 410 Gone".to_owned(),
                    _ => format!(
                        "{tries} tries failed; the last: {}",
                        attempt.error.as_deref().unwrap_or("no answer")
                    ),
                };
                let off = State::Disabled { reason, at_ms: now };
                self.change(Change::State(off)).await?;
                // An endpoint that is off holds the log no more (turned on
                // again, it skips what the log dropped meanwhile).
                self.shared.log.hold(&hold_name(&ep.id), None).await?;
                tracing::warn!(endpoint = %ep.id, outcome = outcome.as_str(), "webhook endpoint turned off");
                Ok(Step::Stop)
            }
        }
    }

    /// How an answer counts: the outcome, status, error and next try.
    fn judge(
        &self,
        answer: &Answer,
        tries: u32,
        now: u64,
    ) -> (Outcome, Option<u16>, Option<String>, Option<u64>) {
        let (status, retry_after, error) = match answer {
            Answer::Status {
                status,
                retry_after,
            } => (Some(*status), *retry_after, None),
            Answer::Failed(why) => (None, None, Some(why.clone())),
        };
        match status {
            Some(s) if (200..300).contains(&s) => return (Outcome::Delivered, status, None, None),
            Some(410) => return (Outcome::Gone, status, Some("410 Gone".into()), None),
            _ => {}
        }
        let error = error.or_else(|| status.map(|s| format!("answered {s}")));
        let jitter = (now % 1000) as f64 / 1000.0;
        let scheduled = self.shared.config.schedule.delay(tries, jitter);
        let asked = match status {
            Some(429 | 503) => retry_after.map(|d| d.min(MAX_RETRY_AFTER)),
            _ => None,
        };
        match (scheduled, asked) {
            (None, _) => (Outcome::Exhausted, status, error, None),
            (Some(d), asked) => {
                // An endpoint's own `Retry-After` (429, 503) waits longer
                // than the schedule's delay, never shorter (a `Retry-After: 0`
                // must not make a tight loop of the tries).
                let wait = asked.map_or(d, |a| a.max(d));
                (
                    Outcome::Retrying,
                    status,
                    error,
                    Some(now + wait.as_millis() as u64),
                )
            }
        }
    }

    fn attempt(
        &self,
        from: &str,
        to: &str,
        events: u32,
        replay: bool,
        tries: u32,
        outcome: Outcome,
    ) -> Attempt {
        Attempt {
            seq: self.shared.next_seq(),
            at_ms: now_ms(),
            message_id: String::new(),
            from: from.to_owned(),
            to: to.to_owned(),
            events,
            replay,
            attempt: tries,
            outcome,
            status: None,
            error: None,
            latency_ms: 0,
            next_try_ms: None,
        }
    }

    fn count(&self, outcome: Outcome, events: usize) {
        let m = &metrics().webhooks;
        let l = WebhookMetrics::label(&self.id);
        match outcome {
            Outcome::Delivered => {
                m.delivered.get_or_create(&l).inc();
                m.events.get_or_create(&l).inc_by(events as u64);
            }
            Outcome::Skipped => {}
            _ => {
                m.failed.get_or_create(&l).inc();
            }
        }
    }

    /// The age of the oldest event waiting, on the endpoint's gauge.
    fn age(&self) {
        let age = self
            .pending
            .as_ref()
            .map_or(0, |b| now_ms().saturating_sub(b.oldest_ms) / 1000);
        let g = &metrics().webhooks.queue_age;
        g.get_or_create(&WebhookMetrics::label(&self.id))
            .set(age as i64);
    }
}

fn advance(replay: bool, from: &str, to: &str) -> Change {
    Change::Advance {
        replay,
        from: from.to_owned(),
        to: to.to_owned(),
    }
}
