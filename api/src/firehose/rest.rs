//! `GET /firehose` (filters in the query) and `POST /firehose` (filters in
//! a JSON body, for long lists of accounts): the network's public acts as
//! Server-Sent Events.

use super::state::{forward, Firehose, Out, QUEUED};
use crate::auth::{Auth, Granted};
use crate::extract::{Json, Query};
use crate::guard::FIREHOSE_BODY_BYTES;
use crate::json;
use crate::schema::ErrorBody;
use crate::ApiError;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use socialite_core::firehose::filter::Filter;
use socialite_core::firehose::{Delivered, PublicAct};
use socialite_core::model::rfc3339_ms;
use socialite_domain::accounts::access::Caller;
use std::convert::Infallible;
use std::time::Duration;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// How often an idle connection sends a comment, so proxies keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub fn rest_router() -> OpenApiRouter<Firehose> {
    OpenApiRouter::new()
        .routes(routes!(follow, follow_posted))
        .layer(DefaultBodyLimit::max(FIREHOSE_BODY_BYTES))
}

pub fn rest_routes(firehose: Firehose) -> OpenApiRouter {
    rest_router().with_state(firehose)
}

type App = State<Firehose>;

/// Where to start and what to receive.
#[derive(Debug, Default, Deserialize, IntoParams, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FirehoseQuery {
    /// The `cursor` of the last event received (`Last-Event-ID` also gives
    /// it; the header wins); absent: from now.
    #[param(example = "1042")]
    cursor: Option<String>,
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
    cursor: Option<String>,
    #[serde(default)]
    #[schema(example = json!(["post", "like"]))]
    kinds: Vec<String>,
    #[serde(default)]
    #[schema(example = json!(["alice", "bob"]))]
    authors: Vec<String>,
}

/// Every public act of the network from the cursor on, as Server-Sent
/// Events, for API keys with the `firehose` scope. Each event's name is
/// its kind, its `id` its cursor and its data a [`FirehoseEventJson`]:
/// `post` (a post, reply or repost made), `post_deleted`, `like`,
/// `unlike`, `follow`, `unfollow`, `profile` (an account made or its
/// profile changed), `account` (suspended, active again, or deleted with
/// all it posted, liked and followed). Never mutes, blocks, lists,
/// markers, notifications or settings. `checkpoint` carries only a cursor:
/// sent every few seconds while the filters pass acts over, so a resume
/// starts there. Reconnecting with the last cursor (`?cursor=` or
/// `Last-Event-ID`) loses nothing and repeats nothing; a cursor the log no
/// longer keeps is refused (409 `cursor_too_old`, naming the oldest there
/// is). The server ends a connection with `end` (`{"reason","message"}`):
/// `slow_reader` (its client read nothing for 10 s), `cursor_too_old` (it
/// fell behind what the log keeps), `stream_lifetime`, a key no longer
/// valid. A comment every 15 s keeps idle connections open.
#[utoipa::path(
    get, path = "/firehose", tag = "firehose", params(FirehoseQuery),
    security(("api_key" = ["firehose"])),
    responses(
        (status = 200, description = "An event stream; each event's data is a `FirehoseEventJson`", content_type = "text/event-stream", body = FirehoseEventJson),
        (status = 400, description = "`invalid_cursor`, `invalid_kind`, `invalid_user_id`, `too_many_authors`, `invalid_query`", body = ErrorBody),
        (status = 401, description = "`unauthenticated`", body = ErrorBody),
        (status = 403, description = "`missing_scope`, `server_key_required`", body = ErrorBody),
        (status = 409, description = "`cursor_too_old`: the message names the oldest cursor there is", body = ErrorBody),
        (status = 429, description = "`too_many_firehoses`: the key's connections are at their cap", body = ErrorBody),
        (status = 503, description = "`too_many_firehoses`: the process's connections are at their cap; `unavailable`", body = ErrorBody),
    )
)]
async fn follow(
    State(app): App,
    Auth(caller): Auth,
    Granted(grant): Granted,
    Query(q): Query<FirehoseQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let list = |s: &Option<String>| -> Vec<String> {
        s.iter()
            .flat_map(|s| s.split(','))
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    };
    let body = FirehoseBody {
        cursor: q.cursor,
        kinds: list(&q.kinds),
        authors: list(&q.authors),
    };
    stream(app, &caller, grant, body, &headers).await
}

/// `GET /firehose` with its filters in a JSON body (up to 1 MiB), for
/// lists of accounts longer than a URL holds.
#[utoipa::path(
    post, path = "/firehose", tag = "firehose", request_body = FirehoseBody,
    security(("api_key" = ["firehose"])),
    responses(
        (status = 200, description = "An event stream; each event's data is a `FirehoseEventJson`", content_type = "text/event-stream", body = FirehoseEventJson),
        (status = 400, description = "`invalid_cursor`, `invalid_kind`, `invalid_user_id`, `too_many_authors`, `invalid_json`, `invalid_body`", body = ErrorBody),
        (status = 401, description = "`unauthenticated`", body = ErrorBody),
        (status = 403, description = "`missing_scope`, `server_key_required`", body = ErrorBody),
        (status = 409, description = "`cursor_too_old`", body = ErrorBody),
        (status = 429, description = "`too_many_firehoses`", body = ErrorBody),
        (status = 503, description = "`too_many_firehoses`, `unavailable`", body = ErrorBody),
    )
)]
async fn follow_posted(
    State(app): App,
    Auth(caller): Auth,
    Granted(grant): Granted,
    headers: HeaderMap,
    Json(body): Json<FirehoseBody>,
) -> Result<Response, ApiError> {
    stream(app, &caller, grant, body, &headers).await
}

async fn stream(
    firehose: Firehose,
    caller: &Caller,
    grant: Option<crate::auth::Grant>,
    body: FirehoseBody,
    headers: &HeaderMap,
) -> Result<Response, ApiError> {
    let header = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty());
    let cursor = header.or(body.cursor.as_deref().filter(|c| !c.is_empty()));
    let filter = Filter::new(
        body.kinds.iter().map(String::as_str),
        body.authors.iter().map(String::as_str),
    )?;
    let opened = firehose.open(caller, cursor, filter).await?;
    let (tx, rx) = tokio::sync::mpsc::channel(QUEUED);
    forward(&firehose, opened, grant, tx, sse_event);
    let events = ReceiverStream::new(rx).map(Ok::<_, Infallible>);
    let keep_alive = KeepAlive::new().interval(KEEP_ALIVE);
    Ok(Sse::new(events).keep_alive(keep_alive).into_response())
}

fn sse_event(out: Out) -> Event {
    match out {
        Out::Act(d) => {
            let data = serde_json::to_string(&act_json(&d)).unwrap_or_default();
            let kind = d.act.as_ref().map_or("checkpoint", |a| a.kind().as_str());
            Event::default().event(kind).id(d.cursor).data(data)
        }
        Out::End(e) => Event::default()
            .event("end")
            .data(serde_json::json!({ "reason": e.code(), "message": e.message() }).to_string()),
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

fn act_json(d: &Delivered) -> FirehoseEventJson<'_> {
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
