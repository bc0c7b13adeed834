//! A run of posts imported at once (an import's batch) is decided as the
//! same posts one after another would be, whatever the store reads ahead
//! for the run (`Txn::read_ahead_posts`): the posts held, a reply to a
//! post written earlier in the run, the users a post names, and the
//! notices the run makes, none in a thread its recipient muted.

use super::*;
use socialite_core::model::PostRef;
use socialite_domain::transfer::admit::Caps;
use socialite_domain::transfer::record::Record;

fn record(post: Post) -> Record {
    Record::Post {
        post,
        answered_gone: false,
    }
}

/// The kinds of notice `user` holds, and from whom, as `kind:actor`.
async fn told(b: &Backends, user: &str) -> Vec<String> {
    let groups = b.content.notice_groups(&u(user), None, 10).await.unwrap();
    let mut out: Vec<String> = groups
        .iter()
        .flat_map(|g| {
            let kind = g.group.kind;
            g.actors.iter().map(move |(_, a)| format!("{kind:?}:{a}"))
        })
        .collect();
    out.sort();
    out
}

/// The posts held of `ids`, by id, with their mentions.
async fn held(b: &Backends, ids: &[u64]) -> Vec<(u64, String, Vec<String>)> {
    let ids: Vec<PostId> = ids.iter().map(|i| PostId(*i)).collect();
    let mut out: Vec<(u64, String, Vec<String>)> = b
        .content
        .get_posts(&ids)
        .await
        .unwrap()
        .into_iter()
        .map(|p| {
            let mentions = p.mentions.iter().map(|m| m.as_str().to_owned()).collect();
            (p.id.0, p.author.as_str().to_owned(), mentions)
        })
        .collect();
    out.sort();
    out
}

pub async fn runs_of_posts(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "runs_of_posts").await else {
        return;
    };
    let (b, c) = (&t.backends, &t.backends.content);
    for name in ["ann", "bo", "cy"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    let caps = Caps::default();
    let import = |records: Vec<Record>| async move { b.transfer.import(&records, &caps).await };
    let replies_of = |id: u64| async move {
        let counts = b.content.post_counts(&[PostId(id)]).await.unwrap();
        counts[0].replies
    };

    // ann mentions bo and an account that does not exist; bo answers her
    // in the same run, so the reply reads the post the run wrote.
    let first = Post {
        mentions: vec![u("bo"), u("ghost")],
        ..post(100, "ann", "hi @bo @ghost")
    };
    let answer = Post {
        reply_to: Some(PostRef {
            id: PostId(100),
            author: u("ann"),
        }),
        ..post(110, "bo", "re")
    };
    let run = vec![
        record(first),
        record(answer),
        record(post(120, "cy", "own")),
    ];
    assert_eq!(import(run.clone()).await.unwrap(), 3);
    let all = [100, 110, 120];
    let expected = vec![
        (100, "ann".to_owned(), vec!["bo".to_owned()]),
        (110, "bo".to_owned(), vec![]),
        (120, "cy".to_owned(), vec![]),
    ];
    assert_eq!(held(b, &all).await, expected);
    assert_eq!(replies_of(100).await, 1);
    assert_eq!(told(b, "bo").await, ["Mention:ann"]);
    assert_eq!(told(b, "ann").await, ["Reply:bo"]);

    // A run of posts that tell no one, the whole batch: every one held
    // once the batch commits.
    let quiet = vec![record(post(101, "cy", "a")), record(post(102, "cy", "b"))];
    assert_eq!(import(quiet).await.unwrap(), 2);
    assert_eq!(held(b, &[101, 102]).await.len(), 2);

    // The same run again changes nothing: the posts, the count and the
    // notices are held.
    assert_eq!(import(run).await.unwrap(), 0);
    assert_eq!(held(b, &all).await, expected);
    assert_eq!(replies_of(100).await, 1);
    assert_eq!(told(b, "ann").await, ["Reply:bo"]);

    // cy muted ann's thread: a run that mentions cy in it, and elsewhere,
    // tells cy only of the mention elsewhere.
    c.mute_thread(&u("cy"), PostId(100), true).await.unwrap();
    let in_thread = Post {
        mentions: vec![u("cy")],
        reply_to: Some(PostRef {
            id: PostId(110),
            author: u("bo"),
        }),
        ..post(170, "ann", "@cy")
    };
    let elsewhere = Post {
        mentions: vec![u("cy")],
        ..post(180, "bo", "@cy")
    };
    assert_eq!(
        import(vec![record(in_thread), record(elsewhere)])
            .await
            .unwrap(),
        2
    );
    assert_eq!(told(b, "cy").await, ["Mention:bo"]);

    // A post under an id held by another's: the run is refused, and none
    // of it is held.
    let run = vec![
        record(post(130, "ann", "new")),
        record(post(120, "bo", "x")),
    ];
    assert_eq!(import(run).await.unwrap_err().code(), "post_id_taken");
    assert!(held(b, &[130]).await.is_empty());

    // A post by an account that does not exist, after one that does.
    let run = vec![
        record(post(140, "ann", "a")),
        record(post(150, "ghost", "b")),
    ];
    assert_eq!(import(run).await.unwrap_err().code(), "user_not_found");
    assert!(held(b, &[140, 150]).await.is_empty());

    // A reply to a post neither the store nor the run holds, unmarked.
    let lost = Post {
        reply_to: Some(PostRef {
            id: PostId(99),
            author: u("cy"),
        }),
        ..post(160, "ann", "re")
    };
    let run = vec![record(post(155, "bo", "b")), record(lost)];
    assert!(import(run).await.is_err());
    assert!(held(b, &[155, 160]).await.is_empty());
}
