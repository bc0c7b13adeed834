//! A user's notifications as they read them: entries newest first, each
//! with its visible actors and count ([`socialite_domain::notifications::notified`]),
//! and how many are unread (newer than their notifications marker).

use crate::error::Result;
use crate::ids::{PostId, UserId};
use crate::model::filter::FilterContext;
use crate::model::filter::FilterHit;
use crate::model::Post;
use crate::model::{page_size, Page};
use crate::reads::Reads;
use socialite_domain::accounts::access::{check, Act, Caller};
use socialite_domain::feed::markers::MarkerTimeline;
use socialite_domain::filters::matcher::Verdict;
use socialite_domain::graph::relations::Hidden;
use socialite_domain::notifications::notified::{
    GroupKey, NoticeGroup, NoticeKind, ACTORS_SHOWN, MAX_UNREAD,
};
use std::collections::{HashMap, HashSet};

/// An entry with at most this many notices is read whole when the reader
/// hides someone; a larger one counts the hidden among its actors.
const READ_WHOLE: u64 = 100;

/// One entry of a user's notifications.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    pub kind: NoticeKind,
    /// The post it is about; none for follows.
    pub post: Option<PostId>,
    /// The newest actors the reader sees, newest first.
    pub actors: Vec<UserId>,
    /// How many notices of the entry the reader sees.
    pub count: u64,
    /// The entry's newest notice: its place, its cursor and what a
    /// notifications marker holds.
    pub latest: PostId,
    /// The reader's warning filters that match the post it is about.
    pub filtered: Vec<FilterHit>,
}

impl Reads {
    /// The user's notifications, newest first, below the place `before`.
    pub async fn notifications(
        &self,
        caller: &Caller,
        id: &str,
        limit: Option<u64>,
        before: Option<&str>,
    ) -> Result<Page<Notification, PostId>> {
        let id = UserId::parse(id)?;
        check(caller, Act::ReadOwn(&id))?;
        let limit = page_size(limit)?;
        let before = before.map(PostId::parse).transpose()?;
        let user = self.existing(&id).await?;
        let hidden = self
            .hidden_from(&user.id, FilterContext::Notifications)
            .await?;
        let place = (before, None);
        let mut entries = self.entries(&user.id, &hidden, place, limit + 1).await?;
        let next_cursor = (entries.len() > limit).then(|| entries[limit - 1].latest);
        entries.truncate(limit);
        Ok(Page {
            items: entries,
            next_cursor,
        })
    }

    /// How many entries of the user's notifications are newer than their
    /// notifications marker (all, without one), counted up to
    /// [`MAX_UNREAD`]; and whether the count stopped there.
    pub async fn unread_notifications(&self, caller: &Caller, id: &str) -> Result<(u64, bool)> {
        let id = UserId::parse(id)?;
        check(caller, Act::ReadOwn(&id))?;
        let user = self.existing(&id).await?;
        let markers = self.stores.content.markers(&user.id).await?;
        let read = markers
            .iter()
            .find(|m| m.timeline == MarkerTimeline::Notifications)
            .map(|m| m.last_read);
        let hidden = self
            .hidden_from(&user.id, FilterContext::Notifications)
            .await?;
        // Alerts are read down to the marker only: the count stops there.
        let place = (None, read);
        let entries = self
            .entries(&user.id, &hidden, place, MAX_UNREAD + 1)
            .await?;
        let unread = entries
            .iter()
            .take_while(|e| read.is_none_or(|r| e.latest > r))
            .count();
        Ok((unread.min(MAX_UNREAD) as u64, unread > MAX_UNREAD))
    }

    /// Up to `want` entries below `before` as the reader sees them, read on
    /// past those they see nothing of; alerts only above `above`, when
    /// given.
    async fn entries(
        &self,
        user: &UserId,
        hidden: &Hidden,
        (mut before, above): (Option<PostId>, Option<PostId>),
        want: usize,
    ) -> Result<Vec<Notification>> {
        let content = &self.stores.content;
        let mut out = Vec::new();
        loop {
            let (groups, ended) = self.groups(user, hidden, (before, above), want).await?;
            before = groups.last().map(|g| g.latest);
            let about: Vec<PostId> = groups.iter().filter_map(|g| g.group.post).collect();
            let stored: HashMap<PostId, Post> = content
                .get_posts(&about)
                .await?
                .into_iter()
                .map(|p| (p.id, p))
                .collect();
            for g in groups {
                let verdict = match g.group.post.map(|p| stored.get(&p)) {
                    None => Verdict::Show,
                    Some(None) => continue, // about a post deleted since
                    Some(Some(post)) => hidden.verdict(post),
                };
                let filtered = match verdict {
                    Verdict::Hide => continue,
                    Verdict::Warn(hits) => hits,
                    Verdict::Show => Vec::new(),
                };
                if let Some(n) = self.seen(user, hidden, g).await? {
                    out.push(Notification { filtered, ..n });
                }
            }
            if ended || out.len() >= want {
                out.truncate(want);
                return Ok(out);
            }
        }
    }

    /// The newest `want` entries below `before`, the stored and the alerts
    /// together, newest first; and whether none are left below them. An
    /// alert kept as a notice by an earlier version is read once.
    async fn groups(
        &self,
        user: &UserId,
        hidden: &Hidden,
        (before, above): (Option<PostId>, Option<PostId>),
        want: usize,
    ) -> Result<(Vec<NoticeGroup>, bool)> {
        let stored = self
            .stores
            .content
            .notice_groups(user, before, want)
            .await?;
        let alerts = self.alerts(user, hidden, (before, above), want).await?;
        let mut ended = stored.len() < want && alerts.len() < want;
        let held: HashSet<GroupKey> = stored.iter().map(|g| g.group).collect();
        let mut groups = stored;
        groups.extend(alerts.into_iter().filter(|a| !held.contains(&a.group)));
        groups.sort_by_key(|g| std::cmp::Reverse(g.latest));
        if groups.len() > want {
            groups.truncate(want);
            ended = false;
        }
        Ok((groups, ended))
    }

    /// The entry as the reader sees it: without the notices of the actors
    /// `hidden` from them; `None` when that leaves none.
    async fn seen(
        &self,
        user: &UserId,
        hidden: &Hidden,
        g: NoticeGroup,
    ) -> Result<Option<Notification>> {
        let content = &self.stores.content;
        let key = g.group;
        let whole = g.actors.len() as u64 == g.count;
        let hid = match (hidden.is_empty(), g.count <= READ_WHOLE) {
            (true, _) => 0,
            // An alert, or any entry whose notices all show: its actors.
            (false, _) if whole => g.actors.iter().filter(|(_, a)| hidden.hides(a)).count(),
            (false, true) => {
                let all = content
                    .entry_notices(user, key, None, g.count as usize)
                    .await?;
                all.iter().filter(|(_, a)| hidden.hides(a)).count()
            }
            (false, false) => {
                let by = content
                    .entry_notices_by(user, key, &hidden.listed())
                    .await?;
                by.len()
            }
        };
        let count = g.count.saturating_sub(hid as u64);
        if count == 0 {
            return Ok(None);
        }
        let actors = self.newest_actors(user, hidden, &g).await?;
        Ok(Some(Notification {
            kind: key.kind,
            post: key.post,
            actors,
            count,
            latest: g.latest,
            filtered: Vec::new(),
        }))
    }

    /// The newest [`ACTORS_SHOWN`] distinct actors of the entry that the
    /// reader sees: from the entry's newest notices, read on when those
    /// repeat someone or are hidden.
    async fn newest_actors(
        &self,
        user: &UserId,
        hidden: &Hidden,
        g: &NoticeGroup,
    ) -> Result<Vec<UserId>> {
        let mut actors: Vec<UserId> = Vec::with_capacity(ACTORS_SHOWN);
        let mut page = g.actors.clone();
        loop {
            let last = page.last().map(|(id, _)| *id);
            let full = page.len() >= ACTORS_SHOWN;
            for (_, a) in page {
                if !hidden.hides(&a) && !actors.contains(&a) && actors.len() < ACTORS_SHOWN {
                    actors.push(a);
                }
            }
            if actors.len() == ACTORS_SHOWN || !full {
                return Ok(actors);
            }
            let content = &self.stores.content;
            page = content.entry_notices(user, g.group, last, 50).await?;
            if page.is_empty() {
                return Ok(actors);
            }
        }
    }
}
