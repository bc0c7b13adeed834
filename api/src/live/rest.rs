//! `GET /users/{id}/timeline/stream`: the home timeline as Server-Sent
//! Events.

use super::state::{self, Live, Out};
use crate::auth::{Auth, Granted};
use crate::extract::{Path, Query};
use crate::json;
use crate::responses::UserNotFound;
use crate::schema::{ErrorBody, StreamQuery, UserPath};
use crate::ApiError;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use serde::Deserialize;
use serde_json::json;
use socialite_core::live::LiveEvent;
use std::convert::Infallible;
use std::time::Duration;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::StreamExt;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// How often an idle stream sends a comment, so proxies keep it open.
const KEEP_ALIVE: Duration = Duration::from_secs(15);

pub fn rest_router() -> OpenApiRouter<Live> {
    OpenApiRouter::new().routes(routes!(stream))
}

pub fn rest_routes(live: Live) -> OpenApiRouter {
    rest_router().with_state(live)
}

#[derive(Debug, Default, Deserialize)]
pub struct StreamParams {
    last_event_id: Option<String>,
}

/// The user's home timeline as it changes, as Server-Sent Events: `entry`
/// (a new post, `id:` its post id, data the post), `retracted` (data
/// `{"id"}`: the post left the timeline), `purged` (data `{"author"}`: every
/// post of that author left it: unfollowed, muted, blocked or deleted), and
/// `reload` (the stream ends: the client fell too far behind; read the
/// timeline again and reconnect), and `end` (data `{"reason","message"}`:
/// the server ended the stream because its credential expired or was
/// revoked, its account was suspended, or the stream lived its longest,
/// `stream_lifetime`: reconnect). A client that reconnects with
/// `Last-Event-ID` (or `?last_event_id=`) first gets the entries newer than
/// it, from the timeline, each once; more than 1,000 missed answer `reload`.
/// A comment every 15 s keeps idle connections open.
#[utoipa::path(
    get, path = "/users/{id}/timeline/stream", tag = "timelines", params(UserPath, StreamQuery),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "An event stream", content_type = "text/event-stream"),
        (status = 400, description = "`invalid_user_id`, `invalid_post_id`: a bad last event id, `invalid_query`", body = ErrorBody),
        (status = 429, description = "`too_many_streams`: the user's or the key's streams are at their cap", body = ErrorBody),
        (status = 503, description = "`unavailable`, `too_many_streams`: the process's streams are at their cap", body = ErrorBody),
        UserNotFound,
    )
)]
async fn stream(
    State(live): State<Live>,
    Auth(caller): Auth,
    Granted(grant): Granted,
    Path(id): Path<String>,
    Query(q): Query<StreamParams>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let header = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty());
    let last = header.or(q.last_event_id.as_deref().filter(|v| !v.is_empty()));
    let opened = state::open(&live, &caller, &id, last).await?;
    // A task per stream forwards its events; the channel ends when the
    // client leaves (the body is dropped), after `reload`, or with `end`.
    let (tx, rx) = tokio::sync::mpsc::channel(16);
    state::forward(&live, opened, grant, tx, sse_event);
    let events = ReceiverStream::new(rx).map(Ok::<_, Infallible>);
    let keep_alive = KeepAlive::new().interval(KEEP_ALIVE);
    Ok(Sse::new(events).keep_alive(keep_alive).into_response())
}

fn sse_event(out: Out) -> Event {
    let data = |v: serde_json::Value| v.to_string();
    let event = match out {
        Out::Event(e) => e,
        Out::End(e) => {
            return Event::default()
                .event("end")
                .data(data(json!({ "reason": e.code(), "message": e.message() })))
        }
    };
    match &event {
        LiveEvent::Entry(item) => Event::default()
            .event("entry")
            .id(item.position.to_string())
            .data(serde_json::to_string(&json::entry(item)).unwrap_or_default()),
        LiveEvent::Retracted(id) => Event::default()
            .event("retracted")
            .data(data(json!({ "id": id.to_string() }))),
        LiveEvent::Purged(author) => Event::default()
            .event("purged")
            .data(data(json!({ "author": author.as_str() }))),
        LiveEvent::Reload => Event::default().event("reload").data("{}"),
        LiveEvent::Notified(n) => Event::default().event("notification").data(data(json!({
            "kind": n.key.kind.as_str(),
            "post": n.key.post.map(|p| p.to_string()),
            "actor": n.key.actor.as_str(),
            "id": n.id.to_string(),
            "at": socialite_core::model::rfc3339_ms(n.id.unix_ms()),
        }))),
    }
}
