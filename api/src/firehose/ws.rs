//! `GET /firehose/ws`: the firehose over a WebSocket, for a client that
//! changes its filters while connected. The server sends each act as a
//! text message (a `FirehoseEventJson`); the client sends
//! `{"kinds":[...],"authors":[...]}` to replace its filters (each absent:
//! all), answered `{"kind":"filters",...}` among the acts, from which on
//! they apply, or
//! `{"kind":"error","code","message"}` (the filters stay as they were).

use super::json::{act_json, FirehoseBody, FirehoseQuery};
use super::state::{forward, Firehose, Out, QUEUED};
use crate::auth::{Auth, Granted};
use crate::extract::Query;
use crate::guard::FIREHOSE_BODY_BYTES;
use crate::schema::ErrorBody;
use crate::ApiError;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::State;
use axum::response::Response;
use serde_json::json;
use socialite_core::error::Error;
use socialite_core::firehose::filter::Filter;
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// The firehose as a WebSocket: the query of `GET /firehose` starts it
/// (`cursor`, `kinds`, `authors`); each act is a text message holding a
/// `FirehoseEventJson`, `checkpoint`s included. A text message
/// `{"kinds":[...],"authors":[...]}` replaces the filters (each absent:
/// all; up to 1 MiB): answered `{"kind":"filters","kinds":[...],"authors":N}`
/// among the acts (every act after it passed the new filters; within about
/// a second), or
/// `{"kind":"error","code","message"}`, the filters unchanged. The server
/// ends a connection with `{"kind":"end","reason","message"}` and a close,
/// for the reasons `GET /firehose` ends one; a client that reads nothing
/// for 10 s is cut off. Refusals before the upgrade are those of
/// `GET /firehose`.
#[utoipa::path(
    get, path = "/firehose/ws", tag = "firehose", params(FirehoseQuery),
    security(("api_key" = ["firehose"])),
    responses(
        (status = 101, description = "Switching to the WebSocket protocol"),
        (status = 400, description = "`invalid_cursor`, `invalid_kind`, `invalid_user_id`, `too_many_authors`, `invalid_query`, `invalid_websocket`: not a WebSocket handshake", body = ErrorBody),
        (status = 401, description = "`unauthenticated`", body = ErrorBody),
        (status = 403, description = "`missing_scope`, `server_key_required`", body = ErrorBody),
        (status = 409, description = "`cursor_too_old`", body = ErrorBody),
        (status = 429, description = "`too_many_firehoses`", body = ErrorBody),
        (status = 503, description = "`too_many_firehoses`, `unavailable`", body = ErrorBody),
    )
)]
pub(super) async fn firehose_ws(
    State(firehose): State<Firehose>,
    Auth(caller): Auth,
    Granted(grant): Granted,
    Query(q): Query<FirehoseQuery>,
    upgrade: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Result<Response, ApiError> {
    Firehose::may(&caller)?;
    let body = FirehoseBody::of_query(q);
    let filter = body.filter()?;
    let opened = firehose
        .open(&caller, body.cursor.as_deref(), filter)
        .await?;
    // Checked after the credential: who may not follow learns nothing.
    let upgrade =
        upgrade.map_err(|r| ApiError::from(Error::invalid("invalid_websocket", r.body_text())))?;
    let (tx, rx) = mpsc::channel(QUEUED);
    let (filters, changes) = watch::channel(None);
    forward(&firehose, opened, grant, tx, Some(changes), |out| out);
    let stall = firehose.stall();
    Ok(upgrade
        .max_message_size(FIREHOSE_BODY_BYTES)
        .max_frame_size(FIREHOSE_BODY_BYTES)
        .on_upgrade(move |socket| relay(socket, rx, filters, stall)))
}

/// Sends the acts and takes the filters, until either side ends.
async fn relay(
    mut socket: WebSocket,
    mut acts: mpsc::Receiver<Out>,
    filters: watch::Sender<Option<(Filter, String)>>,
    stall: Duration,
) {
    loop {
        let reply = tokio::select! {
            out = acts.recv() => match out {
                Some(Out::Act(d)) => act_json_text(&d),
                Some(Out::Applied(ack)) => ack,
                Some(Out::End(e)) => {
                    let end = json!({"kind": "end", "reason": e.code(), "message": e.message()});
                    let _ = send(&mut socket, end.to_string(), stall).await;
                    break;
                }
                None => break,
            },
            incoming = socket.recv() => match incoming {
                Some(Ok(Message::Text(text))) => match change(&filters, text.as_str()) {
                    Some(refusal) => refusal,
                    // Answered once applied, among the acts.
                    None => continue,
                },
                Some(Ok(Message::Close(_))) | Some(Err(_)) | None => break,
                // Pings are answered by the protocol layer; binary is ignored.
                Some(Ok(_)) => continue,
            },
        };
        if !send(&mut socket, reply, stall).await {
            break;
        }
    }
    let _ = tokio::time::timeout(stall, socket.send(Message::Close(None))).await;
}

fn act_json_text(d: &socialite_core::firehose::Delivered) -> String {
    serde_json::to_string(&act_json(d)).unwrap_or_default()
}

/// Takes new filters from a client's message for the next read of the log
/// (which answers them); a refusal to send now.
fn change(filters: &watch::Sender<Option<(Filter, String)>>, text: &str) -> Option<String> {
    let taken = serde_json::from_str::<FirehoseBody>(text)
        .map_err(|e| Error::invalid("invalid_json", format!("the filters message: {e}")))
        .and_then(|body| match body.cursor {
            Some(_) => Err(Error::invalid(
                "invalid_json",
                "a connection's cursor is where it reads; reconnect to start elsewhere",
            )),
            None => Ok((body.filter()?, body)),
        });
    match taken {
        Ok((filter, body)) => {
            let ack =
                json!({"kind": "filters", "kinds": body.kinds, "authors": body.authors.len()});
            filters.send_replace(Some((filter, ack.to_string())));
            None
        }
        Err(e) => {
            Some(json!({"kind": "error", "code": e.code(), "message": e.message()}).to_string())
        }
    }
}

/// Sends a text message; false if the client is gone or read nothing for
/// `stall`.
async fn send(socket: &mut WebSocket, text: String, stall: Duration) -> bool {
    matches!(
        tokio::time::timeout(stall, socket.send(Message::Text(text.into()))).await,
        Ok(Ok(()))
    )
}
