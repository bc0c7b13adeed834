//! Reads that help people find each other and read several authors at once:
//! the relationship between two users, suggestions from friends of friends
//! (checked against a brute-force oracle on a seeded random graph), and the
//! posts of several authors; over REST and gRPC.

mod common;

use common::*;
use reqwest::StatusCode;
use serde_json::Value;
use socialite_core::sim::Rng;
use socialite_proto::v1 as pb;
use std::collections::{BTreeMap, BTreeSet};

/// The suggestions the definition gives: accounts followed by the user's
/// followees, not the user and not followed, by how many followees follow
/// them, then by id.
fn oracle(graph: &BTreeMap<String, BTreeSet<String>>, user: &str) -> Vec<(String, u64)> {
    let mine = &graph[user];
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for f in mine {
        for c in &graph[f] {
            if c != user && !mine.contains(c) {
                *counts.entry(c).or_default() += 1;
            }
        }
    }
    let mut ranked: Vec<(String, u64)> =
        counts.into_iter().map(|(c, n)| (c.to_owned(), n)).collect();
    ranked.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    ranked
}

#[tokio::test]
async fn suggestions_and_relationships_match_the_graph() {
    let t = spawn_app().await;
    let users: Vec<String> = (0..24).map(|i| format!("d{i:02}")).collect();
    for u in &users {
        t.put_user(u).await;
    }
    let mut rng = Rng::new(20261123);
    let mut graph: BTreeMap<String, BTreeSet<String>> =
        users.iter().map(|u| (u.clone(), BTreeSet::new())).collect();
    for u in &users {
        for _ in 0..5 {
            let v = &users[rng.below(users.len())];
            if v != u && graph.get_mut(u).unwrap().insert(v.clone()) {
                t.follow(u, v).await;
            }
        }
    }
    let (_, mut reads) = clients_as(&t, ADMIN_KEY).await;
    for u in &users {
        let want = oracle(&graph, u);
        let (s, body) = t.get(&format!("/users/{u}/suggestions?limit=200")).await;
        assert_eq!(s, StatusCode::OK, "{body}");
        let got: Vec<(String, u64)> = body["users"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                (
                    x["id"].as_str().unwrap().to_owned(),
                    x["mutuals"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, want, "suggestions for {u}");
        let (_, top) = t.get(&format!("/users/{u}/suggestions?limit=3")).await;
        assert_eq!(top["users"].as_array().unwrap().len(), want.len().min(3));
        let grpc = reads
            .list_suggestions(pb::ListSuggestionsRequest {
                user: u.clone(),
                limit: 200,
            })
            .await
            .unwrap()
            .into_inner()
            .users;
        let grpc: Vec<(String, u64)> = grpc
            .into_iter()
            .map(|s| (s.id, u64::from(s.mutuals)))
            .collect();
        assert_eq!(grpc, want, "gRPC suggestions for {u}");
    }
    for (a, b) in [(0, 1), (2, 3), (5, 7), (11, 4), (9, 9)] {
        let (a, b) = (&users[a], &users[b]);
        let (s, body) = t.get(&format!("/users/{a}/relationship/{b}")).await;
        assert_eq!(s, StatusCode::OK, "{body}");
        let want = (graph[a].contains(b), graph[b].contains(a));
        assert_eq!(
            (
                body["following"].as_bool().unwrap(),
                body["followed_by"].as_bool().unwrap()
            ),
            want,
            "{a} and {b}"
        );
        let r = reads
            .get_relationship(pb::RelationshipRequest {
                user: a.clone(),
                other: b.clone(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!((r.following, r.followed_by), want);
    }
    let (s, body) = t.get("/users/d00/relationship/nobody").await;
    assert_eq!(
        (s, body["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("user_not_found"))
    );
    let (s, body) = t.get("/users/d00/suggestions?limit=0").await;
    assert_eq!(
        (s, body["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_limit"))
    );
}

#[tokio::test]
async fn posts_of_several_authors_page_newest_first() {
    let t = spawn_app().await;
    for u in ["pa", "pb", "pc"] {
        t.put_user(u).await;
    }
    let mut expected = Vec::new();
    for i in 0..7 {
        expected.push(t.post("pa", &format!("a{i}")).await);
        expected.push(t.post("pb", &format!("b{i}")).await);
        t.post("pc", "not asked for").await;
    }
    let expected = newest_first(expected);
    // Paged by 4 with `before`, authors named twice and one unknown.
    let mut got = Vec::new();
    let mut before = String::new();
    loop {
        let (s, body) = t
            .get(&format!(
                "/posts?authors=pa,pb,pa,nobody&limit=4&before={before}"
            ))
            .await;
        assert_eq!(s, StatusCode::OK, "{body}");
        got.extend(ids(&body["posts"]));
        match body["next_cursor"].as_str() {
            Some(c) => before = c.to_owned(),
            None => break,
        }
    }
    assert_eq!(got, expected);
    let (_, mut reads) = clients_as(&t, ADMIN_KEY).await;
    let page = reads
        .list_posts_by_authors(pb::ListPostsByAuthorsRequest {
            authors: vec!["pa".into(), "pb".into()],
            limit: 5,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let first: Vec<String> = page.posts.into_iter().map(|p| p.id).collect();
    assert_eq!(first, expected[..5]);
    let too_many = (0..101)
        .map(|i| format!("x{i}"))
        .collect::<Vec<_>>()
        .join(",");
    for (query, code) in [
        ("authors=", "invalid_user_id"),
        ("authors=pa,,pb", "invalid_user_id"),
        ("authors=p%2Fa", "invalid_user_id"),
        (too_many.as_str(), "invalid_authors"),
        ("", "invalid_query"),
        ("authors=pa&limit=999", "invalid_limit"),
    ] {
        let query = if query.starts_with("x0") {
            format!("authors={query}")
        } else {
            query.to_owned()
        };
        let (s, body): (StatusCode, Value) = t.get(&format!("/posts?{query}")).await;
        assert_eq!(
            (s, body["error"]["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code)),
            "{query}"
        );
    }
    let err = reads
        .list_posts_by_authors(pb::ListPostsByAuthorsRequest {
            authors: vec![],
            limit: 0,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
}
