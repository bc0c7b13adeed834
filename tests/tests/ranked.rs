//! Ranked home timelines on a running server, as a reader uses them over
//! REST and gRPC: a prolific account stops drowning the rest in
//! `balanced`, a friend who posts once shows at the top of `catchup`,
//! every entry says why, `explain` gives the score, and pages follow
//! their cursor. Bad input is refused with a clear code.

mod common;

use common::process::send_as_client;
use common::*;
use reqwest::StatusCode;
use serde_json::Value;
use socialite_proto::v1 as pb;

fn authors(page: &Value) -> Vec<String> {
    page["posts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["author"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_reader_chooses_the_order_of_their_timeline() {
    let t = spawn_app().await;
    for u in ["ann", "loud", "quiet", "pal"] {
        t.put_user(u).await;
    }
    for u in ["loud", "quiet", "pal"] {
        t.follow("ann", u).await;
    }
    // The marker is set before anything new: catch-up is what follows.
    let first = t.post("pal", "before the marker").await;
    t.wait_idle().await;
    let (s, v) = t
        .call(
            reqwest::Method::PUT,
            "/users/ann/markers/home",
            Some(serde_json::json!({ "last_read_id": first })),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    t.post("quiet", "once a week").await;
    t.post("pal", "hello").await;
    for i in 0..30 {
        t.post("loud", &format!("again {i}")).await;
    }
    t.wait_idle().await;

    // Latest: the loud account's 20 newest fill the first page.
    let (s, latest) = t.get("/users/ann/timeline?limit=20").await;
    assert_eq!(s, StatusCode::OK);
    assert!(authors(&latest).iter().all(|a| a == "loud"));
    let (_, same) = t.get("/users/ann/timeline?limit=20&order=latest").await;
    assert_eq!(same, latest, "latest is the default, unchanged");

    // Balanced: the others are on the first page, near its top, and every
    // entry says why; explain gives the score and its parts.
    let (s, page) = t
        .get("/users/ann/timeline?order=balanced&limit=10&explain=true")
        .await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(
        (page["order"].as_str(), page["fallback"].as_bool()),
        (Some("balanced"), Some(false))
    );
    let shown = authors(&page);
    assert_eq!(shown.len(), 10);
    for other in ["quiet", "pal"] {
        let at = shown.iter().position(|a| a == other);
        assert!(at.is_some_and(|i| i < 5), "{other} buried: {shown:?}");
    }
    for p in page["posts"].as_array().unwrap() {
        assert!(p["reason"].is_string(), "{p}");
        let score = &p["score"];
        let product = score["recency"].as_f64().unwrap()
            * (1.0
                + score["engagement"].as_f64().unwrap()
                + score["affinity"].as_f64().unwrap()
                + score["rarity"].as_f64().unwrap())
            * score["priority"].as_f64().unwrap()
            * score["diversity"].as_f64().unwrap();
        assert!(
            (product - score["score"].as_f64().unwrap()).abs() < 1e-9,
            "{p}"
        );
    }
    // Its pages follow the cursor: every post once.
    let mut seen: Vec<String> = ids(&page["posts"]);
    let mut cursor = page["next_cursor"].as_str().map(str::to_owned);
    while let Some(c) = cursor {
        let (s, next) = t
            .get(&format!(
                "/users/ann/timeline?order=balanced&limit=10&cursor={c}"
            ))
            .await;
        assert_eq!(s, StatusCode::OK, "{next}");
        assert!(
            next["posts"][0].get("score").is_none(),
            "explain only when asked"
        );
        seen.extend(ids(&next["posts"]));
        cursor = next["next_cursor"].as_str().map(str::to_owned);
    }
    let mut once = seen.clone();
    once.sort();
    once.dedup();
    assert_eq!((seen.len(), once.len()), (33, 33));

    // Catch-up: since the marker, each author once, the rare poster first.
    let (s, caught) = t.get("/users/ann/timeline?order=catchup").await;
    assert_eq!(s, StatusCode::OK, "{caught}");
    assert_eq!(authors(&caught), ["quiet", "pal", "loud"]);
    assert_eq!(caught["posts"][0]["reason"], "rarely_posts");
    assert_eq!(caught["posts"][2]["more"], 29);

    // Refusals name the problem.
    for (query, code) in [
        ("order=newest", "invalid_order"),
        ("order=balanced&cursor=bogus", "invalid_cursor"),
        (
            "order=balanced&cursor=r00000000000000ff.10",
            "cursor_expired",
        ),
        ("order=balanced&before=0000000000000001", "invalid_query"),
        ("order=catchup&since=nope", "invalid_post_id"),
    ] {
        let (s, v) = t.get(&format!("/users/ann/timeline?{query}")).await;
        assert_eq!(
            (s, v["error"]["code"].as_str()),
            (StatusCode::BAD_REQUEST, Some(code)),
            "{query}: {v}"
        );
    }

    // gRPC gives the same order and reasons.
    let (_, mut r) = clients_as(&t, ADMIN_KEY).await;
    let ranked = r
        .get_ranked_timeline(pb::RankedTimelineRequest {
            user: "ann".into(),
            order: "catchup".into(),
            explain: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let got: Vec<&str> = ranked
        .entries
        .iter()
        .map(|e| e.post.as_ref().unwrap().author.as_str())
        .collect();
    assert_eq!(got, ["quiet", "pal", "loud"]);
    assert_eq!(
        (ranked.entries[2].more, ranked.order.as_str()),
        (29, "catchup")
    );
    assert!(ranked
        .entries
        .iter()
        .all(|e| e.score.is_some() && !e.reason.is_empty()));
    let bad = r
        .get_ranked_timeline(pb::RankedTimelineRequest {
            user: "ann".into(),
            order: "sideways".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(bad.code(), tonic::Code::InvalidArgument);
}

/// A user token reads its own ranked timeline only.
#[tokio::test]
async fn a_ranked_timeline_is_its_readers_own() {
    let t = spawn_app().await;
    for u in ["ann", "bo"] {
        t.put_user(u).await;
    }
    let bo = client_with(&token_for("bo"));
    let get = |path: &'static str| bo.get(format!("{}{path}", t.base)).send();
    let resp = get("/users/ann/timeline?order=balanced").await.unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let resp = get("/users/bo/timeline?order=balanced").await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
}

/// A reader raises an account over REST and lowers it over gRPC; the
/// balanced order follows, and bad levels are refused by name.
#[tokio::test]
async fn a_reader_sets_a_priority_per_account() {
    let t = spawn_app().await;
    for u in ["ann", "bo", "cy"] {
        t.put_user(u).await;
    }
    t.follow("ann", "bo").await;
    t.follow("ann", "cy").await;
    t.post("bo", "older").await;
    t.post("cy", "newer").await;
    t.wait_idle().await;
    let top = |page: &Value| page["posts"][0]["author"].as_str().unwrap().to_owned();
    let (_, page) = t.get("/users/ann/timeline?order=balanced").await;
    assert_eq!(top(&page), "cy", "newest first when nothing else differs");

    let set = |level: i64| serde_json::json!({ "priority": level });
    let (s, v) = t
        .call(
            reqwest::Method::PUT,
            "/users/ann/feed-preferences/bo",
            Some(set(2)),
        )
        .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        (v["priority"].as_i64(), v["changed"].as_bool()),
        (Some(2), Some(true))
    );
    let (_, page) = t.get("/users/ann/timeline?order=balanced").await;
    assert_eq!(
        (top(&page).as_str(), page["posts"][0]["reason"].as_str()),
        ("bo", Some("priority"))
    );
    let (_, held) = t.get("/users/ann/feed-preferences").await;
    assert_eq!(
        held["preferences"],
        serde_json::json!([{ "author": "bo", "priority": 2 }])
    );
    for (path, body, status, code) in [
        (
            "/users/ann/feed-preferences/bo",
            set(3),
            400,
            "invalid_priority",
        ),
        (
            "/users/ann/feed-preferences/ann",
            set(1),
            409,
            "cannot_prioritize_self",
        ),
        (
            "/users/ann/feed-preferences/ghost",
            set(1),
            404,
            "user_not_found",
        ),
    ] {
        let (s, v) = t.call(reqwest::Method::PUT, path, Some(body)).await;
        assert_eq!(
            (s.as_u16(), v["error"]["code"].as_str()),
            (status, Some(code)),
            "{path}: {v}"
        );
    }

    // Over gRPC: lowered to -2, listed, then cleared over REST.
    let (mut w, mut r) = clients_as(&t, ADMIN_KEY).await;
    let reply = w
        .set_feed_preference(pb::FeedPreference {
            user: "ann".into(),
            author: "bo".into(),
            priority: -2,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reply.changed);
    let listed = r
        .list_feed_preferences(pb::UserRef { id: "ann".into() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (
            listed.preferences[0].author.as_str(),
            listed.preferences[0].priority
        ),
        ("bo", -2)
    );
    let (_, page) = t.get("/users/ann/timeline?order=balanced").await;
    assert_eq!(top(&page), "cy");
    let (s, v) = t
        .call(
            reqwest::Method::DELETE,
            "/users/ann/feed-preferences/bo",
            None,
        )
        .await;
    assert_eq!(
        (s, v["changed"].as_bool()),
        (StatusCode::OK, Some(true)),
        "{v}"
    );
    let (_, held) = t.get("/users/ann/feed-preferences").await;
    assert_eq!(held["preferences"], serde_json::json!([]));
}

/// "Show less like this" over REST and gRPC: the post leaves the ranked
/// order and its author falls; taken back, it returns; a post the reader
/// may not see is refused as it is for a bookmark.
#[tokio::test]
async fn a_reader_asks_to_see_less_like_a_post() {
    let t = spawn_app().await;
    for u in ["ann", "bo", "cy"] {
        t.put_user(u).await;
    }
    t.follow("ann", "bo").await;
    t.follow("ann", "cy").await;
    let older = t.post("cy", "older").await;
    let first = t.post("bo", "first").await;
    let second = t.post("bo", "second").await;
    t.wait_idle().await;
    let order = |page: &Value| ids(&page["posts"]);
    // cy posts rarely; bo's second entry in the page weighs half.
    let all = [older.clone(), second.clone(), first.clone()];
    let (_, page) = t.get("/users/ann/timeline?order=balanced").await;
    assert_eq!(order(&page), all);

    let path = format!("/users/ann/shown-less/{second}");
    let (s, v) = t.call(reqwest::Method::PUT, &path, None).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(
        (v["shown_less"].as_bool(), v["changed"].as_bool()),
        (Some(true), Some(true))
    );
    let (_, page) = t
        .get("/users/ann/timeline?order=balanced&explain=true")
        .await;
    assert_eq!(order(&page), [older.clone(), first.clone()]);
    assert_eq!(
        page["posts"][1]["score"]["priority"], 0.5,
        "bo lowered a step"
    );
    let (_, latest) = t.get("/users/ann/timeline").await;
    assert_eq!(order(&latest)[0], second, "newest first is not changed");

    let (mut w, _) = clients_as(&t, ADMIN_KEY).await;
    let reply = w
        .show_less(pb::ShowLessRequest {
            user: "ann".into(),
            post_id: second.clone(),
            on: false,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(reply.changed);
    let (_, page) = t.get("/users/ann/timeline?order=balanced").await;
    assert_eq!(order(&page), all);
    let (s, v) = t
        .call(
            reqwest::Method::PUT,
            "/users/ann/shown-less/00000000000000ff",
            None,
        )
        .await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::NOT_FOUND, Some("post_not_found"))
    );
}

/// A list's timeline in a ranked order over REST and gRPC: only the list's
/// accounts, paged by its cursor; catch-up needs `since`.
#[tokio::test]
async fn a_list_is_ranked_as_home_is() {
    let t = spawn_app().await;
    for u in ["ann", "loud", "pal", "other"] {
        t.put_user(u).await;
    }
    for u in ["loud", "pal"] {
        let (s, v) = t
            .call(
                reqwest::Method::PUT,
                &format!("/users/ann/following/{u}"),
                Some(serde_json::json!({ "lists": ["close"] })),
            )
            .await;
        assert!(s.is_success(), "{v}");
    }
    t.follow("ann", "other").await;
    let first = t.post("pal", "hello").await;
    for i in 0..12 {
        t.post("loud", &format!("again {i}")).await;
        t.post("other", &format!("elsewhere {i}")).await;
    }
    t.wait_idle().await;

    let path = "/users/ann/lists/close/timeline";
    let (s, page) = t.get(&format!("{path}?order=balanced&limit=5")).await;
    assert_eq!(s, StatusCode::OK, "{page}");
    assert_eq!(page["order"], "balanced");
    let mut seen = authors(&page);
    assert!(seen.contains(&"pal".to_owned()), "{seen:?}");
    let mut cursor = page["next_cursor"].as_str().map(str::to_owned);
    while let Some(c) = cursor {
        let (s, next) = t
            .get(&format!("{path}?order=balanced&limit=5&cursor={c}"))
            .await;
        assert_eq!(s, StatusCode::OK, "{next}");
        seen.extend(authors(&next));
        cursor = next["next_cursor"].as_str().map(str::to_owned);
    }
    assert_eq!(seen.len(), 13);
    assert!(seen.iter().all(|a| a == "loud" || a == "pal"), "{seen:?}");
    // Latest is unchanged: the newest-first page, no `order` in it.
    let (_, latest) = t.get(&format!("{path}?order=latest&limit=5")).await;
    let (_, plain) = t.get(&format!("{path}?limit=5")).await;
    assert_eq!(latest, plain);
    let (s, v) = t.get(&format!("{path}?order=catchup")).await;
    assert_eq!(
        (s, v["error"]["code"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_query")),
        "{v}"
    );

    let (_, mut r) = clients_as(&t, ADMIN_KEY).await;
    let caught = r
        .get_ranked_timeline(pb::RankedTimelineRequest {
            user: "ann".into(),
            list: "close".into(),
            order: "catchup".into(),
            since: first.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let got: Vec<&str> = caught
        .entries
        .iter()
        .map(|e| e.post.as_ref().unwrap().author.as_str())
        .collect();
    assert_eq!(got, ["loud"], "only what came after pal's post");
    assert_eq!(caught.entries[0].more, 11);
    let missing = r
        .get_ranked_timeline(pb::RankedTimelineRequest {
            user: "ann".into(),
            list: "nope".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(missing.code(), tonic::Code::NotFound);
}

/// Two timeline APIs over one MongoDB and Kafka, as behind a load balancer
/// that does not pin a reader to one: a ranked order's later pages are
/// served by whichever API is asked, continuing the order the first page
/// ranked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ranked_order_pages_on_any_timeline_api() {
    let Some(servers) = servers::Servers::from_env("ranked_on_any_api") else {
        return;
    };
    let split = split_on(&servers, "ranked_any", 1).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let api = [socialite_runtime::Service::TimelineApi];
    let other = socialite_runtime::start(&api, &split.config, listener, None)
        .await
        .unwrap();
    let other = format!("http://{}", other.rest_addr);
    let http = client_with(ADMIN_KEY);
    let send = |method: reqwest::Method, url: String, body: Option<Value>| {
        let http = http.clone();
        async move {
            let mut r = http.request(method, url);
            if let Some(body) = body {
                r = r.json(&body);
            }
            let r = r.send().await.unwrap();
            let status = r.status();
            (status, r.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    for u in ["ann", "a0", "a1", "a2"] {
        let (s, v) = send(reqwest::Method::PUT, format!("{}/users/{u}", split.w), None).await;
        assert!(s.is_success(), "{v}");
    }
    for u in ["a0", "a1", "a2"] {
        let url = format!("{}/users/ann/following/{u}", split.w);
        let (s, v) = send(reqwest::Method::PUT, url, None).await;
        assert!(s.is_success(), "{v}");
    }
    for i in 0..30 {
        let url = format!("{}/users/a{}/posts", split.w, i % 3);
        let body = serde_json::json!({ "message": format!("post {i}") });
        let (s, v) = send_as_client(&http, reqwest::Method::POST, &url, Some(&body)).await;
        assert_eq!(s, StatusCode::CREATED, "{v}");
    }
    let whole = format!("{}/users/ann/timeline?order=balanced&limit=100", split.r);
    eventually("every post delivered", || async {
        let (_, v) = send(reqwest::Method::GET, whole.clone(), None).await;
        v["posts"].as_array().is_some_and(|p| p.len() == 30)
    })
    .await;
    let ids = |v: &Value| -> Vec<String> {
        v["posts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let page = |base: &str, cursor: Option<&str>| {
        let mut url = format!("{base}/users/ann/timeline?order=balanced&limit=10");
        if let Some(c) = cursor {
            url.push_str(&format!("&cursor={c}"));
        }
        send(reqwest::Method::GET, url, None)
    };
    // One page from each API in turn.
    let (s, first) = page(&split.r, None).await;
    assert_eq!(s, StatusCode::OK, "{first}");
    assert_eq!(first["fallback"], false, "ranked, not newest first");
    let ranked = first["next_cursor"]
        .as_str()
        .is_some_and(|c| c.starts_with('r'));
    assert!(ranked, "a snapshot's cursor: {first}");
    let mut seen = ids(&first);
    let mut cursor = first["next_cursor"].as_str().map(str::to_owned);
    let mut bases = [other.as_str(), split.r.as_str()].into_iter().cycle();
    while let Some(c) = cursor {
        let (s, next) = page(bases.next().unwrap(), Some(&c)).await;
        assert_eq!(s, StatusCode::OK, "{next}");
        seen.extend(ids(&next));
        cursor = next["next_cursor"].as_str().map(str::to_owned);
    }
    let once: std::collections::HashSet<&String> = seen.iter().collect();
    assert_eq!((seen.len(), once.len()), (30, 30), "{seen:?}");
}

/// A balanced first page asked again after posts arrived reads only what
/// arrived, and ranks it among what it ranked before: the order a ranking
/// afresh gives, but for the counts, which are as of the earlier ranking
/// (read again within 30 s, off the reader's path). A write that changes
/// pages (here a mute) ranks in full again.
#[tokio::test]
async fn a_balanced_first_page_ranks_what_arrived_since_among_the_rest() {
    use socialite_core::reads::ranked::{Order, RankedPage, Served};
    use socialite_core::reads::Reads;
    use socialite_domain::accounts::access::Caller;

    let t = spawn_app().await;
    let authors = ["a0", "a1", "a2", "a3"];
    t.put_user("ann").await;
    for a in authors {
        t.put_user(a).await;
        t.follow("ann", a).await;
    }
    for i in 0..24 {
        t.post(authors[i % 4], &format!("before {i}")).await;
    }
    // A read makes ann an active reader, with a stored timeline.
    t.timeline("ann", 50).await;
    t.wait_idle().await;
    let reads = t.app.as_ref().unwrap().reads.clone();
    let page = |reads: Reads| async move {
        let page = reads.ranked_timeline(
            &Caller::Trusted,
            "ann",
            None,
            Order::Balanced,
            Some(50),
            None,
            None,
        );
        page.await.unwrap()
    };
    let order = |p: &RankedPage| -> Vec<(String, &'static str)> {
        p.items
            .iter()
            .map(|i| (i.item.post.id.to_string(), i.reason.as_str()))
            .collect()
    };
    let first = page((*reads).clone()).await;
    assert_eq!(
        (first.items.len(), first.served),
        (24, Some(Served::Ranked))
    );
    let same = page((*reads).clone()).await;
    assert_eq!(same.served, Some(Served::Kept), "nothing changed");
    assert_eq!(order(&same), order(&first));

    // New posts: ranked among the rest, as a ranking afresh ranks them.
    let mut new = Vec::new();
    for i in 0..6 {
        new.push(t.post(authors[i % 3], &format!("since {i}")).await);
    }
    t.wait_idle().await;
    let again = page((*reads).clone()).await;
    assert_eq!(again.served, Some(Served::Extended));
    let afresh = page(reads.ranking_afresh()).await;
    assert_eq!(afresh.served, Some(Served::Ranked));
    assert_eq!(order(&again), order(&afresh));
    assert_eq!(again.items.len(), 30);
    let shown: Vec<String> = order(&again).into_iter().map(|(p, _)| p).collect();
    assert!(
        new.iter().all(|p| shown.contains(p)),
        "{new:?} in {shown:?}"
    );

    // A like does not change pages: extended still. A mute does: ranked
    // in full, without the muted account, as afresh.
    let (s, v) = t
        .call(
            reqwest::Method::PUT,
            &format!("/users/a3/likes/{}", new[0]),
            None,
        )
        .await;
    assert!(s.is_success(), "{v}");
    t.post("a3", "one more").await;
    t.wait_idle().await;
    let liked = page((*reads).clone()).await;
    assert_eq!(
        (liked.served, liked.items.len()),
        (Some(Served::Extended), 31)
    );
    // Others' follows and new accounts concern their own orders only.
    t.put_user("zed").await;
    t.follow("zed", "a1").await;
    t.post("a3", "and another").await;
    t.wait_idle().await;
    let others = page((*reads).clone()).await;
    assert_eq!(
        (others.served, others.items.len()),
        (Some(Served::Extended), 32)
    );
    // A block of the reader concerns them.
    let (s, v) = t
        .call(reqwest::Method::PUT, "/users/zed/blocks/ann", None)
        .await;
    assert!(s.is_success(), "{v}");
    assert_eq!(page((*reads).clone()).await.served, Some(Served::Ranked));
    let (s, v) = t
        .call(reqwest::Method::PUT, "/users/ann/mutes/a2", None)
        .await;
    assert!(s.is_success(), "{v}");
    let muted = page((*reads).clone()).await;
    assert_eq!(muted.served, Some(Served::Ranked));
    assert!(muted
        .items
        .iter()
        .all(|i| i.item.post.author.as_str() != "a2"));
    assert_eq!(order(&muted), order(&page(reads.ranking_afresh()).await));
}
