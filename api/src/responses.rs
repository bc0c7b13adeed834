//! The refusals of the REST contract that more than one route answers, each
//! stated once here, with its status, as a response component of the
//! document. A route names the ones it answers in its `responses(...)`
//! (`UserNotFound`, `InvalidUserId`) beside those only it answers, and
//! [`with_common_refusals`] adds to every route the ones the guard and the
//! extractors answer before any handler runs, so no route restates them.

use std::collections::BTreeMap;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::{OpenApi as Document, Ref, RefOr};
use utoipa::IntoResponses;

/// A refusal's description and status, and a type per refusal that routes
/// list in their `responses(...)`: it stands for a reference to the
/// component, which [`SharedRefusals`] registers with every refusal.
macro_rules! refusals {
    ($($(#[$doc:meta])* $name:ident = $status:literal, $description:expr;)*) => {
        $(
            $(#[$doc])*
            pub struct $name;

            impl IntoResponses for $name {
                fn responses() -> BTreeMap<String, RefOr<Response>> {
                    BTreeMap::from([(
                        stringify!($status).to_owned(),
                        RefOr::Ref(Ref::from_response_name(stringify!($name))),
                    )])
                }
            }
        )*

        /// Every refusal: its component's name and description.
        const ALL: &[(&str, &str)] = &[$((stringify!($name), $description)),*];
    };
}

refusals! {
    // What routes name.
    /// 400: the user id in the path is not one.
    InvalidUserId = 400, "`invalid_user_id`";
    /// 400: the user id or the post id in the path is not one.
    InvalidUserOrPostId = 400, "`invalid_user_id`, `invalid_post_id`";
    /// 403: a user token may read only as its own user.
    NotYourViewer = 403, "`not_your_account`: a user token named another viewer";
    /// 403: a like or a repost between two accounts one of which blocks the
    /// other.
    Blocked = 403, "`blocked`: the user or the author blocks the other";
    /// 404: the user in the path does not exist.
    UserNotFound = 404, "`user_not_found`";
    /// 404: of the two users in the path, one does not exist.
    EitherUserNotFound = 404, "`user_not_found`: either user";
    /// 404: an account read by name that does not exist, or that the viewer
    /// may not see.
    UserHidden = 404, "`user_not_found`: none, or it blocks the viewer or the viewer blocks it";
    /// 404: the user or the post in the path does not exist.
    UserOrPostNotFound = 404, "`user_not_found`, `post_not_found`";
    /// 404: no member has the group.
    GroupNotFound = 404, "`group_not_found`";

    // What every route answers (`with_common_refusals`).
    /// 408: a request body that did not arrive in time.
    BodyTimeout = 408, "`body_timeout`: the body did not arrive within the request's 30 s";
    /// 413: over the body limit, declared or sent.
    BodyTooLarge = 413, "`body_too_large`: the body, or its declared length, is over 64 KiB";
    /// 414: over the URL limit.
    UriTooLong = 414, "`uri_too_long`: the URL is over 4 KiB";
    /// 415 of a route that takes no body: a compressed body.
    UnsupportedEncoding = 415, "`unsupported_content_encoding`: bodies are taken uncompressed";
    /// 415 of a route that takes a JSON body.
    UnsupportedBody = 415, "`unsupported_media_type`: the body is not declared JSON; \
        `unsupported_content_encoding`: bodies are taken uncompressed";
    /// 431: over the header limit.
    HeadersTooLarge = 431, "`headers_too_large`: the headers are over 16 KiB";
    /// 503: a store failing, the process at its limits, or out of time.
    Unavailable = 503, "`unavailable`, `overloaded` (with `Retry-After`), `request_timeout` or \
        `too_many_connections` (the process's or the address's connection cap)";
    /// 401 of a secured route.
    Unauthenticated = 401, "`unauthenticated` (no credential), `invalid_api_key`, `invalid_token`, \
        `expired_token`, `token_not_yet_valid`, `token_revoked` (issued before its \
        account's tokens were revoked, or the account deleted or suspended) or \
        `invalid_authorization`; with `WWW-Authenticate`";
    /// 403 of a secured route.
    Forbidden = 403, "`missing_scope` (the key lacks the route's scope), `not_your_account`, \
        `not_your_post`, `public_reads_off`, `server_key_required` (user tokens) or \
        `account_suspended`";
    /// 429 of a secured route.
    RateLimited = 429, "`rate_limited`: the credential is over its rate of requests; \
        `write_budget_exceeded`: over its write budget (points an hour and a day); with \
        `Retry-After` and the `RateLimit` fields";
}

/// A refusal's response: its description over the JSON error body.
fn refusal(description: &str) -> Response {
    let body = ContentBuilder::new()
        .schema(Some(Ref::from_schema_name("ErrorBody")))
        .build();
    ResponseBuilder::new()
        .description(description)
        .content("application/json", body)
        .build()
}

/// Registers every refusal among the document's response components.
pub struct SharedRefusals;

impl utoipa::Modify for SharedRefusals {
    fn modify(&self, doc: &mut Document) {
        let components = doc.components.get_or_insert_with(Default::default);
        for (name, description) in ALL {
            components
                .responses
                .insert((*name).to_owned(), RefOr::T(refusal(description)));
        }
    }
}

/// Adds to every operation the refusals that `crate::guard` and the
/// extractors may answer before any handler runs, whatever the route: 414,
/// 431, 413 (a declared length over the limit), 415 (a compressed body, or
/// a body not declared JSON), 408 if it takes a body, 503 when a store
/// fails, the process is overloaded or out of time, and 401, 403 and 429 if
/// it is secured. A refusal the route names itself is left as it is.
pub fn with_common_refusals(doc: &mut Document) {
    for item in doc.paths.paths.values_mut() {
        let ops = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.patch,
        ];
        for op in ops.into_iter().flatten() {
            let secured = op.security.as_ref().is_some_and(|s| !s.is_empty());
            let body = op.request_body.is_some();
            let mut common = UriTooLong::responses();
            common.append(&mut HeadersTooLarge::responses());
            common.append(&mut Unavailable::responses());
            common.append(&mut BodyTooLarge::responses());
            if body {
                common.append(&mut BodyTimeout::responses());
                common.append(&mut UnsupportedBody::responses());
            } else {
                common.append(&mut UnsupportedEncoding::responses());
            }
            if secured {
                common.append(&mut Unauthenticated::responses());
                common.append(&mut Forbidden::responses());
                common.append(&mut RateLimited::responses());
            }
            for (status, response) in common {
                op.responses.responses.entry(status).or_insert(response);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ALL;
    use crate::openapi::document;
    use utoipa::openapi::path::Operation;
    use utoipa::openapi::RefOr;

    fn operations(doc: &super::Document) -> Vec<(String, &Operation)> {
        let mut out = Vec::new();
        for (path, item) in &doc.paths.paths {
            for (method, op) in [
                ("get", &item.get),
                ("put", &item.put),
                ("post", &item.post),
                ("delete", &item.delete),
                ("patch", &item.patch),
            ] {
                if let Some(op) = op {
                    out.push((format!("{method} {path}"), op));
                }
            }
        }
        out
    }

    /// A refusal stated here is named by the routes that answer it, not
    /// copied into them; and every name a route uses is a component.
    #[test]
    fn routes_name_shared_refusals_and_every_name_resolves() {
        let doc = document();
        let components = &doc.components.as_ref().unwrap().responses;
        for (route, op) in operations(&doc) {
            for (status, response) in &op.responses.responses {
                match response {
                    RefOr::T(r) => {
                        let shared = ALL.iter().find(|(_, d)| *d == r.description);
                        assert!(
                            shared.is_none(),
                            "{route} restates {status} {:?}: name it",
                            shared.unwrap().0
                        );
                    }
                    RefOr::Ref(r) => {
                        let name = r.ref_location.trim_start_matches("#/components/responses/");
                        assert!(
                            components.contains_key(name),
                            "{route} {status}: {name} is not a component"
                        );
                    }
                }
            }
        }
    }

    /// The error codes a description names (in backquotes).
    fn codes(description: &str) -> Vec<&str> {
        let names =
            |c: &&str| !c.is_empty() && c.bytes().all(|b| b.is_ascii_lowercase() || b == b'_');
        description
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(names)
            .collect()
    }

    /// A route's own answer for a status that every route answers says
    /// more than the common refusal (`unavailable`, `read_only`), or the
    /// route names nothing of its own and leaves the common one in place.
    #[test]
    fn no_route_narrows_a_common_refusal() {
        let doc = document();
        let components = &doc.components.as_ref().unwrap().responses;
        let common = |name: &str| match &components[name] {
            RefOr::T(r) => codes(&r.description),
            RefOr::Ref(_) => unreachable!(),
        };
        let every_route = [
            ("408", common("BodyTimeout")),
            ("413", common("BodyTooLarge")),
            ("414", common("UriTooLong")),
            ("415", common("UnsupportedBody")),
            ("431", common("HeadersTooLarge")),
            ("503", common("Unavailable")),
        ];
        for (route, op) in operations(&doc) {
            for (status, covered) in &every_route {
                if let Some(RefOr::T(r)) = op.responses.responses.get(*status) {
                    let own = codes(&r.description);
                    assert!(
                        own.is_empty() || own.iter().any(|c| !covered.contains(c)),
                        "{route} restates the common {status} ({own:?}): leave it out"
                    );
                }
            }
        }
    }

    /// What the guard and the extractors answer is in every route's
    /// contract, by what the route takes and whether it is secured.
    #[test]
    fn every_route_lists_the_common_refusals() {
        let doc = document();
        for (route, op) in operations(&doc) {
            let has = |status: &str| op.responses.responses.contains_key(status);
            for status in ["413", "414", "415", "431", "503"] {
                assert!(has(status), "{route} documents no {status}");
            }
            assert_eq!(has("408"), op.request_body.is_some(), "{route}: 408");
            if op.security.as_ref().is_some_and(|s| !s.is_empty()) {
                for status in ["401", "403", "429"] {
                    assert!(has(status), "{route} documents no {status}");
                }
            }
        }
    }
}
