//! Authors the index knows by the follower count their records keep: the
//! big ones, whose lists hybrid fanout never needs, and the most followed,
//! whose lists are loaded before the worker applies its first event.

use super::{FollowerIndex, Known};
use crate::error::Result;
use crate::feed::Stores;
use crate::ids::{GroupName, TimelineId, UserId};
use crate::numbers::Targets;
use rustc_hash::FxHashSet;
use socialite_domain::feed::hybrid::is_big;
use std::sync::Arc;

/// Accounts with fewer followers are loaded on their first post: their
/// lists load in milliseconds.
const AHEAD_MIN_FOLLOWERS: u64 = 10_000;
/// At most this many accounts are loaded ahead...
const AHEAD_MAX_ACCOUNTS: usize = 100;
/// ...with this many followers in all, about 100 MiB of timeline ids for a
/// million followers who each file the account under a list.
const AHEAD_MAX_FOLLOWERS: u64 = 2_000_000;

/// What the index knows of a big author whose list is not loaded.
fn counted(followers: u64, groups: Vec<GroupName>) -> Known {
    let mut groups: Vec<TimelineId> = groups.iter().map(TimelineId::group).collect();
    groups.sort_unstable();
    groups.dedup();
    let groups = Arc::new(Targets::from(groups));
    Known {
        timelines: groups.clone(),
        muters: FxHashSet::default(),
        homes: followers as usize,
        groups,
        whole: false,
    }
}

impl Known {
    /// Moves a counted author's targets: groups exactly, home timelines as
    /// the count, lists not at all (a big author's posts go to none).
    pub(super) fn move_count(
        &mut self,
        add: impl Iterator<Item = TimelineId>,
        remove: impl Iterator<Item = TimelineId>,
    ) {
        let split = |ts: &mut dyn Iterator<Item = TimelineId>| {
            let mut homes = 0;
            let mut groups = Vec::new();
            for t in ts {
                homes += usize::from(t.is_home());
                if t.is_group() {
                    groups.push(t);
                }
            }
            (homes, groups)
        };
        let (gone, gone_groups) = split(&mut remove.into_iter());
        let (came, came_groups) = split(&mut add.into_iter());
        self.homes = (self.homes + came).saturating_sub(gone);
        let mut list: Vec<TimelineId> = self
            .timelines
            .iter()
            .filter(|t| !gone_groups.contains(t))
            .cloned()
            .chain(came_groups)
            .collect();
        list.sort_unstable();
        list.dedup();
        self.timelines = Arc::new(Targets::from(list));
        self.groups = self.timelines.clone();
    }
}

impl FollowerIndex {
    /// Loads the targets of the most followed accounts (at least
    /// [`AHEAD_MIN_FOLLOWERS`] followers, [`AHEAD_MAX_FOLLOWERS`] in all)
    /// before the worker applies any event: the first post of an account
    /// with a million followers otherwise waited over a second for its list.
    /// Those big by the hybrid rule are known by their count instead.
    /// Returns how many accounts it loaded.
    pub async fn load_ahead(&self, stores: &Stores, threshold: Option<u64>) -> Result<usize> {
        let top = stores
            .content
            .most_followed(AHEAD_MIN_FOLLOWERS, AHEAD_MAX_ACCOUNTS)
            .await?;
        let mut total = 0;
        let authors: Vec<&UserId> = top
            .iter()
            .take_while(|(_, n)| {
                total += n;
                total <= AHEAD_MAX_FOLLOWERS
            })
            .map(|(id, _)| id)
            .collect();
        self.preload(stores, &authors, threshold).await?;
        Ok(authors.len())
    }

    /// Of `authors`, those the hybrid rule does not find big by the follower
    /// count their records keep; the big ones become known by that count and
    /// their groups, without loading their followers.
    pub(super) async fn count_big(
        &self,
        stores: &Stores,
        authors: Vec<UserId>,
        threshold: Option<u64>,
    ) -> Result<Vec<UserId>> {
        let users =
            futures_util::future::try_join_all(authors.iter().map(|a| stores.content.get_user(a)))
                .await?;
        let mut big = Vec::new();
        let mut rest = Vec::new();
        for (author, user) in authors.into_iter().zip(users) {
            let followers = user.map_or(0, |u| u.followers);
            let marked = self.is_marked(&*stores.graph, &author).await?;
            match is_big(threshold, followers, marked) {
                true => big.push((author, followers)),
                false => rest.push(author),
            }
        }
        if !big.is_empty() {
            let ids: Vec<UserId> = big.iter().map(|(a, _)| a.clone()).collect();
            let groups = stores.graph.groups_of(&ids).await?;
            let mut lists = self.lists();
            for ((author, followers), g) in big.into_iter().zip(groups) {
                lists.put_absent(author, counted(followers, g));
            }
        }
        Ok(rest)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::ListName;

    #[test]
    fn a_counted_author_keeps_groups_exactly_and_homes_as_a_count() {
        let u = |s: &str| UserId::parse(s).unwrap();
        let g = |s: &str| GroupName::parse(s).unwrap();
        let mut known = counted(5, vec![g("one"), g("one")]);
        assert_eq!(**known.groups, [TimelineId::group(&g("one"))]);
        let close = ListName::parse("close").unwrap();
        let add = [TimelineId::home(&u("a")), TimelineId::group(&g("two"))];
        let remove = [
            TimelineId::home(&u("b")),
            TimelineId::home(&u("c")),
            TimelineId::list(&u("b"), &close),
            TimelineId::group(&g("one")),
        ];
        known.move_count(add.into_iter(), remove.into_iter());
        assert_eq!(known.homes, 4, "5 + 1 - 2: lists do not count");
        assert_eq!(**known.groups, [TimelineId::group(&g("two"))]);
        assert_eq!(known.timelines, known.groups);
        // The count never goes below zero, however many leave.
        let gone = (0..9).map(|i| TimelineId::home(&u(&format!("f{i}"))));
        known.move_count(std::iter::empty(), gone);
        assert_eq!((known.homes, known.whole), (0, false));
    }
}
