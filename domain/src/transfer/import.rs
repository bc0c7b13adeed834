//! A record loaded into a store (`socialite_core::transfer`): the act it
//! holds ([`Act::of`]), made by the one transfer planner
//! ([`crate::transfer::apply`]) as a restore ([`Mode::Restore`]), with no
//! events (an import's ledger is quiet: [`crate::write::Write::emits`]) and
//! the notices the act made. Idempotent: a record the store holds already
//! changes nothing, so a rerun of an import neither doubles nor loses a
//! record.
//!
//! An import restores what the source *held*; it does not decide again
//! acts that were valid when they were made, and still refuses what no
//! write could have made: each difference from a replay, and its reason,
//! is decided in [`crate::transfer::mode`]. The limits of the write path
//! are checked before, in [`crate::transfer::admit`].

use crate::graph::edges;
use crate::notifications::notify;
use crate::plan::Txn;
use crate::transfer::act::Act;
pub use crate::transfer::admit::Caps;
use crate::transfer::apply::{apply, followed, make, told};
use crate::transfer::mode::Mode;
use crate::transfer::record::Record;

/// Loads `records` in `txn`, in order, under `caps`; how many changed
/// something. A run of follows (an export holds each follower's together)
/// is made at once ([`crate::graph::edges`]), then its notices at once; a
/// run of posts (an export holds them in id order) or of memberships is
/// read ahead at once, made one by one, then its notices made at once.
pub async fn import_records<T: Txn>(
    txn: &mut T,
    records: &[Record],
    caps: &Caps,
) -> Result<usize, T::Error> {
    let mode = Mode::Restore(*caps);
    let mut changed = 0;
    let mut rest = records;
    while let Some(first) = rest.first() {
        let posts = rest
            .iter()
            .take_while(|r| matches!(r, Record::Post { .. }))
            .count();
        let members = rest
            .iter()
            .take_while(|r| matches!(r, Record::Member { .. }))
            .count();
        if posts > 1 || members > 1 {
            let (run, after) = rest.split_at(posts.max(members));
            match posts > 1 {
                true => read_ahead_posts(txn, run).await?,
                false => read_ahead_members(txn, run).await?,
            }
            let acts: Vec<Act> = run.iter().map(Act::of).collect();
            for act in &acts {
                changed += usize::from(make(txn, act, mode).await?);
            }
            tell_all(txn, &acts, mode).await?;
            rest = after;
            continue;
        }
        let follows = rest
            .iter()
            .take_while(|r| matches!(r, Record::Follow { .. }))
            .count();
        if follows < 2 {
            changed += usize::from(import_record(txn, first, caps).await?);
            rest = &rest[1..];
            continue;
        }
        let (run, after) = rest.split_at(follows);
        let acts: Vec<Act> = run.iter().map(Act::of).collect();
        let mut changes = Vec::with_capacity(acts.len());
        for act in &acts {
            mode.check(act)?;
            if let Act::Event(event) = act {
                changes.extend(followed(event, mode).transpose()?);
            }
        }
        changed += edges::change_edges(txn, &changes).await?;
        tell_all(txn, &acts, mode).await?;
        rest = after;
    }
    Ok(changed)
}

/// Makes the notices of a run's acts at once, after the run.
async fn tell_all<T: Txn>(txn: &mut T, acts: &[Act], mode: Mode) -> Result<(), T::Error> {
    if mode.tells() {
        let mut notices = Vec::new();
        for act in acts {
            notices.extend(told(txn, act).await?);
        }
        notify::apply_notices(txn, &notices).await?;
    }
    Ok(())
}

/// Tells `txn` what a run of membership records will read.
async fn read_ahead_members<T: Txn>(txn: &mut T, run: &[Record]) -> Result<(), T::Error> {
    let pairs: Vec<_> = run
        .iter()
        .filter_map(|r| match r {
            Record::Member { group, user } => Some((group, user)),
            _ => None,
        })
        .collect();
    txn.read_ahead_members(&pairs).await
}

/// Tells `txn` what a run of post records will read: each post (is it
/// held?), the posts it answers or carries, and the users it names (an
/// import lets a block stand, so it reads none).
async fn read_ahead_posts<T: Txn>(txn: &mut T, run: &[Record]) -> Result<(), T::Error> {
    let mut posts = Vec::with_capacity(run.len() * 2);
    let mut users = Vec::with_capacity(run.len());
    for record in run {
        let Record::Post { post, .. } = record else {
            continue;
        };
        posts.push(post.id);
        posts.extend(post.reply_to.iter().chain(&post.repost_of).map(|r| r.id));
        users.push(&post.author);
        users.extend(&post.mentions);
        users.extend(
            post.reply_to
                .iter()
                .chain(&post.repost_of)
                .map(|r| &r.author),
        );
    }
    posts.sort_unstable();
    posts.dedup();
    users.sort_unstable();
    users.dedup();
    txn.read_ahead_posts(&posts, &users).await
}

/// Loads `record` in `txn` under `caps`, with the notices its act made;
/// whether it changed anything.
pub async fn import_record<T: Txn>(
    txn: &mut T,
    record: &Record,
    caps: &Caps,
) -> Result<bool, T::Error> {
    apply(txn, &Act::of(record), Mode::Restore(*caps)).await
}
