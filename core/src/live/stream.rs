//! A stream of one user's home timeline, resumed from an event id: what the
//! client missed comes from the timeline, then the live events, each entry
//! once.

use super::hub::{LiveHub, Watch};
use super::LiveEvent;
use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::reads::Reads;
use rustc_hash::FxHashSet;
use socialite_domain::accounts::access::Caller;
use std::collections::VecDeque;
use std::sync::Arc;

/// Most missed entries a resume sends; past that the client reloads.
pub(crate) const RESUME_MAX: usize = 1000;
/// Page size of the resume's timeline reads.
const RESUME_PAGE: u64 = 200;

pub struct LiveStream {
    watch: Watch,
    backlog: VecDeque<LiveEvent>,
    /// Entries the resume sent, which the live events may repeat.
    sent: FxHashSet<PostId>,
    ended: bool,
}

impl LiveStream {
    /// Opens `user`'s stream as `caller` (who must be allowed to read the
    /// timeline). With `last_event_id`, first the entries newer than it.
    pub async fn open(
        hub: &Arc<LiveHub>,
        reads: &Reads,
        caller: &Caller,
        user: &str,
        last_event_id: Option<&str>,
    ) -> Result<LiveStream> {
        let last = last_event_id.map(PostId::parse).transpose()?;
        // Checks the caller and the user, as a read of the timeline does.
        reads.timeline(caller, user, Some(1), None).await?;
        let id = UserId::parse(user)?;
        // Watching begins before the missed entries are read, so nothing
        // falls between the two.
        let watch = hub.watch(&id).await?;
        let mut stream = LiveStream {
            watch,
            backlog: VecDeque::new(),
            sent: FxHashSet::default(),
            ended: false,
        };
        if let Some(last) = last {
            stream.catch_up(reads, caller, user, last).await?;
        }
        Ok(stream)
    }

    async fn catch_up(
        &mut self,
        reads: &Reads,
        caller: &Caller,
        user: &str,
        last: PostId,
    ) -> Result<()> {
        let mut missed = Vec::new();
        let mut before: Option<String> = None;
        'pages: loop {
            let (page, _) = reads
                .timeline(caller, user, Some(RESUME_PAGE), before.as_deref())
                .await?;
            for item in page.items {
                if item.position <= last {
                    break 'pages;
                }
                missed.push(item);
                if missed.len() > RESUME_MAX {
                    self.backlog.push_back(LiveEvent::Reload);
                    self.ended = true;
                    return Ok(());
                }
            }
            match page.next_cursor {
                Some(c) => before = Some(c.to_string()),
                None => break,
            }
        }
        // Oldest first, as they would have come.
        for item in missed.into_iter().rev() {
            self.sent.insert(item.position);
            self.backlog.push_back(LiveEvent::Entry(Box::new(item)));
        }
        Ok(())
    }

    /// The next event; after `Reload`, `None`.
    pub async fn next(&mut self) -> Option<LiveEvent> {
        if let Some(e) = self.backlog.pop_front() {
            return Some(e);
        }
        if self.ended {
            return None;
        }
        loop {
            match self.watch.recv().await {
                Some(LiveEvent::Entry(i)) if self.sent.contains(&i.position) => continue,
                Some(e) => return Some(e),
                None => {
                    self.ended = true;
                    return Some(LiveEvent::Reload);
                }
            }
        }
    }

    pub fn user(&self) -> &UserId {
        self.watch.user()
    }
}
