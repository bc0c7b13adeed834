//! The benchmark's workload: the operation kinds and their mix.

use std::fmt;
use std::str::FromStr;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A post by an author picked like real networks (popular accounts post more).
    Post,
    /// The first page of an active user's home timeline.
    Read,
    /// The page after the first (past the cache when pages are cache-sized).
    Scroll,
    Follow,
    Unfollow,
    /// The first page of an active user's list `close` (see `load`).
    List,
    /// The first page of a group's timeline (groups `g0`, `g1`, ...).
    Group,
    /// The first page of an active user's mentions.
    Mention,
    /// An active user likes one of the latest posts of the run.
    Like,
    /// An author picked like posts' (popular accounts repost more)
    /// reposts one of the latest posts of the run.
    Repost,
    /// The first page of the notifications of an account picked as posts
    /// pick their authors.
    Notifications,
    /// The first page of an active user's home timeline in the balanced
    /// order (ranked from up to 1,200 candidates).
    Balanced,
}

/// How many kinds there are.
pub const KIND_COUNT: usize = 12;

pub const KINDS: [Kind; KIND_COUNT] = [
    Kind::Post,
    Kind::Read,
    Kind::Scroll,
    Kind::Follow,
    Kind::Unfollow,
    Kind::List,
    Kind::Group,
    Kind::Mention,
    Kind::Like,
    Kind::Repost,
    Kind::Notifications,
    Kind::Balanced,
];

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Kind::Post => "post",
            Kind::Read => "read",
            Kind::Scroll => "scroll",
            Kind::Follow => "follow",
            Kind::Unfollow => "unfollow",
            Kind::List => "list",
            Kind::Group => "group",
            Kind::Mention => "mention",
            Kind::Like => "like",
            Kind::Repost => "repost",
            Kind::Notifications => "notifications",
            Kind::Balanced => "balanced",
        }
    }

    pub fn index(self) -> usize {
        KINDS.iter().position(|k| *k == self).expect("listed")
    }
}

/// Percentages of each kind, summing to 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mix(pub [u32; KIND_COUNT]);

impl Mix {
    /// The kind for a number in 0..100.
    pub fn kind(&self, roll: u32) -> Kind {
        let mut acc = 0;
        for (k, share) in KINDS.iter().zip(self.0) {
            acc += share;
            if roll < acc {
                return *k;
            }
        }
        Kind::Read
    }
}

impl FromStr for Mix {
    type Err = String;

    fn from_str(s: &str) -> Result<Mix, String> {
        let mut mix = [0u32; KIND_COUNT];
        for part in s.split(',').filter(|p| !p.trim().is_empty()) {
            let (name, pct) = part
                .split_once('=')
                .ok_or_else(|| format!("`{part}`: expected kind=percent"))?;
            let kind = KINDS
                .iter()
                .find(|k| k.name() == name.trim())
                .ok_or_else(|| {
                    format!(
                        "unknown operation `{name}`; one of post, read, scroll, follow, unfollow, list, group, mention, like, repost, notifications, balanced"
                    )
                })?;
            mix[kind.index()] = pct
                .trim()
                .parse()
                .map_err(|_| format!("`{pct}` is not a whole percentage"))?;
        }
        if mix.iter().sum::<u32>() != 100 {
            return Err(format!(
                "the mix adds up to {}%, not 100%",
                mix.iter().sum::<u32>()
            ));
        }
        Ok(Mix(mix))
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = KINDS
            .iter()
            .zip(self.0)
            .filter(|(_, p)| *p > 0)
            .map(|(k, p)| format!("{}={p}", k.name()))
            .collect();
        f.write_str(&parts.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_parse_and_pick() {
        let m: Mix = "post=10,read=80,scroll=5,follow=3,unfollow=2"
            .parse()
            .unwrap();
        assert_eq!(m.kind(0), Kind::Post);
        assert_eq!(m.kind(10), Kind::Read);
        assert_eq!(m.kind(99), Kind::Unfollow);
        assert_eq!(
            m.to_string(),
            "post=10,read=80,scroll=5,follow=3,unfollow=2"
        );
        assert!("post=50".parse::<Mix>().is_err());
        let reads: Mix = "list=30,group=30,mention=40".parse().unwrap();
        assert_eq!(reads.kind(0), Kind::List);
        assert_eq!(reads.kind(99), Kind::Mention);
        assert!("tweet=100".parse::<Mix>().is_err());
    }
}
