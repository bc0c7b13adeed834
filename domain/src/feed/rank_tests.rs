//! Tests of the ranked orders' rule.

use super::*;

const HOUR: u64 = 3_600_000;
const NOW: u64 = 100 * HOUR;

fn user(s: &str) -> UserId {
    UserId::parse(s).unwrap()
}

/// The `n`th candidate, by `author`, `age` hours old.
fn cand(n: u64, author: &str, age_hours: f64) -> Candidate {
    Candidate {
        position: PostId(1_000_000 - n),
        author: user(author),
        at_ms: NOW - (age_hours * HOUR as f64) as u64,
        counts: PostCounts::default(),
        reposted_by: 0,
    }
}

fn authors(c: &[Candidate], ranked: &[Ranked]) -> Vec<String> {
    ranked
        .iter()
        .map(|r| c[r.index].author.as_str().to_owned())
        .collect()
}

#[test]
fn a_prolific_author_does_not_bury_the_others() {
    // 40 posts of one author and 20 of ten others (two each), spread
    // over the same two hours, the prolific author's the newest.
    let mut c = Vec::new();
    for n in 0..40 {
        c.push(cand(n, "prolific", n as f64 * 0.05));
    }
    for n in 0..20 {
        c.push(cand(
            40 + n,
            &format!("friend{}", n / 2),
            0.1 + n as f64 * 0.05,
        ));
    }
    let ranked = balanced(&c, &Signals::default(), &Weights::default(), NOW, 50);
    let page: Vec<String> = authors(&c, &ranked[..50]);
    // The rule: every other account's candidates are on the first
    // page, and the prolific author holds at most a third of its
    // first ten entries.
    assert_eq!(page.iter().filter(|a| *a != "prolific").count(), 20);
    let top = page[..10].iter().filter(|a| *a == "prolific").count();
    assert!(top <= 3, "{page:?}");
    // Newest first, the prolific author would hold the first page's top 40.
    assert_eq!(ranked.len(), 60);
    // Diversity alone holds the rule, without the lift of rare posters.
    let w = Weights {
        rarity: 0.0,
        ..Weights::default()
    };
    let ranked = balanced(&c, &Signals::default(), &w, NOW, 50);
    let page: Vec<String> = authors(&c, &ranked[..50]);
    assert_eq!(page.iter().filter(|a| *a != "prolific").count(), 20);
    let top = page[..10].iter().filter(|a| *a == "prolific").count();
    assert!(top <= 3, "{page:?}");
}

#[test]
fn priority_lifts_and_lowers_an_author() {
    let c = vec![cand(0, "a", 1.0), cand(1, "b", 1.0), cand(2, "c", 1.0)];
    let w = Weights::default();
    let plain = balanced(&c, &Signals::default(), &w, NOW, 50);
    assert_eq!(authors(&c, &plain), ["a", "b", "c"], "ties: newest first");
    let mut s = Signals::default();
    s.priorities.insert(user("c"), 2);
    s.priorities.insert(user("a"), -2);
    let ranked = balanced(&c, &s, &w, NOW, 50);
    assert_eq!(authors(&c, &ranked), ["c", "b", "a"]);
    assert_eq!(ranked[0].reason, Reason::Priority);
    assert_eq!(ranked[0].parts.priority, 4.0);
    assert_eq!(ranked[2].parts.priority, 0.25);
}

#[test]
fn engagement_affinity_and_recency_each_lift() {
    let mut c = vec![cand(0, "a", 1.0), cand(1, "b", 1.0)];
    c[1].counts.likes = 50;
    let w = Weights::default();
    let ranked = balanced(&c, &Signals::default(), &w, NOW, 50);
    assert_eq!(authors(&c, &ranked), ["b", "a"]);
    assert_eq!(ranked[0].reason, Reason::Popular);
    let mut s = Signals::default();
    s.interactions.insert(user("a"), 200);
    let ranked = balanced(&c, &s, &w, NOW, 50);
    assert_eq!(authors(&c, &ranked), ["a", "b"]);
    assert_eq!(ranked[0].reason, Reason::Affinity);
    // A day older halves four times.
    let old = vec![cand(0, "a", 30.0), cand(1, "b", 6.0)];
    let ranked = balanced(&old, &Signals::default(), &w, NOW, 50);
    assert_eq!(authors(&old, &ranked), ["b", "a"]);
    assert!((ranked[1].parts.recency - 0.5f64.powi(5)).abs() < 1e-9);
}

#[test]
fn the_same_inputs_give_the_same_order() {
    let c: Vec<Candidate> = (0..300)
        .map(|n| {
            let mut x = cand(n, &format!("u{}", n % 17), (n % 29) as f64 * 0.7);
            x.counts.likes = n * 7 % 13;
            x
        })
        .collect();
    let w = Weights::default();
    let one = balanced(&c, &Signals::default(), &w, NOW, 20);
    let two = balanced(&c, &Signals::default(), &w, NOW, 20);
    assert_eq!(one, two);
    let mut seen: Vec<usize> = one.iter().map(|r| r.index).collect();
    seen.sort_unstable();
    assert_eq!(seen, (0..300).collect::<Vec<_>>(), "each candidate once");
}

#[test]
fn catch_up_shows_each_author_once_the_rare_poster_first() {
    let mut c = Vec::new();
    for n in 0..30 {
        c.push(cand(n, "daily", n as f64 * 0.1));
    }
    c.push(cand(30, "weekly", 5.0));
    c.push(cand(31, "hourly", 0.5));
    c[3].counts.likes = 2;
    // The hourly poster posted once since the marker, 48 times in the
    // window: rarity is over the window.
    let mut s = Signals::default();
    s.posted.insert(user("hourly"), 48);
    s.posted.insert(user("daily"), 10);
    let ranked = catch_up(&c, &s, &Weights::default());
    assert_eq!(authors(&c, &ranked), ["weekly", "daily", "hourly"]);
    assert_eq!(ranked[0].reason, Reason::RarelyPosts);
    assert_eq!((ranked[0].more, ranked[1].more), (0, 29));
    assert_eq!(ranked[1].index, 3, "the author's most engaging post");
    assert!(catch_up(&[], &Signals::default(), &Weights::default()).is_empty());
}

/// The balanced order as its rule reads, step by step: each entry is the
/// remaining one with the best weighed score, where an author's entries
/// weigh less with each one already on the page.
fn balanced_by_definition(
    c: &[Candidate],
    bases: &[Parts],
    w: &Weights,
    page: usize,
) -> Vec<usize> {
    let mut left: Vec<usize> = (0..c.len()).collect();
    let mut out = Vec::new();
    let mut on_page: HashMap<&UserId, u32> = HashMap::new();
    while !left.is_empty() {
        let weighed = |i: usize| {
            bases[i].score * diversity(w, on_page.get(&c[i].author).copied().unwrap_or(0))
        };
        let best = (0..left.len())
            .max_by(|&a, &b| {
                weighed(left[a])
                    .total_cmp(&weighed(left[b]))
                    .then(c[left[a]].position.cmp(&c[left[b]].position))
            })
            .unwrap();
        let i = left.swap_remove(best);
        out.push(i);
        *on_page.entry(&c[i].author).or_insert(0) += 1;
        if out.len() % page == 0 {
            on_page.clear();
        }
    }
    out
}

#[test]
fn the_balanced_order_is_its_rule_step_by_step() {
    // Seeded: authors of every size, ages and counts at random.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for round in 0..20 {
        let n = 1 + next(300);
        let c: Vec<Candidate> = (0..n)
            .map(|i| {
                let spread = 1 + next(12);
                let author = format!("a{}", next(spread));
                let mut cand = cand(i, &author, next(48_000) as f64 / 1000.0);
                cand.counts.likes = next(20);
                cand
            })
            .collect();
        // The defaults, a decay that rounds, and factors of 0.
        let w = match round % 4 {
            0 | 1 => Weights::default(),
            2 => Weights {
                diversity_decay: 0.3,
                diversity_floor: 0.1,
                ..Weights::default()
            },
            _ => Weights {
                diversity_decay: 0.0,
                diversity_floor: 0.0,
                ..Weights::default()
            },
        };
        let (scorable, table) = placed(&c, &Signals::default());
        let bases: Vec<Parts> = scorable
            .iter()
            .map(|x| {
                let author = Author {
                    met: 0,
                    level: 0,
                    posted: 1 + next(5) as u32,
                };
                base(x, author, &w, NOW, true)
            })
            .collect();
        let page = 1 + next(60) as usize;
        let got: Vec<usize> = diversify(&scorable, table.len(), &bases, &w, (page, usize::MAX))
            .iter()
            .map(|r| r.index)
            .collect();
        assert_eq!(
            got,
            balanced_by_definition(&c, &bases, &w, page),
            "round {round}"
        );
    }
}
