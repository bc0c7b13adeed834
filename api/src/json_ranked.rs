//! A page of a ranked home or list timeline (`order=balanced` or
//! `catchup`).

use crate::json::{entry, PostJson, PostPageJson, TimelinePageJson};
use serde::Serialize;
use socialite_core::reads::ranked::{Order, RankedItem, RankedPage};
use socialite_domain::feed::rank::Parts;
use utoipa::openapi::schema::{AnyOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{PartialSchema, ToSchema};

/// A page of a home or list timeline in a ranked order: each post says why it is
/// there. Pass `next_cursor` as the next `cursor`.
#[derive(Serialize, ToSchema)]
pub struct RankedPageJson<'a> {
    /// `balanced` or `catchup`.
    #[schema(example = "balanced")]
    order: &'static str,
    /// True when ranking missed its deadline (or failed) and the page is
    /// in latest order; its `next_cursor` continues in latest order.
    fallback: bool,
    posts: Vec<RankedPostJson<'a>>,
    /// Null on the last page.
    next_cursor: Option<&'a str>,
}

/// A home timeline page as the contract names it: newest first
/// (`TimelinePageJson`) or in a ranked order (`RankedPageJson`), any of
/// the two (a ranked page also has what a newest-first one has).
pub struct HomePageJson;

impl utoipa::PartialSchema for HomePageJson {
    fn schema() -> RefOr<Schema> {
        AnyOfBuilder::new()
            .item(Ref::from_schema_name(TimelinePageJson::name()))
            .item(Ref::from_schema_name(RankedPageJson::name()))
            .into()
    }
}

impl ToSchema for HomePageJson {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        for (name, schema) in [
            (TimelinePageJson::name(), TimelinePageJson::schema()),
            (RankedPageJson::name(), RankedPageJson::schema()),
        ] {
            schemas.push((name.into_owned(), schema));
        }
        TimelinePageJson::schemas(schemas);
        RankedPageJson::schemas(schemas);
    }
}

/// A list timeline page as the contract names it: newest first
/// (`PostPageJson`) or in a ranked order (`RankedPageJson`).
pub struct ListPageJson;

impl utoipa::PartialSchema for ListPageJson {
    fn schema() -> RefOr<Schema> {
        AnyOfBuilder::new()
            .item(Ref::from_schema_name(PostPageJson::name()))
            .item(Ref::from_schema_name(RankedPageJson::name()))
            .into()
    }
}

impl ToSchema for ListPageJson {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        for (name, schema) in [
            (PostPageJson::name(), PostPageJson::schema()),
            (RankedPageJson::name(), RankedPageJson::schema()),
        ] {
            schemas.push((name.into_owned(), schema));
        }
        PostPageJson::schemas(schemas);
        RankedPageJson::schemas(schemas);
    }
}

/// A post of a ranked page.
#[derive(Serialize, ToSchema)]
pub struct RankedPostJson<'a> {
    #[serde(flatten)]
    post: PostJson<'a>,
    /// What lifted it most: `priority` (you raised the author), `reposted_by`
    /// (accounts you follow reposted it), `popular` (liked, reposted,
    /// replied to), `affinity` (you often like, reply to or repost the author),
    /// `rarely_posts`, or `followed`.
    #[schema(example = "popular")]
    reason: &'static str,
    /// Catch-up: how many more posts of the author since the marker.
    #[serde(skip_serializing_if = "Option::is_none")]
    more: Option<u64>,
    /// With `explain=true`: the score and its parts (docs/ranking.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    score: Option<ScoreJson>,
}

/// A ranked entry's score: `score = recency × (1 + engagement + affinity
/// + rarity) × priority × diversity`.
#[derive(Serialize, ToSchema)]
pub struct ScoreJson {
    score: f64,
    recency: f64,
    engagement: f64,
    affinity: f64,
    rarity: f64,
    priority: f64,
    diversity: f64,
}

fn score(p: &Parts) -> ScoreJson {
    ScoreJson {
        score: p.score,
        recency: p.recency,
        engagement: p.engagement,
        affinity: p.affinity,
        rarity: p.rarity,
        priority: p.priority,
        diversity: p.diversity,
    }
}

fn ranked_post(i: &RankedItem, order: Order, explain: bool) -> RankedPostJson<'_> {
    RankedPostJson {
        post: entry(&i.item),
        reason: i.reason.as_str(),
        more: (order == Order::CatchUp).then_some(i.more),
        score: explain.then(|| score(&i.parts)),
    }
}

pub fn ranked_page(page: &RankedPage, order: Order, explain: bool) -> RankedPageJson<'_> {
    RankedPageJson {
        order: order.as_str(),
        fallback: page.fallback,
        posts: page
            .items
            .iter()
            .map(|i| ranked_post(i, order, explain))
            .collect(),
        next_cursor: page.next_cursor.as_deref(),
    }
}
