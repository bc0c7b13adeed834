//! Reads of the graph: followers and followees, lists, relationships,
//! suggestions, mutes and blocks, and groups.

use crate::checks::group_not_found;
use crate::error::Result;
use crate::ids::{decode_edge_cursor, decode_user_cursor, GroupName, ListName, UserId};
use crate::model::{page_size, ListSummary, Page, Relationship, Suggestion};
use crate::reads::{time_page, user_page, Reads};
use socialite_domain::accounts::access::{check, Act, Caller};
use socialite_domain::graph::relations::{FollowOption, Relation};
use std::collections::{HashMap, HashSet};

/// Suggestions read the first this many of a user's followees (in id
/// order)...
const SUGGESTION_SOURCES: usize = 200;
/// ...and the first this many followees of each: at most 40,000 edges read,
/// however many the user follows.
const SUGGESTION_FANIN: usize = 200;

/// Which edge list to page through.
#[derive(Debug, Clone, Copy)]
pub enum Direction {
    Followers,
    Following,
}

impl Reads {
    /// A user's followers or followees, newest follow first, each with
    /// when the follow was made; the user as `viewer` sees them
    /// ([`Reads::user`]).
    pub async fn edges(
        &self,
        caller: &Caller,
        id: &str,
        viewer: Option<&str>,
        direction: Direction,
        limit: Option<u64>,
        cursor: Option<&str>,
    ) -> Result<Page<(UserId, u64), String>> {
        let user = self.user(caller, id, viewer).await?;
        let limit = page_size(limit)?;
        let after = cursor.map(decode_edge_cursor).transpose()?;
        let (graph, after) = (&self.stores.graph, after.as_ref());
        let edges = match direction {
            Direction::Followers => graph.followers_by_time(&user.id, after, limit + 1).await?,
            Direction::Following => graph.following_by_time(&user.id, after, limit + 1).await?,
        };
        Ok(time_page(edges, limit))
    }

    /// The accounts the user filed under `list`, in id order; the user as
    /// `viewer` sees them ([`Reads::user`]).
    pub async fn list_members(
        &self,
        caller: &Caller,
        id: &str,
        list: &str,
        viewer: Option<&str>,
        limit: Option<u64>,
        cursor: Option<&str>,
    ) -> Result<Page<UserId, String>> {
        let list = ListName::parse(list)?;
        let user = self.user(caller, id, viewer).await?.id;
        self.existing_list(&user, &list).await?;
        let limit = page_size(limit)?;
        let after = cursor.map(decode_user_cursor).transpose()?;
        let ids = self
            .stores
            .graph
            .list_members(&user, &list, after.as_ref(), limit + 1)
            .await?;
        Ok(user_page(ids, limit))
    }

    /// The user's lists, in name order, with how many accounts each holds;
    /// the user as `viewer` sees them ([`Reads::user`]).
    pub async fn lists(
        &self,
        caller: &Caller,
        id: &str,
        viewer: Option<&str>,
    ) -> Result<Vec<ListSummary>> {
        let user = self.user(caller, id, viewer).await?;
        let graph = &self.stores.graph;
        // Which are exclusive is the user's own setting.
        let marked = match check(caller, Act::ReadOwn(&user.id)) {
            Ok(()) => Some(graph.exclusive_lists(&user.id).await?),
            Err(_) => None,
        };
        let lists = graph.lists(&user.id).await?;
        Ok(lists
            .into_iter()
            .map(|(name, count)| ListSummary {
                exclusive: marked.as_ref().map(|m| m.contains(&name)),
                name,
                count,
            })
            .collect())
    }

    /// Whether `id` follows `other` and whether `other` follows `id`.
    pub async fn relationship(
        &self,
        caller: &Caller,
        id: &str,
        other: &str,
    ) -> Result<Relationship> {
        let (a, b) = (UserId::parse(id)?, UserId::parse(other)?);
        check(caller, Act::ReadPublic)?;
        self.existing(&a).await?;
        self.existing(&b).await?;
        let graph = &self.stores.graph;
        let (edge, followed_by) = tokio::try_join!(graph.edge(&a, &b), graph.is_following(&b, &a))?;
        // A follower's options are theirs: shown to whoever may read their
        // own settings.
        let options = match check(caller, Act::ReadOwn(&a)) {
            Ok(()) if edge.is_some() => {
                let mut on = Vec::new();
                for option in FollowOption::ALL {
                    if graph.has_relation(&a, Relation::Option(option), &b).await? {
                        on.push(option);
                    }
                }
                Some(on)
            }
            Ok(()) => Some(Vec::new()),
            Err(_) => None,
        };
        Ok(Relationship {
            following: edge.is_some(),
            followed_by,
            lists: edge.unwrap_or_default(),
            options,
        })
    }

    /// Accounts followed by the accounts the user follows, that the user does
    /// not follow and is not, ranked by how many of the user's followees
    /// follow them, then by id. The work is bounded by
    /// [`SUGGESTION_SOURCES`] and [`SUGGESTION_FANIN`].
    pub async fn suggestions(
        &self,
        caller: &Caller,
        id: &str,
        limit: Option<u64>,
    ) -> Result<Vec<Suggestion>> {
        let id = UserId::parse(id)?;
        check(caller, Act::ReadOwn(&id))?;
        let user = self.existing(&id).await?;
        let limit = page_size(limit)?;
        let graph = &self.stores.graph;
        let sources = graph.following(&user.id, None, SUGGESTION_SOURCES).await?;
        let mut counts: HashMap<UserId, u32> = HashMap::new();
        for source in &sources {
            for candidate in graph.following(source, None, SUGGESTION_FANIN).await? {
                *counts.entry(candidate).or_default() += 1;
            }
        }
        let followed: HashSet<&UserId> = sources.iter().collect();
        let mut ranked: Vec<(UserId, u32)> = counts
            .into_iter()
            .filter(|(c, _)| *c != user.id && !followed.contains(c))
            .collect();
        ranked.sort_unstable_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.as_str().cmp(b.0.as_str())));
        // Only a user who follows more than the sample can already follow a
        // candidate; for them each one is checked.
        let sampled_all = sources.len() < SUGGESTION_SOURCES;
        let mut out = Vec::with_capacity(limit);
        for (candidate, mutuals) in ranked {
            if out.len() == limit {
                break;
            }
            if sampled_all || !graph.is_following(&user.id, &candidate).await? {
                out.push(Suggestion {
                    user: candidate,
                    mutuals,
                });
            }
        }
        Ok(out)
    }

    /// The accounts the user mutes (or blocks), in id order: theirs alone
    /// to read.
    pub async fn relations(
        &self,
        caller: &Caller,
        id: &str,
        relation: Relation,
        limit: Option<u64>,
        cursor: Option<&str>,
    ) -> Result<Page<UserId, String>> {
        let id = UserId::parse(id)?;
        check(caller, Act::ReadOwn(&id))?;
        let user = self.existing(&id).await?;
        let limit = page_size(limit)?;
        let after = cursor.map(decode_user_cursor).transpose()?;
        let ids = self
            .stores
            .graph
            .relations(&user.id, relation, after.as_ref(), limit + 1)
            .await?;
        Ok(user_page(ids, limit))
    }

    /// A group and how many members it has (a group exists while it has
    /// members).
    pub async fn group(&self, caller: &Caller, group: &str) -> Result<(GroupName, u64)> {
        let group = GroupName::parse(group)?;
        check(caller, Act::ReadPublic)?;
        match self.stores.graph.group_size(&group).await? {
            0 => Err(group_not_found(&group)),
            n => Ok((group, n)),
        }
    }

    /// A group's members, in id order.
    pub async fn group_members(
        &self,
        caller: &Caller,
        group: &str,
        limit: Option<u64>,
        cursor: Option<&str>,
    ) -> Result<Page<UserId, String>> {
        let (group, _) = self.group(caller, group).await?;
        let limit = page_size(limit)?;
        let after = cursor.map(decode_user_cursor).transpose()?;
        let ids = self
            .stores
            .graph
            .group_members(&group, after.as_ref(), limit + 1)
            .await?;
        Ok(user_page(ids, limit))
    }
}
