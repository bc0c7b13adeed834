//! What readers do in a random history besides reading: like, repost,
//! reply, and mark timelines and notifications read, each checked against
//! what the rules allow and the model holds.

use super::harness::Harness;
use super::model::{Filtering, Model};
use socialite_core::filters::FilterChange;
use socialite_core::ids::PostId;
use socialite_core::model::filter::{FilterAction, FilterContext, Phrase};
use socialite_core::sim::Rng;
use socialite_domain::accounts::access::Caller;
use socialite_domain::graph::relations::FollowOption;

/// `user` likes or unlikes a random post, reposts one or undoes it,
/// replies to one, marks one read, sets a follow option, a keyword filter,
/// a priority for an account, or asks to see less like a post.
pub(super) async fn reader_act(h: &mut Harness, rng: &mut Rng, user: &str, seed: u64) {
    let act = rng.below(32);
    if std::env::var_os("SOCIALITE_TRACE").is_some() {
        eprintln!("  reader {user}: act {act}");
    }
    match act {
        28..=29 => super::ranked::priority(h, rng, user, seed).await,
        30..=31 => super::ranked::show_less(h, rng, user, seed).await,
        16..=21 => follow_option(h, rng, user, seed).await,
        22..=27 => filter(h, rng, user, seed).await,
        0..=3 => like(h, rng, user, true, seed).await,
        4..=5 => like(h, rng, user, false, seed).await,
        6..=8 => repost(h, rng, user, true, seed).await,
        9 => repost(h, rng, user, false, seed).await,
        10..=12 => reply(h, rng, user, None, seed).await,
        13 => mark_notifications(h, user, seed).await,
        _ => mark(h, rng, user, seed).await,
    }
}

/// `user` turns a follow option on or off for an account they follow (or
/// now and then any account): hide its reposts, show all its replies, or
/// be alerted of its posts.
/// Refused unless `user` follows it.
async fn follow_option(h: &mut Harness, rng: &mut Rng, user: &str, seed: u64) {
    let m = &h.model;
    let followed: Vec<&String> = m
        .follows
        .keys()
        .filter(|(f, _)| f == user)
        .map(|(_, t)| t)
        .collect();
    let target = match (followed.is_empty(), rng.below(5)) {
        (false, 0..=3) => followed[rng.below(followed.len())],
        _ => match m.users.iter().nth(rng.below(m.users.len().max(1))) {
            Some(t) => t,
            None => return,
        },
    };
    let target = target.clone();
    let option = match rng.below(3) {
        0 => FollowOption::HideReposts,
        1 => FollowOption::AllReplies,
        _ => FollowOption::Notify,
    };
    let on = rng.below(3) > 0;
    // A millisecond of its own for the option's time, so every post is
    // plainly before or after it (posts of the same millisecond as a
    // `notify` turned on count as after it).
    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    let at_ms = socialite_core::ids::now_ms();
    let done = h
        .ingest
        .set_follow_options(&Caller::Trusted, user, &target, &[(option, on)])
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    let m = &mut h.model;
    let pair = Model::pair(user, &target);
    match done {
        Ok(_) if option == FollowOption::Notify => {
            if on {
                m.notify.entry(pair).or_insert(at_ms); // kept if on already
                                                       // The account answers the user: a post that tells them
                                                       // already, as a reply, so it alerts them of nothing more.
                reply_where(h, rng, &target, |_, author| author == user, seed).await;
            } else {
                m.notify.remove(&pair);
            }
        }
        Ok(_) => {
            let set = match option {
                FollowOption::HideReposts => &mut m.reposts_off,
                _ => &mut m.replies_on,
            };
            match on {
                true => set.insert(pair),
                false => set.remove(&pair),
            };
            if on && option == FollowOption::AllReplies {
                // The target answers someone the user does not follow:
                // the option's case.
                reply(h, rng, &target, Some(user), seed).await;
            }
        }
        Err(e) => {
            let fine = match e.code() {
                "not_following" => on && !m.follows.contains_key(&pair),
                _ => !m.users.contains(user) || m.suspended.contains(user),
            };
            assert!(
                fine,
                "seed {seed}: {user} setting {option:?} for {target}: {e:?}"
            );
        }
    }
}

/// `user` makes a hiding keyword filter (a word of the histories'
/// messages, [`word_of`]), changes where one applies, or deletes one.
async fn filter(h: &mut Harness, rng: &mut Rng, user: &str, seed: u64) {
    const CONTEXTS: [&str; 4] = ["home", "lists", "groups", "mentions"];
    let mine: Vec<u64> = h
        .model
        .filters
        .keys()
        .filter(|(u, _)| u == user)
        .map(|(_, id)| *id)
        .collect();
    let contexts: Vec<&'static str> = CONTEXTS.into_iter().filter(|_| rng.below(3) > 0).collect();
    let contexts = match contexts.is_empty() {
        true => vec!["home"],
        false => contexts,
    };
    let as_contexts = |c: &[&str]| -> Option<Vec<FilterContext>> {
        Some(c.iter().map(|n| FilterContext::parse(n).unwrap()).collect())
    };
    let (id, change, word, whole_word) = match (mine.is_empty(), rng.below(4)) {
        (false, 0) => {
            let id = mine[rng.below(mine.len())];
            let done = h
                .ingest
                .remove_filter(&Caller::Trusted, user, &id.to_string())
                .await;
            let m = &mut h.model;
            match done {
                Ok(gone) => assert!(gone && m.filters.remove(&(user.to_owned(), id)).is_some()),
                Err(e) => assert!(
                    !m.users.contains(user) || m.suspended.contains(user),
                    "seed {seed}: {e:?}"
                ),
            }
            return;
        }
        (false, 1) => {
            let id = mine[rng.below(mine.len())];
            let change = FilterChange {
                contexts: as_contexts(&contexts),
                ..FilterChange::default()
            };
            (Some(id), change, String::new(), false)
        }
        _ => {
            let word = word_of(&h.model, rng);
            let whole_word = rng.below(3) > 0;
            let change = FilterChange {
                phrases: Some(vec![Phrase {
                    text: word.clone(),
                    whole_word,
                }]),
                contexts: as_contexts(&contexts),
                action: Some(FilterAction::Hide),
                ..FilterChange::default()
            };
            (None, change, word, whole_word)
        }
    };
    let id_text = id.map(|i| i.to_string());
    let done = h
        .ingest
        .put_filter(&Caller::Trusted, user, id_text.as_deref(), &change)
        .await;
    let m = &mut h.model;
    match done {
        Ok(f) => {
            let slot = m.filters.entry((user.to_owned(), f.id));
            let kept = slot.or_insert(Filtering {
                word,
                whole_word,
                contexts: Vec::new(),
            });
            kept.contexts = contexts;
        }
        Err(e) => assert!(
            !m.users.contains(user) || m.suspended.contains(user),
            "seed {seed}: {user}'s filter: {e:?}"
        ),
    }
}

/// A word of a random post's message (all of it, or its first half: a
/// whole-word phrase that is part of a word matches nothing there), upper
/// case now and then.
fn word_of(m: &Model, rng: &mut Rng) -> String {
    let Some((_, message)) = m.posts.values().nth(rng.below(m.posts.len().max(1))) else {
        return "by".to_owned();
    };
    let words: Vec<&str> = message
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    let word = words[rng.below(words.len())];
    let word = match rng.below(2) {
        0 => &word[..word.len().div_ceil(2)],
        _ => word,
    };
    match rng.below(4) {
        0 => word.to_uppercase(),
        _ => word.to_owned(),
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
/// allow; with `stranger_to`, to a post by an account that user does not
/// follow, where there is one.
async fn reply(h: &mut Harness, rng: &mut Rng, user: &str, stranger_to: Option<&str>, seed: u64) {
    let strange = |m: &Model, author: &String| {
        stranger_to.is_none_or(|r| r != author && !m.follows.contains_key(&Model::pair(r, author)))
    };
    reply_where(h, rng, user, strange, seed).await
}

/// `user` replies to a random post whose author `which` takes.
async fn reply_where(
    h: &mut Harness,
    rng: &mut Rng,
    user: &str,
    which: impl Fn(&Model, &String) -> bool,
    seed: u64,
) {
    let m = &h.model;
    let posts: Vec<(&PostId, &(String, String))> =
        m.posts.iter().filter(|(_, (a, _))| which(m, a)).collect();
    let Some(&(&p, (author, _))) = posts.get(rng.below(posts.len().max(1))) else {
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
