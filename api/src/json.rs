//! The REST API's JSON shapes.

use serde::Serialize;
use serde_json::{json, Map, Value};
use socialite_core::ids::{PostId, UserId};
use socialite_core::model::{rfc3339_ms, Page, Post, User};

pub fn user(u: &User) -> Value {
    json!({
        "id": u.id.as_str(),
        "followers": u.followers,
        "following": u.following,
        "profile": u.profile,
    })
}

/// A post as the API shows it. Typed, so a page serializes straight to bytes.
#[derive(Serialize)]
pub struct PostJson<'a> {
    id: String,
    author: &'a str,
    message: &'a str,
    data: &'a Option<Map<String, Value>>,
    created_at: String,
}

pub fn post(p: &Post) -> PostJson<'_> {
    PostJson {
        id: p.id.to_string(),
        author: p.author.as_str(),
        message: &p.message,
        data: &p.data,
        created_at: rfc3339_ms(p.created_at_ms()),
    }
}

#[derive(Serialize)]
pub struct PostPageJson<'a> {
    posts: Vec<PostJson<'a>>,
    next_cursor: Option<String>,
}

pub fn post_page(page: &Page<Post, PostId>) -> PostPageJson<'_> {
    PostPageJson {
        posts: page.items.iter().map(post).collect(),
        next_cursor: page.next_cursor.map(|c| c.to_string()),
    }
}

pub fn user_page(page: &Page<UserId, String>) -> Value {
    json!({
        "users": page.items.iter().map(|u| u.as_str()).collect::<Vec<_>>(),
        "next_cursor": page.next_cursor,
    })
}

pub fn count(n: u64) -> Value {
    json!({ "count": n })
}
