//! The toy store's ports: every write runs core's planner on a
//! [`ToyTxn`](super::ToyTxn) (`run_ready`: the toy never waits), every read
//! is a walk of the state in the order the port promises.

use super::txn::under;
use super::{State, ToyStore};
use async_trait::async_trait;
use socialite_core::error::Result;
use socialite_core::event::Event;
use socialite_core::ids::{GroupName, ListName, PostId, UserId};
use socialite_core::model::collection::{Collection, Kept};
use socialite_core::model::filter::FilterSet;
use socialite_core::model::{Entry, Post, PostCounts, User};
use socialite_core::plan::run_ready;
use socialite_core::plan::Ledger;
use socialite_core::ports::*;
use socialite_core::write::{Done, Write};
use socialite_domain::feed::markers::Marker;
use socialite_domain::graph::relations::{FollowOption, Relation};
use socialite_domain::interactions::likes::Tally;
use socialite_domain::notifications::notified::{GroupKey, NoticeGroup};
use socialite_domain::transfer::export::{cursor, Key, Section};
use socialite_domain::transfer::record::Record;
use std::ops::Bound::{self, Excluded, Unbounded};
use std::sync::Arc;
use tokio::sync::Notify;

/// Up to `limit` of `ids` after `after`, in order.
fn page<'a, T: Ord + Clone + 'a>(
    ids: impl Iterator<Item = &'a T>,
    after: Option<&T>,
    limit: usize,
) -> Vec<T> {
    ids.filter(|id| after.is_none_or(|a| *id > a))
        .take(limit)
        .cloned()
        .collect()
}

/// One side of the edges of `user`, newest follow first (ties in id order),
/// after `after`.
fn by_time(
    s: &State,
    user: &UserId,
    followers: bool,
    after: Option<&(u64, UserId)>,
    limit: usize,
) -> Vec<(UserId, u64)> {
    let edges = s
        .following
        .iter()
        .filter_map(|((f, t), (_, at))| match followers {
            true => (t == user).then(|| (f.clone(), *at)),
            false => (f == user).then(|| (t.clone(), *at)),
        });
    newest_first(edges, after, limit)
}

/// Up to `limit` of `items` (users, each at a time), newest first, ties in
/// id order, after `after`.
fn newest_first(
    items: impl Iterator<Item = (UserId, u64)>,
    after: Option<&(u64, UserId)>,
    limit: usize,
) -> Vec<(UserId, u64)> {
    let mut items: Vec<(UserId, u64)> = items.collect();
    let key = |(u, at): &(UserId, u64)| (std::cmp::Reverse(*at), u.clone());
    items.sort_by_key(key);
    let after = after.map(|(at, u)| (std::cmp::Reverse(*at), u.clone()));
    items.retain(|e| after.as_ref().is_none_or(|a| key(e) > *a));
    items.truncate(limit);
    items
}

#[async_trait]
impl Transact for ToyStore {
    async fn transact(&self, write: Write) -> Result<Done> {
        self.run(Ledger::of(&write), |t| run_ready(write.plan(t)))
    }
}

#[async_trait]
impl Users for ToyStore {
    async fn get_user(&self, id: &UserId) -> Result<Option<User>> {
        Ok(self.read(|s| {
            let profile = s.users.get(id).filter(|_| s.exists(id))?.clone();
            let (followers, following) = s.counts.get(id).copied().unwrap_or_default();
            Some(User {
                id: id.clone(),
                followers,
                following,
                profile,
            })
        }))
    }

    async fn most_followed(&self, at_least: u64, limit: usize) -> Result<Vec<(UserId, u64)>> {
        Ok(self.read(|s| {
            let mut found: Vec<(UserId, u64)> = s
                .counts
                .iter()
                .filter(|(id, (followers, _))| *followers >= at_least && s.exists(id))
                .map(|(id, (followers, _))| (id.clone(), *followers))
                .collect();
            found.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
            found.truncate(limit);
            found
        }))
    }
}

#[async_trait]
impl Deletions for ToyStore {
    async fn pending_deletions(&self) -> Result<Vec<UserId>> {
        Ok(self.read(|s| s.deleting.keys().cloned().collect()))
    }
}

#[async_trait]
impl Posts for ToyStore {
    async fn mentions_of(
        &self,
        user: &UserId,
        range: IdRange,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        Ok(self.read(|s| {
            let named = under(&s.mentions, user)
                .rev()
                .filter(|p| range.contains(**p));
            named.take(limit).copied().collect()
        }))
    }

    async fn get_posts(&self, ids: &[PostId]) -> Result<Vec<Post>> {
        Ok(self.read(|s| {
            ids.iter()
                .filter_map(|id| s.posts.get(id).cloned())
                .collect()
        }))
    }

    async fn post_ids_by(
        &self,
        authors: &[UserId],
        range: IdRange,
        limit_each: usize,
    ) -> Result<Vec<Entry>> {
        Ok(self.read(|s| {
            let mut out = Vec::new();
            for a in authors {
                let newest = under(&s.by_author, a).rev().filter(|p| range.contains(**p));
                out.extend(
                    newest
                        .take(limit_each)
                        .map(|p| Entry::linked(*p, a.clone())),
                );
            }
            out
        }))
    }

    async fn newest_post_id(&self) -> Result<Option<PostId>> {
        Ok(self.read(|s| s.posts.keys().next_back().copied()))
    }

    async fn replies_of(
        &self,
        post: PostId,
        after: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        Ok(self.read(|s| {
            let replies = s.posts.values().filter(|p| {
                p.reply_to.as_ref().is_some_and(|a| a.id == post) && after.is_none_or(|a| p.id > a)
            });
            replies.take(limit).map(|p| p.id).collect()
        }))
    }
}

#[async_trait]
impl Likes for ToyStore {
    async fn likers(
        &self,
        post: PostId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        Ok(self.read(|s| {
            let likes = s.likes.iter().filter(|((p, _), _)| *p == post);
            newest_first(likes.map(|((_, u), at)| (u.clone(), *at)), after, limit)
        }))
    }

    async fn liked_since(&self, user: &UserId, from: PostId, limit: usize) -> Result<Vec<PostId>> {
        Ok(self.read(|s| {
            let mut mine: Vec<PostId> = s
                .likes
                .keys()
                .filter(|(p, u)| u == user && *p >= from)
                .map(|(p, _)| *p)
                .collect();
            mine.sort_unstable_by(|a, b| b.cmp(a));
            mine.truncate(limit);
            mine
        }))
    }

    async fn post_counts(&self, posts: &[PostId]) -> Result<Vec<PostCounts>> {
        Ok(self.read(|s| {
            let count = |p: &PostId, code: u8| -> i64 {
                let parts = s
                    .tallies
                    .iter()
                    .filter(|((q, c, _), _)| q == p && *c == code);
                parts.map(|(_, n)| n).sum()
            };
            posts
                .iter()
                .map(|p| {
                    let mut counts = PostCounts::default();
                    for tally in Tally::ALL {
                        tally.add_to(&mut counts, count(p, tally.code()));
                    }
                    counts
                })
                .collect()
        }))
    }
}

#[async_trait]
impl Reposts for ToyStore {
    async fn reposted_among(&self, posts: &[PostId]) -> Result<Vec<PostId>> {
        Ok(self.read(|s| {
            let has = |p: &PostId| {
                s.reposters
                    .range((*p, PostId(0))..)
                    .next()
                    .is_some_and(|((q, _), _)| q == p)
            };
            posts.iter().filter(|p| has(p)).copied().collect()
        }))
    }

    async fn reposters(&self, post: PostId, limit: usize) -> Result<Vec<(UserId, PostId)>> {
        Ok(self.read(|s| {
            let of = s
                .reposters
                .range((post, PostId(0))..=(post, PostId(u64::MAX)));
            of.rev()
                .take(limit)
                .map(|((_, item), u)| (u.clone(), *item))
                .collect()
        }))
    }

    async fn reposts_among(&self, post: PostId, users: &[UserId]) -> Result<Vec<(UserId, PostId)>> {
        Ok(self.read(|s| {
            users
                .iter()
                .filter_map(|u| s.reposts.get(&(u.clone(), post)).map(|i| (u.clone(), *i)))
                .collect()
        }))
    }
}

#[async_trait]
impl Notices for ToyStore {
    async fn muted_threads(
        &self,
        user: &UserId,
        after: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<PostId>> {
        Ok(self.read(|s| {
            let held = s
                .thread_mutes
                .iter()
                .filter(|(u, p)| u == user && Some(*p) > after);
            held.take(limit).map(|(_, p)| *p).collect()
        }))
    }

    async fn notice_groups(
        &self,
        user: &UserId,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<NoticeGroup>> {
        Ok(self.read(|s| {
            let mut mine: Vec<&NoticeGroup> = s
                .notice_groups
                .iter()
                .filter(|((u, _), g)| u == user && before.is_none_or(|b| g.latest < b))
                .map(|(_, g)| g)
                .collect();
            mine.sort_unstable_by_key(|g| std::cmp::Reverse((g.latest, g.group)));
            mine.into_iter().take(limit).cloned().collect()
        }))
    }

    async fn entry_notices(
        &self,
        user: &UserId,
        group: GroupKey,
        before: Option<PostId>,
        limit: usize,
    ) -> Result<Vec<(PostId, UserId)>> {
        Ok(self.read(|s| super::entry_notices(s, user, group, before, limit)))
    }

    async fn entry_notices_by(
        &self,
        user: &UserId,
        group: GroupKey,
        actors: &[UserId],
    ) -> Result<Vec<(PostId, UserId)>> {
        let all = self.read(|s| super::entry_notices(s, user, group, None, usize::MAX));
        Ok(all
            .into_iter()
            .filter(|(_, a)| actors.contains(a))
            .collect())
    }
}

#[async_trait]
impl Collections for ToyStore {
    async fn kept(
        &self,
        collection: &Collection,
        user: &UserId,
        before: Option<(u64, PostId)>,
        limit: usize,
    ) -> Result<Vec<Kept>> {
        Ok(self.read(|s| {
            let mut mine: Vec<Kept> = s
                .kept
                .iter()
                .filter(|((u, c, _), _)| u == user && c == collection)
                .map(|((_, _, post), at_ms)| Kept {
                    post: *post,
                    at_ms: *at_ms,
                })
                .filter(|k| before.is_none_or(|b| (k.at_ms, k.post) < b))
                .collect();
            mine.sort_by_key(|k| std::cmp::Reverse((k.at_ms, k.post)));
            mine.truncate(limit);
            mine
        }))
    }
}

#[async_trait]
impl Filters for ToyStore {
    async fn filters(&self, user: &UserId) -> Result<Option<FilterSet>> {
        Ok(self.read(|s| s.filters.get(user).cloned()))
    }

    async fn filters_rev(&self, user: &UserId) -> Result<Option<u64>> {
        Ok(self.read(|s| s.filters.get(user).map(|f| f.rev)))
    }
}

#[async_trait]
impl Markers for ToyStore {
    async fn markers(&self, user: &UserId) -> Result<Vec<Marker>> {
        Ok(self.read(|s| {
            let mine = s.markers.iter().filter(|((u, _), _)| u == user);
            mine.map(|(_, m)| *m).collect()
        }))
    }
}

#[async_trait]
impl Edges for ToyStore {
    async fn edge(&self, user: &UserId, target: &UserId) -> Result<Option<Vec<ListName>>> {
        let key = (user.clone(), target.clone());
        Ok(self.read(|s| s.following.get(&key).map(|(l, _)| l.clone())))
    }

    async fn followers(
        &self,
        user: &UserId,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        Ok(self.read(|s| page(under(&s.followers, user), after, limit)))
    }

    async fn following(
        &self,
        user: &UserId,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        Ok(self.read(|s| {
            let followees = s
                .following
                .keys()
                .filter(|(f, _)| f == user)
                .map(|(_, t)| t);
            page(followees, after, limit)
        }))
    }

    async fn followers_by_time(
        &self,
        user: &UserId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        Ok(self.read(|s| by_time(s, user, true, after, limit)))
    }

    async fn following_by_time(
        &self,
        user: &UserId,
        after: Option<&(u64, UserId)>,
        limit: usize,
    ) -> Result<Vec<(UserId, u64)>> {
        Ok(self.read(|s| by_time(s, user, false, after, limit)))
    }
}

#[async_trait]
impl Lists for ToyStore {
    async fn exclusive_lists(&self, user: &UserId) -> Result<Vec<ListName>> {
        Ok(self.read(|s| {
            let marked = s.exclusive.iter().filter(|(u, _)| u == user);
            marked.map(|(_, l)| l.clone()).collect()
        }))
    }

    async fn lists(&self, user: &UserId) -> Result<Vec<(ListName, u64)>> {
        Ok(self.read(|s| {
            let sizes = s.list_sizes.iter().filter(|((u, _), _)| u == user);
            sizes.map(|((_, l), n)| (l.clone(), *n)).collect()
        }))
    }

    async fn list_members(
        &self,
        user: &UserId,
        list: &ListName,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        Ok(self.read(|s| {
            let filed = s
                .list_members
                .iter()
                .filter(|(u, l, _)| u == user && l == list);
            page(filed.map(|(_, _, m)| m), after, limit)
        }))
    }

    async fn listed_by(&self, users: &[UserId]) -> Result<Vec<Vec<(UserId, ListName)>>> {
        Ok(self.read(|s| {
            let listing = |u: &UserId| {
                let edges = s.following.iter().filter(|((_, t), _)| t == u);
                edges
                    .flat_map(|((f, _), (lists, _))| lists.iter().map(|l| (f.clone(), l.clone())))
                    .collect()
            };
            users.iter().map(listing).collect()
        }))
    }
}

#[async_trait]
impl Groups for ToyStore {
    async fn group_size(&self, group: &GroupName) -> Result<u64> {
        Ok(self.read(|s| s.group_sizes.get(group).copied().unwrap_or(0)))
    }

    async fn group_members(
        &self,
        group: &GroupName,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        Ok(self.read(|s| page(under(&s.members, group), after, limit)))
    }

    async fn groups_of(&self, users: &[UserId]) -> Result<Vec<Vec<GroupName>>> {
        Ok(self.read(|s| {
            users
                .iter()
                .map(|u| under(&s.memberships, u).cloned().collect())
                .collect()
        }))
    }
}

#[async_trait]
impl Mutes for ToyStore {
    async fn relations(
        &self,
        user: &UserId,
        relation: Relation,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        Ok(self.read(|s| {
            let kept = s
                .relations
                .iter()
                .filter(|(u, c, _)| u == user && *c == relation.code());
            page(kept.map(|(_, _, t)| t), after, limit)
        }))
    }

    async fn related(
        &self,
        target: &UserId,
        relation: Relation,
        after: Option<&UserId>,
        limit: usize,
    ) -> Result<Vec<UserId>> {
        Ok(self.read(|s| {
            let keepers = s
                .related
                .iter()
                .filter(|(t, c, _)| t == target && *c == relation.code());
            page(keepers.map(|(_, _, u)| u), after, limit)
        }))
    }

    async fn has_relation(
        &self,
        user: &UserId,
        relation: Relation,
        target: &UserId,
    ) -> Result<bool> {
        let key = (user.clone(), relation.code(), target.clone());
        Ok(self.read(|s| s.relations.contains(&key)))
    }

    async fn subscriptions(&self, user: &UserId) -> Result<Vec<(UserId, u64)>> {
        Ok(self.read(|s| {
            let mine = s.notify_since.iter().filter(|((u, _), _)| u == user);
            mine.map(|((_, t), at)| (t.clone(), *at)).collect()
        }))
    }

    async fn mute_end(&self, user: &UserId, target: &UserId) -> Result<Option<u64>> {
        let pair = (user.clone(), target.clone());
        Ok(self.read(|s| s.mute_ends.get(&pair).copied()))
    }

    async fn mutes_due(&self, now_ms: u64, limit: usize) -> Result<Vec<(UserId, UserId)>> {
        let mut due: Vec<(u64, (UserId, UserId))> = self.read(|s| {
            let ended = s.mute_ends.iter().filter(|(_, at)| **at <= now_ms);
            ended.map(|(pair, at)| (*at, pair.clone())).collect()
        });
        due.sort();
        Ok(due.into_iter().take(limit).map(|(_, pair)| pair).collect())
    }
}

#[async_trait]
impl HybridMarks for ToyStore {
    async fn hybrid_authors(&self) -> Result<Vec<UserId>> {
        Ok(self.read(|s| s.hybrid.iter().cloned().collect()))
    }

    async fn set_hybrid(&self, author: &UserId, on: bool) -> Result<()> {
        self.write(|t| {
            match on {
                true => t.state.hybrid.insert(author.clone()),
                false => t.state.hybrid.remove(author),
            };
            Ok(())
        })
    }
}

#[async_trait]
impl Outbox for ToyStore {
    async fn pending(&self, limit: usize) -> Result<Vec<(u64, Event)>> {
        Ok(self.read(|s| {
            s.outbox
                .iter()
                .take(limit)
                .map(|(q, e)| (*q, e.clone()))
                .collect()
        }))
    }

    async fn ack(&self, seqs: &[u64]) -> Result<()> {
        self.write(|t| {
            for q in seqs {
                t.state.outbox.remove(q);
            }
            Ok(())
        })
    }

    async fn backlog(&self) -> Result<u64> {
        Ok(self.read(|s| s.outbox.len() as u64))
    }

    fn notifier(&self) -> Arc<Notify> {
        self.queued.clone()
    }
}

#[async_trait]
impl Accounts for ToyStore {
    async fn standing(&self, id: &UserId) -> Result<Standing> {
        Ok(self.read(|s| s.accounts.get(id).copied().unwrap_or_default()))
    }

    async fn suspended(&self) -> Result<Vec<UserId>> {
        Ok(self.read(|s| {
            s.accounts
                .iter()
                .filter(|(_, a)| a.suspended)
                .map(|(u, _)| u.clone())
                .collect()
        }))
    }
}

/// The toy's export: a copy of the state, taken at once, read a section at
/// a time in key order.
struct ToyExport(Box<State>);

fn from<K>(after: Option<K>) -> (Bound<K>, Bound<K>) {
    (after.map_or(Unbounded, Excluded), Unbounded)
}

impl ToyExport {
    /// The records of the graph's sections after `after`.
    fn graph(&self, section: Section, after: Option<&Record>, n: usize) -> Result<Vec<Record>> {
        let s = &self.0;
        Ok(match section {
            Section::Follows => {
                let after = cursor(after, |k| match k {
                    Key::Follow(f, t) => Some((f.clone(), t.clone())),
                    _ => None,
                })?;
                let rows = s.following.range(from(after)).take(n);
                rows.map(|((f, t), (lists, at_ms))| Record::Follow {
                    follower: f.clone(),
                    followee: t.clone(),
                    at_ms: *at_ms,
                    lists: lists.clone(),
                })
                .collect()
            }
            Section::Relations => {
                let after = cursor(after, |k| match k {
                    Key::Relation(u, r, t) => Some((u.clone(), r.code(), t.clone())),
                    _ => None,
                })?;
                let rows = s.relations.range(from(after));
                rows.filter_map(|(u, c, t)| {
                    Relation::from_code(*c).map(|relation| Record::Relation {
                        user: u.clone(),
                        relation,
                        target: t.clone(),
                        at_ms: match relation {
                            Relation::Mute => s.mute_ends.get(&(u.clone(), t.clone())).copied(),
                            Relation::Option(FollowOption::Notify) => {
                                s.notify_since.get(&(u.clone(), t.clone())).copied()
                            }
                            _ => None,
                        },
                    })
                })
                .take(n)
                .collect()
            }
            _ => {
                let after = cursor(after, |k| match k {
                    Key::Member(g, u) => Some((g.clone(), u.clone())),
                    _ => None,
                })?;
                let rows = s.members.range(from(after)).take(n);
                rows.map(|(g, u)| Record::Member {
                    group: g.clone(),
                    user: u.clone(),
                })
                .collect()
            }
        })
    }

    /// The records of the other sections after `after`.
    fn content(&self, section: Section, after: Option<&Record>, n: usize) -> Result<Vec<Record>> {
        let s = &self.0;
        let user = |k: Key<'_>| match k {
            Key::User(id) => Some(id.clone()),
            _ => None,
        };
        Ok(match section {
            Section::Users => {
                let rows = s.users.range(from(cursor(after, user)?)).take(n);
                rows.map(|(id, profile)| Record::User {
                    id: id.clone(),
                    profile: profile.clone(),
                })
                .collect()
            }
            Section::Accounts => {
                let rows = s.accounts.range(from(cursor(after, user)?)).take(n);
                rows.map(|(id, standing)| Record::Account {
                    id: id.clone(),
                    standing: *standing,
                })
                .collect()
            }
            Section::Posts => {
                let after = cursor(after, |k| match k {
                    Key::Post(id) => Some(id),
                    _ => None,
                })?;
                let rows = s.posts.range(from(after)).take(n);
                rows.map(|(_, p)| Record::post(p.clone())).collect()
            }
            Section::Likes => {
                let after = cursor(after, |k| match k {
                    Key::Like(post, u) => Some((post, u.clone())),
                    _ => None,
                })?;
                let rows = s.likes.range(from(after)).take(n);
                rows.map(|((post, user), at)| Record::Like {
                    post: *post,
                    user: user.clone(),
                    at_ms: *at,
                })
                .collect()
            }
            Section::Kept => {
                let after = cursor(after, |k| match k {
                    Key::Kept(u, c, post) => Some((u.clone(), c.clone(), post)),
                    _ => None,
                })?;
                let rows = s.kept.range(from(after)).take(n);
                rows.map(|((user, c, post), at)| Record::Kept {
                    collection: c.clone(),
                    user: user.clone(),
                    kept: Kept {
                        post: *post,
                        at_ms: *at,
                    },
                })
                .collect()
            }
            Section::Filters => {
                let after = cursor(after, |k| match k {
                    Key::Filters(u) => Some(u.clone()),
                    _ => None,
                })?;
                let rows = s.filters.range(from(after));
                rows.filter(|(_, set)| !set.filters.is_empty())
                    .take(n)
                    .map(|(user, set)| Record::Filters {
                        user: user.clone(),
                        filters: set.filters.clone(),
                        next_id: set.next_id,
                    })
                    .collect()
            }
            Section::ExclusiveLists => {
                let after = cursor(after, |k| match k {
                    Key::ExclusiveList(u, l) => Some((u.clone(), l.clone())),
                    _ => None,
                })?;
                let rows = s.exclusive.range(from(after)).take(n);
                rows.map(|(user, list)| Record::ExclusiveList {
                    user: user.clone(),
                    list: list.clone(),
                })
                .collect()
            }
            Section::ThreadMutes => {
                let after = cursor(after, |k| match k {
                    Key::ThreadMute(u, post) => Some((u.clone(), post)),
                    _ => None,
                })?;
                let rows = s.thread_mutes.range(from(after)).take(n);
                rows.map(|(user, post)| Record::ThreadMute {
                    user: user.clone(),
                    post: *post,
                })
                .collect()
            }
            _ => {
                let after = cursor(after, |k| match k {
                    Key::Marker(u, timeline) => Some((u.clone(), timeline)),
                    _ => None,
                })?;
                let rows = s.markers.range(from(after)).take(n);
                rows.map(|((user, _), marker)| Record::Marker {
                    user: user.clone(),
                    marker: *marker,
                })
                .collect()
            }
        })
    }
}

#[async_trait]
impl ExportView for ToyExport {
    async fn deleting(&mut self) -> Result<Vec<UserId>> {
        Ok(self.0.deleting.keys().cloned().collect())
    }

    async fn page(
        &mut self,
        section: Section,
        after: Option<&Record>,
        limit: usize,
    ) -> Result<Vec<Record>> {
        let n = limit.max(1);
        match section {
            Section::Follows | Section::Relations | Section::Members => {
                self.graph(section, after, n)
            }
            _ => self.content(section, after, n),
        }
    }
}

#[async_trait]
impl Transfer for ToyStore {
    async fn export_view(&self) -> Result<Box<dyn ExportView>> {
        Ok(Box::new(ToyExport(Box::new(self.read(State::clone)))))
    }
}
