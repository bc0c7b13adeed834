//! The oracle of a user's notifications, from the model's state: every
//! follow of the user, like and repost of their posts, reply to them and
//! mention of them, and the posts of those they are alerted of, grouped by
//! kind, post and UTC day, without the actors the user does not see.

use super::model::Model;
use socialite_core::event::Event;
use socialite_core::ids::{PostId, UserId};
use socialite_domain::notifications::notified::{
    id_at, GroupKey, NoticeKind, ACTORS_SHOWN, WINDOW_MS,
};
use std::collections::BTreeMap;

/// An entry as the oracle groups it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub kind: NoticeKind,
    pub post: Option<PostId>,
    /// The newest distinct actors the reader sees.
    pub actors: Vec<String>,
    pub count: u64,
    /// The newest notice, hidden or not: the entry's place.
    pub latest: PostId,
}

impl Model {
    /// Keeps the time of a like or a follow, from its event.
    pub fn note_time(&mut self, event: &Event) {
        match event {
            Event::Liked {
                user, post, at_ms, ..
            } => {
                self.like_times.insert((*post, user.to_string()), *at_ms);
            }
            Event::Followed {
                follower,
                followee,
                at_ms,
                ..
            } => {
                let pair = Self::pair(follower.as_str(), followee.as_str());
                self.follow_times.insert(pair, *at_ms);
            }
            _ => {}
        }
    }

    /// Every act addressed to `user` that tells them: (kind, post, id, actor).
    fn notices_to(&self, user: &str) -> Vec<(NoticeKind, Option<PostId>, PostId, String)> {
        let u = |s: &str| UserId::parse(s).unwrap();
        let mine = |p: &PostId| self.posts.get(p).is_some_and(|(a, _)| a == user);
        let mut out = Vec::new();
        for ((f, t), at) in &self.follow_times {
            if t == user && self.follows.contains_key(&Self::pair(f, t)) {
                out.push((NoticeKind::Follow, None, id_at(*at, &u(f), None), f.clone()));
            }
        }
        for ((p, liker), at) in &self.like_times {
            if mine(p) && liker != user && self.likes.contains(&(*p, liker.clone())) {
                let id = id_at(*at, &u(liker), Some(*p));
                out.push((NoticeKind::Like, Some(*p), id, liker.clone()));
            }
        }
        for ((p, r), item) in &self.reposts {
            if mine(p) {
                out.push((NoticeKind::Repost, Some(*p), *item, r.clone()));
            }
        }
        for (reply, (p, answered)) in &self.replies {
            let Some((author, _)) = self.posts.get(reply) else {
                continue;
            };
            if answered == user && author != user && self.posts.contains_key(p) {
                out.push((NoticeKind::Reply, Some(*p), *reply, author.clone()));
            }
        }
        for (p, named) in &self.mentions {
            let Some((author, _)) = self.posts.get(p) else {
                continue;
            };
            let answers_user = self.replies.get(p).is_some_and(|(_, a)| a == user);
            if named.iter().any(|n| n == user) && author != user && !answers_user {
                out.push((NoticeKind::Mention, Some(*p), *p, author.clone()));
            }
        }
        out.extend(self.alerts_to(user));
        out
    }

    /// The alerts of `user`'s `notify` options: each post or reply of the
    /// account made since the option was turned on, but one that tells
    /// them already (answers or names them).
    fn alerts_to(&self, user: &str) -> Vec<(NoticeKind, Option<PostId>, PostId, String)> {
        let mut out = Vec::new();
        for ((reader, author), since) in &self.notify {
            if reader != user {
                continue;
            }
            for (p, (a, _)) in &self.posts {
                let answers_user = self.replies.get(p).is_some_and(|(_, x)| x == user);
                let names_user = self
                    .mentions
                    .get(p)
                    .is_some_and(|named| named.iter().any(|n| n == user));
                if a == author && p.unix_ms() >= *since && !answers_user && !names_user {
                    out.push((NoticeKind::Post, Some(*p), *p, author.clone()));
                }
            }
        }
        out
    }

    /// The user's notifications, newest first.
    pub fn notifications(&self, user: &str) -> Vec<Entry> {
        let mut groups: BTreeMap<GroupKey, Vec<(PostId, String)>> = BTreeMap::new();
        for (kind, post, id, actor) in self.notices_to(user) {
            let key = GroupKey {
                kind,
                post,
                window: id.unix_ms() / WINDOW_MS,
            };
            groups.entry(key).or_default().push((id, actor));
        }
        let mut entries: Vec<(GroupKey, Entry)> = groups
            .into_iter()
            .filter_map(|(key, mut notices)| {
                notices.sort_unstable_by(|a, b| b.cmp(a));
                let latest = notices[0].0;
                notices.retain(|(_, a)| !self.hides(user, a));
                let mut actors: Vec<String> = Vec::new();
                for (_, a) in &notices {
                    if !actors.contains(a) && actors.len() < ACTORS_SHOWN {
                        actors.push(a.clone());
                    }
                }
                let entry = Entry {
                    kind: key.kind,
                    post: key.post,
                    actors,
                    count: notices.len() as u64,
                    latest,
                };
                (entry.count > 0).then_some((key, entry))
            })
            .collect();
        entries.sort_unstable_by_key(|(key, e)| std::cmp::Reverse((e.latest, *key)));
        entries.into_iter().map(|(_, e)| e).collect()
    }
}
