//! A filter made, changed or deleted: the reader must exist; the set is
//! read, changed under the limits and written whole, with a new revision,
//! and the event names the filter as it is afterwards.

use super::{filter_not_found, FilterChange, MAX_FILTERS};
use crate::checks::user_not_found;
use crate::error::Error;
use crate::event::Event;
use crate::ids::UserId;
use crate::model::filter::{Filter, FilterSet};
use crate::plan::{Step, Txn};
use std::time::{SystemTime, UNIX_EPOCH};

/// A revision after `prev`: the clock in microseconds, or `prev + 1` if
/// that is not past it. A set made again after its reader's deletion so
/// never takes a revision the old one had.
fn next_rev(prev: u64) -> u64 {
    let now_us = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as u64)
        .unwrap_or(0);
    now_us.max(prev + 1)
}

async fn set_of<T: Txn>(txn: &mut T, user: &UserId) -> Result<FilterSet, T::Error> {
    if txn.existing_users(&[user]).await?.is_empty() {
        return Err(user_not_found(user).into());
    }
    Ok(txn.filters(user).await?.unwrap_or_default())
}

async fn write<T: Txn>(
    txn: &mut T,
    user: &UserId,
    mut set: FilterSet,
    event: Event,
) -> Result<(), T::Error> {
    set.rev = next_rev(set.rev);
    let put = Step::PutFilters {
        user: user.clone(),
        set,
    };
    txn.apply(&[put, Step::Emit(event)]).await
}

/// Makes a filter (`id` None) or changes the reader's filter `id`, as
/// `change` says at `now_ms`; the filter afterwards.
pub async fn put_filter<T: Txn>(
    txn: &mut T,
    user: &UserId,
    id: Option<u64>,
    change: &FilterChange,
    now_ms: u64,
) -> Result<Filter, T::Error> {
    let mut set = set_of(txn, user).await?;
    let filter = match id {
        Some(id) => {
            let was = set.get(id).ok_or_else(|| filter_not_found(id))?;
            change.apply(id, Some(was), now_ms)?
        }
        None if set.filters.len() >= MAX_FILTERS => {
            return Err(Error::conflict(
                "too_many_filters",
                format!("a user keeps at most {MAX_FILTERS} filters"),
            )
            .into())
        }
        None => change.apply(set.next_id.max(1), None, now_ms)?,
    };
    place(&mut set, filter.clone());
    let event = Event::FilterPut {
        user: user.clone(),
        filter: filter.clone(),
    };
    write(txn, user, set, event).await?;
    Ok(filter)
}

/// `filter` in `set` under its id (replacing one there), with the ids
/// after it kept for new filters.
fn place(set: &mut FilterSet, filter: Filter) {
    set.next_id = set.next_id.max(filter.id.saturating_add(1));
    match set.filters.iter_mut().find(|f| f.id == filter.id) {
        Some(slot) => *slot = filter,
        None => {
            set.filters.push(filter);
            set.filters.sort_by_key(|f| f.id);
        }
    }
}

/// Deletes the reader's filter `id`; whether there was one.
pub async fn remove_filter<T: Txn>(txn: &mut T, user: &UserId, id: u64) -> Result<bool, T::Error> {
    let mut set = set_of(txn, user).await?;
    let before = set.filters.len();
    set.filters.retain(|f| f.id != id);
    if set.filters.len() == before {
        return Ok(false);
    }
    let event = Event::FilterRemoved {
        user: user.clone(),
        filter: id,
    };
    write(txn, user, set, event).await?;
    Ok(true)
}

/// Filters as events or an export name them, put in place under their ids
/// for a reader who exists (a transfer decides what those of a reader not
/// here do), with new filters' ids after `next_id` (an export's: ids the
/// source gave are not given again), the set written once: whether any
/// changed. Each is held to the limits a request is; past the count a
/// reader keeps, refused.
pub async fn restore_filters<T: Txn>(
    txn: &mut T,
    user: &UserId,
    filters: &[Filter],
    next_id: u64,
) -> Result<bool, T::Error> {
    let mut set = txn.filters(user).await?.unwrap_or_default();
    // The last id a request can name is `u64::MAX - 1`.
    let next_id = next_id.min(u64::MAX - 1);
    let counter_moves = next_id > set.next_id;
    set.next_id = set.next_id.max(next_id);
    let mut events = Vec::new();
    for filter in filters {
        let filter = super::restorable(filter)?;
        if set.get(filter.id) == Some(&filter) {
            continue;
        }
        if set.get(filter.id).is_none() && set.filters.len() >= MAX_FILTERS {
            return Err(Error::conflict(
                "too_many_filters",
                format!("a user keeps at most {MAX_FILTERS} filters"),
            )
            .into());
        }
        place(&mut set, filter.clone());
        events.push(Step::Emit(Event::FilterPut {
            user: user.clone(),
            filter,
        }));
    }
    if events.is_empty() && !counter_moves {
        return Ok(false);
    }
    set.rev = next_rev(set.rev);
    let put = Step::PutFilters {
        user: user.clone(),
        set,
    };
    txn.apply(&[put]).await?;
    txn.apply(&events).await?;
    Ok(true)
}
