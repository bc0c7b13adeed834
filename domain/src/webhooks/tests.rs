use super::address::{internal, url};
use super::endpoint::*;
use super::schedule::Schedule;
use super::sign;
use std::time::Duration;

#[test]
fn signs_as_the_standard_webhooks_example() {
    let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let body = br#"{"test": 2432232314}"#;
    let got = sign::signature(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body);
    assert_eq!(
        got.as_deref(),
        Some("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=")
    );
    let both = sign::header(
        &[secret, secret],
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        body,
    );
    assert_eq!(both.split(' ').count(), 2);
    assert_eq!(sign::signature("not-a-secret", "m", 1, b""), None);
    assert!(sign::secret_of(&[7; 24]).starts_with(sign::SECRET_PREFIX));
}

#[test]
fn a_rotation_signs_with_both_until_the_grace_ends() {
    let s = Secrets::new("whsec_old".into()).rotated("whsec_new".into(), 1_000, 500);
    assert_eq!(s.signing(1_200), vec!["whsec_new", "whsec_old"]);
    assert_eq!(s.signing(1_500), vec!["whsec_new"]);
    let printed = format!("{s:?} {:?}", Change::Secrets(s.clone()));
    assert!(
        !printed.contains("whsec_"),
        "a secret is printed: {printed}"
    );
    let no_grace = s.rotated("whsec_newer".into(), 2_000, 0);
    assert_eq!(no_grace.signing(2_000), vec!["whsec_newer"]);
}

#[test]
fn internal_addresses_are_refused() {
    for ip in [
        "127.0.0.1",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "169.254.169.254",
        "100.64.0.1",
        "0.0.0.0",
        "255.255.255.255",
        "224.0.0.1",
        "::1",
        "::",
        "fd00:ec2::254",
        "fe80::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "64:ff9b::a9fe:a9fe",
        "::127.0.0.1",
        "64:ff9b:1::a",
        "2002:7f00:1::",
        "2002:a9fe:a9fe::1",
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
    ] {
        assert!(internal(ip.parse().unwrap()), "{ip} passed");
    }
    for ip in [
        "93.184.216.34",
        "8.8.8.8",
        "2606:4700::1111",
        "::ffff:8.8.8.8",
        "2002:808:808::1",
    ] {
        assert!(!internal(ip.parse().unwrap()), "{ip} refused");
    }
}

#[test]
fn urls_are_http_without_credentials() {
    assert!(url("https://hooks.example.com/in?x=1").is_ok());
    for bad in [
        "ftp://x.example/",
        "https://user:pw@x.example/",
        "not a url",
        "file:///etc/passwd",
    ] {
        assert_eq!(url(bad).unwrap_err().code(), "invalid_url", "{bad}");
    }
    assert_eq!(
        url(&format!("https://x.example/{}", "a".repeat(3000)))
            .unwrap_err()
            .code(),
        "invalid_url"
    );
}

#[test]
fn settings_are_checked() {
    let mut s = Settings {
        url: "https://x.example/".into(),
        kinds: vec!["post".into()],
        authors: vec![],
        description: "search".into(),
        batch: 1,
    };
    assert!(s.check().is_ok());
    s.batch = 0;
    assert_eq!(s.check().unwrap_err().code(), "invalid_batch");
    s.batch = MAX_BATCH + 1;
    assert_eq!(s.check().unwrap_err().code(), "invalid_batch");
    s.batch = 1;
    s.kinds = vec!["mute".into()];
    assert_eq!(s.check().unwrap_err().code(), "invalid_kind");
    s.kinds.clear();
    s.description = "x".repeat(MAX_DESCRIPTION_CHARS + 1);
    assert_eq!(s.check().unwrap_err().code(), "invalid_description");
}

#[test]
fn the_schedule_runs_out_and_jitters() {
    let s = Schedule::parse("100ms,2s,1m").unwrap();
    assert_eq!(s.tries(), 4);
    assert_eq!(s.delay(0, 0.5), None);
    assert_eq!(s.delay(1, 0.5), Some(Duration::from_millis(100)));
    assert_eq!(s.delay(2, 0.0), Some(Duration::from_millis(1_600)));
    assert_eq!(s.delay(3, 1.0), Some(Duration::from_secs(72)));
    assert_eq!(s.delay(4, 0.5), None);
    assert!(Schedule::parse("5x").is_err());
    assert!(Schedule::parse("0s").is_err());
    assert!(Schedule::parse("8d").is_err());
    let total: Duration = (1..Schedule::default().tries())
        .map(|n| Schedule::default().delay(n, 0.5).unwrap())
        .sum();
    assert!(total > Duration::from_secs(2 * 86_400) && total < Duration::from_secs(4 * 86_400));
}

fn endpoint() -> Endpoint {
    Endpoint {
        id: "wh_1".into(),
        created_ms: 1,
        settings: Settings {
            url: "https://x.example/".into(),
            kinds: vec![],
            authors: vec![],
            description: String::new(),
            batch: 1,
        },
        secrets: Secrets::new("whsec_a".into()),
        state: State::Active,
        live: "5".into(),
        replay: None,
        retry: None,
        lease: None,
    }
}

#[test]
fn cursors_move_only_from_where_they_are() {
    let mut e = endpoint();
    let adv = |from: &str, to: &str, replay| Change::Advance {
        replay,
        from: from.into(),
        to: to.into(),
    };
    assert!(!e.apply(&adv("4", "9", false)));
    assert!(e.apply(&adv("5", "9", false)));
    assert_eq!(e.live, "9");
    assert!(!e.apply(&adv("1", "2", true)), "no replay to move");
    e.apply(&Change::Replay(Some(Replay {
        next: "1".into(),
        until: "3".into(),
        started_ms: 1,
    })));
    assert!(e.apply(&adv("1", "2", true)));
    assert_eq!(e.replay.as_ref().unwrap().next, "2");
    assert!(e.apply(&adv("2", "3", true)));
    assert_eq!(e.replay, None, "reaching its end ends the replay");
    e.apply(&Change::Replay(Some(Replay {
        next: "1.1".into(),
        until: "3.3".into(),
        started_ms: 1,
    })));
    assert!(e.apply(&adv("1.1", "4.2", true)));
    assert!(e.replay.is_some(), "one partition short of its end");
    assert!(e.apply(&adv("4.2", "4.3", true)));
    assert_eq!(e.replay, None);
}

#[test]
fn a_lease_is_one_owners_until_it_ends() {
    let mut e = endpoint();
    let claim = |owner: &str, now_ms, until_ms| Change::Claim {
        owner: owner.into(),
        now_ms,
        until_ms,
    };
    assert!(e.apply(&claim("a", 10, 20)));
    assert!(!e.apply(&claim("b", 15, 25)));
    assert!(e.apply(&claim("a", 15, 30)), "its owner renews it");
    assert!(e.apply(&claim("b", 30, 40)), "an ended lease is free");
    assert!(!e.apply(&Change::Release { owner: "a".into() }));
    assert!(e.apply(&Change::Release { owner: "b".into() }));
    assert_eq!(e.lease, None);
}

#[test]
fn turning_on_forgets_the_retry() {
    let mut e = endpoint();
    e.apply(&Change::Retry(Some(Retry {
        attempts: 3,
        next_try_ms: 99,
        since_ms: 1,
    })));
    e.apply(&Change::State(State::Disabled {
        reason: "gone".into(),
        at_ms: 5,
    }));
    assert!(e.retry.is_some(), "turning off keeps it");
    e.apply(&Change::State(State::Active));
    assert_eq!(e.retry, None);
}
