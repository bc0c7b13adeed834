//! REST routes of webhook endpoints, for an `admin` key.

use super::json::*;
use crate::auth::Auth;
use crate::extract::{Json, Path, Query};
use crate::schema::ErrorBody;
use crate::ApiError;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::StatusCode;
use socialite_core::error::Error;
use socialite_core::webhooks::WebhookAdmin;
use std::time::Duration;
use utoipa::IntoParams;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

type App = State<WebhookAdmin>;

/// Longest grace of a rotated secret.
const MAX_GRACE: Duration = Duration::from_secs(7 * 86_400);
/// Most attempts a page of the delivery log holds.
const MAX_PAGE: usize = 100;

pub fn rest_router() -> OpenApiRouter<WebhookAdmin> {
    OpenApiRouter::new()
        .routes(routes!(create_webhook, list_webhooks))
        .routes(routes!(get_webhook, update_webhook, delete_webhook))
        .routes(routes!(rotate_webhook_secret))
        .routes(routes!(replay_webhook))
        .routes(routes!(webhook_deliveries))
        // An endpoint names up to 10,000 authors.
        .layer(DefaultBodyLimit::max(crate::guard::FIREHOSE_BODY_BYTES))
}

pub fn rest_routes(admin: WebhookAdmin) -> OpenApiRouter {
    rest_router().with_state(admin)
}

/// A webhook endpoint's id.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct WebhookPath {
    #[param(example = "wh_3f2a9c01b2d4e5f6")]
    id: String,
}

/// Registers an endpoint. From now on it receives, by POST, every public
/// act its `kinds` and `authors` admit, in cursor order, at least once,
/// signed per Standard Webhooks (`webhook-id`, `webhook-timestamp`,
/// `webhook-signature`). The answer holds its `secret`, shown only here.
#[utoipa::path(
    post, path = "/admin/webhooks", tag = "webhooks",
    security(("api_key" = ["admin"])),
    request_body(content = WebhookBody, content_type = "application/json"),
    responses(
        (status = 201, description = "Registered; `secret` is shown only now", body = EndpointJson),
        (status = 400, description = "`invalid_url`, `webhook_address_refused` (an internal address), `webhook_host_unresolved`, `invalid_kind`, `too_many_authors`, `invalid_user_id`, `invalid_description`, `invalid_batch`, `invalid_json`, `invalid_body`", body = ErrorBody),
        (status = 409, description = "`too_many_webhooks`: the cap (`--max-webhooks`) is reached", body = ErrorBody),
    )
)]
async fn create_webhook(
    State(admin): App,
    Auth(caller): Auth,
    Json(body): Json<WebhookBody>,
) -> Result<(StatusCode, axum::Json<EndpointJson>), ApiError> {
    let made = admin.create(&caller, body.settings()).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(EndpointJson::of(made, true)),
    ))
}

/// Every endpoint, in id order (without secrets).
#[utoipa::path(
    get, path = "/admin/webhooks", tag = "webhooks",
    security(("api_key" = ["admin"])),
    responses((status = 200, description = "The endpoints", body = EndpointListJson))
)]
async fn list_webhooks(
    State(admin): App,
    Auth(caller): Auth,
) -> Result<axum::Json<EndpointListJson>, ApiError> {
    let endpoints = admin.list(&caller).await?;
    let endpoints = endpoints
        .into_iter()
        .map(|e| EndpointJson::of(e, false))
        .collect();
    Ok(axum::Json(EndpointListJson { endpoints }))
}

/// One endpoint: its settings, whether it delivers (and why not), its
/// cursor, a replay or retry under way.
#[utoipa::path(
    get, path = "/admin/webhooks/{id}", tag = "webhooks", params(WebhookPath),
    security(("api_key" = ["admin"])),
    responses(
        (status = 200, description = "The endpoint", body = EndpointJson),
        (status = 400, description = "`invalid_webhook_id`", body = ErrorBody),
        (status = 404, description = "`webhook_not_found`", body = ErrorBody),
    )
)]
async fn get_webhook(
    State(admin): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
) -> Result<axum::Json<EndpointJson>, ApiError> {
    Ok(axum::Json(EndpointJson::of(
        admin.get(&caller, &id).await?,
        false,
    )))
}

/// Changes an endpoint's settings, or turns it on or off. Turned on, a
/// batch waiting for its next try is tried at once.
#[utoipa::path(
    patch, path = "/admin/webhooks/{id}", tag = "webhooks", params(WebhookPath),
    security(("api_key" = ["admin"])),
    request_body(content = WebhookPatch, content_type = "application/json"),
    responses(
        (status = 200, description = "The endpoint after", body = EndpointJson),
        (status = 400, description = "as for registering; `invalid_webhook_id`", body = ErrorBody),
        (status = 404, description = "`webhook_not_found`", body = ErrorBody),
    )
)]
async fn update_webhook(
    State(admin): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Json(patch): Json<WebhookPatch>,
) -> Result<axum::Json<EndpointJson>, ApiError> {
    let after = admin.update(&caller, &id, patch.edit()).await?;
    Ok(axum::Json(EndpointJson::of(after, false)))
}

/// Deletes an endpoint and its delivery log; nothing more is sent to it.
#[utoipa::path(
    delete, path = "/admin/webhooks/{id}", tag = "webhooks", params(WebhookPath),
    security(("api_key" = ["admin"])),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, description = "`invalid_webhook_id`", body = ErrorBody),
        (status = 404, description = "`webhook_not_found`", body = ErrorBody),
    )
)]
async fn delete_webhook(
    State(admin): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    admin.delete(&caller, &id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A new signing secret, in the answer. The old one keeps signing beside
/// it (two signatures in `webhook-signature`) for `grace_seconds`
/// (default 24 h), so receivers switch over without refusing a delivery.
#[utoipa::path(
    post, path = "/admin/webhooks/{id}/rotate-secret", tag = "webhooks", params(WebhookPath),
    security(("api_key" = ["admin"])),
    request_body(content = RotateBody, content_type = "application/json"),
    responses(
        (status = 200, description = "Rotated; `secret` is the new one, shown only now", body = EndpointJson),
        (status = 400, description = "`invalid_grace`: over 7 days; `invalid_webhook_id`, `invalid_json`, `invalid_body`", body = ErrorBody),
        (status = 404, description = "`webhook_not_found`", body = ErrorBody),
    )
)]
async fn rotate_webhook_secret(
    State(admin): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    body: axum::body::Bytes,
) -> Result<axum::Json<EndpointJson>, ApiError> {
    WebhookAdmin::may(&caller)?;
    // The body is optional: none keeps the default grace.
    let body: RotateBody = match body.is_empty() {
        true => RotateBody::default(),
        false => serde_json::from_slice(&body).map_err(|e| {
            Error::invalid("invalid_json", format!("the body is not a rotation: {e}"))
        })?,
    };
    let grace = body.grace_seconds.map(Duration::from_secs);
    let after = admin.rotate(&caller, &id, checked_grace(grace)?).await?;
    Ok(axum::Json(EndpointJson::of(after, true)))
}

pub(super) fn checked_grace(grace: Option<Duration>) -> Result<Option<Duration>, Error> {
    match grace {
        Some(g) if g > MAX_GRACE => Err(Error::invalid(
            "invalid_grace",
            "grace_seconds is at most 604800 (7 days)",
        )),
        g => Ok(g),
    }
}

/// Delivers the events from cursor `from` up to `until` (default: where
/// live delivery is) to this endpoint again, with `webhook-id`s of their
/// own; live delivery waits until the replay ends. One replay at a time.
#[utoipa::path(
    post, path = "/admin/webhooks/{id}/replay", tag = "webhooks", params(WebhookPath),
    security(("api_key" = ["admin"])),
    request_body(content = ReplayBody, content_type = "application/json"),
    responses(
        (status = 202, description = "Replay under way (`replay` on the endpoint)", body = EndpointJson),
        (status = 400, description = "`invalid_cursor`, `invalid_replay` (`from` not before `until`), `invalid_webhook_id`, `invalid_json`, `invalid_body`", body = ErrorBody),
        (status = 404, description = "`webhook_not_found`", body = ErrorBody),
        (status = 409, description = "`replay_in_progress`; `cursor_too_old`: the log no longer keeps `from`", body = ErrorBody),
    )
)]
async fn replay_webhook(
    State(admin): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Json(body): Json<ReplayBody>,
) -> Result<(StatusCode, axum::Json<EndpointJson>), ApiError> {
    let after = admin
        .replay(&caller, &id, &body.from, body.until.as_deref())
        .await?;
    Ok((
        StatusCode::ACCEPTED,
        axum::Json(EndpointJson::of(after, false)),
    ))
}

/// The endpoint's delivery attempts, newest first: when, which events,
/// the answer's status, latency, and the next try of a failing batch. The
/// newest 1,000 or so are kept.
#[utoipa::path(
    get, path = "/admin/webhooks/{id}/deliveries", tag = "webhooks", params(WebhookPath, DeliveriesQuery),
    security(("api_key" = ["admin"])),
    responses(
        (status = 200, description = "The attempts", body = DeliveriesJson),
        (status = 400, description = "`invalid_limit`: not 1 to 100; `invalid_webhook_id`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`webhook_not_found`", body = ErrorBody),
    )
)]
async fn webhook_deliveries(
    State(admin): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<DeliveriesQuery>,
) -> Result<axum::Json<DeliveriesJson>, ApiError> {
    WebhookAdmin::may(&caller)?;
    let limit = checked_limit(q.limit)?;
    let attempts = admin.deliveries(&caller, &id, q.before, limit).await?;
    let deliveries = attempts.into_iter().map(AttemptJson::from).collect();
    Ok(axum::Json(DeliveriesJson { deliveries }))
}

pub(super) fn checked_limit(limit: Option<usize>) -> Result<usize, Error> {
    match limit.unwrap_or(50) {
        n @ 1..=MAX_PAGE => Ok(n),
        _ => Err(Error::invalid("invalid_limit", "limit is 1 to 100")),
    }
}
