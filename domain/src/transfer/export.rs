//! What an export carries of a store, decided once for every backend
//! (`socialite_core::transfer::walk` reads a store by it): its sections in
//! the format's order ([`Section::ALL`]), each read in its key order
//! ([`Record::key`]) a page at a time after the last record given; a user
//! being deleted is absent ([`crate::deletion::cascade::present`]), with
//! every record that names them ([`exported`]). What records say of each
//! other (a repost's original, a like's post, a reply's post) is settled
//! by the stream that carries them (`socialite_core::transfer::stream`).

use crate::accounts::lifecycle::Standing;
use crate::deletion::cascade::present;
use crate::error::{Error, Result};
use crate::feed::markers::MarkerTimeline;
use crate::graph::relations::Relation;
use crate::ids::{GroupName, ListName, PostId, UserId};
use crate::model::collection::Collection;
use crate::transfer::record::Record;

/// A section of an export: the records of one kind, in their key order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// Users, by id.
    Users,
    /// Account ids' standings, by id.
    Accounts,
    /// Follows, by follower, then followee.
    Follows,
    /// Mutes and blocks, by user, then the relation's code, then target.
    Relations,
    /// Memberships, by group, then user.
    Members,
    /// Posts, by id: a reply or a repost after the post it names.
    Posts,
    /// Likes, by post, then user.
    Likes,
    /// Markers, by user, then timeline.
    Markers,
    /// Posts in users' collections, by user, then collection, then post.
    Kept,
    /// Users' keyword filters, by user.
    Filters,
    /// Threads users muted, by user, then the thread's first post.
    ThreadMutes,
    /// Lists marked exclusive, by user, then list.
    ExclusiveLists,
}

impl Section {
    /// The sections in the format's order: every record after those it
    /// names (users first, posts before their likes).
    pub const ALL: [Section; 12] = [
        Section::Users,
        Section::Accounts,
        Section::Follows,
        Section::Relations,
        Section::Members,
        Section::Posts,
        Section::Likes,
        Section::Markers,
        Section::Kept,
        Section::Filters,
        Section::ThreadMutes,
        Section::ExclusiveLists,
    ];

    /// The section after this one; `None` after the last.
    pub fn next(self) -> Option<Section> {
        let at = Section::ALL.iter().position(|s| *s == self)?;
        Section::ALL.get(at + 1).copied()
    }
}

/// A record's place in its section: the fields it is ordered by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Key<'a> {
    /// A user's or an account's id.
    User(&'a UserId),
    Follow(&'a UserId, &'a UserId),
    Relation(&'a UserId, Relation, &'a UserId),
    Member(&'a GroupName, &'a UserId),
    Post(PostId),
    Like(PostId, &'a UserId),
    Marker(&'a UserId, MarkerTimeline),
    Kept(&'a UserId, &'a Collection, PostId),
    Filters(&'a UserId),
    ThreadMute(&'a UserId, PostId),
    ExclusiveList(&'a UserId, &'a ListName),
}

impl Record {
    /// Where the record sits in its section: a page read after it starts
    /// at the next key.
    pub fn key(&self) -> Key<'_> {
        match self {
            Record::User { id, .. } | Record::Account { id, .. } => Key::User(id),
            Record::Follow {
                follower, followee, ..
            } => Key::Follow(follower, followee),
            Record::Relation {
                user,
                relation,
                target,
                ..
            } => Key::Relation(user, *relation, target),
            Record::Member { group, user } => Key::Member(group, user),
            Record::Post { post, .. } => Key::Post(post.id),
            Record::Like { post, user, .. } => Key::Like(*post, user),
            Record::Marker { user, marker } => Key::Marker(user, marker.timeline),
            Record::Kept {
                collection,
                user,
                kept,
            } => Key::Kept(user, collection, kept.post),
            Record::Filters { user, .. } => Key::Filters(user),
            Record::ThreadMute { user, post } => Key::ThreadMute(user, *post),
            Record::ExclusiveList { user, list } => Key::ExclusiveList(user, list),
        }
    }
}

/// The table key a page after `after` starts past, as `key` reads it from
/// the record's [`Key`] (`None`: from the section's start); a record of
/// another section is refused, as a caller's mistake.
pub fn cursor<'a, K>(
    after: Option<&'a Record>,
    key: impl FnOnce(Key<'a>) -> Option<K>,
) -> Result<Option<K>> {
    match after {
        None => Ok(None),
        Some(r) => key(r.key())
            .map(Some)
            .ok_or_else(|| Error::internal("an export's cursor of another section")),
    }
}

/// `record`, read from a store where `deleting` tells the users being
/// deleted, as an export carries it; `None` when it leaves it out.
pub fn exported(mut record: Record, deleting: impl Fn(&UserId) -> bool) -> Option<Record> {
    // A user being deleted is absent ([`present`]): so is every record
    // that names them as a party, and every mention of them.
    let here = |u: &UserId| present(true, deleting(u));
    let kept = match &mut record {
        Record::User { id, .. } => here(id),
        // Kept after the account's deletion, so that its old tokens stay
        // refused; the default standing says nothing.
        Record::Account { standing, .. } => *standing != Standing::default(),
        Record::Follow {
            follower, followee, ..
        } => here(follower) && here(followee),
        Record::Relation { user, target, .. } => here(user) && here(target),
        Record::Member { user, .. }
        | Record::Like { user, .. }
        | Record::Marker { user, .. }
        | Record::Kept { user, .. }
        | Record::Filters { user, .. }
        | Record::ThreadMute { user, .. }
        | Record::ExclusiveList { user, .. } => here(user),
        Record::Post { post, .. } => {
            post.mentions.retain(|m| here(m));
            here(&post.author)
        }
    };
    kept.then_some(record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Post;

    fn u(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    #[test]
    fn the_sections_follow_one_another_in_the_formats_order() {
        let mut walked = vec![Section::Users];
        while let Some(next) = walked.last().unwrap().next() {
            walked.push(next);
        }
        assert_eq!(walked, Section::ALL);
    }

    #[test]
    fn a_user_being_deleted_is_absent_with_what_names_them() {
        let deleting = |id: &UserId| id.as_str() == "zed";
        let carried = |r: Record| exported(r, deleting);
        let user = |id: &str| Record::User {
            id: u(id),
            profile: None,
        };
        assert!(carried(user("ann")).is_some());
        assert!(carried(user("zed")).is_none());
        let follow = |a: &str, b: &str| Record::Follow {
            follower: u(a),
            followee: u(b),
            at_ms: 1,
            lists: vec![],
        };
        assert!(carried(follow("ann", "bo")).is_some());
        assert!(carried(follow("ann", "zed")).is_none());
        assert!(carried(follow("zed", "ann")).is_none());
        let block = Record::Relation {
            user: u("ann"),
            relation: Relation::Block,
            target: u("zed"),
            at_ms: None,
        };
        assert!(carried(block).is_none());
        let like = Record::Like {
            post: PostId(1),
            user: u("zed"),
            at_ms: 1,
        };
        assert!(carried(like).is_none());
        let mut p = Post::written(PostId(2), u("ann"), "@zed @bo".into(), None, vec![]);
        p.mentions = vec![u("zed"), u("bo")];
        match carried(Record::post(p.clone())) {
            Some(Record::Post { post, .. }) => assert_eq!(post.mentions, [u("bo")]),
            other => panic!("{other:?}"),
        }
        p.author = u("zed");
        assert!(carried(Record::post(p)).is_none());
        // An account outlives its user; only a standing that says
        // something is carried.
        let account = |tokens_after_ms| Record::Account {
            id: u("zed"),
            standing: Standing {
                tokens_after_ms,
                suspended: false,
            },
        };
        assert!(carried(account(5)).is_some());
        assert!(carried(account(0)).is_none());
    }
}
