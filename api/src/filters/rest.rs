//! REST routes of keyword filters: a user makes, lists, reads, changes and
//! deletes their filters.

use crate::auth::Auth;
use crate::extract::{Json, Path};
use crate::responses::{InvalidUserId, UserNotFound};
use crate::schema::{ErrorBody, FilterPath, UserPath};
use crate::ApiError;
use axum::extract::{FromRef, State};
use axum::http::StatusCode;
use serde::{Deserialize, Deserializer, Serialize};
use socialite_core::ids::now_ms;
use socialite_core::ingest::Ingest;
use socialite_core::model::filter::{Filter, Phrase};
use socialite_core::model::rfc3339_ms;
use socialite_core::reads::Reads;
use std::sync::Arc;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The writes, served with the ingest routes.
pub fn ingest_router() -> OpenApiRouter<Arc<Ingest>> {
    OpenApiRouter::new()
        .routes(routes!(create_filter))
        .routes(routes!(update_filter, delete_filter))
}

/// The reads, served with the read routes.
pub fn reads_router<S>() -> OpenApiRouter<S>
where
    S: Clone + Send + Sync + 'static,
    Arc<Reads>: FromRef<S>,
{
    OpenApiRouter::new()
        .routes(routes!(list_filters))
        .routes(routes!(get_filter))
}

/// A phrase a filter looks for.
#[derive(Deserialize, Serialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PhraseJson {
    /// 1 to 64 characters, matched case-insensitively (Unicode lower case).
    #[schema(example = "spoiler")]
    text: String,
    /// Only as a whole word, not inside a longer one (default true).
    #[serde(default = "yes")]
    whole_word: bool,
}

fn yes() -> bool {
    true
}

/// Present (even `null`) as `Some`: what tells `"expires_in": null` (never)
/// from no `expires_in` (keep).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

/// A filter's fields: to create, `phrases` is required and the rest take
/// their defaults; to change, those given replace the filter's.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterBody {
    /// 1 to 100 characters; a new filter without one takes its first phrase.
    #[schema(example = "Spoilers")]
    title: Option<String>,
    /// 1 to 20 phrases.
    phrases: Option<Vec<PhraseJson>>,
    /// Where it applies: `home`, `lists`, `groups`, `mentions`,
    /// `notifications`, `threads`, `profiles` (a new filter: all).
    #[schema(example = json!(["home", "lists"]))]
    contexts: Option<Vec<String>>,
    /// `hide` (left out of the page) or `warn` (kept, with `filtered`
    /// naming the filter and phrase); a new filter: `warn`.
    #[schema(example = "warn")]
    action: Option<String>,
    /// Seconds from now until it stops applying (1 to 31,622,400); `null`:
    /// never. A new filter: never.
    #[serde(default, deserialize_with = "present")]
    #[schema(value_type = Option<u64>, example = 86400)]
    expires_in: Option<Option<u64>>,
}

/// One of the user's keyword filters.
#[derive(Serialize, ToSchema)]
pub struct FilterJson {
    #[schema(example = "1")]
    id: String,
    title: String,
    phrases: Vec<PhraseJson>,
    #[schema(example = json!(["home", "lists"]))]
    contexts: Vec<&'static str>,
    #[schema(example = "warn")]
    action: &'static str,
    /// RFC 3339, UTC; null when it never expires.
    expires_at: Option<String>,
    /// Past its expiry: kept and listed, applied nowhere.
    expired: bool,
}

pub fn filter_json(f: &Filter) -> FilterJson {
    FilterJson {
        id: f.id.to_string(),
        title: f.title.clone(),
        phrases: f
            .phrases
            .iter()
            .map(|p| PhraseJson {
                text: p.text.clone(),
                whole_word: p.whole_word,
            })
            .collect(),
        contexts: f.contexts.iter().map(|c| c.as_str()).collect(),
        action: f.action.as_str(),
        expires_at: f.expires_at_ms.map(rfc3339_ms),
        expired: f.expires_at_ms.is_some_and(|at| at <= now_ms()),
    }
}

/// The user's keyword filters.
#[derive(Serialize, ToSchema)]
pub struct FilterListJson {
    filters: Vec<FilterJson>,
}

/// Whether a deletion removed a filter.
#[derive(Serialize, ToSchema)]
pub struct FilterDeletedJson {
    /// False when there was no such filter.
    deleted: bool,
}

fn change(body: FilterBody) -> Result<socialite_core::filters::FilterChange, ApiError> {
    let phrases = body.phrases.map(|p| {
        p.into_iter()
            .map(|p| Phrase {
                text: p.text,
                whole_word: p.whole_word,
            })
            .collect()
    });
    let (contexts, action) = (body.contexts.as_deref(), body.action.as_deref());
    Ok(super::change(
        body.title,
        phrases,
        contexts,
        action,
        body.expires_in,
    )?)
}

/// Makes a keyword filter: posts of others whose text holds one of its
/// phrases are left out (`hide`) or marked (`warn`) wherever it applies,
/// at the next read, cached pages included, until it expires. A user keeps
/// at most 100 filters of 1 to 20 phrases.
#[utoipa::path(
    post, path = "/users/{id}/filters", tag = "timelines", params(UserPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    request_body(content = FilterBody, content_type = "application/json"),
    responses(
        (status = 201, description = "Made", body = FilterJson),
        (status = 400, description = "`invalid_user_id`, `invalid_filter_phrases`, `invalid_filter_phrase`, `invalid_filter_title`, `invalid_filter_context`, `invalid_filter_action`, `invalid_expires_in`, `invalid_json`, `invalid_body`", body = ErrorBody),
        (status = 409, description = "`too_many_filters`: the user has 100", body = ErrorBody),
        UserNotFound,
    )
)]
async fn create_filter(
    State(ingest): State<Arc<Ingest>>,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Json(body): Json<FilterBody>,
) -> Result<(StatusCode, axum::Json<FilterJson>), ApiError> {
    let made = ingest
        .put_filter(&caller, &id, None, &change(body)?)
        .await?;
    Ok((StatusCode::CREATED, axum::Json(filter_json(&made))))
}

/// Changes the filter: the fields given replace its own.
#[utoipa::path(
    patch, path = "/users/{id}/filters/{filter_id}", tag = "timelines", params(FilterPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    request_body(content = FilterBody, content_type = "application/json"),
    responses(
        (status = 200, description = "The filter afterwards", body = FilterJson),
        (status = 400, description = "`invalid_user_id`, `invalid_filter_id`, `invalid_filter_phrases`, `invalid_filter_phrase`, `invalid_filter_title`, `invalid_filter_context`, `invalid_filter_action`, `invalid_expires_in`, `invalid_json`, `invalid_body`", body = ErrorBody),
        (status = 404, description = "`user_not_found`, `filter_not_found`", body = ErrorBody),
    )
)]
async fn update_filter(
    State(ingest): State<Arc<Ingest>>,
    Auth(caller): Auth,
    Path((id, filter)): Path<(String, String)>,
    Json(body): Json<FilterBody>,
) -> Result<axum::Json<FilterJson>, ApiError> {
    let change = change(body)?;
    let changed = ingest.put_filter(&caller, &id, Some(&filter), &change);
    Ok(axum::Json(filter_json(&changed.await?)))
}

/// Deletes the filter (idempotent).
#[utoipa::path(
    delete, path = "/users/{id}/filters/{filter_id}", tag = "timelines", params(FilterPath),
    security(("api_key" = ["write"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Gone", body = FilterDeletedJson),
        (status = 400, description = "`invalid_user_id`, `invalid_filter_id`", body = ErrorBody),
        UserNotFound,
    )
)]
async fn delete_filter(
    State(ingest): State<Arc<Ingest>>,
    Auth(caller): Auth,
    Path((id, filter)): Path<(String, String)>,
) -> Result<axum::Json<FilterDeletedJson>, ApiError> {
    let deleted = ingest.remove_filter(&caller, &id, &filter).await?;
    Ok(axum::Json(FilterDeletedJson { deleted }))
}

/// The user's keyword filters, in id order (expired ones too, marked).
/// Only the user reads them: a user token of another user is refused.
#[utoipa::path(
    get, path = "/users/{id}/filters", tag = "timelines", params(UserPath),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "The filters", body = FilterListJson),
        InvalidUserId, UserNotFound,
    )
)]
async fn list_filters(
    State(reads): State<Arc<Reads>>,
    Auth(caller): Auth,
    Path(id): Path<String>,
) -> Result<axum::Json<FilterListJson>, ApiError> {
    let filters = reads.filters(&caller, &id).await?;
    Ok(axum::Json(FilterListJson {
        filters: filters.iter().map(filter_json).collect(),
    }))
}

/// One of the user's keyword filters.
#[utoipa::path(
    get, path = "/users/{id}/filters/{filter_id}", tag = "timelines", params(FilterPath),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "The filter", body = FilterJson),
        (status = 400, description = "`invalid_user_id`, `invalid_filter_id`", body = ErrorBody),
        (status = 404, description = "`user_not_found`, `filter_not_found`", body = ErrorBody),
    )
)]
async fn get_filter(
    State(reads): State<Arc<Reads>>,
    Auth(caller): Auth,
    Path((id, filter)): Path<(String, String)>,
) -> Result<axum::Json<FilterJson>, ApiError> {
    let found = reads.filter(&caller, &id, &filter).await?;
    Ok(axum::Json(filter_json(&found)))
}
