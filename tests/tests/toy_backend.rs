//! The toy third backend (`toy/`), every port in memory, built only from
//! the primitives core's planners need and core's rules of what a timeline
//! holds, runs the whole conformance suite, the differential test and the
//! export round trip: the rules live in one place.

mod toy;

socialite_testkit::conformance_suite!(toy_conformance, crate::toy::open);
socialite_testkit::differential_suite!(
    toy_matches_the_oracle_on_random_histories,
    crate::toy::open,
    1..=12
);
socialite_testkit::round_trip_suite!(
    toy_histories_export_import_and_export_the_same,
    crate::toy::open,
    1..=10
);

use socialite_core::event::Event;
use socialite_core::ids::UserId;
use std::time::Duration;

fn followed(at_ms: u64) -> Event {
    Event::Followed {
        follower: UserId::parse("f").unwrap(),
        followee: UserId::parse("a").unwrap(),
        lists: vec![],
        at_ms,
    }
}

/// A poll waiting for events, or lingering for more to fill its batch,
/// returns as soon as they are appended, not when its hour runs out: the
/// toy log wakes its consumers. (The shared suite polls with short waits,
/// so a log that never woke them would pass it, only slower.) One thread,
/// so each `yield_now` lets the poll run until it waits.
#[tokio::test]
async fn a_waiting_poll_wakes_when_events_arrive() {
    let opened = toy::open(Default::default(), "wakes").await.unwrap();
    let log = opened.backends.log.clone();
    let mut consumer = log.consumer("wakes").await.unwrap();
    let hour = Duration::from_secs(3600);
    let polls = tokio::spawn(async move {
        let first = consumer.poll(10, hour, Duration::ZERO).await.unwrap();
        let batch = consumer.poll(3, hour, hour).await.unwrap();
        (first, batch)
    });
    tokio::task::yield_now().await;
    assert!(!polls.is_finished(), "the log is empty: the poll waits");
    for at in 1..=4 {
        log.append(&[followed(at)]).await.unwrap();
        tokio::task::yield_now().await;
    }
    let (first, batch) = tokio::time::timeout(Duration::from_secs(20), polls)
        .await
        .expect("the polls woke when events were appended")
        .unwrap();
    assert_eq!(first, vec![followed(1)]);
    assert_eq!(batch, vec![followed(2), followed(3), followed(4)]);
}
