//! Collections: posts a user keeps, each once, newest kept first, paged
//! without gaps or repeats, each collection apart; a kept post must be
//! stored; every change on the log, replayed to what the event says; a
//! post's deletion takes it out of every collection, a user's deletion
//! takes theirs.

use super::*;
use socialite_core::model::collection::{Collection, Kept};
use socialite_core::ports::ContentStore;
use socialite_domain::collections::KeepChange;

const SAVED: Collection = Collection::named("bookmarks");
const LATER: Collection = Collection::named("read_later");

fn change(c: &Collection, user: &str, post: u64, keep: bool) -> KeepChange {
    KeepChange {
        collection: c.clone(),
        user: u(user),
        post: PostId(post),
        keep,
    }
}

async fn ids(c: &dyn ContentStore, coll: &Collection, user: &str) -> Vec<u64> {
    let page = c.kept(coll, &u(user), None, 100).await.unwrap();
    page.iter().map(|k| k.post.0).collect()
}

pub async fn collections(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "collections").await else {
        return;
    };
    let (b, c) = (&t.backends, &t.backends.content);
    for name in ["ann", "bo"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    for id in [10, 20, 30] {
        c.create_post(post(id, "bo", "x")).await.unwrap();
    }
    drain_outbox(b).await;

    // Each post once; newest kept first; each collection and user apart.
    for id in [10, 20, 30] {
        assert!(c
            .change_kept(&change(&SAVED, "ann", id, true))
            .await
            .unwrap());
    }
    assert!(
        !c.change_kept(&change(&SAVED, "ann", 20, true))
            .await
            .unwrap(),
        "once"
    );
    assert!(c
        .change_kept(&change(&LATER, "ann", 10, true))
        .await
        .unwrap());
    assert_eq!(ids(&**c, &SAVED, "ann").await, [30, 20, 10]);
    assert_eq!(ids(&**c, &LATER, "ann").await, [10]);
    assert!(ids(&**c, &SAVED, "bo").await.is_empty());

    // Pages follow on from the last entry, without gaps or repeats.
    let first = c.kept(&SAVED, &u("ann"), None, 2).await.unwrap();
    assert_eq!(first.iter().map(|k| k.post.0).collect::<Vec<_>>(), [30, 20]);
    let last: &Kept = &first[1];
    let rest = c
        .kept(&SAVED, &u("ann"), Some((last.at_ms, last.post)), 2)
        .await;
    assert_eq!(
        rest.unwrap().iter().map(|k| k.post.0).collect::<Vec<_>>(),
        [10]
    );

    // Taken out once; a post that is not stored, or a user who is not
    // there, is refused.
    assert!(c
        .change_kept(&change(&SAVED, "ann", 20, false))
        .await
        .unwrap());
    assert!(!c
        .change_kept(&change(&SAVED, "ann", 20, false))
        .await
        .unwrap());
    assert_eq!(ids(&**c, &SAVED, "ann").await, [30, 10]);
    let absent = c.change_kept(&change(&SAVED, "ann", 99, true)).await;
    assert_eq!(absent.unwrap_err().code(), "post_not_found");
    let nobody = c.change_kept(&change(&SAVED, "zed", 10, true)).await;
    assert_eq!(nobody.unwrap_err().code(), "user_not_found");

    // Every change is on the log; a replay makes what the event says.
    let events = drain_outbox(b).await;
    let changes: Vec<(String, u64, bool)> = events
        .iter()
        .filter_map(|e| match e {
            Event::KeptChanged {
                collection,
                post,
                kept,
                ..
            } => Some((collection.to_string(), post.0, *kept)),
            _ => None,
        })
        .collect();
    let saved = |p, k| ("bookmarks".to_owned(), p, k);
    let expected = [saved(10, true), saved(20, true), saved(30, true)];
    assert_eq!(changes[..3], expected);
    assert_eq!(
        changes[3..],
        [("read_later".to_owned(), 10, true), saved(20, false)]
    );
    let replayed = Event::KeptChanged {
        collection: SAVED.clone(),
        user: u("bo"),
        post: PostId(20),
        at_ms: 1_700_000_000_000,
        kept: true,
    };
    assert!(b.transfer.replay(&replayed).await.unwrap());
    assert!(!b.transfer.replay(&replayed).await.unwrap(), "once");
    let held = c.kept(&SAVED, &u("bo"), None, 10).await.unwrap();
    let at = Kept {
        post: PostId(20),
        at_ms: 1_700_000_000_000,
    };
    assert_eq!(held, [at], "kept when the event says");
    let of_absent = Event::KeptChanged {
        collection: SAVED.clone(),
        user: u("bo"),
        post: PostId(99),
        at_ms: 1_700_000_000_000,
        kept: true,
    };
    assert!(!b.transfer.replay(&of_absent).await.unwrap());

    // A post's deletion takes it out of every collection; a user's
    // deletion takes theirs.
    c.delete_post(PostId(10)).await.unwrap();
    assert_eq!(ids(&**c, &SAVED, "ann").await, [30]);
    assert!(ids(&**c, &LATER, "ann").await.is_empty());
    assert!(c.delete_user(&u("ann")).await.unwrap());
    c.put_user(&u("ann"), None).await.unwrap();
    assert!(
        ids(&**c, &SAVED, "ann").await.is_empty(),
        "a new account under the id starts with none"
    );
    assert_eq!(ids(&**c, &SAVED, "bo").await, [20], "others' stay");
}
