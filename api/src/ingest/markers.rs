//! REST route of markers: a user saves their place in a timeline.

use crate::auth::Auth;
use crate::extract::{Json, Path};
use crate::json::{marker, MarkerSetJson};
use crate::responses::UserNotFound;
use crate::schema::{ErrorBody, MarkerPath};
use crate::ApiError;
use axum::extract::State;
use socialite_core::ingest::Ingest;
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

type App = State<Arc<Ingest>>;

pub fn rest_router() -> OpenApiRouter<Arc<Ingest>> {
    OpenApiRouter::new().routes(routes!(set_marker))
}

/// Where the user stopped reading.
#[derive(serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct MarkerBody {
    /// The newest post read (16 hex digits); it need not still exist.
    #[schema(example = "0550f1a2b3c40000", pattern = "^[0-9A-Fa-f]{16}$")]
    last_read_id: String,
    /// Also move the marker back to an older post (default false: a marker
    /// only moves forward, so that two devices keep the furthest place).
    #[serde(default)]
    force: bool,
}

/// Saves the user's place in the timeline: the marker moves to
/// `last_read_id` if that is newer than where it stands (or with `force`);
/// the answer is the marker afterwards. `GET /users/{id}/timeline?after=`
/// resumes from it.
#[utoipa::path(
    put, path = "/users/{id}/markers/{timeline}", tag = "timelines", params(MarkerPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    request_body(content = MarkerBody, content_type = "application/json"),
    responses(
        (status = 200, description = "The marker afterwards", body = MarkerSetJson),
        (status = 400, description = "`invalid_user_id`, `invalid_marker_timeline`, `invalid_post_id`, `time_ahead`: an id made later than a minute past the server's clock, `invalid_json`, `invalid_body`", body = ErrorBody),
        UserNotFound,
    )
)]
async fn set_marker(
    State(ingest): App,
    Auth(caller): Auth,
    Path((id, timeline)): Path<(String, String)>,
    Json(body): Json<MarkerBody>,
) -> Result<axum::Json<MarkerSetJson>, ApiError> {
    let (held, changed) = ingest
        .set_marker(&caller, &id, &timeline, &body.last_read_id, body.force)
        .await?;
    Ok(axum::Json(MarkerSetJson {
        marker: marker(&held),
        changed,
    }))
}
