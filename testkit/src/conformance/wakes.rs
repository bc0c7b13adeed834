//! The relay is woken by every write that queued events, whichever write it
//! was, once it committed, and by none that queued nothing: the effect is
//! the backend's one reaction to what a transaction applied, not a line in
//! each write.

use super::*;
use socialite_domain::feed::markers::{Marker, MarkerTimeline};
use socialite_domain::interactions::likes::LikeChange;
use tokio::sync::Notify;

/// Whether the relay was woken since it last looked (a `Notify` keeps one
/// wake-up for a waiter to come). Polls once: no timer is waited on.
async fn woken(relay: &Notify) -> bool {
    tokio::time::timeout(Duration::ZERO, relay.notified())
        .await
        .is_ok()
}

pub async fn writes_wake_the_relay(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "wakes").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    let relay = b.outbox.notifier();
    for name in ["ann", "bo"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    assert!(woken(&relay).await, "a new user");
    assert!(!woken(&relay).await, "one wake-up is kept, not counted");

    let profile = json!({ "name": "Ann" }).as_object().cloned();
    c.put_user(&u("ann"), profile.clone()).await.unwrap();
    assert!(woken(&relay).await, "a profile");
    c.put_user(&u("ann"), profile).await.unwrap();
    assert!(!woken(&relay).await, "a profile unchanged queues nothing");

    g.change_edge(&edge("bo", "ann", EdgeOp::Follow))
        .await
        .unwrap();
    assert!(woken(&relay).await, "a follow");
    c.create_post(post(10, "ann", "x")).await.unwrap();
    assert!(woken(&relay).await, "a post");

    let like = LikeChange {
        user: u("bo"),
        post: PostId(10),
        like: true,
    };
    assert!(c.change_like(&like).await.unwrap());
    assert!(woken(&relay).await, "a like");
    assert!(!c.change_like(&like).await.unwrap());
    assert!(!woken(&relay).await, "a like made already queues nothing");

    let marker = Marker {
        timeline: MarkerTimeline::Home,
        last_read: PostId(10),
        at_ms: 1_700_000_000_010,
    };
    c.set_marker(&u("bo"), marker, false).await.unwrap();
    assert!(woken(&relay).await, "a marker");
    assert!(c.delete_post(PostId(10)).await.unwrap().is_some());
    assert!(woken(&relay).await, "a deletion");
    let refused = c.create_post(post(11, "nobody", "x")).await;
    assert_eq!(refused.unwrap_err().kind(), ErrorKind::NotFound);
    assert!(!woken(&relay).await, "a refused write queues nothing");
}
