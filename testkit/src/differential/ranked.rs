//! The ranked orders in random histories: readers set priorities for
//! accounts and ask to see less like posts, and every reader's balanced
//! home timeline, paged at the check's page size, holds exactly what the
//! oracle's newest-first timeline shows but the posts they asked to see
//! less like, each once (a priority orders, it never adds or removes).

use super::harness::Harness;
use super::model::Model;
use socialite_core::ids::PostId;
use socialite_core::reads::ranked::Order;
use socialite_core::sim::Rng;
use socialite_domain::accounts::access::Caller;
use std::collections::BTreeSet;

/// `user` gives a random account a priority from -2 to 2 (0 clears it).
pub(super) async fn priority(h: &mut Harness, rng: &mut Rng, user: &str, seed: u64) {
    let m = &h.model;
    let Some(target) = m.users.iter().nth(rng.below(m.users.len().max(1))).cloned() else {
        return;
    };
    let level = rng.below(5) as i64 - 2;
    let done = h
        .ingest
        .set_priority(&Caller::Trusted, user, &target, level)
        .await;
    let m = &mut h.model;
    let pair = Model::pair(user, &target);
    match done {
        Ok(_) if level == 0 => {
            m.priorities.remove(&pair);
        }
        Ok(_) => {
            m.priorities.insert(pair, level as i8);
        }
        Err(e) => {
            let gone = |u: &str| !m.users.contains(u) || m.suspended.contains(u);
            let fine = match e.code() {
                "cannot_prioritize_self" => user == target,
                _ => gone(user) || gone(&target),
            };
            assert!(fine, "seed {seed}: {user} giving {target} {level}: {e:?}");
        }
    }
}

/// `user` asks to see less like a post of their home timeline, or takes
/// one such ask back.
pub(super) async fn show_less(h: &mut Harness, rng: &mut Rng, user: &str, seed: u64) {
    let m = &h.model;
    let on = rng.below(3) > 0;
    let post = match on {
        true => {
            let shown: Vec<PostId> = m.timeline(user).into_iter().map(|s| s.post).collect();
            match shown.is_empty() {
                true => return,
                false => shown[rng.below(shown.len())],
            }
        }
        false => {
            let mine: Vec<PostId> = m
                .shown_less
                .iter()
                .filter(|(u, _)| u == user)
                .map(|(_, p)| *p)
                .collect();
            match mine.is_empty() {
                true => return,
                false => mine[rng.below(mine.len())],
            }
        }
    };
    let done = h
        .ingest
        .show_less(&Caller::Trusted, user, &post.to_string(), on)
        .await;
    let m = &mut h.model;
    match done {
        Ok(_) if on => {
            m.shown_less.insert((user.to_owned(), post));
        }
        Ok(_) => {
            m.shown_less.remove(&(user.to_owned(), post));
        }
        Err(e) => assert!(
            !m.users.contains(user) || m.suspended.contains(user),
            "seed {seed}: {user} showing less of {post} ({on}): {e:?}"
        ),
    }
}

impl Harness {
    /// Pages through `u`'s balanced home timeline `limit` entries at a
    /// time: what latest shows but the posts `u` sees less of, each once.
    pub async fn check_balanced(&self, seed: u64, step: usize, u: &str, limit: u64) {
        let config = format!("{} embed={}", self.feed.model, self.feed.embed);
        let mut got = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let page = self
                .reads
                .ranked_timeline(
                    &Caller::Trusted,
                    u,
                    None,
                    Order::Balanced,
                    Some(limit),
                    cursor.as_deref(),
                    None,
                )
                .await
                .unwrap_or_else(|e| {
                    panic!("seed {seed} step {step} {config}: {u} balanced: {e:?}")
                });
            assert!(!page.fallback, "seed {seed} step {step}: ranked in time");
            got.extend(page.items.iter().map(|i| i.item.post.id));
            match page.next_cursor {
                Some(c) => cursor = Some(c),
                None => break,
            }
            assert!(got.len() <= 100_000, "seed {seed}: paging does not end");
        }
        let once: BTreeSet<PostId> = got.iter().copied().collect();
        assert_eq!(
            once.len(),
            got.len(),
            "seed {seed} step {step} {config}: {u} balanced repeats: {got:?}"
        );
        let m = &self.model;
        let expected: BTreeSet<PostId> = m
            .timeline(u)
            .into_iter()
            .map(|s| s.post)
            .filter(|p| !m.shown_less.contains(&(u.to_owned(), *p)))
            .collect();
        assert_eq!(
            once, expected,
            "seed {seed} step {step} {config}: balanced home of {u} at page size {limit}"
        );
    }
}
