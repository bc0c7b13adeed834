//! When mutes end, on the embedded store: `MUTE_ENDS` by pair (what a
//! change reads) and `MUTES_DUE` by time (what the sweep reads). The rules
//! are `socialite_domain::graph::mute_ends`'; here are their rows.

use crate::tables::*;
use redb::{ReadableTable, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::UserId;

/// Sets the pair's end (`None`: removes it), both rows.
pub(crate) fn put(
    txn: &WriteTransaction,
    user: &str,
    target: &str,
    at_ms: Option<u64>,
) -> Result<()> {
    let mut ends = txn.open_table(MUTE_ENDS).store()?;
    let mut due = txn.open_table(MUTES_DUE).store()?;
    let was = ends.remove((user, target)).store()?.map(|v| v.value());
    if let Some(was) = was {
        due.remove((was, user, target)).store()?;
    }
    if let Some(at) = at_ms {
        ends.insert((user, target), at).store()?;
        due.insert((at, user, target), ()).store()?;
    }
    Ok(())
}

/// Up to `limit` of the pairs whose mute ends by `now_ms`, soonest first.
pub(crate) fn due<T: ReadableTable<(u64, &'static str, &'static str), ()>>(
    table: &T,
    now_ms: u64,
    limit: usize,
) -> Result<Vec<(UserId, UserId)>> {
    let mut out = Vec::new();
    let after_now = now_ms.saturating_add(1);
    for item in table.range(..(after_now, "", "")).store()? {
        let (k, _) = item.store()?;
        let (at, user, target) = k.value();
        if at > now_ms || out.len() >= limit {
            break;
        }
        out.push((
            UserId::from_stored(user.to_owned()),
            UserId::from_stored(target.to_owned()),
        ));
    }
    Ok(out)
}
