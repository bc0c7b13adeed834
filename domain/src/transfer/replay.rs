//! An event of another deployment's log written again here: a migration's
//! catch-up (`socialite_core::transfer`). Each event is made by the one
//! transfer planner ([`crate::transfer::apply`]) as a replay
//! ([`Mode::Replay`]): as the write that queued it, with its ids and times,
//! under every rule of that write, queuing its events here as that write
//! does (fanout keeps the timelines built so far right). How that differs
//! from an import, and why, is decided in [`crate::transfer::mode`].
//!
//! Each replay makes its entity what the event says it became, so events
//! replayed over a state that already holds some of them end where the
//! source ended: the catch-up may start a little before the copy's point.
//! A user's deletion is replayed whole, by the caller, on its last event
//! ([`deleted_user`]): it runs in steps of its own transactions.

use crate::event::Event;
use crate::ids::UserId;
use crate::plan::Txn;
use crate::transfer::act::Act;
use crate::transfer::apply::apply;
use crate::transfer::mode::Mode;

/// The user whose deletion `event` ends, to be deleted here whole.
pub fn deleted_user(event: &Event) -> Option<&UserId> {
    match event {
        Event::TimelineDropped { user, .. } => Some(user),
        _ => None,
    }
}

/// Replays `event` in `txn`; whether it changed anything. A deletion's
/// events replay as nothing here: the deletion is replayed whole on its
/// last ([`deleted_user`]), and its other events are its steps.
pub async fn replay_event<T: Txn>(txn: &mut T, event: &Event) -> Result<bool, T::Error> {
    apply(txn, &Act::Event(event.clone()), Mode::Replay).await
}
