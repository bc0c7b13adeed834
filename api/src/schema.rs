//! The shapes and parameters the REST contract names beside the JSON bodies
//! of `crate::json`: the error body, the syntax of each value a path or a
//! query carries ([`syntax`], stated once), the path parameters and the
//! paging parameters of lists built on it, and the document's front matter
//! ([`ApiDoc`]).

use crate::responses::SharedRefusals;
use serde::Serialize;
use syntax::{
    Authors, GroupName, ListName, ListNameOrEmpty, PageSize, PostId, PostIdOrEmpty, UserId,
    UserIdOrEmpty,
};
use utoipa::openapi::OpenApi as Document;
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

/// The syntax of each value a path or a query carries, stated once and
/// built from the domain's limits. A parameter's field has its syntax's
/// type, and `#[param(inline)]` states the syntax whole at each parameter,
/// where a client reads it. (Bodies' fields state their patterns
/// themselves: naming a syntax there, utoipa wraps the field's schema in an
/// `allOf` or a `oneOf` and drops its example.)
pub mod syntax {
    use socialite_core::ids::{MAX_GROUP_NAME_LEN, MAX_LIST_NAME_LEN, MAX_USER_ID_LEN};
    use socialite_core::model::MAX_PAGE_SIZE;
    use utoipa::openapi::schema::{KnownFormat, Object, ObjectBuilder, SchemaFormat, Type};
    use utoipa::openapi::{RefOr, Schema};

    /// A type per syntax, whose schema is the expression given.
    macro_rules! syntax {
        ($($(#[$doc:meta])* $name:ident => $schema:expr;)*) => {$(
            $(#[$doc])*
            pub struct $name;

            impl utoipa::PartialSchema for $name {
                fn schema() -> RefOr<Schema> {
                    RefOr::T(Schema::Object($schema))
                }
            }

            impl utoipa::ToSchema for $name {}
        )*};
    }

    syntax! {
        /// A user id: 1 to 64 characters of `[A-Za-z0-9_.-]`, not `.` or `..`.
        UserId => text(&user_id());
        /// A user id, or empty (which counts as absent).
        UserIdOrEmpty => text_or_empty(&user_id());
        /// A post id: 16 hexadecimal digits.
        PostId => text(POST_ID);
        /// A post id, or empty (which counts as absent).
        PostIdOrEmpty => text_or_empty(POST_ID);
        /// A group: 1 to 64 characters of `[A-Za-z0-9_-]`.
        GroupName => text(&name(MAX_GROUP_NAME_LEN));
        /// A list: 1 to 32 characters of `[A-Za-z0-9_-]`.
        ListName => text(&name(MAX_LIST_NAME_LEN));
        /// A list, or empty (which counts as absent).
        ListNameOrEmpty => text_or_empty(&name(MAX_LIST_NAME_LEN));
        /// 1 to 100 user ids (as many as `GET /posts` takes), comma-separated.
        Authors => text(&format!("{0}(,{0}){{0,99}}", user_chars()));
        /// A page size: 1 to the largest page.
        PageSize => ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(1))
            .maximum(Some(MAX_PAGE_SIZE))
            .build();
    }

    const POST_ID: &str = "[0-9A-Fa-f]{16}";

    /// A user id: not `.` or `..` (path segments clients normalise away).
    fn user_id() -> String {
        format!(r"(?!\.{{1,2}}$){}", user_chars())
    }

    /// The characters and length of a user id.
    fn user_chars() -> String {
        format!(r"[A-Za-z0-9_.\-]{{1,{MAX_USER_ID_LEN}}}")
    }

    /// A name of `[A-Za-z0-9_-]`, at most `max` long.
    fn name(max: usize) -> String {
        format!(r"[A-Za-z0-9_\-]{{1,{max}}}")
    }

    /// Text that is `syntax` whole.
    fn text(syntax: &str) -> Object {
        pattern(format!("^{syntax}$"))
    }

    /// Text that is `syntax` whole, or empty.
    fn text_or_empty(syntax: &str) -> Object {
        pattern(format!("^({syntax})?$"))
    }

    fn pattern(pattern: String) -> Object {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(pattern))
            .build()
    }
}

/// A user id in the path: 1 to 64 characters of `[A-Za-z0-9_.-]`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)] // describes the path; handlers take it as a string
pub struct UserPath {
    #[param(inline, example = "alice")]
    pub id: UserId,
}

/// A follow edge in the path: the user and the account they (un)follow.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct EdgePath {
    /// The follower.
    #[param(inline, example = "bob")]
    pub id: UserId,
    /// The account followed.
    #[param(inline, example = "alice")]
    pub target: UserId,
}

/// A post id in the path: 16 hexadecimal digits, time-ordered.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct PostPath {
    #[param(inline, example = "0550f1a2b3c40000")]
    pub id: PostId,
}

/// Paging of post lists: newest first, continued below `before`.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct PostPageQuery {
    /// Page size, 1 to 200 (default 20).
    #[param(inline)]
    pub limit: Option<PageSize>,
    /// The previous page's `next_cursor`: a post id; the page holds older
    /// posts. Empty counts as absent.
    #[param(inline)]
    pub before: Option<PostIdOrEmpty>,
}

/// Paging of the home timeline: back from `before`, newest first, or
/// forward from `after`, oldest first.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct TimelineQuery {
    /// Page size, 1 to 200 (default 20).
    #[param(inline)]
    pub limit: Option<PageSize>,
    /// The previous page's `next_cursor`: a post id; the page holds older
    /// posts, newest first. Empty counts as absent.
    #[param(inline)]
    pub before: Option<PostIdOrEmpty>,
    /// A post id, such as the `home` marker's `last_read_id`: the page
    /// holds the posts after it, oldest first, within the timeline's newest
    /// 1,000 entries; pass `next_cursor` as the next `after`. Not with
    /// `before`.
    #[param(inline)]
    pub after: Option<PostIdOrEmpty>,
}

/// A ranked order of a home or list timeline (see docs/ranking.md).
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct RankedQuery {
    /// `latest` (newest first, the default), `balanced` (ranked: recency,
    /// engagement, affinity, rare posters lifted, your priorities, each
    /// further post of one author in a page weighing less) or `catchup`
    /// (since your `home` marker or `since`, each author once, the most
    /// engaging first; on a list `since` is needed, a list has no marker).
    #[param(pattern = "^(latest|balanced|catchup)?$", example = "balanced")]
    pub order: Option<String>,
    /// A ranked order's `next_cursor` (not `before` or `after`).
    #[param(max_length = 64)]
    pub cursor: Option<String>,
    /// `catchup` only: from after this post id instead of the `home` marker.
    #[param(inline)]
    pub since: Option<PostIdOrEmpty>,
    /// Ranked orders: each post carries `score`, its score and parts.
    pub explain: Option<bool>,
}

/// A timeline of a user's in the path, for markers.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct MarkerPath {
    #[param(inline, example = "bob")]
    pub id: UserId,
    /// The timeline: `home`.
    #[param(pattern = "^home$", example = "home")]
    pub timeline: String,
}

/// A mute or a block in the path: the user who keeps it and its target.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct RelationPath {
    /// The user who mutes or blocks.
    #[param(inline, example = "bob")]
    pub id: UserId,
    /// The account muted or blocked.
    #[param(inline, example = "carol")]
    pub target: UserId,
}

/// A reader and an account they set a priority for.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct PreferencePath {
    /// The reader.
    #[param(inline, example = "bob")]
    pub id: UserId,
    /// The account.
    #[param(inline, example = "carol")]
    pub author: UserId,
}

/// A user and one of their keyword filters.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct FilterPath {
    #[param(inline, example = "bob")]
    pub id: UserId,
    /// The filter's id.
    #[param(example = "1")]
    pub filter_id: String,
}

/// A reader and a post they want less like.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct ShownLessPath {
    /// The reader.
    #[param(inline, example = "bob")]
    pub id: UserId,
    /// The post.
    #[param(inline, example = "0550f1a2b3c40000")]
    pub post_id: PostId,
}

/// A user and a post of the thread they mute or unmute.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct ThreadPath {
    /// The user.
    #[param(inline, example = "bob")]
    pub id: UserId,
    /// Any post of the thread (to unmute: also its first post, if gone).
    #[param(inline, example = "0550f1a2b3c40000")]
    pub post_id: PostId,
}

/// Paging of a group's timeline, and whose mutes and blocks apply.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct GroupTimelineQuery {
    /// Page size, 1 to 200 (default 20).
    #[param(inline)]
    pub limit: Option<PageSize>,
    /// The previous page's `next_cursor`: a post id. Empty counts as absent.
    #[param(inline)]
    pub before: Option<PostIdOrEmpty>,
    /// The reader whose mutes and blocks hide posts (server keys; a user
    /// token always reads as its user, and may name only that user).
    /// Absent or empty: the whole timeline.
    #[param(inline, example = "bob")]
    pub viewer: Option<UserIdOrEmpty>,
}

/// Who reads an account or a post asked for by name: an account that
/// blocks the viewer, or that the viewer blocks, answers 404 to them, as a
/// suspended one does to everyone.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct ViewerQuery {
    /// The reader (server keys; a user token always reads as its user, and
    /// may name only that user). Absent or empty: what every reader sees.
    #[param(inline, example = "bob")]
    pub viewer: Option<UserIdOrEmpty>,
}

/// Paging of a thread's replies, and whose view it is.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct ThreadQuery {
    /// Replies per page, 1 to 200 (default 20).
    #[param(inline)]
    pub limit: Option<PageSize>,
    /// The previous page's `next_cursor`: the last reply's id. Empty
    /// counts as absent.
    #[param(inline)]
    pub cursor: Option<PostIdOrEmpty>,
    /// The reader whose mutes and blocks hide posts (server keys; a user
    /// token always reads as its user, and may name only that user).
    /// Absent or empty: what every reader sees.
    #[param(inline, example = "bob")]
    pub viewer: Option<UserIdOrEmpty>,
}

/// Where a live stream resumes.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct StreamQuery {
    /// The id of the last entry received (a post id), as the
    /// `Last-Event-ID` header also gives it; the header wins.
    #[param(inline)]
    pub last_event_id: Option<PostIdOrEmpty>,
}

/// Two users in the path: the one asking and the other.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct PairPath {
    #[param(inline, example = "bob")]
    pub id: UserId,
    /// The other user.
    #[param(inline, example = "alice")]
    pub other: UserId,
}

/// The authors of `GET /posts`, and its paging.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct AuthorsQuery {
    /// 1 to 100 user ids, comma-separated; authors that do not exist add
    /// nothing.
    #[param(inline, example = "alice,bob")]
    pub authors: Authors,
    /// Page size, 1 to 200 (default 20).
    #[param(inline)]
    pub limit: Option<PageSize>,
    /// The previous page's `next_cursor`: a post id. Empty counts as absent.
    #[param(inline)]
    pub before: Option<PostIdOrEmpty>,
}

/// How many suggestions.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct LimitQuery {
    /// 1 to 200 (default 20).
    #[param(inline)]
    pub limit: Option<PageSize>,
}

/// A list of a user's in the path.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct ListPath {
    #[param(inline, example = "bob")]
    pub id: UserId,
    /// The list: 1 to 32 characters of `[A-Za-z0-9_-]`.
    #[param(inline, example = "work")]
    pub list: ListName,
}

/// A group in the path: 1 to 64 characters of `[A-Za-z0-9_-]`.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct GroupPath {
    #[param(inline, example = "rustaceans")]
    pub group: GroupName,
}

/// A group and a user in the path.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct MemberPath {
    #[param(inline, example = "rustaceans")]
    pub group: GroupName,
    /// The member.
    #[param(inline, example = "alice")]
    pub id: UserId,
}

/// Paging of the accounts a user follows, optionally only those filed under
/// a list.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct FollowingQuery {
    /// Page size, 1 to 200 (default 20).
    #[param(inline)]
    pub limit: Option<PageSize>,
    /// The previous page's `next_cursor` (opaque). Empty counts as absent.
    pub cursor: Option<String>,
    /// Only the accounts filed under this list (1 to 32 characters of
    /// `[A-Za-z0-9_-]`), in id order. Empty counts as absent.
    #[param(inline, example = "work")]
    pub list: Option<ListNameOrEmpty>,
    /// With `true`, the page also carries `edges`: each account with when
    /// the follow was made.
    pub followed_at: Option<bool>,
}

/// Paging of a user's followers, newest follow first.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct FollowersQuery {
    /// Page size, 1 to 200 (default 20).
    #[param(inline)]
    pub limit: Option<PageSize>,
    /// The previous page's `next_cursor` (opaque). Empty counts as absent.
    pub cursor: Option<String>,
    /// With `true`, the page also carries `edges`: each follower with when
    /// the follow was made.
    pub followed_at: Option<bool>,
}

/// A user and a post in the path: who likes, and what.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct LikePath {
    /// The user who likes.
    #[param(inline, example = "bob")]
    pub id: UserId,
    /// The post liked.
    #[param(inline, example = "0550f1a2b3c40000")]
    pub post_id: PostId,
}

/// A user and a post in the path: who reposts, and what.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(dead_code)]
pub struct RepostPath {
    /// The user who reposts.
    #[param(inline, example = "bob")]
    pub id: UserId,
    /// The post reposted (a repost's own id stands for its post).
    #[param(inline, example = "0550f1a2b3c40000")]
    pub post_id: PostId,
}

/// Paging of user lists, in id order.
#[derive(IntoParams)]
#[into_params(parameter_in = Query)]
#[allow(dead_code)]
pub struct UserPageQuery {
    /// Page size, 1 to 200 (default 20).
    #[param(inline)]
    pub limit: Option<PageSize>,
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
            count as blank), with no control character but newline and tab; a user follows \
            at most 7,500 accounts by default (409 too_many_following); `data` and `profile` JSON objects of at most 16 KiB whose \
            integers fit in 64 bits; request \
            bodies at most 64 KiB (1 MiB for POST /firehose); page sizes 1-200 (default 20). Errors are \
            {\"error\":{\"code\",\"message\",\"request_id\"}}. Besides the answers each \
            route lists, any route may answer 413 body_too_large (a declared Content-Length \
            over the limit), 414 uri_too_long (URLs over 4 KiB), 415 \
            unsupported_content_encoding, 431 headers_too_large (over 16 KiB), 408 \
            body_timeout (a body that did not arrive within the request's 30 s), and 503 \
            overloaded (with Retry-After) or request_timeout (30 s); a request the HTTP \
            parser cannot take answers 400 invalid_request, 414 or 431 likewise. A connection \
            with no request in flight is closed after 5 s (from its start); past the \
            connection caps (per process, 1,000 per client address) a connection is answered \
            only /healthz or 503 too_many_connections. Live streams: at most 8 per user, \
            5,000 per API key, 10,000 per process (429/503 too_many_streams), each for at most \
            an hour; they end with `end` when their credential expires or is revoked (the \
            defaults; each is a setting). Two Authorization headers answer 400 \
            duplicate_authorization. Every response carries x-request-id. Writes spend \
            their credential's write budget (a create 3 points, an update 2, a delete 1; \
            a user token 5,000 points an hour and 35,000 a day by default, a server key \
            none unless configured): past it, 429 write_budget_exceeded with Retry-After. \
            A metered credential's responses carry the IETF RateLimit-Policy fields (the \
            requests policy, and the budget's \"hour\" and \"day\" in points) and \
            RateLimit (the policy with the smallest share left). Callers present a server API key (scopes write, read, admin, firehose) or a \
            user token (a JWT signed HS256 with a shared secret, `sub` the user id, `iat` and \
            `exp` required, at most 30 days apart, `nbf` honoured; refused with \
            `token_revoked` if issued before its account's tokens were revoked or the \
            account deleted or suspended) as `Authorization: Bearer`; each route lists the schemes and scopes \
            that may call it (`self`: only as the user in the path; `author`: only the \
            post's author; `public_reads`: when the deployment lets user tokens read public \
            data). Routes without security are open.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    components(schemas(ErrorBody, ErrorDetail)),
    modifiers(&SecuritySchemes, &SharedRefusals),
    tags(
        (name = "users", description = "Accounts and their profiles"),
        (name = "graph", description = "Follows, followers and counts"),
        (name = "posts", description = "Posts and their authors' lists"),
        (name = "groups", description = "Groups that users join and leave"),
        (name = "moderation", description = "Suspensions and token revocation"),
        (name = "timelines", description = "Timelines, newest first: home, lists, groups, mentions"),
        (name = "notifications", description = "What users are told: follows, mentions, replies, reposts and likes, grouped"),
        (name = "firehose", description = "The network's public acts, followed from a cursor"),
        (name = "operations", description = "Health, readiness, metrics, status, the contract"),
    )
)]
pub struct ApiDoc;

/// The credentials routes name in their `security`.
struct SecuritySchemes;

impl utoipa::Modify for SecuritySchemes {
    fn modify(&self, doc: &mut Document) {
        use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
        let components = doc.components.get_or_insert_with(Default::default);
        let http = |scheme, format: Option<&str>, description: &str| {
            let mut b = HttpBuilder::new()
                .scheme(scheme)
                .description(Some(description));
            if let Some(f) = format {
                b = b.bearer_format(f);
            }
            SecurityScheme::Http(b.build())
        };
        components.add_security_scheme(
            "api_key",
            http(
                HttpAuthScheme::Bearer,
                None,
                "A server API key (`slk_...`), held by the product's backend; acts for any \
                 user within its scopes: write, read, admin.",
            ),
        );
        components.add_security_scheme(
            "user_token",
            http(
                HttpAuthScheme::Bearer,
                Some("JWT"),
                "A user token: HS256 JWT with `sub` (the user id) and `exp`; acts only as \
                 that user.",
            ),
        );
        components.add_security_scheme(
            "operator_basic",
            http(
                HttpAuthScheme::Basic,
                None,
                "HTTP Basic for browsers: any user name, an admin API key as the password.",
            ),
        );
    }
}
