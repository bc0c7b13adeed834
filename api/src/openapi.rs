//! The REST contract: an OpenAPI 3.1 document generated from the handlers
//! themselves (`#[utoipa::path]` beside each one, registered through
//! `utoipa_axum`'s router, so a route cannot be served without being
//! described), over the shapes of `crate::json` and `crate::schema` and the
//! shared refusals of `crate::responses`. Each process serves the document
//! of the routes it serves at `/openapi.json`; [`document`] is the whole
//! API.

use crate::responses::with_common_refusals;
use crate::schema::ApiDoc;
use utoipa::openapi::OpenApi as Document;
use utoipa::OpenApi;

/// The whole REST API, as `socialite up` serves it.
pub fn document() -> Document {
    let mut doc = ApiDoc::openapi();
    doc.merge(crate::ingest::rest_router().into_openapi());
    doc.merge(crate::reads::rest_router().into_openapi());
    doc.merge(crate::live::rest_router().into_openapi());
    doc.merge(crate::firehose::rest_router().into_openapi());
    doc.merge(crate::webhooks::rest::rest_router().into_openapi());
    doc.merge(crate::serve::ops_router().into_openapi());
    with_common_refusals(&mut doc);
    doc
}

#[cfg(test)]
mod tests {
    use super::*;
    use utoipa::openapi::path::Operation;

    fn operations(doc: &Document) -> Vec<(String, &'static str, &Operation)> {
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
                    out.push((path.clone(), method, op));
                }
            }
        }
        out
    }

    /// Operation ids are the handlers' names: two handlers of one name in
    /// different modules would make an invalid document.
    #[test]
    fn operation_ids_are_unique() {
        let doc = document();
        let mut seen = std::collections::BTreeMap::new();
        for (path, method, op) in operations(&doc) {
            let id = op.operation_id.clone().unwrap_or_default();
            if let Some(other) = seen.insert(id.clone(), format!("{method} {path}")) {
                panic!("{method} {path} and {other} share the operation id {id}");
            }
        }
    }

    #[test]
    fn every_route_is_in_the_document_with_its_errors() {
        let doc = document();
        let ops = operations(&doc);
        let listed: Vec<String> = ops.iter().map(|(p, m, _)| format!("{m} {p}")).collect();
        for route in [
            "put /users/{id}",
            "get /users/{id}",
            "delete /users/{id}",
            "put /users/{id}/following/{target}",
            "delete /users/{id}/following/{target}",
            "get /users/{id}/followers",
            "get /users/{id}/following",
            "get /users/{id}/follower_count",
            "get /users/{id}/following_count",
            "post /users/{id}/posts",
            "get /users/{id}/posts",
            "get /users/{id}/timeline",
            "get /posts/{id}",
            "delete /posts/{id}",
            "get /posts",
            "get /users/{id}/relationship/{other}",
            "get /users/{id}/suggestions",
            "get /firehose",
            "post /firehose",
            "post /admin/webhooks",
            "get /admin/webhooks",
            "get /admin/webhooks/{id}",
            "patch /admin/webhooks/{id}",
            "delete /admin/webhooks/{id}",
            "post /admin/webhooks/{id}/rotate-secret",
            "post /admin/webhooks/{id}/replay",
            "get /admin/webhooks/{id}/deliveries",
            "get /healthz",
            "get /readyz",
            "get /metrics",
            "get /status",
            "get /openapi.json",
        ] {
            assert!(
                listed.iter().any(|l| l == route),
                "{route} is not documented"
            );
        }
        for (path, method, op) in &ops {
            let takes_input = path.contains('{') || *method != "get";
            if takes_input {
                assert!(
                    op.responses.responses.contains_key("400"),
                    "{method} {path} documents no 400"
                );
            }
            assert!(op.tags.is_some(), "{method} {path} has no tag");
        }
        let json = doc.to_json().unwrap();
        assert!(json.contains("\"openapi\":\"3.1.0\""));
    }

    /// Routes are registered only through the documenting router: a plain
    /// axum `.route(` in this crate would serve a path the contract omits.
    #[test]
    fn no_route_bypasses_the_document() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut stack = vec![src];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    let plain = text
                        .lines()
                        .filter(|l| l.trim_start().starts_with(".route("))
                        .count();
                    assert_eq!(
                        plain,
                        0,
                        "{} registers a route outside the document",
                        path.display()
                    );
                }
            }
        }
    }
}
