//! A user's notifications as the APIs read them: entries grouped, their
//! actors as the reader may see them, and the unread count against the
//! notifications marker ([`reads`]). What a user is told of is the
//! domain's (`socialite_domain::notifications`); notices are applied by
//! fanout (`crate::feed`).

mod reads;

pub use reads::Notification;
