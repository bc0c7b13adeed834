//! Markers: forward only unless forced, one per user and timeline, on the
//! log, replayed to what the event says, exported, gone with their user.

use super::*;
use socialite_domain::feed::markers::{Marker, MarkerTimeline};
use socialite_domain::transfer::record::Record;

fn at(post: u64) -> Marker {
    Marker {
        timeline: MarkerTimeline::Home,
        last_read: PostId(post),
        at_ms: 1_700_000_000_000 + post,
    }
}

pub async fn markers(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "markers").await else {
        return;
    };
    let (b, c) = (&t.backends, &t.backends.content);
    for name in ["ann", "bo"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    drain_outbox(b).await;
    assert!(c.markers(&u("ann")).await.unwrap().is_empty());

    // Forward, never back unless forced; the same place changes nothing.
    assert_eq!(
        c.set_marker(&u("ann"), at(20), false).await.unwrap(),
        (at(20), true)
    );
    assert_eq!(
        c.set_marker(&u("ann"), at(10), false).await.unwrap(),
        (at(20), false)
    );
    assert_eq!(
        c.set_marker(&u("ann"), at(30), false).await.unwrap(),
        (at(30), true)
    );
    assert_eq!(
        c.set_marker(&u("ann"), at(30), true).await.unwrap(),
        (at(30), false)
    );
    assert_eq!(
        c.set_marker(&u("ann"), at(15), true).await.unwrap(),
        (at(15), true)
    );
    assert_eq!(c.markers(&u("ann")).await.unwrap(), [at(15)]);
    assert!(
        c.markers(&u("bo")).await.unwrap().is_empty(),
        "each user's own"
    );
    let nobody = c.set_marker(&u("zed"), at(1), false).await.unwrap_err();
    assert_eq!(nobody.code(), "user_not_found");

    // Each move is on the log; a replay sets what the event says.
    let events = drain_outbox(b).await;
    let set: Vec<u64> = events
        .iter()
        .filter_map(|e| match e {
            Event::MarkerSet { marker, .. } => Some(marker.last_read.0),
            _ => None,
        })
        .collect();
    assert_eq!(set, [20, 30, 15]);
    let replayed = Event::MarkerSet {
        user: u("bo"),
        marker: at(40),
    };
    assert!(b.transfer.replay(&replayed).await.unwrap());
    assert!(!b.transfer.replay(&replayed).await.unwrap(), "once");
    let back = Event::MarkerSet {
        user: u("bo"),
        marker: at(35),
    };
    assert!(b.transfer.replay(&back).await.unwrap(), "as the source did");
    assert_eq!(c.markers(&u("bo")).await.unwrap(), [at(35)]);
    let of_nobody = Event::MarkerSet {
        user: u("zed"),
        marker: at(1),
    };
    assert!(!b.transfer.replay(&of_nobody).await.unwrap());

    // Exported with their user; gone with them.
    let mut view = b.transfer.export_view().await.unwrap();
    let mut exported = Vec::new();
    loop {
        let page = view.next(100).await.unwrap();
        if page.is_empty() {
            break;
        }
        exported.extend(page);
    }
    let mut kept: Vec<(String, u64)> = exported
        .iter()
        .filter_map(|r| match r {
            Record::Marker { user, marker } => Some((user.to_string(), marker.last_read.0)),
            _ => None,
        })
        .collect();
    kept.sort();
    assert_eq!(kept, [("ann".to_owned(), 15), ("bo".to_owned(), 35)]);
    assert!(c.delete_user(&u("ann")).await.unwrap());
    c.put_user(&u("ann"), None).await.unwrap();
    assert!(
        c.markers(&u("ann")).await.unwrap().is_empty(),
        "a new account under the id starts with none"
    );
}
