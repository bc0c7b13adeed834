//! What ranked orders are: the orders a reader may choose, how they are
//! made (the settings), where a process keeps what they need between pages
//! ([`Ranker`]), and the pages they answer ([`super::ranked`] serves them).

use super::rank_bases::Bases;
use super::snapshots::Snapshots;
use crate::error::{Error, Result};
use crate::feed::timeline::ReadSource;
use crate::model::FeedItem;
use socialite_domain::feed::rank::{Parts, Reason, Weights};
use std::time::Duration;

/// The orders of a home timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    Latest,
    Balanced,
    CatchUp,
}

impl Order {
    pub fn parse(s: &str) -> Result<Order> {
        match s {
            "latest" => Ok(Order::Latest),
            "balanced" => Ok(Order::Balanced),
            "catchup" => Ok(Order::CatchUp),
            other => Err(Error::invalid(
                "invalid_order",
                format!("order `{other}` is not one of latest, balanced, catchup"),
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Order::Latest => "latest",
            Order::Balanced => "balanced",
            Order::CatchUp => "catchup",
        }
    }
}

/// How ranked orders are made (the settings `rank-*`).
#[derive(Debug, Clone)]
pub struct Ranking {
    pub weights: Weights,
    /// How far back candidates go.
    pub window: Duration,
    /// Most candidates a ranked order reads.
    pub max_candidates: usize,
    /// Longest a ranked first page may take before latest order serves it.
    pub deadline: Duration,
    /// How long a ranked order's later pages can be read.
    pub snapshot_ttl: Duration,
}

impl Default for Ranking {
    fn default() -> Ranking {
        Ranking {
            weights: Weights::default(),
            window: Duration::from_secs(48 * 3600),
            max_candidates: 1200,
            deadline: Duration::from_millis(50),
            snapshot_ttl: Duration::from_secs(600),
        }
    }
}

/// Where ranked orders keep what they need between pages.
pub(crate) struct Ranker {
    pub(crate) settings: Ranking,
    pub(crate) snapshots: Snapshots,
    /// What each reader's balanced order was last ranked from.
    pub(super) bases: Bases,
    /// Rankings under way. A ranking is CPU work of some milliseconds: more
    /// at once than the cores run would only wait past the deadline while
    /// taking the CPU from every other read, so a first page that finds
    /// them all taken is served in latest order at once (`busy`).
    pub(super) running: tokio::sync::Semaphore,
}

/// Rankings under way at once, per core.
const RANKINGS_PER_CORE: usize = 2;

impl Ranker {
    pub(crate) fn new(settings: Ranking) -> Ranker {
        let snapshots = Snapshots::new(settings.snapshot_ttl);
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Ranker {
            settings,
            snapshots,
            bases: Bases::default(),
            running: tokio::sync::Semaphore::new(cores * RANKINGS_PER_CORE),
        }
    }
}

/// An entry of a ranked page: the item, why it is there, and its score.
#[derive(Debug, Clone)]
pub struct RankedItem {
    pub item: FeedItem,
    pub reason: Reason,
    pub parts: Parts,
    /// In catch-up: how many more posts of the author since the marker.
    pub more: u64,
}

/// How a ranked first page was served: ranked in full, the same page
/// again (`kept`), ranked from what the reader's last ranking read with
/// only what arrived since read (`extended`), or in latest order past the
/// deadline, while every ranking slot was taken (`busy`), or after an
/// error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Served {
    Ranked,
    Kept,
    Extended,
    Deadline,
    Busy,
    Error,
}

impl Served {
    pub fn as_str(self) -> &'static str {
        match self {
            Served::Ranked => "ranked",
            Served::Kept => "kept",
            Served::Extended => "extended",
            Served::Deadline => "deadline",
            Served::Busy => "busy",
            Served::Error => "error",
        }
    }
}

/// A page of a ranked order.
#[derive(Debug, Clone)]
pub struct RankedPage {
    pub items: Vec<RankedItem>,
    pub next_cursor: Option<String>,
    /// Served in latest order: ranking missed its deadline or failed.
    pub fallback: bool,
    /// How a ranked order's first page was served (`None`: a later page,
    /// or the latest order).
    pub served: Option<Served>,
    pub source: ReadSource,
}
