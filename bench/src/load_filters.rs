//! `socialite load --filters N`: keyword filters for every second user
//! (even ids), so one run reads pages with and without them (the
//! "filtered page" row of BENCHMARKS.md). Each gets N filters of 10
//! whole-word phrases; filter 1 warns of `post 3` and filter 2 hides
//! `post 5` (each one round of the seed posts), the rest are words no
//! post holds: their cost is the matching, not the pages they empty.

use crate::progress::Progress;
use socialite_core::ids::UserId;
use socialite_core::model::filter::{Contexts, Filter, FilterAction, FilterContext, Phrase};
use socialite_embedded::EmbeddedStore;

/// Phrases per filter.
pub const PHRASES: usize = 10;
/// Users given filters per write.
const CHUNK: usize = 200;

fn filters_of(user: usize, count: usize) -> Vec<Filter> {
    (1..=count as u64)
        .map(|id| {
            let phrases = (0..PHRASES)
                .map(|p| Phrase {
                    text: match (id, p) {
                        (1, 0) => "post 3".to_owned(),
                        (2, 0) => "post 5".to_owned(),
                        _ => format!("w{user}f{id}p{p}"),
                    },
                    whole_word: true,
                })
                .collect();
            Filter {
                id,
                title: format!("filter {id}"),
                phrases,
                contexts: Contexts::of(FilterContext::ALL),
                action: match id {
                    2 => FilterAction::Hide,
                    _ => FilterAction::Warn,
                },
                expires_at_ms: None,
            }
        })
        .collect()
}

/// Gives `count` filters to each even user of `users` (user `i` is
/// `name(i)`); how many got them.
pub async fn give_filters(
    store: &EmbeddedStore,
    users: usize,
    count: usize,
    name: impl Fn(usize) -> UserId,
) -> Result<usize, String> {
    let mut progress = Progress::new("filters", users.div_ceil(2) as u64);
    let mut done = 0;
    let mut batch = Vec::with_capacity(CHUNK);
    for i in (0..users).step_by(2) {
        batch.push((name(i), filters_of(i, count)));
        if batch.len() >= CHUNK || i + 2 >= users {
            progress.add(batch.len() as u64);
            done += store
                .import_filters(std::mem::take(&mut batch))
                .await
                .map_err(|e| e.chain())?;
        }
    }
    progress.finish();
    Ok(done)
}
