//! Events on the log, and their protobuf encoding (`proto/socialite/v1/events.proto`).

use crate::error::{Error, Result};
use crate::ids::{PostId, UserId};
use prost::Message;
use socialite_proto::v1 as pb;

/// How many followers one `AuthorRetracted` event names at most, so that no
/// event grows with an account's follower count.
pub const RETRACT_CHUNK: usize = 1000;

#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    PostCreated {
        post: PostId,
        author: UserId,
    },
    PostDeleted {
        post: PostId,
        author: UserId,
    },
    Followed {
        follower: UserId,
        followee: UserId,
    },
    Unfollowed {
        follower: UserId,
        followee: UserId,
    },
    AuthorRetracted {
        author: UserId,
        followers: Vec<UserId>,
    },
    TimelineDropped {
        user: UserId,
    },
}

impl Event {
    /// The partition key: events about one author's posts and followers share a
    /// key, so a partitioned log keeps them in order.
    pub fn key(&self) -> &UserId {
        match self {
            Event::PostCreated { author, .. }
            | Event::PostDeleted { author, .. }
            | Event::AuthorRetracted { author, .. } => author,
            Event::Followed { followee, .. } | Event::Unfollowed { followee, .. } => followee,
            Event::TimelineDropped { user } => user,
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        use pb::event::Kind;
        let s = |u: &UserId| u.as_str().to_owned();
        let kind = match self {
            Event::PostCreated { post, author } => Kind::PostCreated(pb::PostCreated {
                post_id: post.0,
                author: s(author),
            }),
            Event::PostDeleted { post, author } => Kind::PostDeleted(pb::PostDeleted {
                post_id: post.0,
                author: s(author),
            }),
            Event::Followed { follower, followee } => Kind::Followed(pb::Followed {
                follower: s(follower),
                followee: s(followee),
            }),
            Event::Unfollowed { follower, followee } => Kind::Unfollowed(pb::Unfollowed {
                follower: s(follower),
                followee: s(followee),
            }),
            Event::AuthorRetracted { author, followers } => {
                Kind::AuthorRetracted(pb::AuthorRetracted {
                    author: s(author),
                    followers: followers.iter().map(s).collect(),
                })
            }
            Event::TimelineDropped { user } => {
                Kind::TimelineDropped(pb::TimelineDropped { user: s(user) })
            }
        };
        pb::Event { kind: Some(kind) }.encode_to_vec()
    }

    pub fn decode(bytes: &[u8]) -> Result<Event> {
        use pb::event::Kind;
        let bad = |why: String| Error::internal(format!("undecodable event on the log: {why}"));
        let msg = pb::Event::decode(bytes).map_err(|e| bad(e.to_string()))?;
        let u = |s: &str| UserId::parse(s).map_err(|e| bad(e.to_string()));
        Ok(match msg.kind.ok_or_else(|| bad("no kind".into()))? {
            Kind::PostCreated(e) => Event::PostCreated {
                post: PostId(e.post_id),
                author: u(&e.author)?,
            },
            Kind::PostDeleted(e) => Event::PostDeleted {
                post: PostId(e.post_id),
                author: u(&e.author)?,
            },
            Kind::Followed(e) => Event::Followed {
                follower: u(&e.follower)?,
                followee: u(&e.followee)?,
            },
            Kind::Unfollowed(e) => Event::Unfollowed {
                follower: u(&e.follower)?,
                followee: u(&e.followee)?,
            },
            Kind::AuthorRetracted(e) => Event::AuthorRetracted {
                author: u(&e.author)?,
                followers: e.followers.iter().map(|f| u(f)).collect::<Result<_>>()?,
            },
            Kind::TimelineDropped(e) => Event::TimelineDropped { user: u(&e.user)? },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_round_trip() {
        let a = UserId::parse("a").unwrap();
        let b = UserId::parse("b").unwrap();
        let events = [
            Event::PostCreated {
                post: PostId(7),
                author: a.clone(),
            },
            Event::PostDeleted {
                post: PostId(u64::MAX),
                author: a.clone(),
            },
            Event::Followed {
                follower: a.clone(),
                followee: b.clone(),
            },
            Event::Unfollowed {
                follower: b.clone(),
                followee: a.clone(),
            },
            Event::AuthorRetracted {
                author: a.clone(),
                followers: vec![b.clone(), a.clone()],
            },
            Event::TimelineDropped { user: b.clone() },
        ];
        for e in events {
            assert_eq!(Event::decode(&e.encode()).unwrap(), e);
        }
        assert!(Event::decode(b"\xff\xff").is_err());
        assert!(Event::decode(&[]).is_err());
    }
}
