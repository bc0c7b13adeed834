//! The shapes and parameters the REST contract names beside the JSON bodies
//! of `crate::json`: the error body, path parameters with their syntax, the
//! paging parameters of lists, and the document's front matter ([`ApiDoc`]).

use serde::Serialize;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::response::ResponseBuilder;
use utoipa::openapi::{OpenApi as Document, Ref, RefOr};
use utoipa::{IntoParams, OpenApi, ToSchema};

/// Every refusal and failure: a stable machine-readable code and a message
/// for people.
#[derive(Serialize, ToSchema)]
pub struct ErrorBody {
    pub error: ErrorDetail,
}

#[derive(Serialize, ToSchema)]
pub struct ErrorDetail {
    /// One of the documented codes, e.g. `user_not_found`, `invalid_limit`.
    #[schema(example = "user_not_found")]
    pub code: &'static str,
    #[schema(example = "user alice does not exist")]
    pub message: String,
    /// The request's `x-request-id`, to quote when asking about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
}

/// A user id in the path: 1 to 64 characters of `[A-Za-z0-9_.-]`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // describes the path; handlers take it as a string
pub struct UserPath {
    #[param(pattern = r"^(?!\.{1,2}$)[A-Za-z0-9_.\-]{1,64}$", example = "alice")]
    pub id: String,
}

/// A follow edge in the path: the user and the account they (un)follow.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct EdgePath {
    /// The follower.
    #[param(pattern = r"^(?!\.{1,2}$)[A-Za-z0-9_.\-]{1,64}$", example = "bob")]
    pub id: String,
    /// The account followed.
    #[param(pattern = r"^(?!\.{1,2}$)[A-Za-z0-9_.\-]{1,64}$", example = "alice")]
    pub target: String,
}

/// A post id in the path: 16 hexadecimal digits, time-ordered.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct PostPath {
    #[param(pattern = "^[0-9A-Fa-f]{16}$", example = "0550f1a2b3c40000")]
    pub id: String,
}

/// Paging of post lists: newest first, continued below `before`.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct PostPageQuery {
    /// Page size, 1 to 200 (default 20).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u64>,
    /// The previous page's `next_cursor`: a post id; the page holds older
    /// posts. Empty counts as absent.
    #[param(pattern = "^([0-9A-Fa-f]{16})?$")]
    pub before: Option<String>,
}

/// Paging of user lists, in id order.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct UserPageQuery {
    /// Page size, 1 to 200 (default 20).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u64>,
    /// The previous page's `next_cursor` (opaque). Empty counts as absent.
    pub cursor: Option<String>,
}

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Socialite",
        description = "A timeline (news feed) service: users follow users, post, and read \
            timelines of the accounts they follow, newest first. Limits: user ids 1-64 \
            characters of [A-Za-z0-9_.-], not . or ..; post ids 16 hex digits; messages \
            1-4096 bytes of UTF-8, not blank (whitespace, control and invisible characters \
            count as blank); `data` and `profile` JSON objects of at most 16 KiB whose \
            integers fit in 64 bits; request \
            bodies at most 64 KiB; page sizes 1-200 (default 20). Errors are \
            {\"error\":{\"code\",\"message\",\"request_id\"}}. Besides the answers each \
            route lists, any route may answer 413 body_too_large (a declared Content-Length \
            over the limit), 414 uri_too_long (URLs over 4 KiB), 415 \
            unsupported_content_encoding, 431 headers_too_large (over 16 KiB), and 503 \
            overloaded (with Retry-After) or request_timeout (30 s). Every response carries \
            x-request-id.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    components(schemas(ErrorBody, ErrorDetail)),
    tags(
        (name = "users", description = "Accounts and their profiles"),
        (name = "graph", description = "Follows, followers and counts"),
        (name = "posts", description = "Posts and their authors' lists"),
        (name = "timelines", description = "Timelines, newest first"),
        (name = "operations", description = "Health, readiness, metrics, status, the contract"),
    )
)]
pub struct ApiDoc;

/// Adds to every operation the refusals that `crate::guard` may answer
/// before any handler runs, whatever the route: 413 (a declared length over
/// the limit), 414, 415 (a compressed body), 431, and 503 when overloaded or
/// out of time.
pub fn with_common_refusals(doc: &mut Document) {
    let refusal = |description: &str| {
        let body = ContentBuilder::new()
            .schema(Some(Ref::from_schema_name("ErrorBody")))
            .build();
        RefOr::T(
            ResponseBuilder::new()
                .description(description)
                .content("application/json", body)
                .build(),
        )
    };
    for item in doc.paths.paths.values_mut() {
        let ops = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
        ];
        for op in ops.into_iter().flatten() {
            let responses = &mut op.responses.responses;
            let mut add = |status: &str, description: &str| {
                responses
                    .entry(status.to_owned())
                    .or_insert_with(|| refusal(description));
            };
            add("414", "`uri_too_long`: the URL is over 4 KiB");
            add("431", "`headers_too_large`: the headers are over 16 KiB");
            add(
                "503",
                "`unavailable`, `overloaded` (with `Retry-After`) or `request_timeout`",
            );
            add(
                "413",
                "`body_too_large`: the body, or its declared length, is over 64 KiB",
            );
            add(
                "415",
                "`unsupported_content_encoding`: bodies are taken uncompressed",
            );
        }
    }
}
