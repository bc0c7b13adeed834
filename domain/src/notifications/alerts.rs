//! Alerts: the `post` notifications of the accounts a reader follows with
//! the `notify` option on. They are derived when notifications are read,
//! never written at fanout: a post's alerts are its author's subscribers'
//! to find, so turning `notify` on for many follows costs fanout nothing,
//! and a deleted post, an unfollow or the option turned off take their
//! alerts with them at once.
//!
//! - **What.** An original post or a reply (never a repost) of the
//!   account, made since the reader turned `notify` on (the option's
//!   `since`, [`crate::plan::Step::NotifySince`]); but one the post tells
//!   already, as the author it answers or one it mentions
//!   ([`told_of_post`]): told once, as that.
//! - **An entry.** Each alert is an entry of its own, of kind `post`, about
//!   the post, with its author as the one actor, placed by the post's id
//!   ([`alert_group`]).
//! - **Hidden.** As every entry: the author muted or blocked, a filter that
//!   hides the post, a muted thread ([`crate::notifications::thread_mutes`]).

use crate::ids::{PostId, UserId};
use crate::model::Post;
use crate::notifications::notified::{
    told_of_post, GroupKey, Notice, NoticeChange, NoticeGroup, NoticeKey, NoticeKind, WINDOW_MS,
};

/// Whether `post` alerts `reader`, who turned `notify` on for its author
/// at `since_ms`.
pub fn alerts(post: &Post, reader: &UserId, since_ms: u64) -> bool {
    post.repost_of.is_none()
        && post.author != *reader
        && !before_option(post.id, since_ms)
        && !told_of_post(post).iter().any(|(told, _, _)| told == reader)
}

/// Whether `post` was made before the option (at `since_ms`): then so was
/// every older post of its author, and none of them alerts.
pub fn before_option(post: PostId, since_ms: u64) -> bool {
    post < first_alert(since_ms)
}

/// The lowest post id an option turned on at `since_ms` alerts of: where a
/// read of the authors' posts can stop.
pub fn first_alert(since_ms: u64) -> PostId {
    PostId::first_at(since_ms)
}

/// The notification entry of an alert about `post`, by `author`.
pub fn alert_group(post: PostId, author: &UserId) -> NoticeGroup {
    NoticeGroup {
        group: GroupKey {
            kind: NoticeKind::Post,
            post: Some(post),
            window: post.unix_ms() / WINDOW_MS,
        },
        count: 1,
        latest: post,
        actors: vec![(post, author.clone())],
    }
}

/// The alerts a new post makes for `subscribers`, who follow its author
/// with the `notify` option on now: as notices, for a live stream to push
/// ([`alerts`] decides which; notifications read
/// derive the same entries from the posts).
pub fn subscribers_told(post: &Post, subscribers: &[UserId]) -> Vec<NoticeChange> {
    subscribers
        .iter()
        .filter(|s| alerts(post, s, 0))
        .map(|s| {
            NoticeChange::Made(Notice {
                key: NoticeKey {
                    recipient: s.clone(),
                    kind: NoticeKind::Post,
                    post: Some(post.id),
                    actor: post.author.clone(),
                    source: Some(post.id),
                },
                id: post.id,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PostRef;

    fn u(s: &str) -> UserId {
        UserId::parse(s).unwrap()
    }

    #[test]
    fn a_post_since_the_option_alerts_but_a_repost_or_one_told_already() {
        let at = 1_800_000_000_000;
        let id = PostId::first_at(at);
        let post = Post::written(id, u("bo"), "hi @cy".into(), None, vec![u("cy")]);
        assert!(alerts(&post, &u("ann"), at));
        assert!(alerts(&post, &u("ann"), at - 1));
        assert!(!alerts(&post, &u("ann"), at + 1), "made before the option");
        assert!(!alerts(&post, &u("cy"), at), "told as mentioned");
        assert!(!alerts(&post, &u("bo"), at), "its own author");
        let mut reply = post.clone();
        reply.mentions.clear();
        reply.reply_to = Some(PostRef {
            id: PostId(5),
            author: u("ann"),
        });
        assert!(!alerts(&reply, &u("ann"), at), "told as answered");
        assert!(alerts(&reply, &u("dee"), at), "a reply alerts");
        let repost = Post::repost(
            id,
            u("bo"),
            PostRef {
                id: PostId(5),
                author: u("ann"),
            },
        );
        assert!(!alerts(&repost, &u("dee"), at));
        let g = alert_group(id, &u("bo"));
        assert_eq!((g.count, g.latest, g.group.kind), (1, id, NoticeKind::Post));
    }

    #[test]
    fn a_post_tells_its_subscribers_once_and_a_repost_none() {
        let mut reply = Post::written(PostId(9), u("b"), "hi @c".into(), None, vec![u("c")]);
        reply.reply_to = Some(PostRef {
            id: PostId(5),
            author: u("a"),
        });
        let subs = [u("a"), u("c"), u("d"), u("b")];
        let told = subscribers_told(&reply, &subs);
        let recipients: Vec<&str> = told
            .iter()
            .map(|c| match c {
                NoticeChange::Made(n) => {
                    assert_eq!(
                        (n.key.kind, n.key.post, n.id),
                        (NoticeKind::Post, Some(PostId(9)), PostId(9))
                    );
                    n.key.recipient.as_str()
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            recipients,
            ["d"],
            "a and c are told as answered and mentioned; b wrote it"
        );
        let repost = Post::repost(
            PostId(11),
            u("b"),
            PostRef {
                id: PostId(5),
                author: u("a"),
            },
        );
        assert!(subscribers_told(&repost, &subs).is_empty());
    }
}
