//! A user's notifications as the APIs read them: entries grouped, their
//! actors as the reader may see them, and the unread count against the
//! notifications marker ([`reads`]); the threads a user muted, which tell
//! them nothing more ([`threads`]). What a user is told of is the
//! domain's (`socialite_domain::notifications`); notices are applied by
//! fanout (`crate::feed`), and the alerts of `notify` are derived when
//! read ([`alerts`]).

mod alerts;
mod reads;
mod threads;

pub use reads::Notification;
pub use threads::InStore;
