//! Keyword filters: made, changed, deleted and listed here (the rules are
//! `socialite_domain::filters`), applied by every read that shows posts
//! (home, lists, groups, mentions, notifications, threads, profiles):
//! [`crate::reads::Reads`] attaches the reader's matcher, from
//! [`crate::feed::filter_cache::FilterCache`], to what it hides.

pub use socialite_domain::filters::*;

use crate::budgets::Cost;
use crate::error::{Error, Result};
use crate::ids::UserId;
use crate::ingest::Ingest;
use crate::model::filter::{Filter, FilterContext};
use crate::reads::Reads;
use socialite_domain::accounts::access::{check, Act, Caller};

/// A filter's id as a path names it.
pub fn parse_id(id: &str) -> Result<u64> {
    id.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(|| {
        Error::invalid(
            "invalid_filter_id",
            format!("a filter id is a positive whole number; `{id}` is not"),
        )
    })
}

impl Ingest {
    /// Makes a filter for the user (`id` None), or changes their filter
    /// `id`: the filter afterwards. Pages read after it apply it.
    pub async fn put_filter(
        &self,
        caller: &Caller,
        user: &str,
        id: Option<&str>,
        change: &FilterChange,
    ) -> Result<Filter> {
        let user = UserId::parse(user)?;
        let id = id.map(parse_id).transpose()?;
        self.acting_as(caller, &user).await?;
        let cost = match id {
            None => Cost::Create,
            Some(_) => Cost::Update,
        };
        let _write = self.enter_changing_for(caller, cost, vec![user.clone()])?;
        self.content.put_filter(&user, id, change).await
    }

    /// Deletes the user's filter `id`; whether there was one.
    pub async fn remove_filter(&self, caller: &Caller, user: &str, id: &str) -> Result<bool> {
        let user = UserId::parse(user)?;
        let id = parse_id(id)?;
        self.acting_as(caller, &user).await?;
        let _write = self.enter_changing_for(caller, Cost::Delete, vec![user.clone()])?;
        self.content.remove_filter(&user, id).await
    }
}

impl Reads {
    /// The user's filters, in id order (expired ones too: they are kept
    /// until deleted).
    pub async fn filters(&self, caller: &Caller, id: &str) -> Result<Vec<Filter>> {
        let id = UserId::parse(id)?;
        check(caller, Act::ReadOwn(&id))?;
        let user = self.existing(&id).await?;
        let set = self.stores.content.filters(&user.id).await?;
        Ok(set.map(|s| s.filters).unwrap_or_default())
    }

    /// What `reader`'s keyword filters do in `context`, for one read
    /// (`None`: nothing).
    pub(crate) async fn sift(
        &self,
        reader: &UserId,
        context: FilterContext,
    ) -> Result<Option<Sift>> {
        let stores = &self.stores;
        let matcher = stores.filters.matcher(&*stores.content, reader).await?;
        Ok(matcher.and_then(|m| Sift::new(&m, context, reader, crate::ids::now_ms())))
    }

    /// The user's filter `filter`.
    pub async fn filter(&self, caller: &Caller, id: &str, filter: &str) -> Result<Filter> {
        let all = self.filters(caller, id).await?;
        let wanted = parse_id(filter)?;
        all.into_iter()
            .find(|f| f.id == wanted)
            .ok_or_else(|| filter_not_found(wanted))
    }
}
