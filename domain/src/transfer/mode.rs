//! The two ways the one transfer planner ([`crate::transfer::apply`]) makes
//! an act of another store, and every difference between them, each
//! decided once here, with its reason.
//!
//! - [`Mode::Replay`]: an event of another deployment's log (a migration's
//!   catch-up), made as the write that queued it, in the log's order,
//!   under that write's rules, queuing its events here as that write did
//!   (fanout keeps the timelines built so far right). A catch-up may start
//!   a little before the copy's point, so a replay meets a store that holds
//!   its act already, or no longer holds what it names (deleted since).
//! - [`Mode::Restore`]: a record of an export, which holds what the source
//!   *held*, a section at a time (users, accounts, follows, relations,
//!   memberships, posts, likes, markers), not in the order its acts were
//!   made. An act that was valid when it was made is not decided again;
//!   what no write could have made is refused. Quiet: it queues no events
//!   (an import's ledger, [`crate::write::Write::emits`]), so it makes the
//!   notices they would have made.
//!
//! | what differs | replay | restore | decided by |
//! |---|---|---|---|
//! | checked before planning | ids and times against the clock | nothing more: each record was admitted ([`crate::transfer::admit`]) | [`Mode::check`] |
//! | the act's notices | made by fanout from the event queued | made in the transaction | [`Mode::tells`] |
//! | a standing | set as the event says | merged with the one held | [`Mode::standing`] |
//! | the follow cap | none | the deployment's ([`Caps`]) | [`Mode::follow_cap`] |
//! | a mute or block of an id whose account is gone | refused (`user_not_found`) | stands alone | [`Mode::keeps_relation_to_gone`] |
//! | a post under an id held | nothing, or rewritten if its mentions differ | nothing if the same post but for mentions, else refused (`post_id_taken`) | [`Mode::held_post`] |
//! | a reply whose post is not held | stands, counted nowhere | stands if the stream marks the post gone, else refused (`post_not_found`) | [`Mode::reply_to_absent`] |
//! | a reply or repost naming a repost, or a post by another author | resolved as the write resolves it | refused (`invalid_reply`) | [`Mode::naming`] |
//! | a like, repost or reply across a block | refused (`blocked`) | stands | [`Mode::blocks`] |
//! | a like, repost or marker whose user or post is not held | changes nothing | refused (`user_not_found`, `post_not_found`) | [`Mode::absent`] |
//! | a repost of a post the user reposts as another item | changes nothing | refused (`already_reposted`) | [`Mode::reposted_already`] |
//!
//! Everything else is the write's rule in both: a profile put while the
//! id's earlier user is being deleted, a follow across a block or of
//! oneself, a post, a follow, a relation or a membership of a user that
//! does not exist, a repost of one's own post, every count of relations,
//! groups and lists.

use crate::accounts::lifecycle::Standing;
use crate::checks::Blocks;
use crate::error::{Error, Result};
use crate::event::Event;
use crate::ids::{check_time_not_ahead, now_ms, PostId};
use crate::model::{Post, PostRef};
use crate::transfer::act::Act;
use crate::transfer::admit::Caps;

/// How the transfer planner makes an act.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// An event of another deployment's log, as the write that queued it.
    Replay,
    /// A record of an export, as the source held it, under the
    /// deployment's caps.
    Restore(Caps),
}

/// What a post under an id the store holds already does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    /// It is the post held: nothing changes.
    Same,
    /// The post held is stored again as the act says.
    Rewrite,
    /// Another post holds the id: refused.
    Taken,
}

/// Which post a reply or a repost names, when the post held under the id
/// it names is a repost or by another author.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Naming {
    /// As the write resolves it: a repost's original, by its stored author.
    AsWritten,
    /// Exactly the post held, or the act is refused.
    AsHeld,
}

impl Mode {
    /// Refuses what is checked of `act` before it is planned.
    pub fn check(self, act: &Act) -> Result<()> {
        match (self, act) {
            // An event was admitted by the source's write path, every
            // limit checked there; only the clock is this deployment's:
            // an id or a time ahead of it would date what follows here in
            // the future.
            (Mode::Replay, Act::Event(event)) => not_ahead(event, now_ms()),
            // A stream is a file anyone may write: core admits each record
            // before its transaction (`admit`: every limit of the write
            // path, and the clock), the same for an import and a copy.
            _ => Ok(()),
        }
    }

    /// Whether the act's notices are made in its transaction.
    pub fn tells(self) -> bool {
        match self {
            // The event queued reaches fanout, which makes its notices, as
            // it does for the write's.
            Mode::Replay => false,
            // No event is queued, so no worker would make them.
            Mode::Restore(_) => true,
        }
    }

    /// The standing an account id takes from one `said`, holding `held`.
    pub fn standing(self, held: Standing, said: Standing) -> Standing {
        match self {
            // The event is the standing the source's write made; replayed
            // in order, the last is the source's.
            Mode::Replay => said,
            // The record is where the source ended; tokens revoked here
            // stay revoked (a revocation time only moves forward).
            Mode::Restore(_) => held.merged(said),
        }
    }

    /// The most accounts a follow may make its follower follow.
    pub fn follow_cap(self) -> Option<u64> {
        match self {
            // The source checked the follow against its cap when it was
            // made; a replay carries it over (and takes no settings).
            Mode::Replay => None,
            // Every limit of the write path holds on import.
            Mode::Restore(caps) => Some(caps.max_following),
        }
    }

    /// Whether a mute or block kept on an id whose account is gone stands.
    pub fn keeps_relation_to_gone(self) -> bool {
        match self {
            // Made as the write makes it, with both users: the source made
            // it before the target's deletion, which the log replays after.
            Mode::Replay => false,
            // A deletion leaves the relations others keep to the deleted
            // id (`crate::deletion::cascade`), and the export carries them:
            // no edge can stand with one, so the relation alone is what
            // the source held.
            Mode::Restore(_) => true,
        }
    }

    /// What `said`, a post under an id that holds `held`, does.
    pub fn held_post(self, held: &Post, said: &Post) -> Held {
        match self {
            // The log holds a post once under its id: the one held is this
            // one, copied or replayed. Its mentions may differ where a
            // replayed deletion took some since (a later event takes them
            // again), so it is stored again as the event says. A repost's
            // item mentions no one.
            Mode::Replay if said.repost_of.is_some() || held.mentions == said.mentions => {
                Held::Same
            }
            Mode::Replay => Held::Rewrite,
            // A store never overwrites a post: the one held must be the
            // record's, but for mentions of users deleted since (which the
            // store dropped); any other is a second post under one id,
            // which no write makes.
            Mode::Restore(_) => {
                let same = Post {
                    mentions: held.mentions.clone(),
                    ..said.clone()
                };
                match *held == same {
                    true => Held::Same,
                    false => Held::Taken,
                }
            }
        }
    }

    /// Whether a reply stands when the post it answers, `answered`, is not
    /// held; `marked_gone` when the stream marks it gone.
    pub fn reply_to_absent(self, answered: PostId, marked_gone: bool) -> Result<()> {
        match self {
            // A reply outlives the post it answers: that post may be
            // deleted since, later in the log or before the copy's point.
            Mode::Replay => Ok(()),
            // A stream holds posts in id order and a reply is newer than
            // its post, so a post it holds is stored before the reply; it
            // marks a reply whose post was deleted at the source. An
            // unmarked one answers a post the stream never had.
            Mode::Restore(_) if marked_gone => Ok(()),
            Mode::Restore(_) => Err(not_held(answered, "a reply (not marked gone)")),
        }
    }

    /// Which post a reply or a repost names, where the id it names holds a
    /// repost or a post by another author.
    pub fn naming(self) -> Naming {
        match self {
            // As the write named it: a reply to a repost answers, and a
            // repost of one carries, the post it carries.
            Mode::Replay => Naming::AsWritten,
            // A record holds a post as the store held it, named as the
            // write resolved it: a post that is not a repost, by its
            // author. Any other names another post than the one held.
            Mode::Restore(_) => Naming::AsHeld,
        }
    }

    /// Whether a block refuses a like, a repost or a reply across it.
    pub fn blocks(self) -> Blocks {
        match self {
            // As the write: in the log's order an act meets the blocks
            // made before it.
            Mode::Replay => Blocks::Refuse,
            // A block does not take back likes, reposts or replies made
            // before it, and the stream holds them after every relation,
            // whatever came first: they stand, as they did at the source.
            Mode::Restore(_) => Blocks::Stand,
        }
    }

    /// What a like, a repost or a marker does whose user or post is not
    /// held (`refusal` says which): whether it changed anything, or the
    /// refusal.
    pub fn absent(self, refusal: Error) -> Result<bool> {
        match self {
            // A catch-up that starts before the copy's point meets acts of
            // users and posts deleted since: the deletion, replayed later
            // or copied, already decided they are gone.
            Mode::Replay => Ok(false),
            // A stream holds users before every record naming them, and
            // posts before their likes and reposts: one naming what the
            // store does not hold names what the stream never had.
            Mode::Restore(_) => Err(refusal),
        }
    }

    /// What a repost, `item`, does when its user reposts the post already
    /// as `other`: whether it changed anything, or the refusal.
    pub fn reposted_already(self, item: &Post, other: PostId) -> Result<bool> {
        match self {
            // A replay before the copy's point meets a repost the user
            // took back and made again, as another item: the one held is
            // the later, which its own event replays.
            Mode::Replay => Ok(false),
            // A user reposts a post once: a second item of it is a repost
            // no write makes.
            Mode::Restore(_) => Err(Error::conflict(
                "already_reposted",
                format!(
                    "{} reposted post {} already, as {other}; the repost {} is another",
                    item.author,
                    item.repost_of.as_ref().map_or(item.id, |o| o.id),
                    item.id
                ),
            )),
        }
    }
}

/// Refuses a post that names `named` as another than the store holds
/// (another author, or a repost's item where a post is meant): the check
/// of [`Naming::AsHeld`].
pub fn same_ref(post: &Post, named: &PostRef, held: &Post) -> Result<()> {
    if held.repost_of.is_some() || held.author != named.author {
        return Err(Error::invalid(
            "invalid_reply",
            format!(
                "post {} names post {} by {}; the post held under that id is {}",
                post.id,
                named.id,
                named.author,
                match &held.repost_of {
                    Some(_) => format!("a repost by {}", held.author),
                    None => format!("by {}", held.author),
                }
            ),
        ));
    }
    Ok(())
}

/// A record naming a post that neither the store nor the stream before it
/// holds.
pub fn not_held(post: PostId, what: &str) -> Error {
    Error::not_found(
        "post_not_found",
        format!("{what} of post {post}, which the stream does not hold before it"),
    )
}

/// Refuses an event whose post id or time is ahead of the clock (as an
/// import refuses such a record): no writer here made it, and taken in it
/// would date what follows in the future.
fn not_ahead(event: &Event, now: u64) -> Result<()> {
    match event {
        Event::PostCreated { post, .. } => post.id.check_not_ahead("a replayed post", now),
        Event::Followed { at_ms, .. } | Event::Liked { at_ms, .. } => {
            check_time_not_ahead("a replayed event", *at_ms, now)
        }
        Event::MarkerSet { marker, .. } => {
            marker.last_read.check_not_ahead("a replayed marker", now)?;
            check_time_not_ahead("a replayed marker", marker.at_ms, now)
        }
        Event::KeptChanged { post, at_ms, .. } => {
            post.check_not_ahead("a replayed kept post", now)?;
            check_time_not_ahead("a replayed kept post", *at_ms, now)
        }
        Event::StandingSet { standing, .. } => {
            check_time_not_ahead("a replayed standing", standing.tokens_after_ms, now)
        }
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::UserId;
    use crate::model::PostRef;
    use crate::trace::Trace;

    const RESTORE: Mode = Mode::Restore(Caps { max_following: 3 });

    fn u(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    fn post(id: u64, mentions: &[&str]) -> Post {
        let mut p = Post::written(PostId(id), u("ann"), "hi".into(), None, Vec::new());
        p.mentions = mentions.iter().map(|m| u(m)).collect();
        p
    }

    #[test]
    fn a_replay_checks_the_clock_and_a_restore_leaves_it_to_admit() {
        let ahead = Act::Event(Event::PostCreated {
            post: post(u64::MAX, &[]),
            trace: Trace::default(),
        });
        assert_eq!(Mode::Replay.check(&ahead).unwrap_err().code(), "time_ahead");
        assert!(RESTORE.check(&ahead).is_ok());
    }

    #[test]
    fn a_restore_tells_merges_caps_and_keeps_relations_to_the_gone() {
        assert!(RESTORE.tells() && !Mode::Replay.tells());
        let (held, said) = (
            Standing {
                tokens_after_ms: 20,
                suspended: false,
            },
            Standing {
                tokens_after_ms: 10,
                suspended: true,
            },
        );
        assert_eq!(Mode::Replay.standing(held, said), said);
        let merged = RESTORE.standing(held, said);
        assert_eq!((merged.tokens_after_ms, merged.suspended), (20, true));
        assert_eq!(
            (Mode::Replay.follow_cap(), RESTORE.follow_cap()),
            (None, Some(3))
        );
        assert!(RESTORE.keeps_relation_to_gone() && !Mode::Replay.keeps_relation_to_gone());
    }

    #[test]
    fn a_held_post_is_the_same_rewritten_or_taken() {
        let held = post(10, &["bo"]);
        assert_eq!(Mode::Replay.held_post(&held, &held), Held::Same);
        assert_eq!(
            Mode::Replay.held_post(&held, &post(10, &["bo", "cy"])),
            Held::Rewrite
        );
        assert_eq!(
            RESTORE.held_post(&held, &post(10, &["bo", "cy"])),
            Held::Same
        );
        let mut other = post(10, &["bo"]);
        other.message = "another".into();
        assert_eq!(RESTORE.held_post(&held, &other), Held::Taken);
        let repost = Post::repost(PostId(10), u("bo"), held.shown());
        assert_eq!(Mode::Replay.held_post(&held, &repost), Held::Same);
    }

    #[test]
    fn a_replay_takes_what_a_restore_refuses() {
        assert!(Mode::Replay.reply_to_absent(PostId(5), false).is_ok());
        assert!(RESTORE.reply_to_absent(PostId(5), true).is_ok());
        let e = RESTORE.reply_to_absent(PostId(5), false).unwrap_err();
        assert_eq!(e.code(), "post_not_found");
        assert_eq!(
            (Mode::Replay.naming(), RESTORE.naming()),
            (Naming::AsWritten, Naming::AsHeld)
        );
        assert_eq!(
            (Mode::Replay.blocks(), RESTORE.blocks()),
            (Blocks::Refuse, Blocks::Stand)
        );
        let gone = || Error::not_found("post_not_found", "gone");
        assert!(!Mode::Replay.absent(gone()).unwrap());
        assert_eq!(RESTORE.absent(gone()).unwrap_err().code(), "post_not_found");
        let ann = PostRef {
            id: PostId(10),
            author: u("ann"),
        };
        let item = Post::repost(PostId(12), u("bo"), ann);
        assert!(!Mode::Replay.reposted_already(&item, PostId(11)).unwrap());
        let e = RESTORE.reposted_already(&item, PostId(11)).unwrap_err();
        assert_eq!(e.code(), "already_reposted");
    }
}
