//! Random histories: every write, reads that activate dormant users, and
//! log replays, over graphs with Zipf-distributed follower counts.

use super::harness::Harness;
use super::model::{GROUPS, LISTS};
use crate::open::Opener;
use socialite_core::feed::config::{FeedConfig, FeedModel};
use socialite_core::ids::PostId;
use socialite_core::rules::access::Caller;
use socialite_core::rules::hybrid::Hybrid;
use socialite_core::rules::relations::Relation;
use socialite_core::sim::{Rng, Zipf};

/// Random lists for a follow: none given (keep the edge's), or a subset.
fn random_lists(rng: &mut Rng) -> Option<Vec<&'static str>> {
    if rng.below(100) < 40 {
        return None;
    }
    Some(LISTS.into_iter().filter(|_| rng.below(2) == 0).collect())
}

/// One random history of `steps` operations over `users` accounts on the
/// backend `open` opens; how many times authors crossed the hybrid
/// threshold, up and down (`None`: the backend was skipped).
pub async fn run(
    open: Opener,
    seed: u64,
    steps: usize,
    users: usize,
    feed: FeedConfig,
) -> Option<(usize, usize)> {
    let mut rng = Rng::new(seed);
    let mut readers = Rng::new(seed ^ 0x005e_ed0f_4ead);
    let mut h = Harness::open(open, feed).await?;
    let names: Vec<String> = (0..users).map(|i| format!("u{i}")).collect();
    let popular = Zipf::new(users, 1.1);
    for step in 0..steps {
        let a = names[popular.pick(&mut rng)].clone();
        let b = names[rng.below(names.len())].clone();
        let op = rng.below(114);
        // Every 40 steps the hybrid threshold rises past every follower
        // count for 20 steps (big authors turn small: backfilled, then
        // unmarked), then falls back (they turn big again).
        if let Hybrid::Above(_) = feed.hybrid {
            match step % 40 {
                20 => h.backends.feed.hybrid = Hybrid::Above(1000),
                0 => h.backends.feed.hybrid = feed.hybrid,
                _ => {}
            }
        }
        if std::env::var_os("SOCIALITE_TRACE").is_some() {
            eprintln!("step {step}: op {op} a={a} b={b}");
        }
        match op {
            0..=9 => {
                // A suspended id cannot be taken, even after a deletion.
                match h.ingest.put_user(&Caller::Trusted, &b, None).await {
                    Ok(_) => assert!(!h.model.suspended.contains(&b), "seed {seed}"),
                    Err(e) => assert_eq!(
                        (e.code(), h.model.suspended.contains(&b)),
                        ("account_suspended", true),
                        "seed {seed}"
                    ),
                }
                if !h.model.suspended.contains(&b) {
                    h.model.users.insert(b);
                }
            }
            10..=34 => {
                // Follow: a popular account (Zipf pick) gains a follower,
                // filed under random lists (or an edge is refiled).
                let lists = random_lists(&mut rng);
                let followed = h
                    .ingest
                    .follow(&Caller::Trusted, &b, &a, lists.as_deref())
                    .await;
                let blocked = h.model.blocked(&a, &b);
                match followed {
                    Ok(_) => {
                        assert!(!blocked, "seed {seed}: {b} followed {a} across a block");
                        let edge = h.model.follows.entry((b, a)).or_default();
                        if let Some(lists) = lists {
                            *edge = lists.into_iter().map(String::from).collect();
                        }
                    }
                    Err(e) if e.code() == "blocked" => assert!(blocked, "seed {seed}"),
                    Err(_) => {}
                }
            }
            35..=40 => {
                if h.ingest.unfollow(&Caller::Trusted, &b, &a).await.is_ok() {
                    h.model.follows.remove(&(b, a));
                }
            }
            41..=44 => {
                // A popular user joins or leaves a group.
                let group = GROUPS[rng.below(GROUPS.len())];
                let join = op <= 42;
                if h.ingest
                    .membership(&Caller::Trusted, group, &a, join)
                    .await
                    .is_ok()
                {
                    let members = h.model.groups.entry(group.to_owned()).or_default();
                    if join {
                        members.insert(a);
                    } else {
                        members.remove(&a);
                    }
                }
            }
            45..=74 => {
                // Some posts mention users (and names that are no users).
                let message = match rng.below(4) {
                    0 => format!("post {step} by {a} for @{b} and @u{}", rng.below(users + 3)),
                    _ => format!("post {step} by {a}"),
                };
                if let Ok(p) = h
                    .ingest
                    .create_post(&Caller::Trusted, &a, message.clone(), None)
                    .await
                {
                    let mut named: Vec<String> = Vec::new();
                    for word in message.split(' ').filter_map(|w| w.strip_prefix('@')) {
                        if h.model.users.contains(word) && !named.iter().any(|n| n == word) {
                            named.push(word.to_owned());
                        }
                    }
                    h.model.mentions.insert(p.id, named);
                    h.model.posts.insert(p.id, (a, message));
                }
            }
            75..=81 => {
                if let Some((&p, _)) = h
                    .model
                    .posts
                    .iter()
                    .nth(rng.below(h.model.posts.len().max(1)))
                {
                    h.ingest
                        .delete_post(&Caller::Trusted, &p.to_string())
                        .await
                        .unwrap();
                    h.model.posts.remove(&p);
                    h.model.likes.retain(|(q, _)| *q != p);
                    // Its reposts stay, naming nothing, until their users go.
                }
            }
            82..=83 => {
                if h.ingest.delete_user(&Caller::Trusted, &b).await.is_ok() {
                    h.model.users.remove(&b);
                    h.model.follows.retain(|(f, t), _| f != &b && t != &b);
                    h.model.posts.retain(|_, (author, _)| author != &b);
                    for named in h.model.mentions.values_mut() {
                        named.retain(|n| n != &b);
                    }
                    for members in h.model.groups.values_mut() {
                        members.remove(&b);
                    }
                    // Others' mutes and blocks of the account stay theirs.
                    h.model.mutes.retain(|(x, _)| x != &b);
                    h.model.blocks.retain(|(x, _)| x != &b);
                    h.model.likes.retain(|(_, x)| x != &b);
                    h.model.reposts.retain(|(_, x), _| x != &b);
                    h.model.markers.remove(&b);
                    h.model.notice_markers.remove(&b);
                }
            }
            84..=93 => {
                // A read activates a dormant timeline, possibly with events
                // still in flight: exactly the race the warming state must
                // survive. Home timelines and lists alike.
                let _ = match rng.below(3) {
                    0 => h.reads.timeline(&Caller::Trusted, &b, Some(3), None).await,
                    1 => {
                        let group = GROUPS[rng.below(GROUPS.len())];
                        h.reads
                            .group_timeline(&Caller::Trusted, group, None, Some(3), None)
                            .await
                    }
                    _ => {
                        let list = LISTS[rng.below(LISTS.len())];
                        h.reads
                            .list_timeline(&Caller::Trusted, &b, list, Some(3), None)
                            .await
                    }
                };
            }
            94..=96 => {
                // Replay from a random earlier point (rewind never skips ahead).
                let first = h
                    .backends
                    .rewind
                    .as_ref()
                    .unwrap()
                    .first_retained()
                    .unwrap();
                h.replay_from(first + rng.below(60) as u64).await;
            }
            100..=109 => {
                // b mutes or blocks a popular account, or lifts it.
                let relation = if op < 105 {
                    Relation::Mute
                } else {
                    Relation::Block
                };
                let make = op % 5 < 3;
                if h.ingest
                    .relation(&Caller::Trusted, &b, &a, relation, make)
                    .await
                    .is_ok()
                {
                    let m = &mut h.model;
                    let pair = (b.clone(), a.clone());
                    let set = match relation {
                        Relation::Mute => &mut m.mutes,
                        Relation::Block => &mut m.blocks,
                    };
                    if make {
                        set.insert(pair);
                    } else {
                        set.remove(&pair);
                    }
                    if make && relation == Relation::Block {
                        m.follows.remove(&(b.clone(), a.clone()));
                        m.follows.remove(&(a, b));
                    }
                }
            }
            110..=113 => {
                // A moderator suspends an account, or lifts a suspension.
                let on = op < 112;
                h.ingest.suspend(&Caller::Trusted, &b, on).await.unwrap();
                match on {
                    true => h.model.suspended.insert(b),
                    false => h.model.suspended.remove(&b),
                };
            }
            _ => h.drain().await,
        }
        // What readers do beside: likes and markers, drawn from a stream of
        // their own, so the graph's history stays the seed's.
        if readers.below(100) < 8 {
            let who = names[readers.below(names.len())].clone();
            reader_act(&mut h, &mut readers, &who, seed).await;
        }
        if rng.below(100) < 8 {
            h.check_all(seed, step).await;
        }
    }
    h.check_all(seed, steps).await;
    Some(h.crossings)
}

/// `user` likes or unlikes a random post, reposts one or undoes it,
/// replies to one, or marks one read.
async fn reader_act(h: &mut Harness, rng: &mut Rng, user: &str, seed: u64) {
    match rng.below(16) {
        0..=3 => like(h, rng, user, true, seed).await,
        4..=5 => like(h, rng, user, false, seed).await,
        6..=8 => repost(h, rng, user, true, seed).await,
        9 => repost(h, rng, user, false, seed).await,
        10..=12 => reply(h, rng, user, seed).await,
        13 => mark_notifications(h, user, seed).await,
        _ => mark(h, rng, user, seed).await,
    }
}

/// `user` reads their newest notifications entry and marks it read.
async fn mark_notifications(h: &mut Harness, user: &str, seed: u64) {
    h.drain().await;
    let Ok(page) = h
        .reads
        .notifications(&Caller::Trusted, user, Some(1), None)
        .await
    else {
        return; // no such user, or suspended
    };
    let Some(newest) = page.items.first() else {
        return;
    };
    let id = newest.latest.to_string();
    let set = h
        .ingest
        .set_marker(&Caller::Trusted, user, "notifications", &id, false);
    let (held, _) = set.await.unwrap_or_else(|e| panic!("seed {seed}: {e:?}"));
    let kept = h
        .model
        .notice_markers
        .entry(user.to_owned())
        .or_insert(newest.latest);
    *kept = (*kept).max(newest.latest);
    assert_eq!(held.last_read, *kept, "seed {seed}: the furthest place");
}

/// `user` replies to a random post (a reply too, sometimes), as the rules
/// allow.
async fn reply(h: &mut Harness, rng: &mut Rng, user: &str, seed: u64) {
    let posts = &h.model.posts;
    let Some((&p, (author, _))) = posts.iter().nth(rng.below(posts.len().max(1))) else {
        return;
    };
    let author = author.clone();
    let message = format!("reply by {user} to {p}");
    let at = p.to_string();
    let done = h
        .ingest
        .create_reply(&Caller::Trusted, user, message.clone(), None, Some(&at))
        .await;
    let m = &mut h.model;
    match done {
        Ok(made) => {
            assert!(
                m.users.contains(user),
                "seed {seed}: {user} replied as no one"
            );
            assert!(
                !m.blocked(user, &author),
                "seed {seed}: a reply across a block"
            );
            let answered = made.reply_to.as_ref().map(|a| (a.id, a.author.to_string()));
            assert_eq!(answered, Some((p, author.clone())), "seed {seed}");
            m.posts.insert(made.id, (user.to_owned(), message));
            m.mentions.insert(made.id, Vec::new());
            m.replies.insert(made.id, (p, author));
        }
        Err(e) => {
            let fine = match e.code() {
                "blocked" => m.blocked(user, &author),
                "post_not_found" => m.suspended.contains(&author),
                _ => !m.users.contains(user) || m.suspended.contains(user),
            };
            assert!(fine, "seed {seed}: {user} replying to {p}: {}", e.code());
        }
    }
}

/// `user` reposts (or undoes a repost of) a random post, as the rules
/// allow. An undoing sometimes names the post it reposted, sometimes the
/// repost's own item (a deletion of it), and may name a post deleted since.
async fn repost(h: &mut Harness, rng: &mut Rng, user: &str, make: bool, seed: u64) {
    let m = &h.model;
    let mine: Vec<(PostId, PostId)> = m
        .reposts
        .iter()
        .filter(|((_, u), _)| u == user)
        .map(|((p, _), item)| (*p, *item))
        .collect();
    let (post, item) = match (make, mine.is_empty()) {
        (false, false) => mine[rng.below(mine.len())],
        _ => {
            let Some((&p, _)) = m.posts.iter().nth(rng.below(m.posts.len().max(1))) else {
                return;
            };
            (p, PostId(0))
        }
    };
    let author = m.posts.get(&post).map(|(a, _)| a.clone());
    if !make && item != PostId(0) && author.is_some() && rng.below(3) == 0 {
        // Deleting the repost's item undoes it.
        h.ingest
            .delete_post(&Caller::Trusted, &item.to_string())
            .await
            .unwrap_or_else(|e| panic!("seed {seed}: deleting {user}'s repost: {e:?}"));
        h.model.reposts.remove(&(post, user.to_owned()));
        return;
    }
    let done = h
        .ingest
        .repost(&Caller::Trusted, user, &post.to_string(), make)
        .await;
    let m = &mut h.model;
    let key = (post, user.to_owned());
    match done {
        Ok(d) => {
            assert!(
                m.users.contains(user),
                "seed {seed}: {user} reposted as no one"
            );
            let held = m.reposts.contains_key(&key);
            assert_eq!(d.changed, held != make, "seed {seed}: {user} {make} {post}");
            match (make, d.changed, d.item) {
                (true, true, Some(item)) => {
                    let author = author.expect("a stored post");
                    assert!(
                        !m.blocked(user, &author),
                        "seed {seed}: a repost across a block"
                    );
                    assert_ne!(author, user, "seed {seed}: one's own post reposted");
                    m.reposts.insert(key, item);
                }
                (false, true, _) => {
                    m.reposts.remove(&key);
                }
                _ => {}
            }
        }
        Err(e) => {
            let why = e.code();
            let author = author.unwrap_or_default();
            let fine = match why {
                "blocked" => m.blocked(user, &author),
                "cannot_repost_own" => author == user,
                "post_not_found" => m.suspended.contains(&author) || !m.posts.contains_key(&post),
                _ => !m.users.contains(user) || m.suspended.contains(user),
            };
            assert!(fine, "seed {seed}: {user} {make} {post}: {why}");
        }
    }
}

/// `user` marks a random post read: the furthest place stays.
async fn mark(h: &mut Harness, rng: &mut Rng, user: &str, seed: u64) {
    let posts = &h.model.posts;
    let Some((&p, _)) = posts.iter().nth(rng.below(posts.len().max(1))) else {
        return;
    };
    let id = p.to_string();
    let set = h
        .ingest
        .set_marker(&Caller::Trusted, user, "home", &id, false);
    if let Ok((held, _)) = set.await {
        let kept = h.model.markers.entry(user.to_owned()).or_insert(p);
        *kept = (*kept).max(p);
        assert_eq!(held.last_read, *kept, "seed {seed}: the furthest place");
    }
}

/// `user` likes (or unlikes) a random post, as the rules allow.
async fn like(h: &mut Harness, rng: &mut Rng, user: &str, make: bool, seed: u64) {
    let posts = &h.model.posts;
    // An unlike mostly takes back one of the user's likes.
    let mine: Vec<PostId> = h
        .model
        .likes
        .iter()
        .filter(|(_, u)| u == user)
        .map(|(p, _)| *p)
        .collect();
    let picked = match (make, mine.is_empty()) {
        (false, false) if rng.below(4) > 0 => posts.get_key_value(&mine[rng.below(mine.len())]),
        _ => posts.iter().nth(rng.below(posts.len().max(1))),
    };
    let Some((&p, (author, _))) = picked else {
        return;
    };
    let author = author.clone();
    let done = h
        .ingest
        .like(&Caller::Trusted, user, &p.to_string(), make)
        .await;
    let m = &mut h.model;
    match done {
        Ok(changed) => {
            let pair = (p, user.to_owned());
            assert!(
                m.users.contains(user),
                "seed {seed}: {user} liked as no one"
            );
            assert!(
                !make || !m.blocked(user, &author),
                "seed {seed}: a like across a block"
            );
            let was = if make {
                !m.likes.insert(pair)
            } else {
                m.likes.remove(&pair)
            };
            assert_eq!(changed, was != make, "seed {seed}: {user} {make} {p}");
        }
        Err(e) if e.code() == "blocked" => assert!(m.blocked(user, &author), "seed {seed}"),
        Err(e) => {
            let why = e.code();
            let gone = !m.users.contains(user) || m.suspended.contains(&author);
            assert!(gone || m.suspended.contains(user), "seed {seed}: {why}");
        }
    }
}

/// Small sizes force floors, truncation, bucket retention and paging past
/// what is stored; they vary with the seed.
pub fn feed(model: FeedModel, embed: bool, seed: u64) -> FeedConfig {
    FeedConfig {
        model,
        embed,
        cache_size: 1 + (seed as usize % 4),
        time_bucket_ms: 1 + seed % 3,
        bucket_size: 1 + (seed as usize % 3),
        bucket_retention: 1 + (seed as usize / 3 % 3),
        // Both ways: shown (the default) and not.
        own_posts: seed % 2 == 1,
        // Hybrid fanout off, and on with thresholds that popular accounts
        // cross both ways as follows come and go.
        hybrid: match seed % 4 {
            0 => Hybrid::Off,
            n => Hybrid::Above(1 + n.min(2)),
        },
        ..FeedConfig::default()
    }
}

/// Every feed model, linked and embedded, returns what fanout on read
/// returns, over the histories of `seeds` (`SOCIALITE_SEED` picks one
/// instead), with the hybrid threshold crossed both ways.
pub async fn every_model_matches_the_oracle(open: Opener, seeds: impl IntoIterator<Item = u64>) {
    let seeds: Vec<u64> = match std::env::var("SOCIALITE_SEED") {
        Ok(s) => vec![s.parse().expect("SOCIALITE_SEED is a number")],
        Err(_) => seeds.into_iter().collect(),
    };
    let (mut up, mut down) = (0, 0);
    for &seed in &seeds {
        for model in FeedModel::ALL {
            for embed in [false, true] {
                let Some((u, d)) = run(open, seed, 250, 12, feed(model, embed, seed)).await else {
                    return;
                };
                (up, down) = (up + u, down + d);
            }
        }
    }
    // Hybrid fanout was exercised: authors became big, and small again.
    if seeds.len() > 1 {
        assert!(up > 0 && down > 0, "crossings up {up}, down {down}");
    }
    eprintln!("hybrid threshold crossings: {up} up, {down} down");
}
