//! The firehose: the network's public acts, in log order, for other
//! systems to follow from a cursor. Which acts are public, what a cursor is
//! and what a filter admits are the domain's (`socialite_domain::firehose`,
//! re-exported here); a [`Reader`] follows the log through the
//! [`EventLog::tail`](crate::ports::EventLog::tail) of its backend.

mod reader;

pub use reader::{Delivered, Reader};
pub use socialite_domain::firehose::{cursor, filter, AccountStatus, Kind, PublicAct};
