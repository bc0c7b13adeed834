//! The oracle: an independent model of the users, the graph and the posts,
//! and what each timeline must return for it (fanout on read, computed
//! from scratch).

use socialite_core::ids::PostId;
use std::collections::{BTreeMap, BTreeSet};

/// The list names the histories file edges under.
pub(crate) const LISTS: [&str; 3] = ["l0", "l1", "l2"];
/// The groups users join and leave.
pub(crate) const GROUPS: [&str; 2] = ["g0", "g1"];

#[derive(Default)]
pub struct Model {
    pub users: BTreeSet<String>,
    /// (follower, followee) → the lists the edge is filed under.
    pub follows: BTreeMap<(String, String), BTreeSet<String>>,
    /// Post → (author, message).
    pub posts: BTreeMap<PostId, (String, String)>,
    /// Post → the users it mentions (those that existed when it was posted
    /// and still do).
    pub mentions: BTreeMap<PostId, Vec<String>>,
    /// Whether home timelines show their owner's posts.
    pub own_posts: bool,
    /// Group → members.
    pub groups: BTreeMap<String, BTreeSet<String>>,
    /// (user, target): who mutes whom, and who blocks whom.
    pub mutes: BTreeSet<(String, String)>,
    pub blocks: BTreeSet<(String, String)>,
    /// Suspended ids: hidden from every reader (their stored entries stay).
    pub suspended: BTreeSet<String>,
    /// (post, user): who likes which post.
    pub likes: BTreeSet<(PostId, String)>,
    /// User → the newest post they marked read in their home timeline.
    pub markers: BTreeMap<String, PostId>,
}

impl Model {
    pub fn pair(a: &str, b: &str) -> (String, String) {
        (a.to_owned(), b.to_owned())
    }

    /// How many users like `post`.
    pub fn likes_of(&self, post: PostId) -> u64 {
        self.likes
            .range((post, String::new())..)
            .take_while(|(p, _)| *p == post)
            .count() as u64
    }

    /// The home timeline after `marker`, oldest first: where a reader
    /// resumes.
    pub fn timeline_after(&self, user: &str, marker: PostId) -> Vec<PostId> {
        let mut newer: Vec<PostId> = self
            .timeline(user)
            .into_iter()
            .filter(|p| *p > marker)
            .collect();
        newer.sort_unstable();
        newer
    }

    /// Whether either user blocks the other.
    pub fn blocked(&self, a: &str, b: &str) -> bool {
        self.blocks.contains(&Self::pair(a, b)) || self.blocks.contains(&Self::pair(b, a))
    }

    /// Whether `viewer` does not see `author`'s posts in timelines.
    pub fn hides(&self, viewer: &str, author: &str) -> bool {
        self.mutes.contains(&Self::pair(viewer, author))
            || self.blocked(viewer, author)
            || self.suspended.contains(author)
    }

    pub fn timeline(&self, user: &str) -> Vec<PostId> {
        let mut v: Vec<PostId> = self
            .posts
            .iter()
            .filter(|(_, (a, _))| {
                (self.own_posts && a == user)
                    || (self.follows.contains_key(&(user.to_owned(), a.clone()))
                        && !self.hides(user, a))
            })
            .map(|(p, _)| *p)
            .collect();
        v.reverse();
        v
    }

    /// The oracle of a list's timeline: the posts of the accounts filed under it.
    pub fn list_timeline(&self, user: &str, list: &str) -> Vec<PostId> {
        let mut v: Vec<PostId> = self
            .posts
            .iter()
            .filter(|(_, (a, _))| {
                self.follows
                    .get(&(user.to_owned(), a.clone()))
                    .is_some_and(|l| l.contains(list))
                    && !self.hides(user, a)
            })
            .map(|(p, _)| *p)
            .collect();
        v.reverse();
        v
    }

    /// The oracle of a group's timeline: its members' posts, without those
    /// the viewer (if any: "" is none) hides.
    pub fn group_timeline(&self, group: &str, viewer: &str) -> Vec<PostId> {
        let Some(members) = self.groups.get(group) else {
            return Vec::new();
        };
        let mut v: Vec<PostId> = self
            .posts
            .iter()
            .filter(|(_, (a, _))| members.contains(a) && !self.hides(viewer, a))
            .map(|(p, _)| *p)
            .collect();
        v.reverse();
        v
    }

    /// The oracle of the mentions timeline: the posts that mention the
    /// user, but those of accounts blocked either way.
    pub fn mentions_of(&self, user: &str) -> Vec<PostId> {
        let mut v: Vec<PostId> = self
            .mentions
            .iter()
            .filter(|(p, m)| {
                self.posts
                    .get(p)
                    .is_some_and(|(a, _)| !self.blocked(user, a) && !self.suspended.contains(a))
                    && m.iter().any(|x| x == user)
            })
            .map(|(p, _)| *p)
            .collect();
        v.reverse();
        v
    }

    /// The user's lists and how many accounts each holds.
    pub fn lists(&self, user: &str) -> BTreeMap<String, u64> {
        let mut out = BTreeMap::new();
        for ((f, _), lists) in &self.follows {
            if f == user {
                for l in lists {
                    *out.entry(l.clone()).or_default() += 1;
                }
            }
        }
        out
    }
}
