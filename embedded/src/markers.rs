//! Markers in `content.redb`: (user, timeline code) → (post id, when set).

use crate::tables::*;
use redb::{ReadableTable, WriteTransaction};
use socialite_core::error::Result;
use socialite_core::ids::PostId;
use socialite_domain::feed::markers::{Marker, MarkerTimeline};

/// The user's markers in `table`, in timeline order.
pub(crate) fn of<T: ReadableTable<(&'static str, u8), (u64, u64)>>(
    table: &T,
    user: &str,
) -> Result<Vec<Marker>> {
    let mut out = Vec::new();
    for item in table.range((user, 0)..=(user, u8::MAX)).store()? {
        let (k, v) = item.store()?;
        let (post, at_ms) = v.value();
        if let Some(timeline) = MarkerTimeline::from_code(k.value().1) {
            out.push(Marker {
                timeline,
                last_read: PostId(post),
                at_ms,
            });
        }
    }
    Ok(out)
}

pub(crate) fn put(txn: &WriteTransaction, user: &str, m: &Marker) -> Result<()> {
    let mut table = txn.open_table(MARKERS).store()?;
    let key = (user, m.timeline.code());
    table.insert(key, (m.last_read.0, m.at_ms)).store()?;
    Ok(())
}

/// Forgets a deleted user's markers.
pub(crate) fn forget(txn: &WriteTransaction, user: &str) -> Result<()> {
    let mut table = txn.open_table(MARKERS).store()?;
    for t in MarkerTimeline::ALL {
        table.remove((user, t.code())).store()?;
    }
    Ok(())
}
