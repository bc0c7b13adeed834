//! Conversions between the domain and the gRPC messages.

use crate::error::to_status;
use serde_json::Value;
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::check_json_integers;
use socialite_core::model::{rfc3339_ms, FeedItem, Page, Post, PostCounts, User};
use socialite_core::reads::ranked::{Order, RankedPage};
use socialite_core::Error;
use socialite_domain::feed::markers::Marker;
use socialite_proto::v1 as pb;

pub fn user(u: &User) -> pb::User {
    pb::User {
        id: u.id.to_string(),
        followers: u.followers,
        following: u.following,
        profile_json: u
            .profile
            .as_ref()
            .map(|p| Value::Object(p.clone()).to_string())
            .unwrap_or_default(),
    }
}

pub fn post(p: &Post) -> pb::Post {
    pb::Post {
        id: p.id.to_string(),
        author: p.author.to_string(),
        message: p.message.clone(),
        data_json: p
            .data
            .as_ref()
            .map(|d| Value::Object(d.clone()).to_string())
            .unwrap_or_default(),
        created_at: rfc3339_ms(p.created_at_ms()),
        mentions: p.mentions.iter().map(|m| m.to_string()).collect(),
        in_reply_to: p
            .reply_to
            .as_ref()
            .map(|r| r.id.to_string())
            .unwrap_or_default(),
        in_reply_to_author: p
            .reply_to
            .as_ref()
            .map(|r| r.author.to_string())
            .unwrap_or_default(),
        repost_of: p
            .repost_of
            .as_ref()
            .map(|r| r.id.to_string())
            .unwrap_or_default(),
        repost_of_author: p
            .repost_of
            .as_ref()
            .map(|r| r.author.to_string())
            .unwrap_or_default(),
        ..Default::default()
    }
}

/// An entry of a timeline or a list of posts: the post, and where reposts
/// placed it.
pub fn entry(i: &FeedItem) -> pb::Post {
    let mut p = post(&i.post);
    if !i.reposted_by.is_empty() {
        p.reposted_by = i.reposted_by.iter().map(|u| u.to_string()).collect();
        p.reposted_by_count = i.reposts_seen;
        p.position = i.position.to_string();
    }
    p.filtered = crate::filters::grpc::hits(&i.filtered);
    p
}

/// A page of a ranked order; `explain` adds each entry's score.
pub fn ranked_list(page: &RankedPage, order: Order, explain: bool) -> pb::RankedPostList {
    let entries = page
        .items
        .iter()
        .map(|i| pb::RankedPost {
            post: Some(entry(&i.item)),
            reason: i.reason.as_str().into(),
            more: i.more,
            score: explain.then(|| {
                let p = &i.parts;
                pb::Score {
                    score: p.score,
                    recency: p.recency,
                    engagement: p.engagement,
                    affinity: p.affinity,
                    rarity: p.rarity,
                    priority: p.priority,
                    diversity: p.diversity,
                }
            }),
        })
        .collect();
    pb::RankedPostList {
        entries,
        next_cursor: page.next_cursor.clone().unwrap_or_default(),
        order: order.as_str().into(),
        fallback: page.fallback,
    }
}

/// A post read by its id, with its counts.
pub fn counted_post(p: &Post, counts: PostCounts) -> pb::Post {
    pb::Post {
        likes: Some(counts.likes),
        reposts: Some(counts.reposts),
        replies: Some(counts.replies),
        ..post(p)
    }
}

pub fn post_page(page: &Page<FeedItem, PostId>) -> pb::PostList {
    pb::PostList {
        posts: page.items.iter().map(entry).collect(),
        next_cursor: page.next_cursor.map(|c| c.to_string()).unwrap_or_default(),
        skipped: false,
    }
}

pub fn marker(m: &Marker) -> pb::Marker {
    pb::Marker {
        timeline: m.timeline.as_str().to_owned(),
        last_read_id: m.last_read.to_string(),
        updated_at: rfc3339_ms(m.at_ms),
    }
}

pub fn user_page(page: Page<UserId, String>) -> pb::UserList {
    pb::UserList {
        users: page.items.iter().map(|u| u.to_string()).collect(),
        next_cursor: page.next_cursor.unwrap_or_default(),
        followed_at: Vec::new(),
    }
}

/// A page of follow edges, with their times when asked.
pub fn edge_page(page: Page<(UserId, u64), String>, with_times: bool) -> pb::UserList {
    pb::UserList {
        users: page.items.iter().map(|(u, _)| u.to_string()).collect(),
        next_cursor: page.next_cursor.unwrap_or_default(),
        followed_at: if with_times {
            page.items.iter().map(|(_, at)| rfc3339_ms(*at)).collect()
        } else {
            Vec::new()
        },
    }
}

/// An optional JSON field: empty means absent.
pub fn optional_json(field: &'static str, text: &str) -> Result<Option<Value>, tonic::Status> {
    if text.is_empty() {
        return Ok(None);
    }
    check_json_integers(text.as_bytes()).map_err(to_status)?;
    serde_json::from_str(text).map(Some).map_err(|e| {
        to_status(Error::invalid(
            "invalid_json",
            format!("{field} is not valid JSON: {e}"),
        ))
    })
}

/// A page size: 0 means the default.
pub fn limit(n: u32) -> Option<u64> {
    (n != 0).then_some(u64::from(n))
}

/// An optional string: empty means absent.
pub fn optional(s: &str) -> Option<&str> {
    (!s.is_empty()).then_some(s)
}
