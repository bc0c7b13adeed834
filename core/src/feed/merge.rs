//! Fanout on read: a timeline computed from the followees' posts at read time.
//! It serves dormant users, pages past the end of a cache, fills new caches,
//! and is the oracle that every stored feed model must agree with.

use super::{Feed, Stores};
use crate::error::Result;
use crate::model::{newest, Entry};
use crate::ports::{Coverage, IdRange};
use socialite_domain::graph::relations::Hidden;

/// The newest `limit` entries of `feed` within `range`, newest first: the
/// newest `limit` posts of its authors ([`Stores::authors`]) but those
/// `hidden` from the reader.
pub async fn merge(
    stores: &Stores,
    feed: &Feed,
    hidden: &Hidden,
    range: IdRange,
    limit: usize,
) -> Result<Vec<Entry>> {
    if limit == 0 {
        return Ok(Vec::new());
    }
    let mut authors = stores.authors(feed).await?;
    if !hidden.is_empty() {
        authors.retain(|a| !hidden.hides(a));
    }
    if authors.is_empty() {
        return Ok(Vec::new());
    }
    stores.content.newest_by(&authors, range, limit).await
}

/// The `cap` newest of `candidates` (fetched with one more than `cap` per
/// source), and what they cover exactly: everything, or, when more exist, only
/// down to the last one kept.
pub(crate) fn newest_exact(candidates: Vec<Entry>, cap: usize) -> (Vec<Entry>, Coverage) {
    let mut top = newest(candidates, cap + 1);
    if top.len() > cap {
        top.truncate(cap);
        let floor = top.last().map(|e| e.post).expect("cap is at least 1");
        (top, Coverage::From(floor))
    } else {
        (top, Coverage::All)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{PostId, UserId};

    #[test]
    fn newest_keeps_the_top_in_order() {
        let a = UserId::parse("a").unwrap();
        let entries: Vec<Entry> = [5u64, 9, 1, 7, 3]
            .iter()
            .map(|&p| Entry::linked(PostId(p), a.clone()))
            .collect();
        let top: Vec<u64> = newest(entries.clone(), 3)
            .iter()
            .map(|e| e.post.0)
            .collect();
        assert_eq!(top, vec![9, 7, 5]);
        let all: Vec<u64> = newest(entries, 10).iter().map(|e| e.post.0).collect();
        assert_eq!(all, vec![9, 7, 5, 3, 1]);
    }
}
