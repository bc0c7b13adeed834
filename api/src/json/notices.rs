//! The JSON shapes of notifications.

use serde::Serialize;
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::{rfc3339_ms, Page};
use socialite_core::notifications::Notification;
use utoipa::ToSchema;

/// An entry of a user's notifications: `kind` of act (`follow`,
/// `mention`, `reply`, `repost`, `like`, or `post`: a post or reply by an
/// account followed with `notify` on), the `post` it is about (null for
/// follows; the mentioning post for a mention; the post answered for
/// replies; the new post for `post`), the newest `actors` (at most 5), how many acts (`count`), and
/// the newest one's time and id (`latest_at`, `id`: the entry's place, the
/// cursor to page by and what a notifications marker holds).
#[derive(Serialize, ToSchema)]
pub struct NotificationJson<'a> {
    #[schema(example = "like")]
    kind: &'static str,
    #[schema(example = "0550f1a2b3c40000")]
    post: Option<String>,
    #[schema(value_type = Vec<String>, example = json!(["bob", "carol"]))]
    actors: Vec<&'a str>,
    count: u64,
    #[schema(example = "2026-11-23T09:17:11.107Z")]
    latest_at: String,
    #[schema(example = "0550f1a2b3c80000")]
    id: String,
    /// The reader's warning keyword filters that match the post it is
    /// about; absent when none does.
    #[serde(skip_serializing_if = "Option::is_none")]
    filtered: Option<Vec<super::filtered::FilterHitJson<'a>>>,
}

/// A page of notifications, newest first; pass `next_cursor` as the next
/// `before` (null on the last page).
#[derive(Serialize, ToSchema)]
pub struct NotificationPageJson<'a> {
    notifications: Vec<NotificationJson<'a>>,
    next_cursor: Option<String>,
}

fn notification(n: &Notification) -> NotificationJson<'_> {
    NotificationJson {
        kind: n.kind.as_str(),
        post: n.post.map(|p| p.to_string()),
        actors: n.actors.iter().map(UserId::as_str).collect(),
        count: n.count,
        latest_at: rfc3339_ms(n.latest.unix_ms()),
        id: n.latest.to_string(),
        filtered: super::filtered::hits(&n.filtered),
    }
}

pub fn notification_page(page: &Page<Notification, PostId>) -> NotificationPageJson<'_> {
    let entry = notification;
    NotificationPageJson {
        notifications: page.items.iter().map(entry).collect(),
        next_cursor: page.next_cursor.map(|c| c.to_string()),
    }
}

/// How many entries of the user's notifications are newer than their
/// notifications marker (all, without one): counted up to 1,000, `more`
/// when there are more.
#[derive(Serialize, ToSchema)]
pub struct UnreadJson {
    pub unread: u64,
    pub more: bool,
}
