//! Likes: made once, counted exactly (also under a thousand concurrent
//! likes of one post), paged newest first, refused across a block, gone
//! with a deleted post's count and a deleted user's likes, carried by an
//! export and replayed without counting twice.

use super::*;
use socialite_core::transfer::stream::Stream;
use socialite_domain::interactions::likes::LikeChange;
use socialite_domain::transfer::record::Record;

fn like(user: &str, post: u64, like: bool) -> LikeChange {
    LikeChange {
        user: u(user),
        post: PostId(post),
        like,
    }
}

async fn likes_of(b: &Backends, post: u64) -> u64 {
    b.content.post_counts(&[PostId(post)]).await.unwrap()[0].likes
}

pub async fn likes(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "likes").await else {
        return;
    };
    let (b, c, g) = (&t.backends, &t.backends.content, &t.backends.graph);
    for name in ["ann", "bo", "cy", "dee"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    c.create_post(post(10, "ann", "x")).await.unwrap();
    c.create_post(post(20, "dee", "y")).await.unwrap();
    drain_outbox(b).await;

    // Made once, undone once; the count moves with each change.
    assert!(c.change_like(&like("bo", 10, true)).await.unwrap());
    assert!(!c.change_like(&like("bo", 10, true)).await.unwrap(), "once");
    assert!(c.change_like(&like("cy", 10, true)).await.unwrap());
    assert!(c.change_like(&like("ann", 10, true)).await.unwrap(), "own");
    assert_eq!(likes_of(b, 10).await, 3);
    assert!(c.change_like(&like("ann", 10, false)).await.unwrap());
    assert!(!c.change_like(&like("ann", 10, false)).await.unwrap());
    let counts = c.post_counts(&[PostId(20), PostId(10), PostId(99)]).await;
    let likes: Vec<u64> = counts.unwrap().iter().map(|n| n.likes).collect();
    assert_eq!(likes, [0, 2, 0], "in the order asked, 0 for no post");

    // Likers newest first, a page at a time, each once.
    let all = c.likers(PostId(10), None, 10).await.unwrap();
    let mut who: Vec<&str> = all.iter().map(|(u, _)| u.as_str()).collect();
    assert!(all.windows(2).all(|w| w[0].1 >= w[1].1), "{all:?}");
    who.sort_unstable();
    assert_eq!(who, ["bo", "cy"]);
    assert!(all.iter().all(|(_, at)| *at > 1_600_000_000_000));
    let first = c.likers(PostId(10), None, 1).await.unwrap();
    let (id, at) = first[0].clone();
    let rest = c.likers(PostId(10), Some(&(at, id)), 10).await.unwrap();
    assert_eq!([first, rest].concat(), all);

    // Refused: no such post, no such user, a block either way.
    let gone = c.change_like(&like("bo", 99, true)).await.unwrap_err();
    assert_eq!(gone.code(), "post_not_found");
    let nobody = c.change_like(&like("zed", 10, true)).await.unwrap_err();
    assert_eq!(nobody.code(), "user_not_found");
    let block = RelationChange::new(u("dee"), u("ann"), Relation::Block, true).unwrap();
    g.change_relation(&block).await.unwrap();
    let refused = c.change_like(&like("dee", 10, true)).await.unwrap_err();
    assert_eq!(refused.code(), "blocked");
    let refused = c.change_like(&like("ann", 20, true)).await.unwrap_err();
    assert_eq!(refused.code(), "blocked");
    assert_eq!(likes_of(b, 10).await, 2);

    // Every change is on the log, with its time.
    let events = drain_outbox(b).await;
    let liked: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Liked {
                user,
                post,
                author,
                at_ms,
            } => {
                assert!(*at_ms > 1_600_000_000_000);
                Some(format!("+{user} {} {author}", post.0))
            }
            Event::Unliked { user, post, author } => Some(format!("-{user} {} {author}", post.0)),
            _ => None,
        })
        .collect();
    assert_eq!(
        liked,
        ["+bo 10 ann", "+cy 10 ann", "+ann 10 ann", "-ann 10 ann"]
    );

    // A replayed like changes nothing; a replayed unlike undoes it once.
    let bo_liked = events
        .iter()
        .find(|e| matches!(e, Event::Liked { user, .. } if user.as_str() == "bo"))
        .unwrap()
        .clone();
    assert!(!b.transfer.replay(&bo_liked).await.unwrap());
    assert_eq!(likes_of(b, 10).await, 2);
    let unliked = Event::Unliked {
        user: u("bo"),
        post: PostId(10),
        author: u("ann"),
    };
    assert!(b.transfer.replay(&unliked).await.unwrap());
    assert!(!b.transfer.replay(&unliked).await.unwrap());
    assert!(b.transfer.replay(&bo_liked).await.unwrap());
    assert_eq!(likes_of(b, 10).await, 2);
    let of_gone_post = Event::Liked {
        user: u("bo"),
        post: PostId(77),
        author: u("ann"),
        at_ms: 5,
    };
    assert!(!b.transfer.replay(&of_gone_post).await.unwrap());

    // An export carries each like of a stored post, with its time.
    let exported = export(b).await;
    let mut likes: Vec<(u64, &str)> = exported
        .iter()
        .filter_map(|r| match r {
            Record::Like { post, user, .. } => Some((post.0, user.as_str())),
            _ => None,
        })
        .collect();
    likes.sort_unstable();
    assert_eq!(likes, [(10, "bo"), (10, "cy")]);

    // A deleted user's likes go, and the counts follow.
    assert!(c.delete_user(&u("cy")).await.unwrap());
    assert_eq!(likes_of(b, 10).await, 1);
    let left = c.likers(PostId(10), None, 10).await.unwrap();
    assert_eq!(
        left.iter().map(|(u, _)| u.as_str()).collect::<Vec<_>>(),
        ["bo"]
    );

    // A deleted post's count goes with it, and it can no longer be liked;
    // its likes are in no export.
    c.delete_post(PostId(10)).await.unwrap();
    assert_eq!(likes_of(b, 10).await, 0);
    let gone = c.change_like(&like("dee", 10, true)).await.unwrap_err();
    assert_eq!(gone.code(), "post_not_found");
    let exported = export(b).await;
    assert!(!exported.iter().any(|r| matches!(r, Record::Like { .. })));
    // Its liker's deletion later counts nothing twice.
    assert!(c.delete_user(&u("bo")).await.unwrap());
    c.create_post(post(30, "ann", "z")).await.unwrap();
    assert_eq!(likes_of(b, 30).await, 0);

    // A deletion's page of several likes, one of a post deleted since:
    // each stored post counts one fewer, the others' likes stay.
    for name in ["eve", "fay"] {
        c.put_user(&u(name), None).await.unwrap();
    }
    for p in [40, 50, 60] {
        c.create_post(post(p, "ann", "w")).await.unwrap();
        c.change_like(&like("eve", p, true)).await.unwrap();
    }
    c.change_like(&like("fay", 50, true)).await.unwrap();
    c.delete_post(PostId(60)).await.unwrap();
    assert!(c.delete_user(&u("eve")).await.unwrap());
    let counts = c.post_counts(&[PostId(40), PostId(50), PostId(60)]).await;
    let left: Vec<u64> = counts.unwrap().iter().map(|n| n.likes).collect();
    assert_eq!(left, [0, 1, 0]);
    let likers = c.likers(PostId(50), None, 10).await.unwrap();
    assert_eq!(
        likers.iter().map(|(u, _)| u.as_str()).collect::<Vec<_>>(),
        ["fay"]
    );
    assert!(c.likers(PostId(40), None, 10).await.unwrap().is_empty());
}

pub(crate) async fn export(b: &Backends) -> Vec<Record> {
    let mut stream = Stream::open(&*b.transfer).await.unwrap();
    let mut out = Vec::new();
    loop {
        let page = stream.next(1000).await.unwrap();
        if page.is_empty() {
            return out;
        }
        out.extend(page);
    }
}

/// Hundreds of likes of one post at once: the count is exactly their
/// number, and so is its list of likers, read in pages. (Twenty likes for
/// each part of the count; more add only time: a thousand took half a
/// minute on the MongoDB stand-in.)
pub async fn concurrent_likes(open: Opener) {
    let Some(t) = open(FeedConfig::default(), "concurrent_likes").await else {
        return;
    };
    const LIKERS: usize = 20 * socialite_domain::interactions::likes::TALLY_SHARDS as usize;
    let b = &t.backends;
    let users: Vec<Record> = (0..LIKERS)
        .map(|i| Record::User {
            id: u(&format!("fan{i}")),
            profile: None,
        })
        .chain([Record::User {
            id: u("star"),
            profile: None,
        }])
        .collect();
    b.transfer
        .import(&users, &Default::default())
        .await
        .unwrap();
    b.content
        .create_post(post(7, "star", "viral"))
        .await
        .unwrap();
    // All are under way at once; at most `OPEN` hold a store
    // transaction at a time, as many as a post's count has parts, so that
    // each part has about one writer at a time. (The MongoDB stand-in, in
    // Python, keeps a transaction open long enough that more writers per
    // part spend the retry budget of a loaded machine on write conflicts:
    // a matter of its speed, not of the count's exactness.)
    const OPEN: usize = socialite_domain::interactions::likes::TALLY_SHARDS as usize;
    let open = std::sync::Arc::new(tokio::sync::Semaphore::new(OPEN));
    let mut likes = tokio::task::JoinSet::new();
    for i in 0..LIKERS {
        let (content, open) = (b.content.clone(), open.clone());
        likes.spawn(async move {
            let _open = open.acquire().await.unwrap();
            content
                .change_like(&like(&format!("fan{i}"), 7, true))
                .await
        });
    }
    while let Some(done) = likes.join_next().await {
        assert!(done.unwrap().unwrap(), "each like is new");
    }
    assert_eq!(likes_of(b, 7).await, LIKERS as u64);
    let mut seen = 0;
    let mut after = None;
    loop {
        let page = b
            .content
            .likers(PostId(7), after.as_ref(), 100)
            .await
            .unwrap();
        seen += page.len();
        match page.last() {
            Some((id, at)) => after = Some((*at, id.clone())),
            None => break,
        }
    }
    assert_eq!(seen, LIKERS);
}
