use super::cursor::Cursor;
use super::filter::{Filter, MAX_AUTHORS};
use super::*;
use crate::model::standing::Standing;

fn u(s: &str) -> UserId {
    UserId::parse(s).unwrap()
}

/// Whether an event is one a user keeps for themselves (or fanout's own
/// bookkeeping), stated apart from the rule so that a new event kind must
/// be placed on one side by hand.
fn private(e: &Event) -> bool {
    matches!(
        e,
        Event::Relisted { .. }
            | Event::Joined { .. }
            | Event::Left { .. }
            | Event::AuthorRetracted { .. }
            | Event::Muted { .. }
            | Event::Unmuted { .. }
            | Event::Blocked { .. }
            | Event::Unblocked { .. }
            | Event::PrioritySet { .. }
            | Event::FollowOptionsSet { .. }
            | Event::MarkerSet { .. }
            | Event::KeptChanged { .. }
            | Event::FilterPut { .. }
            | Event::FilterRemoved { .. }
            | Event::ThreadMuteSet { .. }
            | Event::ListExclusiveSet { .. }
    )
}

#[test]
fn private_acts_are_never_public() {
    let samples = crate::event::tests::samples();
    assert!(samples.iter().any(private));
    for e in &samples {
        if private(e) {
            assert_eq!(PublicAct::of(e), None, "{e:?}");
        }
    }
}

#[test]
fn public_acts_name_their_actor_and_kind() {
    let like = Event::Liked {
        user: u("bo"),
        post: PostId(9),
        author: u("al"),
        at_ms: 5,
    };
    let act = PublicAct::of(&like).unwrap();
    assert_eq!(
        (act.kind(), act.actor(), act.at_ms()),
        (Kind::Like, &u("bo"), Some(5))
    );
    let follow = Event::Followed {
        follower: u("bo"),
        followee: u("al"),
        lists: vec![crate::ids::ListName::parse("secret").unwrap()],
        at_ms: 0,
    };
    // The lists an edge is filed under are the follower's own.
    assert_eq!(
        PublicAct::of(&follow),
        Some(PublicAct::Follow {
            actor: u("bo"),
            target: u("al"),
            at_ms: 0
        })
    );
    let gone = crate::deletion::cascade::timeline_dropped(&u("bo"), vec![]);
    assert_eq!(
        PublicAct::of(&gone),
        Some(PublicAct::Account {
            actor: u("bo"),
            status: AccountStatus::Deleted
        })
    );
}

#[test]
fn only_a_suspension_or_its_lifting_is_told_of_an_accounts_standing() {
    let set = |suspended, was_suspended| Event::StandingSet {
        user: u("bo"),
        standing: Standing {
            tokens_after_ms: 7,
            suspended,
        },
        was_suspended,
    };
    let status = |e: Event| match PublicAct::of(&e) {
        Some(PublicAct::Account { status, .. }) => Some(status),
        _ => None,
    };
    assert_eq!(status(set(true, false)), Some(AccountStatus::Suspended));
    assert_eq!(status(set(false, true)), Some(AccountStatus::Active));
    // A revocation of tokens is the account's own business.
    assert_eq!(status(set(false, false)), None);
    assert_eq!(status(set(true, true)), None);
}

#[test]
fn filters_take_kinds_and_authors_and_are_capped() {
    let like = PublicAct::Like {
        actor: u("bo"),
        post: PostId(1),
        author: u("al"),
        at_ms: 1,
    };
    let all = Filter::new([], []).unwrap();
    assert!(all.admits(&like));
    assert!(Filter::new(["like", "post"], []).unwrap().admits(&like));
    assert!(!Filter::new(["post"], []).unwrap().admits(&like));
    assert!(Filter::new([], ["bo"]).unwrap().admits(&like));
    // The author of the liked post is not who acted.
    assert!(!Filter::new([], ["al"]).unwrap().admits(&like));
    let err = Filter::new(["likes"], []).unwrap_err();
    assert_eq!(err.code(), "invalid_kind");
    let ids: Vec<String> = (0..=MAX_AUTHORS).map(|i| format!("u{i}")).collect();
    let names = || ids.iter().map(String::as_str);
    assert!(Filter::new([], names().take(MAX_AUTHORS)).is_ok());
    assert_eq!(
        Filter::new([], names()).unwrap_err().code(),
        "too_many_authors"
    );
    assert_eq!(
        Filter::new([], ["no pe"]).unwrap_err().code(),
        "invalid_user_id"
    );
}

#[test]
fn cursors_round_trip_and_refuse_what_is_not_one() {
    for text in ["0", "1042", "17.0.9.33"] {
        assert_eq!(Cursor::parse(text).unwrap().to_string(), text);
    }
    for bad in [
        "",
        ".",
        "1..2",
        "-1",
        "+1",
        "1.x",
        "99999999999999999999999",
    ] {
        assert_eq!(
            Cursor::parse(bad).unwrap_err().code(),
            "invalid_cursor",
            "{bad}"
        );
    }
    let mut c = Cursor::parse("5.3.0").unwrap().fitting(3).unwrap();
    c.advance(2, 8);
    c.advance(0, 1);
    assert_eq!(c.to_string(), "5.3.9");
    for partitions in [2, 4] {
        let err = Cursor::parse("1.2.3")
            .unwrap()
            .fitting(partitions)
            .unwrap_err();
        assert_eq!(err.code(), "invalid_cursor");
    }
}
