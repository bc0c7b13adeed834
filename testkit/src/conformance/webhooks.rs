//! Webhook endpoints as every store keeps them: each change applied as the
//! domain's rule says (a cursor moves only from where it is, a lease is one
//! owner's until it ends), delivery logs newest first and paged, the cap;
//! and delivery through the ports: every admitted act once, in order,
//! signed, the cursor moved after each 2xx, a failing batch tried again
//! with nothing skipped.

use super::*;
use async_trait::async_trait;
use socialite_core::webhooks::{
    sign, Answer, Attempt, Change, Deliveries, Endpoint, Outbound, Outcome, Replay, Request, Retry,
    Secrets, Settings, State, WebhookConfig,
};
use std::sync::Mutex;

fn endpoint(id: &str, live: &str) -> Endpoint {
    Endpoint {
        id: id.into(),
        created_ms: 1,
        settings: Settings {
            url: "https://hooks.example/in".into(),
            kinds: vec!["post".into()],
            authors: vec![],
            description: "search".into(),
            batch: 1,
        },
        secrets: Secrets::new(sign::secret_of(&[3; 24])),
        state: State::Active,
        live: live.into(),
        replay: None,
        retry: None,
        lease: None,
    }
}

fn attempt(seq: u64) -> Attempt {
    Attempt {
        seq,
        at_ms: seq,
        message_id: format!("m{seq}"),
        from: "1".into(),
        to: "2".into(),
        events: 1,
        replay: false,
        attempt: 1,
        outcome: Outcome::Retrying,
        status: Some(500),
        error: Some("answered 500".into()),
        latency_ms: 3,
        next_try_ms: Some(seq + 10),
    }
}

pub async fn webhook_store(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "webhook_store").await else {
        return;
    };
    let store = t.backends.webhooks.as_ref();
    let ep = endpoint("wh_a", "5");
    store.create_endpoint(&ep, 2).await.unwrap();
    store
        .create_endpoint(&endpoint("wh_b", "5"), 2)
        .await
        .unwrap();
    let refused = store.create_endpoint(&endpoint("wh_c", "5"), 2).await;
    assert_eq!(refused.unwrap_err().code(), "too_many_webhooks");
    assert_eq!(store.endpoint("wh_a").await.unwrap(), Some(ep.clone()));
    let ids: Vec<String> = store
        .endpoints()
        .await
        .unwrap()
        .into_iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids, ["wh_a", "wh_b"]);
    assert_eq!(store.endpoint("wh_z").await.unwrap(), None);

    // Each change, against the domain's rule applied to a copy.
    let mut expected = ep.clone();
    let changes = [
        (
            Change::Advance {
                replay: false,
                from: "4".into(),
                to: "9".into(),
            },
            false,
        ),
        (
            Change::Advance {
                replay: false,
                from: "5".into(),
                to: "9".into(),
            },
            true,
        ),
        (
            Change::Claim {
                owner: "p1".into(),
                now_ms: 10,
                until_ms: 20,
            },
            true,
        ),
        (
            Change::Claim {
                owner: "p2".into(),
                now_ms: 15,
                until_ms: 25,
            },
            false,
        ),
        (
            Change::Claim {
                owner: "p1".into(),
                now_ms: 15,
                until_ms: 30,
            },
            true,
        ),
        (
            Change::Claim {
                owner: "p2".into(),
                now_ms: 30,
                until_ms: 40,
            },
            true,
        ),
        (Change::Release { owner: "p1".into() }, false),
        (Change::Release { owner: "p2".into() }, true),
        (
            Change::Retry(Some(Retry {
                attempts: 2,
                next_try_ms: 99,
                since_ms: 3,
            })),
            true,
        ),
        (
            Change::State(State::Disabled {
                reason: "gone".into(),
                at_ms: 7,
            }),
            true,
        ),
        (Change::State(State::Active), true),
        (
            Change::Replay(Some(Replay {
                next: "2".into(),
                until: "4".into(),
                started_ms: 1,
            })),
            true,
        ),
        (
            Change::Advance {
                replay: true,
                from: "1".into(),
                to: "3".into(),
            },
            false,
        ),
        (
            Change::Advance {
                replay: true,
                from: "2".into(),
                to: "3".into(),
            },
            true,
        ),
        (
            Change::Advance {
                replay: true,
                from: "3".into(),
                to: "4".into(),
            },
            true,
        ),
        (
            Change::Secrets(ep.secrets.rotated("whsec_bmV3".into(), 5, 100)),
            true,
        ),
        (
            Change::Settings(Settings {
                batch: 7,
                ..ep.settings.clone()
            }),
            true,
        ),
    ];
    for (change, applies) in changes {
        assert_eq!(expected.apply(&change), applies, "{change:?} by the rule");
        assert_eq!(
            store.change_endpoint("wh_a", &change).await.unwrap(),
            applies,
            "{change:?}"
        );
        assert_eq!(
            store.endpoint("wh_a").await.unwrap().as_ref(),
            Some(&expected),
            "after {change:?}"
        );
    }
    let none = Change::Release { owner: "p1".into() };
    assert!(!store.change_endpoint("wh_z", &none).await.unwrap());

    // The delivery log: newest first, paged by seq, one endpoint's alone.
    for seq in [10, 30, 20] {
        store.record_attempt("wh_a", &attempt(seq)).await.unwrap();
    }
    store.record_attempt("wh_b", &attempt(25)).await.unwrap();
    let seqs = |v: Vec<Attempt>| v.into_iter().map(|a| a.seq).collect::<Vec<_>>();
    assert_eq!(
        seqs(store.attempts("wh_a", None, 10).await.unwrap()),
        [30, 20, 10]
    );
    assert_eq!(
        seqs(store.attempts("wh_a", Some(30), 1).await.unwrap()),
        [20]
    );
    assert_eq!(
        store.attempts("wh_a", None, 1).await.unwrap()[0],
        attempt(30)
    );

    assert!(store.delete_endpoint("wh_a").await.unwrap());
    assert!(!store.delete_endpoint("wh_a").await.unwrap());
    assert_eq!(store.attempts("wh_a", None, 10).await.unwrap(), []);
    assert_eq!(seqs(store.attempts("wh_b", None, 10).await.unwrap()), [25]);
}

/// An endpoint that fails the first `fail` requests with 500, then
/// answers 204, keeping what it was sent.
#[derive(Default)]
struct Recorder {
    fail: Mutex<usize>,
    got: Mutex<Vec<Request>>,
}

#[async_trait]
impl Outbound for Recorder {
    async fn post(&self, request: Request) -> Answer {
        let mut fail = self.fail.lock().unwrap();
        self.got.lock().unwrap().push(request);
        if *fail > 0 {
            *fail -= 1;
            return Answer::Status {
                status: 500,
                retry_after: None,
            };
        }
        Answer::Status {
            status: 204,
            retry_after: None,
        }
    }
}

fn header<'a>(r: &'a Request, name: &str) -> &'a str {
    r.headers
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
        .unwrap()
}

pub async fn webhook_delivery(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "webhook_delivery").await else {
        return;
    };
    let (store, log) = (t.backends.webhooks.clone(), t.backends.log.clone());
    let head: Vec<u64> = log.extent().await.unwrap().iter().map(|e| e.next).collect();
    let ep = endpoint(
        "wh_d",
        &socialite_core::firehose::cursor::Cursor::new(head).to_string(),
    );
    store.create_endpoint(&ep, 8).await.unwrap();
    let recorder = Arc::new(Recorder {
        fail: Mutex::new(2),
        ..Default::default()
    });
    let config = WebhookConfig {
        schedule: socialite_core::webhooks::schedule::Schedule::parse("50ms,50ms,50ms").unwrap(),
        ..Default::default()
    };
    let encode: socialite_core::webhooks::Encode = Arc::new(|acts, _| {
        acts.iter()
            .map(|d| d.cursor.clone())
            .collect::<Vec<_>>()
            .join(",")
            .into_bytes()
    });
    let deliveries = Deliveries::new(store.clone(), log.clone(), recorder.clone(), encode, config);
    let (stop, shutdown) = socialite_core::shutdown::channel();
    let running = tokio::spawn(deliveries.run(shutdown));
    // Posts by one author (one partition's order on every log), and a like
    // the endpoint's filter leaves out.
    let mut events: Vec<Event> = (0..6).map(|i| posted("w", 300 + i)).collect();
    events.insert(
        3,
        Event::Liked {
            user: u("v"),
            post: PostId(300),
            author: u("w"),
            at_ms: 1,
        },
    );
    log.append(&events).await.unwrap();
    eventually("six posts delivered", || async {
        let got = recorder.got.lock().unwrap();
        got.len() >= 8
    })
    .await;
    stop.trigger();
    running.await.unwrap().unwrap();
    let got = recorder.got.lock().unwrap().clone();
    // The first batch failed twice and was sent again as it was.
    assert_eq!(got.len(), 8, "two failures, six deliveries");
    assert_eq!(got[0].body, got[1].body);
    assert_eq!(header(&got[0], "webhook-id"), header(&got[2], "webhook-id"));
    let cursors: Vec<String> = got[2..]
        .iter()
        .map(|r| String::from_utf8(r.body.clone()).unwrap())
        .collect();
    let mut sorted = cursors.clone();
    sorted.dedup();
    assert_eq!(sorted.len(), 6, "each post once: {cursors:?}");
    for r in &got {
        let (id, ts) = (header(r, "webhook-id"), header(r, "webhook-timestamp"));
        let want = sign::signature(&ep.secrets.current, id, ts.parse().unwrap(), &r.body).unwrap();
        assert_eq!(header(r, "webhook-signature"), want);
    }
    let held = store.endpoint("wh_d").await.unwrap().unwrap();
    assert_eq!(
        held.live,
        *cursors.last().unwrap(),
        "the cursor is after the last delivery"
    );
    assert_eq!(held.retry, None);
    assert_eq!(held.lease, None, "the lease is let go on shutdown");
    let log_of = store.attempts("wh_d", None, 20).await.unwrap();
    let outcomes: Vec<Outcome> = log_of.iter().rev().map(|a| a.outcome).collect();
    assert_eq!(
        outcomes[..3],
        [Outcome::Retrying, Outcome::Retrying, Outcome::Delivered]
    );
    assert_eq!(log_of.len(), 8);
}
