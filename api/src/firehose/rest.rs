//! `GET /firehose` (filters in the query) and `POST /firehose` (filters in
//! a JSON body, for long lists of accounts): the network's public acts as
//! Server-Sent Events.

use super::json::{act_json, FirehoseBody, FirehoseEventJson, FirehoseQuery};
use super::state::{forward, Firehose, Out, QUEUED};
use crate::auth::{Auth, Granted};
use crate::extract::{Json, Query};
use crate::schema::ErrorBody;
use crate::ApiError;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use socialite_domain::accounts::access::Caller;
use std::convert::Infallible;
use std::time::Duration;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;

/// How often an idle connection sends a comment, so proxies keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

type App = State<Firehose>;

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
pub(super) async fn firehose(
    State(app): App,
    Auth(caller): Auth,
    Granted(grant): Granted,
    Query(q): Query<FirehoseQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    stream(app, &caller, grant, FirehoseBody::of_query(q), &headers).await
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
pub(super) async fn firehose_posted(
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
    Firehose::may(caller)?;
    let opened = firehose.open(caller, cursor, body.filter()?).await?;
    let (tx, rx) = tokio::sync::mpsc::channel(QUEUED);
    forward(&firehose, opened, grant, tx, None, sse_event);
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
        // Only a WebSocket changes its filters.
        Out::Applied(ack) => Event::default().event("filters").data(ack),
        Out::End(e) => Event::default()
            .event("end")
            .data(serde_json::json!({ "reason": e.code(), "message": e.message() }).to_string()),
    }
}
