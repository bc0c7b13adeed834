//! A smoke run of the load and benchmark tool: a small network, a short run,
//! and a report that holds what the README promises.

use clap::Parser;
use socialite_bench::load::{run_load, LoadArgs};
use socialite_bench::{run_bench, BenchArgs};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    bench: BenchArgs,
}

#[derive(Parser)]
struct LoadCli {
    #[command(flatten)]
    load: LoadArgs,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_imports_an_edge_list_and_refuses_a_bad_one() {
    let dir = tempfile::tempdir().unwrap();
    let edges = dir.path().join("edges.txt");
    std::fs::write(
        &edges,
        "# follower followee\nann bob\nbob ann\ncid ann # a comment\nann bob\n\nann ann\n",
    )
    .unwrap();
    let data = dir.path().join("data");
    let args = LoadCli::parse_from([
        "load",
        "--data-dir",
        data.to_str().unwrap(),
        "--edges",
        edges.to_str().unwrap(),
    ])
    .load;
    let loaded = run_load(&args).await.unwrap();
    assert_eq!(
        (loaded.users, loaded.edges),
        (3, 3),
        "duplicates and self-follows are skipped"
    );
    std::fs::write(&edges, "ann bob\nann\n").unwrap();
    let err = run_load(&args).await.unwrap_err();
    assert!(
        err.contains("edges.txt:2") && err.contains("expected"),
        "{err}"
    );
    std::fs::write(&edges, "ann b@d\n").unwrap();
    assert!(run_load(&args).await.unwrap_err().contains("edges.txt:1"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_turns_follow_options_on_for_a_share_of_the_follows() {
    use socialite_core::ports::{Edges, Mutes};
    use socialite_domain::graph::relations::{FollowOption, Relation};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let args = LoadCli::parse_from([
        "load",
        "--data-dir",
        data.to_str().unwrap(),
        "--users",
        "200",
        "--follows",
        "10",
        "--follow-options",
        "hide_reposts,notify",
        "--options-percent",
        "50",
    ])
    .load;
    let loaded = run_load(&args).await.unwrap();
    let store = socialite_embedded::EmbeddedStore::open(&data.join("content.redb")).unwrap();
    let (mut hidden, mut told) = (0, 0);
    for i in 0..200 {
        let u = socialite_core::ids::UserId::parse(&format!("u{i}")).unwrap();
        let r = store.relations_of(&u).await.unwrap();
        hidden += r.reposts_off.len();
        for t in &r.reposts_off {
            assert!(store.is_following(&u, t).await.unwrap(), "on a follow");
        }
        let notify = Relation::Option(FollowOption::Notify);
        told += store.all_relations(&u, notify).await.unwrap().len();
    }
    let share = hidden as f64 / loaded.edges as f64;
    assert!((0.4..0.6).contains(&share), "{hidden} of {}", loaded.edges);
    assert_eq!(told, hidden, "both options on the same follows");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_gives_every_second_user_keyword_filters() {
    use socialite_core::ports::Filters;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let args = LoadCli::parse_from([
        "load",
        "--data-dir",
        data.to_str().unwrap(),
        "--users",
        "50",
        "--follows",
        "5",
        "--filters",
        "100",
    ])
    .load;
    run_load(&args).await.unwrap();
    let store = socialite_embedded::EmbeddedStore::open(&data.join("content.redb")).unwrap();
    for i in 0..50 {
        let u = socialite_core::ids::UserId::parse(&format!("u{i}")).unwrap();
        let set = store.filters(&u).await.unwrap();
        match i % 2 {
            0 => {
                let set = set.unwrap();
                assert_eq!(set.filters.len(), 100);
                assert!(set.filters.iter().all(|f| f.phrases.len() == 10));
            }
            _ => assert!(set.is_none(), "u{i}"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bench_runs_in_process_and_reports() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let report = dir.path().join("report");
    let cli = Cli::parse_from([
        "bench",
        "--data-dir",
        data.to_str().unwrap(),
        "--users",
        "300",
        "--follows",
        "10",
        "--duration",
        "2",
        "--concurrency",
        "4",
        "--mix",
        "post=25,read=35,scroll=10,follow=5,unfollow=5,list=10,group=5,mention=5",
        "--probe-interval-ms",
        "100",
        "--report",
        report.to_str().unwrap(),
    ]);
    run_bench(cli.bench).await.unwrap();
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(report.with_extension("json")).unwrap())
            .unwrap();
    for kind in [
        "post", "read", "scroll", "follow", "unfollow", "list", "group", "mention",
    ] {
        let op = &json["ops"][kind];
        assert!(op["count"].as_u64().unwrap() > 0, "no {kind} ran: {json}");
        assert_eq!(op["errors"], 0, "{kind} failed: {json}");
        assert!(op["p99_ms"].as_f64().unwrap() >= op["p50_ms"].as_f64().unwrap());
    }
    assert!(
        json["fanout"]["deliveries_per_s"].as_f64().unwrap() > 0.0,
        "{json}"
    );
    assert!(
        json["freshness"]["top_author"]["samples"].as_u64().unwrap() > 0,
        "{json}"
    );
    assert!(
        json["stored_timelines"]["entries"].as_u64().unwrap() > 0,
        "{json}"
    );
    assert!(json["memory"]["peak_resident_bytes"].as_f64().unwrap() > 0.0);
    let text = std::fs::read_to_string(report.with_extension("txt")).unwrap();
    assert!(
        text.contains("deliveries/s") && text.contains("post -> visible"),
        "{text}"
    );
    let svg = std::fs::read_to_string(report.with_extension("svg")).unwrap();
    assert!(
        svg.starts_with("<svg") && svg.contains("<polyline"),
        "{svg}"
    );
}
