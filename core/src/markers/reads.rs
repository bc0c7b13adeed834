//! Reads for resuming: a user's markers, and the home timeline paged
//! forward from a post, oldest unseen first.

use crate::error::Result;
use crate::feed::timeline::{read_timeline, ReadSource};
use crate::feed::Feed;
use crate::ids::{PostId, UserId};
use crate::metrics::metrics;
use crate::model::filter::FilterContext;
use crate::model::{page_size, FeedItem};
use crate::reads::Reads;
use socialite_domain::accounts::access::{check, Act, Caller};
use socialite_domain::feed::markers::Marker;

/// How far back from the newest entry a forward page may start: the
/// newest this many entries of a timeline are paged forward; a place older
/// than them starts at the oldest of them (`skipped` says so).
pub const FORWARD_WINDOW: usize = 1000;

/// A page of a timeline oldest first, after a place in it.
#[derive(Debug, Clone, PartialEq)]
pub struct ForwardPage {
    /// Oldest first.
    pub items: Vec<FeedItem>,
    /// The `after` of the next page (the position of the newest entry of
    /// this one); `None` when this page reaches the newest entry.
    pub next_cursor: Option<PostId>,
    /// Entries newer than `after` were left out: the place is older than
    /// the newest [`FORWARD_WINDOW`] entries, and the page starts at the
    /// oldest of those.
    pub skipped: bool,
}

impl Reads {
    /// The user's markers: their own to read.
    pub async fn markers(&self, caller: &Caller, id: &str) -> Result<Vec<Marker>> {
        let id = UserId::parse(id)?;
        check(caller, Act::ReadOwn(&id))?;
        let user = self.existing(&id).await?;
        self.stores.content.markers(&user.id).await
    }

    /// The home timeline after the post `after`, oldest first: where a
    /// user who stopped reading at `after` resumes. Reads the timeline
    /// newest first down to `after` (at most [`FORWARD_WINDOW`] entries),
    /// so every page sees deletions, mutes and follows made since.
    pub async fn timeline_after(
        &self,
        caller: &Caller,
        id: &str,
        limit: Option<u64>,
        after: &str,
    ) -> Result<(ForwardPage, ReadSource)> {
        let id = UserId::parse(id)?;
        let after = PostId::parse(after)?;
        check(caller, Act::ReadOwn(&id))?;
        let limit = page_size(limit)?;
        let hidden = self.reader_hidden(&id, FilterContext::Home).await?;
        let feed = Feed::Home(id);
        let mut newer: Vec<FeedItem> = Vec::new();
        let (mut before, mut source, mut reached) = (None, None, false);
        while newer.len() < FORWARD_WINDOW {
            let want = (FORWARD_WINDOW - newer.len()).min(crate::model::MAX_PAGE_SIZE);
            let page = read_timeline(&self.stores, &feed, &hidden, before, want).await?;
            source.get_or_insert(page.source);
            let ended = page.next.is_none();
            let reached_after = page.items.iter().any(|i| i.position <= after);
            let kept = page.items.into_iter().take_while(|i| i.position > after);
            newer.extend(kept);
            if ended || reached_after {
                reached = true;
                break;
            }
            before = page.next;
        }
        let source = source.unwrap_or(ReadSource::Cache);
        metrics().timeline_read(source.as_str());
        // Oldest first: the page is the oldest `limit` of what is newer.
        newer.reverse();
        let more = newer.len() > limit;
        newer.truncate(limit);
        let next_cursor = more.then(|| newer.last().map(|i| i.position)).flatten();
        let page = ForwardPage {
            items: newer,
            next_cursor,
            skipped: !reached,
        };
        Ok((page, source))
    }
}
