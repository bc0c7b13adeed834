//! A migration's verification: the two stores hold the same records, and a
//! sample of users reads the same timelines on both.
//!
//! Records are compared per kind by their count and an order-free digest
//! (the sum of each record's hash), so two stores that list a kind in
//! different orders still compare; two sets of equal count and digest are
//! equal but for a 64-bit hash collision.

use crate::error::Result;
use crate::ids::{GroupName, ListName, UserId};
use crate::model::{FeedItem, ListSummary, Page};
use crate::reads::Reads;
use crate::transfer::stream::Stream;
use socialite_domain::accounts::access::Caller;
use socialite_domain::transfer::record::{write_line, Line, Record};
use std::collections::BTreeMap;
use std::hash::{DefaultHasher, Hash, Hasher};

/// Records read from a store per call.
const PAGE: usize = 5000;
/// Posts compared per timeline.
const TIMELINE_PAGE: u64 = 50;

/// A store's records, summed up per kind.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Tally {
    /// kind → (records, digest).
    pub kinds: BTreeMap<&'static str, (u64, u64)>,
    /// Every user id, in the store's order (the sample is taken from them).
    pub users: Vec<UserId>,
    /// The groups of each user.
    pub groups: BTreeMap<UserId, Vec<GroupName>>,
}

fn kind(r: &Record) -> &'static str {
    match r {
        Record::User { .. } => "users",
        Record::Account { .. } => "accounts",
        Record::Follow { .. } => "follows",
        Record::Relation { .. } => "mutes and blocks",
        Record::Member { .. } => "group members",
        Record::Post { .. } => "posts",
        Record::Like { .. } => "likes",
        Record::Marker { .. } => "markers",
        Record::Kept { .. } => "kept posts",
        Record::Filters { .. } => "filters",
        Record::ThreadMute { .. } => "muted threads",
        Record::ExclusiveList { .. } => "exclusive lists",
    }
}

/// Reads `stream` whole into a tally.
pub async fn tally(stream: &mut Stream) -> Result<Tally> {
    let mut t = Tally::default();
    loop {
        let page = stream.next(PAGE).await?;
        if page.is_empty() {
            return Ok(t);
        }
        for r in &page {
            let mut h = DefaultHasher::new();
            write_line(&Line::from(r)).hash(&mut h);
            let entry = t.kinds.entry(kind(r)).or_default();
            entry.0 += 1;
            entry.1 = entry.1.wrapping_add(h.finish());
            match r {
                Record::User { id, .. } => t.users.push(id.clone()),
                Record::Member { group, user } => t
                    .groups
                    .entry(user.clone())
                    .or_default()
                    .push(group.clone()),
                _ => {}
            }
        }
    }
}

/// The kinds whose records differ: (kind, source count, target count).
pub fn differing(source: &Tally, target: &Tally) -> Vec<(&'static str, u64, u64)> {
    let kinds: std::collections::BTreeSet<&'static str> = source
        .kinds
        .keys()
        .chain(target.kinds.keys())
        .copied()
        .collect();
    kinds
        .into_iter()
        .filter_map(|k| {
            let (s, t) = (source.kinds.get(k), target.kinds.get(k));
            let count = |x: Option<&(u64, u64)>| x.map(|c| c.0).unwrap_or(0);
            (s != t).then(|| (k, count(s), count(t)))
        })
        .collect()
}

/// `n` users spread evenly over `users`.
pub fn sample(users: &[UserId], n: usize) -> Vec<UserId> {
    if users.is_empty() || n == 0 {
        return Vec::new();
    }
    let step = users.len().div_ceil(n).max(1);
    users.iter().step_by(step).cloned().collect()
}

/// One timeline of one sampled user, as both sides read it.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    pub timeline: String,
    pub source: String,
    pub target: String,
}

/// How many timelines were read on each side, and which differed.
#[derive(Debug, Default, Clone)]
pub struct Compared {
    pub timelines: u64,
    pub mismatches: Vec<Mismatch>,
}

/// The newest posts of a timeline, or why it could not be read.
/// Each entry of a page: the post, where it sits and who reposted it.
type Read = std::result::Result<Vec<(u64, u64, Vec<UserId>)>, &'static str>;

fn ids(page: Result<Page<FeedItem, crate::ids::PostId>>) -> Read {
    let entry = |i: &FeedItem| (i.post.id.0, i.position.0, i.reposted_by.clone());
    page.map(|p| p.items.iter().map(entry).collect())
        .map_err(|e| e.code())
}

/// One timeline to read.
enum Timeline<'a> {
    Home(&'a str),
    Mentions(&'a str),
    List(&'a str, &'a str),
    Group(&'a str, &'a str),
}

impl Timeline<'_> {
    fn name(&self) -> String {
        match self {
            Timeline::Home(u) => format!("home of {u}"),
            Timeline::Mentions(u) => format!("mentions of {u}"),
            Timeline::List(u, l) => format!("list {l} of {u}"),
            Timeline::Group(u, g) => format!("group {g} as {u}"),
        }
    }

    async fn read(&self, r: &Reads) -> Read {
        let (c, limit) = (&Caller::Trusted, Some(TIMELINE_PAGE));
        ids(match *self {
            Timeline::Home(u) => r.timeline(c, u, limit, None).await.map(|p| p.0),
            Timeline::Mentions(u) => r.mentions(c, u, limit, None).await,
            Timeline::List(u, l) => r.list_timeline(c, u, l, limit, None).await.map(|p| p.0),
            Timeline::Group(u, g) => r
                .group_timeline(c, g, Some(u), limit, None)
                .await
                .map(|p| p.0),
        })
    }
}

/// Reads each sampled user's home, list, group and mention timelines on
/// both sides, as the service would answer them.
pub async fn compare_timelines(
    source: &Reads,
    target: &Reads,
    users: &[UserId],
    groups: &BTreeMap<UserId, Vec<GroupName>>,
) -> Result<Compared> {
    let mut out = Compared::default();
    for user in users {
        let u = user.as_str();
        // Each list with whether it is exclusive.
        type Named = Vec<(ListName, Option<bool>)>;
        let names = |l: Result<Vec<ListSummary>>| -> std::result::Result<Named, _> {
            l.map(|l| l.into_iter().map(|s| (s.name, s.exclusive)).collect())
                .map_err(|e| e.code())
        };
        let held = names(source.lists(&Caller::Trusted, u, None).await);
        let theirs = names(target.lists(&Caller::Trusted, u, None).await);
        if held != theirs {
            out.mismatches.push(Mismatch {
                timeline: format!("lists of {u}"),
                source: format!("{held:?}"),
                target: format!("{theirs:?}"),
            });
        }
        let mut timelines = vec![Timeline::Home(u), Timeline::Mentions(u)];
        let held = held.unwrap_or_default();
        timelines.extend(held.iter().map(|(l, _)| Timeline::List(u, l.as_str())));
        let joined = groups.get(user).into_iter().flatten();
        timelines.extend(joined.map(|g| Timeline::Group(u, g.as_str())));
        for t in timelines {
            out.timelines += 1;
            let (s, other) = (t.read(source).await, t.read(target).await);
            if s != other {
                out.mismatches.push(Mismatch {
                    timeline: t.name(),
                    source: format!("{s:?}"),
                    target: format!("{other:?}"),
                });
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_spreads_over_the_users() {
        let users: Vec<UserId> = (0..10)
            .map(|i| UserId::parse(&format!("u{i}")).unwrap())
            .collect();
        let picked = sample(&users, 3);
        let picked: Vec<&str> = picked.iter().map(|u| u.as_str()).collect();
        assert_eq!(picked, ["u0", "u4", "u8"]);
        assert_eq!(sample(&users, 50).len(), 10);
        assert!(sample(&[], 3).is_empty());
    }

    #[test]
    fn kinds_differ_by_count_or_digest() {
        let mut a = Tally::default();
        a.kinds.insert("posts", (2, 7));
        a.kinds.insert("users", (1, 1));
        let mut b = a.clone();
        assert!(differing(&a, &b).is_empty());
        b.kinds.insert("posts", (2, 8));
        b.kinds.remove("users");
        assert_eq!(differing(&a, &b), vec![("posts", 2, 2), ("users", 1, 0)]);
    }
}
