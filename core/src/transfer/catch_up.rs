//! A migration's catch-up: events of the source's log, in their order,
//! replayed onto the target store as the writes that queued them
//! ([`socialite_domain::transfer::replay`]). A user's deletion is replayed whole, as a
//! deletion, when its last event comes.

use crate::error::{ErrorKind, Result};
use crate::event::Event;
use crate::ports::{ContentStore, Transfer};
use crate::transfer::warm::Posters;
use socialite_domain::transfer::replay::deleted_user;
use std::time::Duration;

/// How many refusals a tally keeps to show.
const SHOWN: usize = 5;
/// Tries of an event whose store failed (not refused it) before giving up.
const TRIES: u32 = 5;

/// What a catch-up replayed.
#[derive(Debug, Default, Clone)]
pub struct Replayed {
    pub events: u64,
    /// Events that changed the target (the others it held already).
    pub changed: u64,
    /// Events the target's rules refused: a write superseded by a later
    /// event (replayed over a state that holds its successor), or one the
    /// verification will show; migrate fails a move on one refused after
    /// its verification.
    pub refused: u64,
    /// The first refusals: the log's sequence, and why.
    pub shown: Vec<(u64, String)>,
    /// Who posted (`--warm`).
    pub posters: Posters,
}

/// The target's side of a catch-up.
pub struct Target<'a> {
    pub transfer: &'a dyn Transfer,
    pub content: &'a dyn ContentStore,
}

impl Target<'_> {
    /// Replays `events` (with their log sequences) in order into `tally`.
    pub async fn replay(&self, events: &[(u64, Event)], tally: &mut Replayed) -> Result<()> {
        for (seq, event) in events {
            tally.events += 1;
            if let Event::PostCreated { post, .. } = event {
                tally.posters.note(&post.author, post.id);
            }
            match self.replay_one(event).await {
                Ok(changed) => tally.changed += u64::from(changed),
                Err(e) if refusal(e.kind()) => {
                    tally.refused += 1;
                    if tally.shown.len() < SHOWN {
                        tally
                            .shown
                            .push((*seq, format!("{}: {}", e.code(), e.message())));
                    }
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    async fn replay_one(&self, event: &Event) -> Result<bool> {
        let mut wait = Duration::from_millis(50);
        let mut tries = 0;
        loop {
            let done = match deleted_user(event) {
                Some(user) => self.content.delete_user(user).await,
                None => self.transfer.replay(event).await,
            };
            match done {
                Err(e) if !refusal(e.kind()) && tries + 1 < TRIES => {
                    tries += 1;
                    tracing::warn!(error = %e.chain(), "replaying an event failed; retrying");
                    tokio::time::sleep(wait).await;
                    wait *= 2;
                }
                done => return done,
            }
        }
    }
}

/// A rule's answer, not a store's failure.
pub(super) fn refusal(kind: ErrorKind) -> bool {
    !matches!(kind, ErrorKind::Unavailable | ErrorKind::Internal)
}
