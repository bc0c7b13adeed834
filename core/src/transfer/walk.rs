//! A store read whole in the export format's order, written once for every
//! backend: each section ([`Section::ALL`]) read from the store's
//! [`ExportView`] a page at a time after the last record it gave, and every
//! record kept as [`exported`] decides (a user being deleted is absent,
//! with what names them). The [`Stream`](super::stream::Stream) on top
//! settles what records say of each other.

use crate::error::Result;
use crate::ids::UserId;
use crate::ports::{ExportView, Transfer};
use socialite_domain::transfer::export::{exported, Section};
use socialite_domain::transfer::record::Record;
use std::collections::HashSet;

/// Where a walk of a store stands.
pub struct Walk {
    view: Box<dyn ExportView>,
    /// Users being deleted when the view was taken.
    deleting: HashSet<UserId>,
    /// The section read; `None` once every one is.
    section: Option<Section>,
    /// The last record the section gave (before any was left out).
    after: Option<Record>,
}

impl Walk {
    /// Starts reading `transfer`'s store.
    pub async fn open(transfer: &dyn Transfer) -> Result<Walk> {
        let mut view = transfer.export_view().await?;
        let deleting = view.deleting().await?.into_iter().collect();
        Ok(Walk {
            view,
            deleting,
            section: Section::ALL.first().copied(),
            after: None,
        })
    }

    /// The next records, at most `limit`; none at the end.
    pub async fn next(&mut self, limit: usize) -> Result<Vec<Record>> {
        let limit = limit.max(1);
        let mut out = Vec::new();
        while let Some(section) = self.section.filter(|_| out.len() < limit) {
            let want = limit - out.len();
            let page = self.view.page(section, self.after.as_ref(), want).await?;
            match page.last() {
                None => (self.section, self.after) = (section.next(), None),
                Some(last) => self.after = Some(last.clone()),
            }
            let deleting = &self.deleting;
            out.extend(
                page.into_iter()
                    .filter_map(|r| exported(r, |u| deleting.contains(u))),
            );
        }
        Ok(out)
    }
}
