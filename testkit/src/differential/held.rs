//! The degraded read path under a forced lag: with fanout held back, every
//! timeline still equals its oracle, because reads merge what fanout has
//! not delivered ([`socialite_core::feed::late`]).

use super::harness::Harness;
use super::history::{feed, play};
use crate::open::Opener;
use socialite_core::feed::config::FeedModel;

/// A random history of `seed` on the backend `open` opens: played with
/// fanout delivering, then with fanout held (posts, deletions, unfollows,
/// mutes, blocks, suspensions, reposts, replies and reads, checked against
/// the oracle as they go, none delivered), then released and checked
/// again, stored timelines included.
pub async fn held_fanout_matches_the_oracle(
    open: Opener,
    seed: u64,
    model: FeedModel,
    embed: bool,
) {
    let Some(mut h) = Harness::open(open, feed(model, embed, seed)).await else {
        return;
    };
    play(&mut h, seed, 120, 12).await;
    h.hold_fanout().await;
    play(&mut h, seed ^ 0x4e1d, 160, 12).await;
    let held = h.backends.log.position("fanout").await.unwrap().backlog();
    assert!(
        held > 0,
        "seed {seed}: fanout was held with nothing to deliver"
    );
    h.release_fanout().await;
    h.check_all(seed, usize::MAX).await;
}
