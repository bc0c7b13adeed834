//! Exclusive lists: marked only on a list with members, kept while it
//! empties, idempotent; home leaves out the accounts filed under one (on
//! every feed model, entries stored already included) while the list's
//! own timeline keeps them; refiled in or out, an account follows; an
//! export carries the marks and a deletion takes them.

use super::export::exported;
use super::*;
use socialite_core::reads::Reads;

pub async fn exclusive_lists(open: Opener) {
    for t in each_model(open, "exclusive_lists")
        .await
        .unwrap_or_default()
    {
        exclusive_lists_on(&t.backends).await;
    }
}

async fn home(reads: &Reads) -> Vec<u64> {
    home_ids(reads, "ann").await
}

async fn news(reads: &Reads) -> Vec<u64> {
    let read = reads.list_timeline(&Caller::Trusted, "ann", "news", Some(50), None);
    read.await
        .unwrap()
        .0
        .items
        .iter()
        .map(|i| i.post.id.0)
        .collect()
}

async fn exclusive_lists_on(b: &Backends) {
    let (c, g) = (&b.content, &b.graph);
    let index = FollowerIndex::default();
    let reads = Reads::new(b.stores());
    for name in ["ann", "rob", "cat"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    let news_list = l("news");
    let follow = |target: &str, lists: &[&str]| {
        let lists = lists.iter().map(|n| l(n)).collect();
        EdgeChange::new(u("ann"), u(target), EdgeOp::Follow)
            .unwrap()
            .with_lists(lists)
    };
    g.change_edge(&follow("rob", &["news"])).await.unwrap();
    g.change_edge(&follow("cat", &[])).await.unwrap();
    home(&reads).await; // ann's timeline exists before the posts arrive
    c.create_post(post(10, "rob", "r")).await.unwrap();
    c.create_post(post(20, "cat", "c")).await.unwrap();
    fan_out(b, &index).await;
    assert_eq!(home(&reads).await, [20, 10]);

    let none = g.set_list_exclusive(&u("ann"), &l("none"), true).await;
    assert_eq!(none.unwrap_err().code(), "list_not_found");
    assert!(g
        .set_list_exclusive(&u("ann"), &news_list, true)
        .await
        .unwrap());
    assert!(!g
        .set_list_exclusive(&u("ann"), &news_list, true)
        .await
        .unwrap());
    fan_out(b, &index).await;
    let marked = g.exclusive_lists(&u("ann")).await.unwrap();
    assert_eq!(marked, std::slice::from_ref(&news_list));
    assert_eq!(home(&reads).await, [20], "rob's stored entry is left out");
    assert_eq!(news(&reads).await, [10], "the list keeps him");
    assert!(exported(b).await.contains(&"exclusive ann news".to_owned()));

    // Refiled into the list, cat leaves home too; rob refiled out comes back.
    g.change_edge(&follow("cat", &["news"])).await.unwrap();
    g.change_edge(&follow("rob", &[])).await.unwrap();
    fan_out(b, &index).await;
    assert_eq!(home(&reads).await, [10]);
    // Emptied, the list keeps its mark; unmarked, cat is back.
    g.change_edge(&follow("cat", &[])).await.unwrap();
    fan_out(b, &index).await;
    let marked = g.exclusive_lists(&u("ann")).await.unwrap();
    assert_eq!(marked, std::slice::from_ref(&news_list));
    assert!(g
        .set_list_exclusive(&u("ann"), &news_list, false)
        .await
        .unwrap());
    assert_eq!(home(&reads).await, [20, 10]);
}
