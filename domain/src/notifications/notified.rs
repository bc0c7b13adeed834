//! Notifications: what a user is told of, decided once from the events on
//! the log ([`changes_of`]), and how they group.
//!
//! - **What.** A follow of the user; a mention of the user in a post; a
//!   reply to the user's post; a repost or a like of it. Never of one's own
//!   act on one's own post. A reply that also mentions the author it
//!   answers tells them once, as a reply. The alerts of a post to those
//!   who follow its author with `notify` are not notices: they are derived
//!   when read (the `alerts` module beside).
//! - **Undone.** An unfollow, an unlike, and a deleted reply, mentioning
//!   post or repost take back what they told. A user's deletion takes back
//!   everything they caused and everything they were told ([`NoticeChange::Forget`]).
//! - **Grouped.** Notices of one kind about one post within one UTC day
//!   ([`WINDOW_MS`]; follows, about no post, by day alone) are one entry:
//!   "bob and 4 others liked your post", with the newest [`ACTORS_SHOWN`]
//!   actors, how many there are, and the newest one's time. Fixed windows
//!   keep an entry's membership independent of what came before it, so a
//!   replayed or undone notice moves exactly one entry. A mention is of one
//!   post, so each is an entry of its own in practice.
//! - **Ordered.** Entries by their newest notice, newest first; the newest
//!   notice's id is the entry's place, its paging cursor and what a marker
//!   of the notifications timeline holds.
//! - **Hidden.** Whom the reader mutes or blocks, who blocks them, and
//!   suspended accounts are left out of an entry's actors and count at
//!   read time; an entry with none left, or about a post that is gone, is
//!   not shown.
//!
//! Notices are applied by the fanout workers from the log, batch by batch
//! ([`crate::notifications::notify`]), so an entry under a viral post is written
//! once per batch, by the worker that holds its author's partition, never
//! by every liker at once.

use crate::event::Event;
use crate::ids::{PostId, UserId};
pub use crate::notifications::notices::*;

/// The notices `event` makes or undoes.
pub fn changes_of(event: &Event) -> Vec<NoticeChange> {
    let key = |recipient: &UserId, kind, post, actor: &UserId, source| NoticeKey {
        recipient: recipient.clone(),
        kind,
        post,
        actor: actor.clone(),
        source,
    };
    match event {
        Event::PostCreated { post, .. } => told_of_post(post)
            .into_iter()
            .map(|(recipient, kind, about)| {
                let k = key(&recipient, kind, Some(about), &post.author, Some(post.id));
                NoticeChange::Made(Notice {
                    key: k,
                    id: post.id,
                })
            })
            .collect(),
        Event::PostDeleted { post, author, told } => told
            .iter()
            .map(|(recipient, kind, about)| {
                NoticeChange::Undone(key(recipient, *kind, Some(*about), author, Some(*post)))
            })
            .collect(),
        Event::Liked {
            user,
            post,
            author,
            at_ms,
        } if user != author => vec![NoticeChange::Made(Notice {
            key: key(author, NoticeKind::Like, Some(*post), user, None),
            id: id_at(*at_ms, user, Some(*post)),
        })],
        Event::Unliked { user, post, author } if user != author => vec![NoticeChange::Undone(key(
            author,
            NoticeKind::Like,
            Some(*post),
            user,
            None,
        ))],
        Event::Followed {
            follower,
            followee,
            at_ms,
            ..
        } => vec![NoticeChange::Made(Notice {
            key: key(followee, NoticeKind::Follow, None, follower, None),
            id: id_at(*at_ms, follower, None),
        })],
        Event::Unfollowed {
            follower, followee, ..
        } => vec![NoticeChange::Undone(key(
            followee,
            NoticeKind::Follow,
            None,
            follower,
            None,
        ))],
        Event::TimelineDropped { user, .. } => vec![NoticeChange::Forget(user.clone())],
        _ => Vec::new(),
    }
}

/// Whom a new post tells, of what, about which post: the author a reply
/// answers, the author a repost carries, the users the post mentions (but
/// the author, and one told of a reply already).
pub fn told_of_post(post: &crate::model::Post) -> Vec<(UserId, NoticeKind, PostId)> {
    let mut told = Vec::new();
    if let Some(a) = &post.reply_to {
        if a.author != post.author {
            told.push((a.author.clone(), NoticeKind::Reply, a.id));
        }
    }
    if let Some(o) = &post.repost_of {
        told.push((o.author.clone(), NoticeKind::Repost, o.id));
    }
    for m in &post.mentions {
        if *m != post.author && !told.iter().any(|(u, _, _)| u == m) {
            told.push((m.clone(), NoticeKind::Mention, post.id));
        }
    }
    told
}

/// The event a post's deletion queues: its author's followers' timelines
/// retract it, and what it told ([`crate::notifications::notified`]) is
/// taken back.
pub fn post_deleted(post: &crate::model::Post) -> Event {
    Event::PostDeleted {
        post: post.id,
        author: post.author.clone(),
        told: crate::notifications::notified::told_of_post(post),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Post, PostRef};

    fn u(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    #[test]
    fn a_post_tells_who_it_answers_carries_and_names_once_each() {
        let mut reply = Post::written(
            PostId(9),
            u("b"),
            "hi @a @c @b".into(),
            None,
            vec![u("a"), u("c"), u("b")],
        );
        reply.reply_to = Some(PostRef {
            id: PostId(5),
            author: u("a"),
        });
        let told = told_of_post(&reply);
        assert_eq!(
            told,
            vec![
                (u("a"), NoticeKind::Reply, PostId(5)),
                (u("c"), NoticeKind::Mention, PostId(9))
            ]
        );
        let own = Post {
            reply_to: Some(PostRef {
                id: PostId(5),
                author: u("b"),
            }),
            ..Post::written(PostId(10), u("b"), "more".into(), None, vec![])
        };
        assert!(
            told_of_post(&own).is_empty(),
            "one's own thread tells no one"
        );
        let repost = Post::repost(
            PostId(11),
            u("c"),
            PostRef {
                id: PostId(5),
                author: u("a"),
            },
        );
        assert_eq!(
            told_of_post(&repost),
            vec![(u("a"), NoticeKind::Repost, PostId(5))]
        );
    }

    #[test]
    fn likes_and_follows_group_by_post_and_day() {
        let day = 20_000 * WINDOW_MS;
        let like = |user: &str, at: u64| match &changes_of(&Event::Liked {
            user: u(user),
            post: PostId(7),
            author: u("a"),
            at_ms: at,
        })[..]
        {
            [NoticeChange::Made(n)] => n.clone(),
            other => panic!("{other:?}"),
        };
        let (x, y) = (like("b", day + 5), like("c", day + WINDOW_MS - 1));
        assert_eq!(x.group(), y.group());
        assert_ne!(x.id, y.id);
        assert_ne!(
            like("b", day + WINDOW_MS).group(),
            x.group(),
            "the next day"
        );
        assert_eq!(
            like("b", day + 5).id,
            x.id,
            "a replay makes the same notice"
        );
        let own = Event::Liked {
            user: u("a"),
            post: PostId(7),
            author: u("a"),
            at_ms: day,
        };
        assert!(changes_of(&own).is_empty());
        for k in NoticeKind::ALL {
            assert_eq!(NoticeKind::from_code(k.code()), Some(k));
        }
    }
}
