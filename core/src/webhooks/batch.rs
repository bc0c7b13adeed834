//! Reading an endpoint's next batch from the log: up to its batch size of
//! acts its filter admits, sent as soon as the log has no more at once; a
//! replay's acts only up to its end.

use super::config::now_ms;
use crate::error::Result;
use crate::firehose::{Delivered, Reader};
use socialite_domain::firehose::cursor::Cursor;
use socialite_domain::webhooks::endpoint::covers;
use std::time::Duration;

/// Most reads of the log for one batch: past them, a batch of only
/// passed-over events returns, so its cursor is saved now and then.
const MAX_ROUNDS: usize = 4096;

/// Acts read and not yet delivered.
#[derive(Debug, Clone)]
pub(super) struct Batch {
    /// The cursor before its first act (where the endpoint's stream is).
    pub from: String,
    /// The cursor to move to once delivered.
    pub to: String,
    pub acts: Vec<Delivered>,
    pub replay: bool,
    /// When the oldest of its events was made (ms), for the queue's age.
    pub oldest_ms: u64,
}

/// What a read found.
pub(super) enum Read {
    Acts(Batch),
    /// No act, but the cursor moved past events the filter passed over
    /// (or past a replay's end).
    Passed(String),
    Nothing,
}

/// Reads after `from` (where `reader` is), waiting at most `wait` for the
/// first act. `until`: a replay's end.
pub(super) async fn read(
    reader: &mut Reader,
    from: &str,
    max: usize,
    wait: Duration,
    until: Option<&str>,
) -> Result<Read> {
    let mut acts = Vec::new();
    let until_cursor = until.map(Cursor::parse).transpose()?;
    let ended = |cursor: &str| until.is_some_and(|u| covers(cursor, u));
    let mut rounds = 0;
    while acts.len() < max && !ended(&reader.cursor()) && rounds < MAX_ROUNDS {
        let before = reader.cursor();
        // Waits only while nothing at all was read: a batch goes out as
        // soon as the log has no more at once.
        let waits = rounds == 0;
        let got = reader
            .next(max - acts.len(), if waits { wait } else { Duration::ZERO })
            .await?;
        rounds += 1;
        if got.is_empty() && reader.cursor() == before {
            break;
        }
        if rounds.is_multiple_of(64) {
            // Passing over many events reads without waiting: let the
            // other tasks of the thread run.
            tokio::task::yield_now().await;
        }
        for d in got {
            let keep = d.act.is_some() && until_cursor.as_ref().is_none_or(|u| within(&d, u));
            if keep {
                acts.push(d);
            }
        }
    }
    let cursor = reader.cursor();
    if acts.is_empty() {
        return Ok(match cursor != from {
            true => Read::Passed(cursor),
            false => Read::Nothing,
        });
    }
    // A replay that reached its end moves past it, ending it; live
    // delivery moves to its last act (what the filter passed over after
    // it is read again after a restart, and passed over again).
    let to = match ended(&cursor) {
        true => cursor,
        false => acts.last().map(|d| d.cursor.clone()).unwrap_or(cursor),
    };
    let oldest_ms = acts
        .iter()
        .filter_map(|d| d.act.as_ref().and_then(|a| a.at_ms()))
        .min()
        .unwrap_or_else(now_ms);
    Ok(Read::Acts(Batch {
        from: from.to_owned(),
        to,
        acts,
        replay: until.is_some(),
        oldest_ms,
    }))
}

/// Whether the act comes before `until` in its partition.
fn within(d: &Delivered, until: &Cursor) -> bool {
    match d.placed {
        Some((p, offset)) => until.next().get(p).is_some_and(|u| offset < *u),
        None => false,
    }
}
