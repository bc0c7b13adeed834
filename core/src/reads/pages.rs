//! What a first page of a timeline is read at, for a transport that keeps
//! whole pages ([`crate::feed::stamp`]): the same checks as the read
//! itself, taken before it, and compared before a kept page is served.

use super::Reads;
use crate::error::Result;
use crate::feed::stamp::{PageAt, Stamp};
use crate::feed::Feed;
use crate::ids::{GroupName, ListName, UserId};
use socialite_domain::accounts::access::{check, viewing_as, Act, Caller};
use socialite_domain::feed::hybrid::Hybrid;

impl Reads {
    /// The first page of the user's home timeline, or of their `list`. The
    /// caller is checked as for the read; whether the user (or the list)
    /// exists is the page's own read: a kept page was read while they did,
    /// and a deletion advances the epoch.
    pub async fn first_page_at(
        &self,
        caller: &Caller,
        id: &str,
        list: Option<&str>,
    ) -> Result<Option<PageAt>> {
        let user = UserId::parse(id)?;
        let list = list.map(ListName::parse).transpose()?;
        check(caller, Act::ReadOwn(&user))?;
        let feed = match list {
            None => Feed::Home(user),
            Some(list) => Feed::List(user, list),
        };
        self.page_at(feed, None).await
    }

    /// The first page of the group's timeline as `viewer` sees it (a user
    /// token views as its user; a server key names the viewer, or reads the
    /// whole timeline). Any refusal is left to the read, which makes it in
    /// its own order: here it only means no page is kept.
    pub async fn group_first_page_at(
        &self,
        caller: &Caller,
        group: &str,
        viewer: Option<&str>,
    ) -> Result<Option<PageAt>> {
        let (Ok(group), Ok(viewer)) = (
            GroupName::parse(group),
            viewer.map(UserId::parse).transpose(),
        ) else {
            return Ok(None);
        };
        if check(caller, Act::ReadPublic).is_err() {
            return Ok(None);
        }
        let Ok(viewer) = viewing_as(caller, viewer) else {
            return Ok(None);
        };
        self.page_at(Feed::Group(group), viewer).await
    }

    /// `None` where pages are not kept: no stored timeline, no ready cache,
    /// a store that does not version timelines, or while fanout is behind
    /// (a page then holds posts no delivery announces: [`crate::feed::late`]).
    pub(super) async fn page_at(
        &self,
        feed: Feed,
        viewer: Option<UserId>,
    ) -> Result<Option<PageAt>> {
        if !self.stores.stores_timelines() || self.stores.late.from().is_some() {
            return Ok(None);
        }
        // A filter that expired since a page was kept makes it stale.
        self.stores.filters.expire_due();
        // The epoch first: a write that ends after it makes the stamp stale.
        let epoch = self.stores.epoch.now();
        // Then the marked authors' posts the page merges.
        let marked = self.marked_at(&feed).await?;
        let timeline = feed.id();
        let Some(version) = self.stores.timelines.version(&timeline).await? else {
            return Ok(None);
        };
        Ok(Some(PageAt {
            timeline,
            viewer,
            stamp: Stamp {
                epoch,
                timeline: version,
                marked,
            },
        }))
    }

    /// Where the posts of the marked authors a page merges stand
    /// ([`crate::feed::stamp::UserClock`]): a home page merges those its
    /// owner follows, a list page (for now) any, a group page none.
    async fn marked_at(&self, feed: &Feed) -> Result<u64> {
        let marks = &self.stores.marks;
        if self.stores.feed.hybrid == Hybrid::Off {
            return Ok(0);
        }
        Ok(match feed {
            Feed::Home(owner) => {
                let followed = marks.followed_by(&*self.stores.graph, owner).await?;
                marks.posted.newest(&followed)
            }
            Feed::List(..) => marks.posted.now(),
            Feed::Group(_) => 0,
        })
    }
}
