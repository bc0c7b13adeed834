//! The REST API's JSON shapes, typed so that pages serialize straight to
//! bytes and the contract (`crate::openapi`) describes exactly what is sent.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use socialite_core::ids::{ListName, PostId, UserId};
use socialite_core::markers::ForwardPage;
use socialite_core::model::{
    rfc3339_ms, FeedItem, ListSummary, Page, Post, PostCounts, Relationship, Suggestion, User,
};
use socialite_core::posts::Thread;
use socialite_domain::feed::markers::Marker;
use socialite_domain::graph::relations::FollowOption;
use utoipa::ToSchema;

mod filtered;
mod notices;

pub use filtered::hits as filtered_hits;
pub use notices::*;

/// A user with maintained follower and following counts.
#[derive(Serialize, ToSchema)]
pub struct UserJson<'a> {
    pub followers: u64,
    pub following: u64,
    #[schema(value_type = String, example = "alice")]
    pub id: &'a str,
    /// The profile as last put, or null.
    #[schema(value_type = Option<Object>)]
    pub profile: &'a Option<Map<String, Value>>,
}

pub fn user(u: &User) -> UserJson<'_> {
    UserJson {
        followers: u.followers,
        following: u.following,
        id: u.id.as_str(),
        profile: &u.profile,
    }
}

/// A post as the API shows it; as an entry of a timeline or a list of
/// posts, with who reposted it there.
#[derive(Serialize, ToSchema)]
pub struct PostJson<'a> {
    /// 16 hex digits, time-ordered: a cursor for `before`.
    #[schema(example = "0550f1a2b3c40000")]
    id: String,
    #[schema(value_type = String, example = "alice")]
    author: &'a str,
    /// Empty on a repost (it carries `repost_of`).
    #[schema(value_type = String, example = "hello")]
    message: &'a str,
    #[schema(value_type = Option<Object>)]
    data: &'a Option<Map<String, Value>>,
    /// RFC 3339, UTC, milliseconds.
    #[schema(example = "2026-11-23T09:17:11.107Z")]
    created_at: String,
    /// The users the message mentions with `@id` (those that existed when
    /// it was posted), in order.
    #[schema(value_type = Vec<String>, example = json!(["bob"]))]
    mentions: Vec<&'a str>,
    /// A reply: the post it replies to.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "0550f1a2b3c00000")]
    in_reply_to: Option<String>,
    /// A reply: the author of the post it replies to.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "bob")]
    in_reply_to_author: Option<&'a str>,
    /// A repost read by its own id: the post it reposts (timelines show
    /// that post itself, with `reposted_by`).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "0550f1a2b3c00000")]
    repost_of: Option<String>,
    /// A repost read by its own id: the author of the post it reposts.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "bob")]
    repost_of_author: Option<&'a str>,
    /// How many users like the post, exactly: on a post read by its id
    /// (`GET /posts/{id}`), and on a new post (0), only.
    #[serde(skip_serializing_if = "Option::is_none")]
    likes: Option<u64>,
    /// How many users repost the post, exactly (as `likes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    reposts: Option<u64>,
    /// How many replies the post has, exactly (as `likes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    replies: Option<u64>,
    /// In a timeline or a list of posts: the accounts of it that reposted
    /// the post, newest first (at most 20); absent when none did.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<String>>, example = json!(["carol"]))]
    reposted_by: Option<Vec<&'a str>>,
    /// With `reposted_by`: how many of the accounts reposted it.
    #[serde(skip_serializing_if = "Option::is_none")]
    reposted_by_count: Option<u64>,
    /// With `reposted_by`: where the entry sits, the id of the newest of
    /// those reposts: the cursor to page and mark by (otherwise the post's
    /// `id` is).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "0550f1a2b3c80000")]
    position: Option<String>,
    /// The reader's keyword filters with action `warn` that match the post
    /// (show it collapsed, naming them); absent when none does. Those with
    /// action `hide` leave the post out.
    #[serde(skip_serializing_if = "Option::is_none")]
    filtered: Option<Vec<filtered::FilterHitJson<'a>>>,
}

pub fn post(p: &Post) -> PostJson<'_> {
    PostJson {
        id: p.id.to_string(),
        author: p.author.as_str(),
        message: &p.message,
        data: &p.data,
        created_at: rfc3339_ms(p.created_at_ms()),
        mentions: p.mentions.iter().map(UserId::as_str).collect(),
        in_reply_to: p.reply_to.as_ref().map(|r| r.id.to_string()),
        in_reply_to_author: p.reply_to.as_ref().map(|r| r.author.as_str()),
        repost_of: p.repost_of.as_ref().map(|r| r.id.to_string()),
        repost_of_author: p.repost_of.as_ref().map(|r| r.author.as_str()),
        likes: None,
        reposts: None,
        replies: None,
        reposted_by: None,
        reposted_by_count: None,
        position: None,
        filtered: None,
    }
}

/// A post read by its id, with its counts.
pub fn counted_post(p: &Post, counts: PostCounts) -> PostJson<'_> {
    PostJson {
        likes: Some(counts.likes),
        reposts: Some(counts.reposts),
        replies: Some(counts.replies),
        ..post(p)
    }
}

/// An entry of a timeline or a list of posts: the post, and where reposts
/// placed it.
pub fn entry(i: &FeedItem) -> PostJson<'_> {
    let reposted = !i.reposted_by.is_empty();
    PostJson {
        reposted_by: reposted.then(|| i.reposted_by.iter().map(UserId::as_str).collect()),
        reposted_by_count: reposted.then_some(i.reposts_seen),
        position: reposted.then(|| i.position.to_string()),
        filtered: filtered::hits(&i.filtered),
        ..post(&i.post)
    }
}

/// A page of posts, newest first; pass `next_cursor` as the next `before`
/// (null on the last page).
#[derive(Serialize, ToSchema)]
pub struct PostPageJson<'a> {
    posts: Vec<PostJson<'a>>,
    next_cursor: Option<String>,
}

pub fn post_page(page: &Page<FeedItem, PostId>) -> PostPageJson<'_> {
    PostPageJson {
        posts: page.items.iter().map(entry).collect(),
        next_cursor: page.next_cursor.map(|c| c.to_string()),
    }
}

/// A page of user ids; pass `next_cursor` as the next `cursor` (null on the
/// last page). With `followed_at=true`, follower and following pages also
/// carry `edges`: each user with when the follow was made.
#[derive(Serialize, ToSchema)]
pub struct UserPageJson<'a> {
    #[schema(value_type = Vec<String>)]
    users: Vec<&'a str>,
    next_cursor: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    edges: Option<Vec<EdgeJson<'a>>>,
}

/// A follow edge: the user at the other end, and when the follow was made.
#[derive(Serialize, ToSchema)]
pub struct EdgeJson<'a> {
    #[schema(value_type = String, example = "alice")]
    id: &'a str,
    /// RFC 3339, UTC, milliseconds (the Unix epoch for follows made before
    /// follow times were kept).
    #[schema(example = "2026-11-23T09:17:11.107Z")]
    followed_at: String,
}

pub fn user_page(page: &Page<UserId, String>) -> UserPageJson<'_> {
    UserPageJson {
        users: page.items.iter().map(|u| u.as_str()).collect(),
        next_cursor: page.next_cursor.as_deref(),
        edges: None,
    }
}

/// A page of follow edges, newest first, with their times when asked.
pub fn edge_page(page: &Page<(UserId, u64), String>, with_times: bool) -> UserPageJson<'_> {
    UserPageJson {
        users: page.items.iter().map(|(u, _)| u.as_str()).collect(),
        next_cursor: page.next_cursor.as_deref(),
        edges: with_times.then(|| {
            page.items
                .iter()
                .map(|(u, at)| EdgeJson {
                    id: u.as_str(),
                    followed_at: rfc3339_ms(*at),
                })
                .collect()
        }),
    }
}

#[derive(Serialize, ToSchema)]
pub struct CountJson {
    pub count: u64,
}

pub fn count(n: u64) -> CountJson {
    CountJson { count: n }
}

/// The state of an edge after a follow or an unfollow, and whether the
/// request changed it (the edge or its lists).
#[derive(Serialize, ToSchema)]
pub struct FollowJson {
    pub following: bool,
    pub changed: bool,
    /// The lists the edge is filed under, in name order.
    #[schema(value_type = Vec<String>, example = json!(["work"]))]
    pub lists: Vec<String>,
}

/// Whether the mute or block stands after the request, and whether the
/// request changed it.
#[derive(Serialize, ToSchema)]
pub struct RelationJson {
    pub active: bool,
    pub changed: bool,
    /// When a mute made with `expires_in` ends (RFC 3339, UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// Whether the user likes the post after the request, and whether the
/// request changed it.
#[derive(Serialize, ToSchema)]
pub struct LikeJson {
    pub liked: bool,
    pub changed: bool,
}

/// A post's thread: what it answers, root first; the post; its direct
/// replies, oldest first (pass `next_cursor` as the next `cursor`; null on
/// the last page). Every post carries its counts.
#[derive(Serialize, ToSchema)]
pub struct ThreadJson<'a> {
    ancestors: Vec<PostJson<'a>>,
    post: PostJson<'a>,
    replies: Vec<PostJson<'a>>,
    next_cursor: Option<String>,
}

pub fn thread<'a>(t: &'a Thread) -> ThreadJson<'a> {
    let counted = |p: &'a Post| PostJson {
        filtered: t.filtered.get(&p.id).and_then(|h| filtered::hits(h)),
        ..counted_post(p, t.counts.get(&p.id).copied().unwrap_or_default())
    };
    ThreadJson {
        ancestors: t.ancestors.iter().map(counted).collect(),
        post: counted(&t.post),
        replies: t.replies.items.iter().map(counted).collect(),
        next_cursor: t.replies.next_cursor.map(|c| c.to_string()),
    }
}

/// Whether the user reposts the post after the request, and whether the
/// request changed it.
#[derive(Serialize, ToSchema)]
pub struct RepostJson {
    pub reposted: bool,
    pub changed: bool,
}

/// A page of a post's likers, newest like first; pass `next_cursor` as the
/// next `cursor` (null on the last page).
#[derive(Serialize, ToSchema)]
pub struct LikerPageJson<'a> {
    likers: Vec<LikerJson<'a>>,
    next_cursor: Option<&'a str>,
}

/// A user who likes the post, and since when.
#[derive(Serialize, ToSchema)]
pub struct LikerJson<'a> {
    #[schema(value_type = String, example = "bob")]
    id: &'a str,
    /// RFC 3339, UTC, milliseconds.
    #[schema(example = "2026-11-23T09:17:11.107Z")]
    liked_at: String,
}

pub fn liker_page(page: &Page<(UserId, u64), String>) -> LikerPageJson<'_> {
    LikerPageJson {
        likers: page
            .items
            .iter()
            .map(|(u, at)| LikerJson {
                id: u.as_str(),
                liked_at: rfc3339_ms(*at),
            })
            .collect(),
        next_cursor: page.next_cursor.as_deref(),
    }
}

/// A page of the home timeline: newest first, with `next_cursor` the next
/// `before`; or with `after`, oldest first, with `next_cursor` the next
/// `after` (null once the page reaches the newest post) and `skipped`.
#[derive(Serialize, ToSchema)]
pub struct TimelinePageJson<'a> {
    posts: Vec<PostJson<'a>>,
    next_cursor: Option<String>,
    /// With `after` only: true when the place is older than the timeline's
    /// newest 1,000 entries, so the page starts at the oldest of those and
    /// the posts between are left out.
    #[serde(skip_serializing_if = "Option::is_none")]
    skipped: Option<bool>,
}

pub fn forward_page(page: &ForwardPage) -> TimelinePageJson<'_> {
    TimelinePageJson {
        posts: page.items.iter().map(entry).collect(),
        next_cursor: page.next_cursor.map(|c| c.to_string()),
        skipped: Some(page.skipped),
    }
}

/// A user's place in a timeline.
#[derive(Serialize, Deserialize, ToSchema)]
pub struct MarkerJson {
    /// `home`.
    #[schema(example = "home")]
    pub timeline: String,
    /// The newest post the user has read.
    #[schema(example = "0550f1a2b3c40000")]
    pub last_read_id: String,
    /// When the marker was set: RFC 3339, UTC, milliseconds.
    #[schema(example = "2026-11-23T09:17:11.107Z")]
    pub updated_at: String,
}

pub fn marker(m: &Marker) -> MarkerJson {
    MarkerJson {
        timeline: m.timeline.as_str().to_owned(),
        last_read_id: m.last_read.to_string(),
        updated_at: rfc3339_ms(m.at_ms),
    }
}

/// A marker after a request to set it, and whether it moved.
#[derive(Serialize, ToSchema)]
pub struct MarkerSetJson {
    #[serde(flatten)]
    pub marker: MarkerJson,
    pub changed: bool,
}

/// The user's markers, one per timeline they set one for.
#[derive(Serialize, ToSchema)]
pub struct MarkersJson {
    pub markers: Vec<MarkerJson>,
}

pub fn names(lists: &[ListName]) -> Vec<String> {
    lists.iter().map(|l| l.as_str().to_owned()).collect()
}

/// How two users stand.
#[derive(Serialize, ToSchema)]
pub struct RelationshipJson {
    /// The first user follows the second.
    pub following: bool,
    /// The second user follows the first.
    pub followed_by: bool,
    /// The first user's lists the second is filed under.
    #[schema(example = json!(["work"]))]
    pub lists: Vec<String>,
    /// The follow's options (to the first user, or a server key; absent to
    /// others): the second user's reposts shown, all their replies shown,
    /// a notification when they post.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reposts: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replies: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notify: Option<bool>,
}

pub fn relationship(r: Relationship) -> RelationshipJson {
    let has = |o| r.options.as_ref().map(|on| on.contains(&o));
    RelationshipJson {
        following: r.following,
        followed_by: r.followed_by,
        lists: names(&r.lists),
        reposts: has(FollowOption::HideReposts).map(|hidden| !hidden),
        replies: has(FollowOption::AllReplies),
        notify: has(FollowOption::Notify),
    }
}

/// A group and how many members it has.
#[derive(Serialize, ToSchema)]
pub struct GroupJson {
    #[schema(example = "rustaceans")]
    pub name: String,
    pub members: u64,
}

/// A membership after a join or a leave, and whether the request changed it.
#[derive(Serialize, ToSchema)]
pub struct MemberJson {
    pub member: bool,
    pub changed: bool,
}

/// One of a user's lists and how many accounts it holds.
#[derive(Serialize, ToSchema)]
pub struct ListJson {
    #[schema(example = "work")]
    pub name: String,
    pub count: u64,
    /// Whether its accounts are kept out of the home timeline: shown to
    /// those who may read the user's own settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exclusive: Option<bool>,
}

/// A user's lists, in name order.
#[derive(Serialize, ToSchema)]
pub struct ListsJson {
    pub lists: Vec<ListJson>,
}

pub fn lists(lists: &[ListSummary]) -> ListsJson {
    ListsJson {
        lists: lists
            .iter()
            .map(|l| ListJson {
                name: l.name.as_str().to_owned(),
                count: l.count,
                exclusive: l.exclusive,
            })
            .collect(),
    }
}

/// An account to follow.
#[derive(Serialize, ToSchema)]
pub struct SuggestionJson<'a> {
    #[schema(value_type = String, example = "carol")]
    pub id: &'a str,
    /// How many of the user's followees follow it.
    pub mutuals: u32,
}

/// Accounts to follow, best first.
#[derive(Serialize, ToSchema)]
pub struct SuggestionsJson<'a> {
    pub users: Vec<SuggestionJson<'a>>,
}

pub fn suggestions(list: &[Suggestion]) -> SuggestionsJson<'_> {
    SuggestionsJson {
        users: list
            .iter()
            .map(|s| SuggestionJson {
                id: s.user.as_str(),
                mutuals: s.mutuals,
            })
            .collect(),
    }
}
