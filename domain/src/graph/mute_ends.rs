//! Mutes that end by themselves. A mute made with `expires_in` keeps its
//! end beside the relation ([`Step::MuteEnd`], by pair and by time); a
//! sweep in every process that takes writes
//! (`socialite_core::graph::mute_sweep`) finds the ends that have come and
//! lifts each mute through the one unmute path, so the account's posts come
//! back as after any unmute (`Unmuted`: fanout refills the timelines).
//!
//! The rules, decided here for every backend:
//! - muting again replaces the end (a new end, or none: a mute for good),
//!   and tells the worker and the log so (`Muted` again, with the end);
//! - lifting a mute removes its end, and so does the deletion of its keeper;
//! - the sweep lifts a mute only if its end, read in the lifting
//!   transaction, has come: a mute made again since is left alone.

use crate::error::{Error, Result};
use crate::event::Event;
use crate::graph::relations::{MuteTiming, Relation, RelationChange, RelationTransition};
use crate::plan::{Step, Txn};

/// Longest `expires_in` of a mute: a year, in seconds.
pub const MAX_MUTE_S: u64 = 366 * 24 * 3600;

/// When a mute made now for `expires_in_s` seconds ends (ms since the
/// epoch); refuses 0 or more than [`MAX_MUTE_S`] (`invalid_expires_in`).
pub fn end_after(now_ms: u64, expires_in_s: u64) -> Result<u64> {
    if expires_in_s == 0 || expires_in_s > MAX_MUTE_S {
        return Err(Error::invalid(
            "invalid_expires_in",
            format!("`expires_in` is 1 to {MAX_MUTE_S} seconds"),
        ));
    }
    Ok(now_ms + expires_in_s * 1000)
}

/// Refuses a carried mute's end further off than a mute made now can end
/// (a year, and the clock skew a transfer allows): every store keeps it as
/// a signed 64-bit time.
pub fn check_end(at_ms: u64, now_ms: u64) -> Result<()> {
    let latest = now_ms.saturating_add(MAX_MUTE_S * 1000);
    crate::ids::check_time_not_ahead("a mute's end", at_ms, latest)
}

/// The refusal of an end on anything but the making of a mute.
pub fn only_a_mute_ends() -> Error {
    Error::invalid(
        "invalid_expires_in",
        "`expires_in` is for a mute: a block, or the lifting of either, has no end",
    )
}

/// Whether the sweep's lifting of a mute stands: the mute exists and its
/// end, read in the transaction, has come by the sweep's time (an end left
/// without its mute is removed). Every other change goes ahead.
pub async fn still_due<T: Txn>(
    txn: &mut T,
    change: &RelationChange,
    exists: bool,
) -> Result<bool, T::Error> {
    let MuteTiming::IfEndedBy(now_ms) = change.timing() else {
        return Ok(true);
    };
    let end = txn.mute_end(change.user(), change.target()).await?;
    if !exists && end.is_some() {
        // An end whose mute is gone (written by hand, or by an older
        // version): it goes, or the sweep would meet it every time.
        let stale = Step::MuteEnd {
            user: change.user().clone(),
            target: change.target().clone(),
            at_ms: None,
        };
        txn.apply(&[stale]).await?;
    }
    Ok(exists && end.is_some_and(|at| at <= now_ms))
}

/// The end's steps of a mute `change` on a pair where the mute stood
/// (`existed`) or not, with what `transition` decided for the relation:
/// the end set or cleared where it differs from the one kept. A standing
/// mute given another end is a change of its own: `transition` then says
/// so and carries a `Muted` event naming the new end.
pub async fn end_steps<T: Txn>(
    txn: &mut T,
    change: &RelationChange,
    existed: bool,
    transition: &mut RelationTransition,
    edge: Option<Vec<crate::ids::ListName>>,
) -> Result<Vec<Step>, T::Error> {
    if change.relation() != Relation::Mute {
        return Ok(Vec::new());
    }
    let (user, target) = (change.user(), change.target());
    let kept = match existed {
        true => txn.mute_end(user, target).await?,
        false => None,
    };
    let wanted = change.ends_at().filter(|_| change.makes());
    if kept == wanted {
        return Ok(Vec::new());
    }
    if change.makes() && !transition.changed {
        transition.changed = true;
        transition.event = Some(Event::Muted {
            user: user.clone(),
            target: target.clone(),
            edge,
            until_ms: wanted,
        });
    }
    Ok(vec![Step::MuteEnd {
        user: user.clone(),
        target: target.clone(),
        at_ms: wanted,
    }])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_carried_end_is_at_most_a_year_ahead() {
        let now = 1_800_000_000_000;
        assert!(check_end(0, now).is_ok(), "ended long ago");
        assert!(check_end(now + MAX_MUTE_S * 1000, now).is_ok());
        assert_eq!(check_end(u64::MAX, now).unwrap_err().code(), "time_ahead");
    }

    #[test]
    fn an_end_is_one_second_to_a_year_away() {
        assert_eq!(end_after(1_000, 1).unwrap(), 2_000);
        assert_eq!(end_after(0, MAX_MUTE_S).unwrap(), MAX_MUTE_S * 1000);
        for bad in [0, MAX_MUTE_S + 1] {
            assert_eq!(end_after(0, bad).unwrap_err().code(), "invalid_expires_in");
        }
    }
}
