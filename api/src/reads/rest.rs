//! REST routes of reads.

use super::state::ReadsState;
use crate::auth::Auth;
use crate::extract::{AuthorsParams, PageParams, Path, Query};
use crate::fragments::PostFragments;
use crate::json::{
    CountJson, GroupJson, ListsJson, PostJson, PostPageJson, RelationshipJson, SuggestionsJson,
    UserJson, UserPageJson,
};
use crate::json_ranked::{HomePageJson, ListPageJson};
use crate::pages::{self, Lookup, PageCache, TIMELINE_SOURCE};
use crate::responses::{
    EitherUserNotFound, GroupNotFound, InvalidUserId, NotYourViewer, UserHidden, UserNotFound,
};
use crate::schema::{
    AuthorsQuery, ErrorBody, FollowersQuery, FollowingQuery, GroupPath, GroupTimelineQuery,
    LimitQuery, ListPath, PairPath, PostPageQuery, PostPath, RankedQuery, TimelineQuery,
    UserPageQuery, UserPath, ViewerQuery,
};
use crate::{json, ApiError};
use axum::extract::State;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use axum::Json;
use socialite_core::feed::stamp::PageAt;
use socialite_core::feed::timeline::ReadSource;
use socialite_core::graph::Direction;
use socialite_core::model::page_size;
use socialite_core::reads::ranked::Order;
use socialite_core::reads::Reads;
use socialite_domain::accounts::access::Caller;
use socialite_domain::graph::relations::Relation;
use std::future::Future;
use std::sync::Arc;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

type App = State<Arc<Reads>>;
/// Serialized posts, shared by the routes that answer pages of posts.
type Fragments = State<Arc<PostFragments>>;
/// First pages kept whole.
type Pages = State<Arc<PageCache>>;

/// The routes and their contract, before the state is given.
pub fn rest_router() -> OpenApiRouter<ReadsState> {
    OpenApiRouter::new()
        .routes(routes!(get_user))
        .routes(routes!(followers))
        .routes(routes!(following))
        .routes(routes!(follower_count))
        .routes(routes!(following_count))
        .routes(routes!(posts_by))
        .routes(routes!(timeline))
        .routes(routes!(super::ranked::feed_preferences))
        .routes(routes!(get_post))
        .routes(routes!(posts_by_authors))
        .routes(routes!(relationship))
        .routes(routes!(suggestions))
        .routes(routes!(lists))
        .routes(routes!(list_timeline))
        .routes(routes!(mentions))
        .routes(routes!(group))
        .routes(routes!(group_members))
        .routes(routes!(group_timeline))
        .routes(routes!(mutes))
        .routes(routes!(blocks))
        .merge(super::reading::rest_router())
        .merge(super::notices::rest_router())
        .merge(crate::bookmarks::rest::reads_router())
        .merge(crate::filters::rest::reads_router())
        .merge(crate::thread_mutes::reads_router())
}

pub fn rest_routes(reads: Arc<Reads>) -> OpenApiRouter {
    rest_router().with_state(ReadsState {
        reads,
        fragments: Arc::default(),
        pages: Arc::default(),
    })
}

/// A user with their counts.
#[utoipa::path(
    get, path = "/users/{id}", tag = "users", params(UserPath, ViewerQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "The user", body = UserJson),
        (status = 400, description = "`invalid_user_id`, `invalid_query`", body = ErrorBody),
        NotYourViewer, UserHidden,
    )
)]
async fn get_user(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    Ok(Json(json::user(&reads.user(&caller, &id, q.viewer()).await?)).into_response())
}

/// Who follows the user, newest follow first (stable under concurrent
/// follows: the cursor is the last follow's time and id).
#[utoipa::path(
    get, path = "/users/{id}/followers", tag = "graph", params(UserPath, FollowersQuery, ViewerQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "A page of followers", body = UserPageJson),
        (status = 400, description = "`invalid_user_id`, `invalid_limit`, `invalid_cursor`, `invalid_post_id`, `invalid_query`", body = ErrorBody),
        NotYourViewer, UserHidden,
    )
)]
async fn followers(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    edge_page(&reads, &caller, &id, &q, Direction::Followers).await
}

/// Whom the user follows, newest follow first; with `list`, only the
/// accounts filed under that list, in id order.
#[utoipa::path(
    get, path = "/users/{id}/following", tag = "graph", params(UserPath, FollowingQuery, ViewerQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "A page of followees", body = UserPageJson),
        (status = 400, description = "`invalid_user_id`, `invalid_limit`, `invalid_cursor`, `invalid_post_id`, `invalid_list_name`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`user_not_found`: none, or it blocks the viewer or the viewer blocks it; `list_not_found`", body = ErrorBody),
        NotYourViewer,
    )
)]
async fn following(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    match q.list() {
        None => edge_page(&reads, &caller, &id, &q, Direction::Following).await,
        Some(list) => {
            let page = reads
                .list_members(&caller, &id, list, q.viewer(), q.limit, q.cursor())
                .await?;
            Ok(Json(json::user_page(&page)).into_response())
        }
    }
}

/// The user's lists (labels on their follow edges), in name order, with
/// how many accounts each holds. A list exists while an account is filed
/// under it.
#[utoipa::path(
    get, path = "/users/{id}/lists", tag = "graph", params(UserPath, ViewerQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "The lists", body = ListsJson),
        (status = 400, description = "`invalid_user_id`, `invalid_query`", body = ErrorBody),
        NotYourViewer, UserHidden,
    )
)]
async fn lists(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    Ok(Json(json::lists(&reads.lists(&caller, &id, q.viewer()).await?)).into_response())
}

/// The timeline of a list: posts of the accounts filed under it, newest
/// first, paged like the home timeline (stored for readers who read it,
/// merged at read time otherwise); with `order=balanced` or `catchup`,
/// ranked as the home timeline is.
#[utoipa::path(
    get, path = "/users/{id}/lists/{list}/timeline", tag = "timelines", params(ListPath, PostPageQuery, RankedQuery),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "A page of the list's timeline: newest first, or with `order=balanced` or `catchup` a ranked page (`RankedPageJson`)", body = ListPageJson,
            headers(("x-timeline-source" = String, description = "`cache`, `past_cache`, `late` (the cache joined with what fanout has not delivered yet) or `merge`"))),
        (status = 400, description = "`invalid_user_id`, `invalid_list_name`, `invalid_limit`, `invalid_post_id`, `invalid_query`, `invalid_order`, `invalid_cursor`, `cursor_expired`", body = ErrorBody),
        (status = 404, description = "`user_not_found`, `list_not_found`", body = ErrorBody),
    )
)]
async fn list_timeline(
    State(reads): App,
    State(fragments): Fragments,
    State(pages): Pages,
    Auth(caller): Auth,
    Path((id, list)): Path<(String, String)>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    if let Some(order) = q.order().map(Order::parse).transpose()? {
        if order != Order::Latest {
            return super::ranked::timeline(&reads, &caller, &id, Some(&list), order, &q).await;
        }
    }
    let miss = match kept(&pages, &q, reads.first_page_at(&caller, &id, Some(&list))).await? {
        Ok(hit) => return Ok(hit),
        Err(miss) => miss,
    };
    let read = reads
        .list_timeline(&caller, &id, &list, q.limit, q.before())
        .await?;
    Ok(pages.answer(&fragments, read, miss))
}

async fn edge_page(
    reads: &Reads,
    caller: &Caller,
    id: &str,
    q: &PageParams,
    direction: Direction,
) -> Result<Response, ApiError> {
    let page = reads
        .edges(caller, id, q.viewer(), direction, q.limit, q.cursor())
        .await?;
    let with_times = q.followed_at.unwrap_or(false);
    Ok(Json(json::edge_page(&page, with_times)).into_response())
}

/// How many follow the user.
#[utoipa::path(
    get, path = "/users/{id}/follower_count", tag = "graph", params(UserPath, ViewerQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "The count", body = CountJson),
        (status = 400, description = "`invalid_user_id`, `invalid_query`", body = ErrorBody),
        NotYourViewer, UserHidden,
    )
)]
async fn follower_count(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let user = reads.user(&caller, &id, q.viewer()).await?;
    Ok(Json(json::count(user.followers)).into_response())
}

/// How many the user follows.
#[utoipa::path(
    get, path = "/users/{id}/following_count", tag = "graph", params(UserPath, ViewerQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "The count", body = CountJson),
        (status = 400, description = "`invalid_user_id`, `invalid_query`", body = ErrorBody),
        NotYourViewer, UserHidden,
    )
)]
async fn following_count(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let user = reads.user(&caller, &id, q.viewer()).await?;
    Ok(Json(json::count(user.following)).into_response())
}

/// The user's own posts, newest first.
#[utoipa::path(
    get, path = "/users/{id}/posts", tag = "posts", params(UserPath, PostPageQuery, ViewerQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "A page of posts", body = PostPageJson),
        (status = 400, description = "`invalid_user_id`, `invalid_limit`, `invalid_cursor`, `invalid_post_id`, `invalid_query`", body = ErrorBody),
        NotYourViewer, UserHidden,
    )
)]
async fn posts_by(
    State(reads): App,
    State(fragments): Fragments,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let page = reads
        .posts_by(&caller, &id, q.viewer(), q.limit, q.before())
        .await?;
    Ok(fragments.reply(&page))
}

/// The home timeline, newest first; with `after`, forward from a post,
/// oldest first, where a user resumes reading.
/// `X-Timeline-Source` tells whether the cache served it (`cache`), the
/// cache and a merge below it (`past_cache`), or a read-time merge
/// (`merge`).
#[utoipa::path(
    get, path = "/users/{id}/timeline", tag = "timelines", params(UserPath, TimelineQuery, RankedQuery),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "A page of the timeline: newest first, or with `after` oldest first; with `order=balanced` or `catchup`, a ranked page (`RankedPageJson`)", body = HomePageJson,
            headers(("x-timeline-source" = String, description = "`cache`, `past_cache`, `late` (the cache joined with what fanout has not delivered yet) or `merge`"))),
        (status = 400, description = "`invalid_user_id`, `invalid_limit`, `invalid_cursor`, `invalid_post_id`, `invalid_query`, `invalid_order`, `cursor_expired` (a ranked order's snapshot is gone: read its first page again)", body = ErrorBody),
        UserNotFound,
    )
)]
async fn timeline(
    State(reads): App,
    State(fragments): Fragments,
    State(pages): Pages,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    if let Some(order) = q.order().map(Order::parse).transpose()? {
        if order != Order::Latest {
            return super::ranked::timeline(&reads, &caller, &id, None, order, &q).await;
        }
    }
    if let Some(after) = q.after() {
        if q.before().is_some() {
            return Err(socialite_core::Error::invalid(
                "invalid_query",
                "a page is read back from `before` or forward from `after`, not both",
            )
            .into());
        }
        let (page, source) = reads.timeline_after(&caller, &id, q.limit, after).await?;
        let mut resp = Json(json::forward_page(&page)).into_response();
        let source = HeaderValue::from_static(source.as_str());
        resp.headers_mut().insert(TIMELINE_SOURCE, source);
        return Ok(resp);
    }
    let miss = match kept(&pages, &q, reads.first_page_at(&caller, &id, None)).await? {
        Ok(hit) => return Ok(hit),
        Err(miss) => miss,
    };
    let read = reads.timeline(&caller, &id, q.limit, q.before()).await?;
    Ok(pages.answer(&fragments, read, miss))
}

/// The kept first page asked, if the page cache holds it as it is now
/// (`Ok`); else where the page read is kept (`Err`). Only a first page of a
/// valid size is looked up: a bad limit is refused by the read, in its
/// order of checks.
async fn kept(
    pages: &PageCache,
    q: &PageParams,
    at: impl Future<Output = socialite_core::error::Result<Option<PageAt>>>,
) -> Result<Result<Response, Option<(PageAt, usize)>>, ApiError> {
    let (None, Ok(limit)) = (q.before(), page_size(q.limit)) else {
        return Ok(Err(None));
    };
    match pages.lookup(at.await?, limit) {
        Lookup::Hit(body) => Ok(Ok(pages::reply(body, ReadSource::Cache.as_str()))),
        Lookup::Miss(miss) => Ok(Err(miss)),
    }
}

/// The posts that mention the user (`@id` in the message), newest first.
#[utoipa::path(
    get, path = "/users/{id}/mentions", tag = "timelines", params(UserPath, PostPageQuery),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "A page of posts", body = PostPageJson),
        (status = 400, description = "`invalid_user_id`, `invalid_limit`, `invalid_post_id`, `invalid_query`", body = ErrorBody),
        UserNotFound,
    )
)]
async fn mentions(
    State(reads): App,
    State(fragments): Fragments,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let page = reads.mentions(&caller, &id, q.limit, q.before()).await?;
    Ok(fragments.reply(&page))
}

/// A group and how many members it has. A group exists while it has
/// members.
#[utoipa::path(
    get, path = "/groups/{group}", tag = "groups", params(GroupPath),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "The group", body = GroupJson),
        (status = 400, description = "`invalid_group_name`", body = ErrorBody),
        GroupNotFound,
    )
)]
async fn group(
    State(reads): App,
    Auth(caller): Auth,
    Path(group): Path<String>,
) -> Result<Response, ApiError> {
    let (name, members) = reads.group(&caller, &group).await?;
    let name = name.to_string();
    Ok(Json(GroupJson { name, members }).into_response())
}

/// A group's members, in id order.
#[utoipa::path(
    get, path = "/groups/{group}/members", tag = "groups", params(GroupPath, UserPageQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "A page of members", body = UserPageJson),
        (status = 400, description = "`invalid_group_name`, `invalid_limit`, `invalid_cursor`, `invalid_query`", body = ErrorBody),
        GroupNotFound,
    )
)]
async fn group_members(
    State(reads): App,
    Auth(caller): Auth,
    Path(group): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let page = reads
        .group_members(&caller, &group, q.limit, q.cursor())
        .await?;
    Ok(Json(json::user_page(&page)).into_response())
}

/// A group's timeline: its members' posts while they are members, newest
/// first, without the posts the viewer's mutes and blocks hide. One
/// timeline serves every reader of the group: stored once the group is read
/// (each member's post is one delivery to it), merged at read time
/// otherwise.
#[utoipa::path(
    get, path = "/groups/{group}/timeline", tag = "timelines", params(GroupPath, GroupTimelineQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "A page of the group's timeline", body = PostPageJson,
            headers(("x-timeline-source" = String, description = "`cache`, `past_cache`, `late` (the cache joined with what fanout has not delivered yet) or `merge`"))),
        (status = 400, description = "`invalid_group_name`, `invalid_user_id`, `invalid_limit`, `invalid_post_id`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`group_not_found`, `user_not_found`: the viewer", body = ErrorBody),
        NotYourViewer,
    )
)]
async fn group_timeline(
    State(reads): App,
    State(fragments): Fragments,
    State(pages): Pages,
    Auth(caller): Auth,
    Path(group): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let at = reads.group_first_page_at(&caller, &group, q.viewer());
    let miss = match kept(&pages, &q, at).await? {
        Ok(hit) => return Ok(hit),
        Err(miss) => miss,
    };
    let read = reads
        .group_timeline(&caller, &group, q.viewer(), q.limit, q.before())
        .await?;
    Ok(pages.answer(&fragments, read, miss))
}

/// The accounts the user mutes, in id order: the user's own to read.
#[utoipa::path(
    get, path = "/users/{id}/mutes", tag = "graph", params(UserPath, UserPageQuery),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "A page of muted accounts", body = UserPageJson),
        (status = 400, description = "`invalid_user_id`, `invalid_limit`, `invalid_cursor`, `invalid_query`", body = ErrorBody),
        UserNotFound,
    )
)]
async fn mutes(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    relation_page(&reads, &caller, &id, &q, Relation::Mute).await
}

/// The accounts the user blocks, in id order: the user's own to read.
#[utoipa::path(
    get, path = "/users/{id}/blocks", tag = "graph", params(UserPath, UserPageQuery),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "A page of blocked accounts", body = UserPageJson),
        (status = 400, description = "`invalid_user_id`, `invalid_limit`, `invalid_cursor`, `invalid_query`", body = ErrorBody),
        UserNotFound,
    )
)]
async fn blocks(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    relation_page(&reads, &caller, &id, &q, Relation::Block).await
}

async fn relation_page(
    reads: &Reads,
    caller: &Caller,
    id: &str,
    q: &PageParams,
    relation: Relation,
) -> Result<Response, ApiError> {
    let page = reads
        .relations(caller, id, relation, q.limit, q.cursor())
        .await?;
    Ok(Json(json::user_page(&page)).into_response())
}

/// One post.
#[utoipa::path(
    get, path = "/posts/{id}", tag = "posts", params(PostPath, ViewerQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "The post", body = PostJson),
        (status = 400, description = "`invalid_post_id`, `invalid_user_id`, `invalid_query`", body = ErrorBody),
        (status = 404, description = "`post_not_found`: none; a repost of a deleted post; or its author (or the reposted post's) blocks the viewer or is blocked by them", body = ErrorBody),
        NotYourViewer,
    )
)]
async fn get_post(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let (post, counts) = reads.post_with_counts(&caller, &id, q.viewer()).await?;
    Ok(Json(json::counted_post(&post, counts)).into_response())
}

/// The posts of several authors, newest first.
#[utoipa::path(
    get, path = "/posts", tag = "posts", params(AuthorsQuery, ViewerQuery),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "A page of posts", body = PostPageJson),
        (status = 400, description = "`invalid_authors`, `invalid_user_id`, `invalid_limit`, `invalid_post_id`, `invalid_query`", body = ErrorBody),
        NotYourViewer,
    )
)]
async fn posts_by_authors(
    State(reads): App,
    State(fragments): Fragments,
    Auth(caller): Auth,
    Query(q): Query<AuthorsParams>,
) -> Result<Response, ApiError> {
    let authors: Vec<&str> = q.authors.split(',').collect();
    let page = reads
        .posts_by_authors(&caller, &authors, q.viewer(), q.limit, q.before())
        .await?;
    Ok(fragments.reply(&page))
}

/// Whether the user follows `other`, and whether `other` follows them.
#[utoipa::path(
    get, path = "/users/{id}/relationship/{other}", tag = "graph", params(PairPath),
    security(("api_key" = ["read"]), ("user_token" = ["public_reads"])),
    responses(
        (status = 200, description = "How they stand", body = RelationshipJson),
        InvalidUserId, EitherUserNotFound,
    )
)]
async fn relationship(
    State(reads): App,
    Auth(caller): Auth,
    Path((id, other)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let r = reads.relationship(&caller, &id, &other).await?;
    Ok(Json(json::relationship(r)).into_response())
}

/// Accounts the user's followees follow and the user does not, ranked by
/// how many of the followees follow each, then by id. Reads at most 200
/// followees and 200 of each one's followees.
#[utoipa::path(
    get, path = "/users/{id}/suggestions", tag = "graph", params(UserPath, LimitQuery),
    security(("api_key" = ["read"]), ("user_token" = ["self"])),
    responses(
        (status = 200, description = "Suggestions, best first", body = SuggestionsJson),
        (status = 400, description = "`invalid_user_id`, `invalid_limit`, `invalid_query`", body = ErrorBody),
        UserNotFound,
    )
)]
async fn suggestions(
    State(reads): App,
    Auth(caller): Auth,
    Path(id): Path<String>,
    Query(q): Query<PageParams>,
) -> Result<Response, ApiError> {
    let list = reads.suggestions(&caller, &id, q.limit).await?;
    Ok(Json(json::suggestions(&list)).into_response())
}
