//! Which feed model a deployment uses, and its parameters.

use crate::error::{Error, Result};
use socialite_domain::feed::hybrid::Hybrid;
use std::fmt;
use std::str::FromStr;

/// The four ways to build a home timeline (after the reference design). All
/// return the same timeline for the same data; they differ in what they
/// store and what a read or a post costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FeedModel {
    /// Nothing stored per reader: every read merges the followees' posts.
    FanoutOnRead,
    /// One document per (user, time bucket); deliveries append.
    TimeBuckets,
    /// One document per user per N entries; a new one when the last is full.
    SizedBuckets,
    /// One capped array per active user (the default).
    Cache,
}

impl FeedModel {
    pub const ALL: [FeedModel; 4] = [
        FeedModel::FanoutOnRead,
        FeedModel::TimeBuckets,
        FeedModel::SizedBuckets,
        FeedModel::Cache,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            FeedModel::FanoutOnRead => "read",
            FeedModel::TimeBuckets => "time-buckets",
            FeedModel::SizedBuckets => "sized-buckets",
            FeedModel::Cache => "cache",
        }
    }
}

impl fmt::Display for FeedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for FeedModel {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<FeedModel, String> {
        FeedModel::ALL
            .into_iter()
            .find(|m| m.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown feed model {s:?}; one of: read, time-buckets, sized-buckets, cache"
                )
            })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FeedConfig {
    pub model: FeedModel,
    /// Cache model: entries per cache. Every stored model: entries that a
    /// dormant user's first read and a follow's backfill copy in.
    pub cache_size: usize,
    /// Time buckets: the span of one bucket.
    pub time_bucket_ms: u64,
    /// Sized buckets: entries per bucket.
    pub bucket_size: usize,
    /// Bucket models: buckets kept per user; older ones are dropped and read
    /// by merge instead.
    pub bucket_retention: usize,
    /// Entries carry the message and data (embedding) instead of only the
    /// post id and author (linking).
    pub embed: bool,
    /// A user's own posts are in their home timeline, as Mastodon and
    /// Twitter show them.
    pub own_posts: bool,
    /// A stored timeline not read for this long is dropped, and its owner is
    /// dormant again until they read ([`socialite_domain::feed::accept::Freshness`]).
    pub cache_ttl_secs: u64,
    /// Hybrid fanout: authors past a follower count are merged at read time
    /// instead of fanned out ([`socialite_domain::feed::hybrid`]).
    pub hybrid: Hybrid,
}

impl Default for FeedConfig {
    fn default() -> Self {
        FeedConfig {
            model: FeedModel::Cache,
            cache_size: 50,
            time_bucket_ms: 86_400_000,
            bucket_size: 50,
            bucket_retention: 30,
            embed: false,
            own_posts: true,
            cache_ttl_secs: 30 * 86_400,
            hybrid: Hybrid::Auto,
        }
    }
}

impl FeedConfig {
    pub fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::invalid("invalid_config", what.to_owned()));
        if self.cache_size == 0 {
            return bad("cache size must be at least 1");
        }
        if self.time_bucket_ms == 0 {
            return bad("the time bucket span must be positive");
        }
        if self.bucket_size == 0 || self.bucket_retention == 0 {
            return bad("bucket size and bucket retention must be at least 1");
        }
        if self.cache_ttl_secs == 0 {
            return bad("the cache time to live must be at least a second");
        }
        self.hybrid.validate()
    }

    /// When stored timelines expire, and when a read refreshes that.
    pub fn freshness(&self) -> socialite_domain::feed::accept::Freshness {
        socialite_domain::feed::accept::Freshness::new(self.cache_ttl_secs * 1000)
    }

    /// Whether timelines are stored per reader (every model but fanout on read).
    pub(crate) fn stores_timelines(&self) -> bool {
        self.model != FeedModel::FanoutOnRead
    }
}
