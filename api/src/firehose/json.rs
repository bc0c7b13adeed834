//! The firehose's JSON: what a client asks for (the query of `GET`, the
//! body of `POST` and a WebSocket's filters) and each event it is sent.

use crate::json;
use serde::{Deserialize, Serialize};
use socialite_core::firehose::filter::Filter;
use socialite_core::firehose::{Delivered, PublicAct};
use socialite_core::model::rfc3339_ms;
use utoipa::{IntoParams, ToSchema};

/// Where to start and what to receive.
#[derive(Debug, Default, Deserialize, IntoParams, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FirehoseQuery {
    /// The `cursor` of the last event received (`Last-Event-ID` also gives
    /// it; the header wins); absent: from now.
    #[param(example = "1042")]
    pub(super) cursor: Option<String>,
    /// Kinds to receive, comma-separated: `post`, `post_deleted`, `like`,
    /// `unlike`, `follow`, `unfollow`, `profile`, `account`; absent: all.
    #[param(example = "post,like")]
    kinds: Option<String>,
    /// Accounts whose acts to receive, comma-separated (at most 10,000;
    /// more than a URL holds go in `POST /firehose`); absent: all.
    #[param(example = "alice,bob")]
    authors: Option<String>,
}

/// `POST /firehose`'s body: as the query of `GET /firehose`, in lists.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FirehoseBody {
    #[schema(example = "1042")]
    pub(super) cursor: Option<String>,
    #[serde(default)]
    #[schema(example = json!(["post", "like"]))]
    pub(super) kinds: Vec<String>,
    #[serde(default)]
    #[schema(example = json!(["alice", "bob"]))]
    pub(super) authors: Vec<String>,
}

impl FirehoseBody {
    /// The query of `GET /firehose` as a body.
    pub(super) fn of_query(q: FirehoseQuery) -> FirehoseBody {
        let list = |s: Option<String>| -> Vec<String> {
            s.iter()
                .flat_map(|s| s.split(','))
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
                .collect()
        };
        FirehoseBody {
            cursor: q.cursor.filter(|c| !c.is_empty()),
            kinds: list(q.kinds),
            authors: list(q.authors),
        }
    }

    pub(super) fn filter(&self) -> socialite_core::error::Result<Filter> {
        Filter::new(
            self.kinds.iter().map(String::as_str),
            self.authors.iter().map(String::as_str),
        )
    }
}

/// One event of the firehose. Which fields an act has depends on its kind.
#[derive(Serialize, ToSchema)]
pub struct FirehoseEventJson<'a> {
    /// Resume after this event with it.
    #[schema(example = "1042")]
    cursor: &'a str,
    /// The act's kind, or `checkpoint` (only a cursor).
    #[schema(example = "like")]
    kind: &'static str,
    /// The account that acted (for `account`: the account concerned).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "bob")]
    actor: Option<&'a str>,
    /// When the act was made (RFC 3339, UTC, ms): posts, likes, follows.
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<String>,
    /// `post`: the post, reply or repost.
    #[serde(skip_serializing_if = "Option::is_none")]
    post: Option<json::PostJson<'a>>,
    /// `post_deleted`, `like`, `unlike`: the post's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "0550f1a2b3c00000")]
    post_id: Option<String>,
    /// `like`, `unlike`: the post's author; `follow`, `unfollow`: the
    /// account followed.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<String>, example = "alice")]
    target: Option<&'a str>,
    /// `profile`: the profile now (null: none).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    profile: Option<&'a Option<serde_json::Map<String, serde_json::Value>>>,
    /// `account`: `suspended`, `active` (a suspension lifted) or `deleted`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(example = "suspended")]
    status: Option<&'static str>,
}

pub(crate) fn act_json(d: &Delivered) -> FirehoseEventJson<'_> {
    let mut j = FirehoseEventJson {
        cursor: &d.cursor,
        kind: "checkpoint",
        actor: None,
        at: None,
        post: None,
        post_id: None,
        target: None,
        profile: None,
        status: None,
    };
    let Some(act) = &d.act else {
        return j;
    };
    j.kind = act.kind().as_str();
    j.actor = Some(act.actor().as_str());
    j.at = act.at_ms().map(rfc3339_ms);
    match act {
        PublicAct::Post(p) => j.post = Some(json::post(p)),
        PublicAct::PostDeleted { post, .. } => j.post_id = Some(post.to_string()),
        PublicAct::Like { post, author, .. } | PublicAct::Unlike { post, author, .. } => {
            j.post_id = Some(post.to_string());
            j.target = Some(author.as_str());
        }
        PublicAct::Follow { target, .. } | PublicAct::Unfollow { target, .. } => {
            j.target = Some(target.as_str())
        }
        PublicAct::Profile { profile, .. } => j.profile = Some(profile),
        PublicAct::Account { status, .. } => j.status = Some(status.as_str()),
    }
    j
}
