//! The log followed from a cursor (the firehose): every public act once,
//! each partition in order, nothing private, resumable from any act's
//! cursor, filtered, and a cursor of another log refused.

use super::*;
use socialite_core::firehose::filter::Filter;
use socialite_core::firehose::{Delivered, PublicAct, Reader};
use socialite_core::model::standing::Standing;

/// Reads until `want` acts came (checkpoints are left out).
async fn read(reader: &mut Reader, want: usize) -> Vec<Delivered> {
    let mut got = Vec::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while got.len() < want && tokio::time::Instant::now() < deadline {
        let batch = reader.next(64, Duration::from_millis(200)).await.unwrap();
        got.extend(batch.into_iter().filter(|d| d.act.is_some()));
    }
    got
}

fn acts(delivered: &[Delivered]) -> Vec<PublicAct> {
    delivered.iter().filter_map(|d| d.act.clone()).collect()
}

/// The acts as a multiset: a log of several partitions keeps each
/// partition's order only, and an act's partition is its event's key, not
/// always its actor.
fn unordered(acts: &[PublicAct]) -> Vec<String> {
    let mut v: Vec<String> = acts.iter().map(|a| format!("{a:?}")).collect();
    v.sort();
    v
}

fn history() -> Vec<Event> {
    let standing = |suspended| Standing {
        tokens_after_ms: 5,
        suspended,
    };
    let mut events = Vec::new();
    for i in 0..12u64 {
        events.push(posted(["x", "y", "z"][(i % 3) as usize], 100 + i));
    }
    events.extend([
        Event::Liked {
            user: u("y"),
            post: PostId(100),
            author: u("x"),
            at_ms: 7,
        },
        Event::Muted {
            user: u("y"),
            target: u("x"),
            edge: None,
            until_ms: None,
        },
        Event::Followed {
            follower: u("z"),
            followee: u("x"),
            lists: vec![ListName::parse("close").unwrap()],
            at_ms: 9,
        },
        Event::Blocked {
            user: u("x"),
            target: u("y"),
        },
        // A revocation of tokens (private), then a suspension (public).
        Event::StandingSet {
            user: u("y"),
            standing: standing(false),
            was_suspended: false,
        },
        Event::StandingSet {
            user: u("y"),
            standing: standing(true),
            was_suspended: false,
        },
        timeline_dropped(&u("z"), vec![]),
    ]);
    events
}

pub async fn firehose(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "firehose").await else {
        return;
    };
    let log = t.backends.log.as_ref();
    let all = || Filter::new([], []).unwrap();
    // Opened without a cursor: from the log's end, so nothing older shows.
    log.append(&[posted("x", 50)]).await.unwrap();
    eventually("the older post to be on the log", || async {
        log.extent()
            .await
            .unwrap()
            .iter()
            .map(|e| e.next)
            .sum::<u64>()
            > 0
    })
    .await;
    let mut reader = Reader::open(&Caller::Trusted, log, None, all())
        .await
        .unwrap();
    let mut liked = Reader::open(
        &Caller::Trusted,
        log,
        None,
        Filter::new(["like", "account"], []).unwrap(),
    )
    .await
    .unwrap();
    let mut of_z = Reader::open(&Caller::Trusted, log, None, Filter::new([], ["z"]).unwrap())
        .await
        .unwrap();
    let history = history();
    log.append(&history[..8]).await.unwrap();
    log.append(&history[8..]).await.unwrap();
    let expected: Vec<PublicAct> = history.iter().filter_map(PublicAct::of).collect();
    assert_eq!(expected.len(), history.len() - 3, "three acts are private");

    let got = read(&mut reader, expected.len()).await;
    assert_eq!(
        unordered(&acts(&got)),
        unordered(&expected),
        "every public act once"
    );
    let extra = reader.next(64, Duration::from_millis(300)).await.unwrap();
    assert!(
        extra.iter().all(|d| d.act.is_none()),
        "nothing more: {extra:?}"
    );

    // Resumed from any act's cursor: exactly the acts after it.
    for k in [0, 4, got.len() - 1] {
        let mut resumed = Reader::open(&Caller::Trusted, log, Some(&got[k].cursor), all())
            .await
            .unwrap();
        let rest = read(&mut resumed, got.len() - k - 1).await;
        assert_eq!(
            unordered(&acts(&rest)),
            unordered(&acts(&got[k + 1..])),
            "resumed after act {k}"
        );
        let extra = resumed.next(64, Duration::from_millis(200)).await.unwrap();
        assert!(
            extra.iter().all(|d| d.act.is_none()),
            "after act {k}: {extra:?}"
        );
    }

    // Filters by kind and by actor.
    let likes = acts(&read(&mut liked, 3).await);
    let kinds: Vec<&str> = likes.iter().map(|a| a.kind().as_str()).collect();
    assert_eq!(
        kinds.iter().filter(|k| **k == "like").count(),
        1,
        "{kinds:?}"
    );
    assert_eq!(
        kinds.iter().filter(|k| **k == "account").count(),
        2,
        "{kinds:?}"
    );
    let want_z: Vec<PublicAct> = expected
        .iter()
        .filter(|a| a.actor() == &u("z"))
        .cloned()
        .collect();
    assert_eq!(
        unordered(&acts(&read(&mut of_z, want_z.len()).await)),
        unordered(&want_z)
    );

    // A cursor this log never gave.
    for bad in ["nope", "1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17.18.19.20.21.22.23.24.25.26.27.28.29.30.31.32.33.34.35.36.37.38.39.40.41.42.43.44.45.46.47.48.49.50.51.52.53.54.55.56.57.58.59.60.61.62.63.64.65"] {
        let err = Reader::open(&Caller::Trusted, log, Some(bad), all()).await.err().unwrap();
        assert_eq!(err.code(), "invalid_cursor", "{bad}");
    }
    let ahead: Vec<String> = log
        .extent()
        .await
        .unwrap()
        .iter()
        .map(|e| (e.next + 1000).to_string())
        .collect();
    let err = Reader::open(&Caller::Trusted, log, Some(&ahead.join(".")), all())
        .await
        .err()
        .unwrap();
    assert_eq!(err.code(), "invalid_cursor");
}
