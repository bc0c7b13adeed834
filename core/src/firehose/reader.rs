//! One firehose connection's reading of the log: its cursor checked
//! against what the log keeps, then every public act its filter admits,
//! each with the cursor just after it.

use crate::error::{Error, Result};
use crate::ports::{cursor_too_old, EventLog, Extent, LogTail};
use socialite_domain::accounts::access::{check, Act, Caller};
use socialite_domain::firehose::cursor::Cursor;
use socialite_domain::firehose::filter::Filter;
use socialite_domain::firehose::PublicAct;
use std::time::{Duration, Instant};

/// How often a reader whose filter admits nothing is told where it is, so
/// that it resumes from there and not from its last admitted act.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(5);

/// What a reader hands out: an act with the cursor after it, or (no act) a
/// checkpoint: the cursor after acts the filter passed over.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivered {
    pub cursor: String,
    pub act: Option<PublicAct>,
    /// An act's place on the log: its partition and offset.
    pub placed: Option<(usize, u64)>,
}

pub struct Reader {
    tail: Box<dyn LogTail>,
    cursor: Cursor,
    filter: Filter,
    /// The cursor moved past acts nobody was told of since.
    passed_over: bool,
    checkpoint_at: Instant,
}

impl Reader {
    /// Starts reading for `caller` (a key with the `firehose` scope) after
    /// `from` (a cursor a client sent) or, without one, at the log's end:
    /// 400 `invalid_cursor` for a cursor of another log, 409
    /// `cursor_too_old` (naming the oldest there is) for one whose next
    /// events are gone.
    pub async fn open(
        caller: &Caller,
        log: &dyn EventLog,
        from: Option<&str>,
        filter: Filter,
    ) -> Result<Reader> {
        check(caller, Act::Firehose)?;
        let extent = log.extent().await?;
        let cursor = match from {
            Some(text) => checked(Cursor::parse(text)?.fitting(extent.len())?, &extent)?,
            None => Cursor::new(extent.iter().map(|e| e.next).collect()),
        };
        let tail = log.tail(cursor.next()).await?;
        Ok(Reader {
            tail,
            cursor,
            filter,
            passed_over: false,
            checkpoint_at: Instant::now() + CHECKPOINT_EVERY,
        })
    }

    /// Replaces the filter from the next read on (a client changing what
    /// it follows while connected); the cursor goes on from where it is.
    pub fn set_filter(&mut self, filter: Filter) {
        self.filter = filter;
    }

    /// The cursor after everything read so far.
    pub fn cursor(&self) -> String {
        self.cursor.to_string()
    }

    /// The next acts the filter admits, from up to `max` events of the
    /// log; waits at most `wait` for the log to grow. Empty when nothing
    /// came; a checkpoint every few seconds while only passed-over acts did.
    pub async fn next(&mut self, max: usize, wait: Duration) -> Result<Vec<Delivered>> {
        let placed = self.tail.read(max, wait).await?;
        let mut out = Vec::new();
        for p in placed {
            self.cursor.advance(p.partition, p.offset);
            match PublicAct::of(&p.event).filter(|a| self.filter.admits(a)) {
                Some(act) => {
                    out.push(Delivered {
                        cursor: self.cursor.to_string(),
                        act: Some(act),
                        placed: Some((p.partition, p.offset)),
                    });
                    self.passed_over = false;
                }
                None => self.passed_over = true,
            }
        }
        let now = Instant::now();
        if !out.is_empty() {
            self.checkpoint_at = now + CHECKPOINT_EVERY;
        } else if self.passed_over && now >= self.checkpoint_at {
            self.checkpoint_at = now + CHECKPOINT_EVERY;
            self.passed_over = false;
            out.push(Delivered {
                cursor: self.cursor.to_string(),
                act: None,
                placed: None,
            });
        }
        Ok(out)
    }
}

/// `cursor` if the log still keeps what follows it.
fn checked(cursor: Cursor, extent: &[Extent]) -> Result<Cursor> {
    let next = cursor.next();
    if next.iter().zip(extent).any(|(n, e)| *n > e.next) {
        return Err(Error::invalid(
            "invalid_cursor",
            "the cursor is past the end of this log: it belongs to another deployment",
        ));
    }
    if next.iter().zip(extent).any(|(n, e)| *n < e.oldest) {
        let oldest = next.iter().zip(extent).map(|(n, e)| (*n).max(e.oldest));
        return Err(cursor_too_old(oldest.collect()));
    }
    Ok(cursor)
}
