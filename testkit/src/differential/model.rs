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
    /// (user, target) → when a mute that ends by itself ends (ms).
    pub mute_ends: BTreeMap<(String, String), u64>,
    /// Suspended ids: hidden from every reader (their stored entries stay).
    pub suspended: BTreeSet<String>,
    /// (post, user): who likes which post.
    pub likes: BTreeSet<(PostId, String)>,
    /// User → the newest post they marked read in their home timeline.
    pub markers: BTreeMap<String, PostId>,
    /// (post, reposter) → the repost's item. A deleted post's reposts stay
    /// (they show nowhere) until their reposters are deleted.
    pub reposts: BTreeMap<(PostId, String), PostId>,
    /// Reply → the post it answers and that post's author (kept while the
    /// reply is a post of `posts`).
    pub replies: BTreeMap<PostId, (PostId, String)>,
    /// When each like and follow was made, as the log's events say (a
    /// notice's time is its act's).
    pub like_times: BTreeMap<(PostId, String), u64>,
    pub follow_times: BTreeMap<(String, String), u64>,
    /// User → the newest notifications entry they marked read.
    pub notice_markers: BTreeMap<String, PostId>,
    /// (follower, followee): follow options on. Reposts hidden; all
    /// replies shown. They live on the follow: gone with it.
    pub reposts_off: BTreeSet<(String, String)>,
    pub replies_on: BTreeSet<(String, String)>,
    /// (follower, followee) → when `notify` was turned on (ms): the
    /// followee's posts since alert the follower. Gone with the follow.
    pub notify: BTreeMap<(String, String), u64>,
    /// (user, filter id) → a hiding keyword filter: its one-word phrase,
    /// whether whole-word, and where it applies.
    pub filters: BTreeMap<(String, u64), Filtering>,
    /// (user, list): the lists users marked exclusive.
    pub exclusive: BTreeSet<(String, String)>,
    /// (user, post): the posts users asked to see less like; the ranked
    /// orders leave them out.
    pub shown_less: BTreeSet<(String, PostId)>,
    /// (user, account) → the user's priority for the account (-2 to 2,
    /// never 0): it orders ranked timelines, and changes what none shows.
    pub priorities: BTreeMap<(String, String), i8>,
}

/// A hiding keyword filter as the oracle keeps it.
#[derive(Debug, Clone)]
pub struct Filtering {
    pub word: String,
    pub whole_word: bool,
    pub contexts: Vec<&'static str>,
}

impl Filtering {
    /// Whether it hides a post saying `message`: the word among the
    /// message's words (split at every character not a letter, digit or
    /// `_`), or anywhere in it when not whole-word; case aside.
    fn hides(&self, message: &str) -> bool {
        let (message, word) = (message.to_lowercase(), self.word.to_lowercase());
        match self.whole_word {
            true => message
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .any(|w| w == word),
            false => message.contains(&word),
        }
    }
}

/// An entry of a timeline as the oracle places it: the post, where it
/// sits, and who of the timeline's accounts reposted it, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown {
    pub post: PostId,
    pub position: PostId,
    pub reposted_by: Vec<String>,
}

impl Shown {
    /// A post shown as itself.
    pub fn plain(post: PostId) -> Shown {
        Shown {
            post,
            position: post,
            reposted_by: Vec::new(),
        }
    }
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

    /// How many stored replies answer `post`.
    pub fn replies_of(&self, post: PostId) -> u64 {
        let answering = self
            .replies
            .iter()
            .filter(|(r, (a, _))| *a == post && self.posts.contains_key(r));
        answering.count() as u64
    }

    /// Whether `post`, as its author's item, reaches `reader`'s home and
    /// list timelines: a reply only if the reader wrote it, is the one it
    /// answers, or follows them, or the reader follows its author with
    /// every reply shown.
    pub fn reaches(&self, reader: &str, post: PostId) -> bool {
        let Some((_, answered)) = self.replies.get(&post) else {
            return true;
        };
        let author = self.posts.get(&post).map(|(a, _)| a.as_str());
        author == Some(reader)
            || answered == reader
            || self.follows.contains_key(&Self::pair(reader, answered))
            || author.is_some_and(|a| self.replies_on.contains(&Self::pair(reader, a)))
    }

    /// Drops the follow options of follows that are gone.
    pub fn keep_options_on_follows(&mut self) {
        let follows = &self.follows;
        self.reposts_off.retain(|pair| follows.contains_key(pair));
        self.replies_on.retain(|pair| follows.contains_key(pair));
        self.notify.retain(|pair, _| follows.contains_key(pair));
    }

    /// How many users repost `post`.
    pub fn reposts_of(&self, post: PostId) -> u64 {
        self.reposts
            .range((post, String::new())..)
            .take_while(|((p, _), _)| *p == post)
            .count() as u64
    }

    /// The home timeline after `marker`, oldest first: where a reader
    /// resumes.
    pub fn timeline_after(&self, user: &str, marker: PostId) -> Vec<Shown> {
        let mut newer: Vec<Shown> = self
            .timeline(user)
            .into_iter()
            .filter(|s| s.position > marker)
            .collect();
        newer.reverse();
        newer
    }

    /// Whether either user blocks the other.
    pub fn blocked(&self, a: &str, b: &str) -> bool {
        self.blocks.contains(&Self::pair(a, b)) || self.blocks.contains(&Self::pair(b, a))
    }

    /// Whether a keyword filter of `viewer`'s hides `post` in `context`
    /// (never their own).
    pub fn filtered(&self, viewer: &str, context: &str, post: PostId) -> bool {
        let Some((author, message)) = self.posts.get(&post) else {
            return false;
        };
        author != viewer
            && self
                .filters
                .range((viewer.to_owned(), 0)..=(viewer.to_owned(), u64::MAX))
                .any(|(_, f)| f.contexts.contains(&context) && f.hides(message))
    }

    /// Whether `viewer` does not see `author`'s posts in timelines.
    pub fn hides(&self, viewer: &str, author: &str) -> bool {
        self.mutes.contains(&Self::pair(viewer, author))
            || self.blocked(viewer, author)
            || self.suspended.contains(author)
    }

    /// Whether `user` files `author` under an exclusive list: home leaves
    /// them out when read (what is stored keeps them).
    pub fn home_off(&self, user: &str, author: &str) -> bool {
        self.follows
            .get(&Self::pair(user, author))
            .is_some_and(|lists| {
                lists
                    .iter()
                    .any(|l| self.exclusive.contains(&(user.to_owned(), l.clone())))
            })
    }

    /// Whether `author`'s items are in `user`'s home timeline.
    pub fn in_home(&self, user: &str, author: &str) -> bool {
        (self.own_posts && author == user)
            || (self.follows.contains_key(&Self::pair(user, author)) && !self.hides(user, author))
    }

    /// The raw stream of `user`'s home timeline: the items (posts and
    /// reposts, of deleted posts too) of the accounts it holds.
    pub fn home_items(&self, user: &str) -> BTreeSet<PostId> {
        let posts = self
            .posts
            .iter()
            .filter(|(_, (a, _))| self.in_home(user, a));
        let reposts = self
            .reposts
            .iter()
            .filter(|((_, r), _)| self.in_home(user, r));
        posts
            .map(|(p, _)| *p)
            .chain(reposts.map(|(_, item)| *item))
            .collect()
    }

    /// Who made the item `id`: a post's author, or a repost's reposter.
    pub fn author_of_item(&self, id: PostId) -> Option<&String> {
        self.posts.get(&id).map(|(a, _)| a).or_else(|| {
            let mut reposts = self.reposts.iter();
            reposts.find(|(_, item)| **item == id).map(|((_, r), _)| r)
        })
    }

    pub fn timeline(&self, user: &str) -> Vec<Shown> {
        self.placed(user, "home", |a| {
            self.in_home(user, a) && !self.home_off(user, a)
        })
    }

    /// The oracle of a list's timeline: the items of the accounts filed under it.
    pub fn list_timeline(&self, user: &str, list: &str) -> Vec<Shown> {
        self.placed(user, "lists", |a| {
            self.follows
                .get(&Self::pair(user, a))
                .is_some_and(|l| l.contains(list))
                && !self.hides(user, a)
        })
    }

    /// Every post once, at its newest arrival among the items of the
    /// accounts `member` admits (their posts, and their reposts of posts
    /// whose author `viewer` sees), naming the reposters, newest first.
    fn placed(&self, viewer: &str, context: &str, member: impl Fn(&str) -> bool) -> Vec<Shown> {
        let mut arrivals: BTreeMap<PostId, Vec<(PostId, Option<&str>)>> = BTreeMap::new();
        for (p, (a, _)) in &self.posts {
            if member(a) && self.reaches(viewer, *p) {
                arrivals.entry(*p).or_default().push((*p, None));
            }
        }
        for ((p, r), item) in &self.reposts {
            let Some((a, _)) = self.posts.get(p) else {
                continue; // a deleted post's reposts show nowhere
            };
            let shows_reposts = !self.reposts_off.contains(&Self::pair(viewer, r));
            let off = context == "home" && self.home_off(viewer, a);
            if member(r) && shows_reposts && !self.hides(viewer, a) && !off {
                arrivals.entry(*p).or_default().push((*item, Some(r)));
            }
        }
        arrivals.retain(|p, _| !self.filtered(viewer, context, *p));
        let mut shown: Vec<Shown> = arrivals
            .into_iter()
            .map(|(post, mut at)| {
                at.sort_unstable_by_key(|x| std::cmp::Reverse(x.0));
                let reposted_by = at
                    .iter()
                    .filter_map(|(_, r)| r.map(str::to_owned))
                    .take(socialite_domain::interactions::reposts::MAX_REPOSTED_BY)
                    .collect();
                Shown {
                    post,
                    position: at[0].0,
                    reposted_by,
                }
            })
            .collect();
        shown.sort_unstable_by_key(|x| std::cmp::Reverse(x.position));
        shown
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
            .filter(|(p, (a, _))| {
                members.contains(a)
                    && !self.hides(viewer, a)
                    && !self.filtered(viewer, "groups", **p)
            })
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
                    && !self.filtered(user, "mentions", **p)
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
