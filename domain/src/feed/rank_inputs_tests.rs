//! Tests of the inputs ranked orders keep between first pages.

use super::*;

const HOUR: u64 = 3_600_000;
const NOW: u64 = 1_800_000_000_000;

fn user(s: &str) -> UserId {
    UserId::parse(s).unwrap()
}

/// A post by `author`, `age` minutes before [`NOW`], with `likes`.
fn fresh(n: u64, author: &str, age_min: u64, likes: u64) -> Fresh {
    let id = PostId(PostId::first_at(NOW - age_min * 60_000).0 + n);
    Fresh {
        position: id,
        post: id,
        author: user(author),
        placer: user(author),
        reposted_by: 0,
        counts: PostCounts {
            likes,
            ..PostCounts::default()
        },
    }
}

/// A network of readers' candidates, newest first: a prolific author, a
/// few others, one liked post.
fn network(from_min: u64, to_min: u64) -> Vec<Fresh> {
    let mut out: Vec<Fresh> = (from_min..to_min)
        .map(|m| {
            let author = match m % 7 {
                0..=3 => "prolific",
                4 => "quiet",
                5 => "carol",
                _ => "dave",
            };
            fresh(m, author, m, if m % 11 == 0 { 5 } else { 0 })
        })
        .collect();
    out.sort_by_key(|f| std::cmp::Reverse(f.position));
    out
}

fn posts(inputs: &RankInputs, order: &[Placed]) -> Vec<PostId> {
    order.iter().map(|r| inputs.entry(r.index).post).collect()
}

#[test]
fn an_extension_ranks_as_a_full_ranking_of_the_same_entries() {
    let w = Weights::default();
    let signals = Signals {
        interactions: [(user("carol"), 3)].into(),
        priorities: [(user("dave"), 1)].into(),
        posted: HashMap::new(),
    };
    // Ranked an hour ago from what was there then (ages 60..600 min)...
    let old = RankInputs::new(&network(60, 600), signals.clone(), HashSet::new());
    // ...then extended by the last hour's entries, read again from 70
    // minutes back (the entries between were there already).
    let from = PostId::first_at(NOW - 70 * 60_000);
    let floor = PostId::first_at(NOW - 48 * HOUR);
    let since = network(0, 71);
    let extended = old.extended(&since, floor, 1200);
    let full = RankInputs::new(&network(0, 600), signals, HashSet::new());
    assert_eq!(extended.len(), full.len());
    let (a, b) = (extended.balanced(&w, NOW, 50), full.balanced(&w, NOW, 50));
    assert_eq!(posts(&extended, &a), posts(&full, &b));
    for (x, y) in a.iter().zip(&b) {
        assert_eq!((x.parts, x.reason), (y.parts, y.reason));
    }
    assert_eq!(
        posts(&extended, &extended.catch_up(Some(from), &w)),
        posts(&full, &full.catch_up(Some(from), &w))
    );
    // Only what it does not hold read again: the same.
    let held = old.positions_from(from);
    assert_eq!(held.len(), 11, "minutes 60 to 70");
    let unheld: Vec<Fresh> = since
        .into_iter()
        .filter(|f| !held.contains(&f.position))
        .collect();
    let lean = old.extended(&unheld, floor, 1200);
    assert_eq!(posts(&lean, &lean.balanced(&w, NOW, 50)), posts(&full, &b));
}

#[test]
fn the_order_of_kept_entries_does_not_move_with_the_clock() {
    let w = Weights::default();
    let inputs = RankInputs::new(&network(0, 900), Signals::default(), HashSet::new());
    let now = posts(&inputs, &inputs.balanced(&w, NOW, 50));
    let later = posts(&inputs, &inputs.balanced(&w, NOW + 7 * HOUR, 50));
    assert_eq!(now, later);
}

#[test]
fn a_repost_since_places_the_post_anew_and_the_window_and_bound_hold() {
    let old = RankInputs::new(&network(10, 100), Signals::default(), HashSet::new());
    let reposted = old.entry(old.len() - 1);
    let repost = PostId::first_at(NOW - 60_000);
    let since = vec![Fresh {
        position: repost,
        post: reposted.post,
        author: reposted.author.clone(),
        placer: user("erin"),
        reposted_by: 1,
        counts: PostCounts::default(),
    }];
    let out = old.extended(&since, PostId(0), 1200);
    assert_eq!(out.len(), old.len(), "moved, not added");
    let first = out.entry(0);
    assert_eq!((first.position, first.post), (repost, reposted.post));
    assert_eq!(first.placer, &user("erin"));
    assert_eq!(
        (0..out.len())
            .filter(|&i| out.entry(i).post == reposted.post)
            .count(),
        1
    );
    // The window's floor drops what fell out of it; the bound keeps the newest.
    let floor = PostId::first_at(NOW - 50 * 60_000);
    let cut = old.extended(&[], floor, 1200);
    assert!((0..cut.len()).all(|i| cut.entry(i).position >= floor));
    assert_eq!(cut.len(), 41, "minutes 10 to 50");
    let few = old.extended(&since, PostId(0), 5);
    assert_eq!(few.len(), 5);
    assert_eq!(few.entry(0).position, repost);
}

#[test]
fn shown_less_leaves_a_post_out_and_lowers_its_author() {
    let w = Weights::default();
    let all = network(0, 70);
    let carol: Vec<PostId> = all
        .iter()
        .filter(|f| f.author == user("carol"))
        .map(|f| f.post)
        .collect();
    let less: HashSet<PostId> = carol[..2].iter().copied().collect();
    let plain = RankInputs::new(&all, Signals::default(), HashSet::new());
    let lowered = RankInputs::new(&all, Signals::default(), less.clone());
    let order = lowered.balanced(&w, NOW, 50);
    assert_eq!(order.len(), plain.len() - 2);
    assert!(posts(&lowered, &order).iter().all(|p| !less.contains(p)));
    let carols = order
        .iter()
        .find(|r| lowered.entry(r.index).author == &user("carol"))
        .unwrap();
    assert_eq!(carols.parts.priority, 0.25, "two steps down");
}

#[test]
fn a_recount_ranks_as_a_full_ranking_with_the_new_counts() {
    let w = Weights::default();
    let old = network(0, 300);
    let signals = Signals {
        priorities: [(user("quiet"), 2)].into(),
        ..Signals::default()
    };
    let less: HashSet<PostId> = [old[4].post].into();
    let inputs = RankInputs::new(&old, signals.clone(), less.clone());
    let mut now: Vec<Fresh> = old.clone();
    now[150].counts.likes = 40;
    let counts: Vec<PostCounts> = now.iter().map(|f| f.counts).collect();
    // The reader liked carol's posts since: their interactions are read
    // again; their priorities and "show less" posts are the inputs' own.
    let interactions: HashMap<UserId, u32> = [(user("carol"), 4)].into();
    let recounted = inputs.recounted(&counts, interactions.clone());
    let full = RankInputs::new(
        &now,
        Signals {
            interactions,
            ..signals
        },
        less,
    );
    let (a, b) = (recounted.balanced(&w, NOW, 50), full.balanced(&w, NOW, 50));
    assert_eq!(posts(&recounted, &a), posts(&full, &b));
    assert_ne!(
        posts(&recounted, &a),
        posts(&inputs, &inputs.balanced(&w, NOW, 50))
    );
}

#[test]
fn the_inputs_rank_as_the_rule_ranks_the_same_candidates() {
    // The inputs rank by their authors' places; the rule, given each
    // candidate's author by id and the signals as the inputs read them
    // (rarity over all held, a step down per post shown less), gives the
    // same order and parts.
    let w = Weights::default();
    let mut all = network(0, 400);
    all[7].placer = user("reposter");
    all[7].reposted_by = 2;
    let less: HashSet<PostId> = [all[3].post, all[9].post].into();
    let signals = Signals {
        interactions: [(user("carol"), 3), (user("quiet"), 1)].into(),
        priorities: [(user("dave"), 1), (user("prolific"), -1)].into(),
        posted: HashMap::new(),
    };
    let inputs = RankInputs::new(&all, signals.clone(), less.clone());
    let mut by_id = signals;
    for f in &all {
        *by_id.posted.entry(f.author.clone()).or_insert(0) += 1;
        if less.contains(&f.post) {
            let level = by_id.priorities.entry(f.author.clone()).or_insert(0);
            *level = level.saturating_sub(1).max(MIN_PRIORITY);
        }
    }
    let shown: Vec<&Fresh> = all.iter().filter(|f| !less.contains(&f.post)).collect();
    let candidates: Vec<rank::Candidate> = shown
        .iter()
        .map(|f| rank::Candidate {
            position: f.position,
            author: f.author.clone(),
            at_ms: f.post.unix_ms(),
            counts: f.counts,
            reposted_by: f.reposted_by,
        })
        .collect();
    let rule = rank::balanced(&candidates, &by_id, &w, NOW, 50);
    let ranked = inputs.balanced(&w, NOW, 50);
    assert_eq!(ranked.len(), rule.len());
    for (a, b) in ranked.iter().zip(&rule) {
        assert_eq!(inputs.entry(a.index).post, shown[b.index].post);
        assert_eq!((a.parts, a.reason), (b.parts, b.reason));
    }
    let rule = rank::catch_up(&candidates, &by_id, &w);
    let ranked = inputs.catch_up(None, &w);
    let pick = |r: &Placed| (r.parts.score, r.more, r.reason);
    assert_eq!(
        ranked.iter().map(pick).collect::<Vec<_>>(),
        rule.iter().map(pick).collect::<Vec<_>>()
    );
}

#[test]
fn a_first_page_then_the_rest_is_the_whole_order() {
    let w = Weights::default();
    let mut all = network(0, 500);
    all[11].counts.likes = 30;
    let less: HashSet<PostId> = [all[2].post].into();
    let inputs = RankInputs::new(&all, Signals::default(), less);
    for page in [1, 7, 50, 499, 600] {
        let whole = inputs.balanced(&w, NOW, page);
        let (first, n) = inputs.balanced_first(&w, NOW, page);
        assert_eq!(n, whole.len(), "page {page}");
        assert_eq!(first[..], whole[..page.min(n)], "page {page}");
        let taken: Vec<usize> = first.iter().map(|r| r.index).collect();
        let rest = inputs.balanced_after(&w, NOW, page, &taken);
        assert_eq!(rest[..], whole[first.len()..], "page {page}");
    }
}
