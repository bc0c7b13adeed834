//! Planned writes that queue no events: the bulk paths (loading a network
//! into a data directory no server is using). They run every check and
//! every step of the same planners as any write; only the events are left
//! out, because every user of a loaded network is dormant and builds their
//! timeline on first read.

use super::deletion::Side;
use super::{Step, Txn};
use crate::ids::{GroupName, ListName, PostId, UserId};
use crate::model::Post;
use crate::rules::accounts::Standing;
use crate::rules::markers::{Marker, MarkerTimeline};
use crate::rules::notifications::{GroupKey, Notice, NoticeGroup, NoticeKey};
use crate::rules::relations::Relation;
use serde_json::{Map, Value};

/// A backend's transaction whose plans queue no events.
pub struct Quiet<'a, T>(pub &'a mut T);

impl<T: Txn> Txn for Quiet<'_, T> {
    type Error = T::Error;

    async fn existing_users(&mut self, users: &[&UserId]) -> Result<Vec<UserId>, T::Error> {
        self.0.existing_users(users).await
    }
    async fn edge_lists(
        &mut self,
        follower: &UserId,
        followee: &UserId,
    ) -> Result<Option<Vec<ListName>>, T::Error> {
        self.0.edge_lists(follower, followee).await
    }
    async fn blocked_either_way(&mut self, a: &UserId, b: &UserId) -> Result<bool, T::Error> {
        self.0.blocked_either_way(a, b).await
    }
    async fn following_count(&mut self, user: &UserId) -> Result<u64, T::Error> {
        self.0.following_count(user).await
    }
    async fn list_names(&mut self, user: &UserId) -> Result<Vec<ListName>, T::Error> {
        self.0.list_names(user).await
    }
    async fn relation_exists(
        &mut self,
        user: &UserId,
        relation: Relation,
        target: &UserId,
    ) -> Result<bool, T::Error> {
        self.0.relation_exists(user, relation, target).await
    }
    async fn relation_count(
        &mut self,
        user: &UserId,
        relation: Relation,
        cap: usize,
    ) -> Result<usize, T::Error> {
        self.0.relation_count(user, relation, cap).await
    }
    async fn is_member(&mut self, group: &GroupName, user: &UserId) -> Result<bool, T::Error> {
        self.0.is_member(group, user).await
    }
    async fn group_count(&mut self, user: &UserId, cap: usize) -> Result<usize, T::Error> {
        self.0.group_count(user, cap).await
    }
    async fn deleting(&mut self, user: &UserId) -> Result<Option<Vec<ListName>>, T::Error> {
        self.0.deleting(user).await
    }
    async fn edge_page(
        &mut self,
        user: &UserId,
        side: Side,
        limit: usize,
    ) -> Result<Vec<(UserId, Vec<ListName>)>, T::Error> {
        self.0.edge_page(user, side, limit).await
    }
    async fn groups_of(&mut self, user: &UserId) -> Result<Vec<GroupName>, T::Error> {
        self.0.groups_of(user).await
    }
    async fn relations_kept(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(Relation, UserId)>, T::Error> {
        self.0.relations_kept(user, limit).await
    }
    async fn posts_by(&mut self, user: &UserId, limit: usize) -> Result<Vec<PostId>, T::Error> {
        self.0.posts_by(user, limit).await
    }
    async fn posts_mentioning(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<PostId>, T::Error> {
        self.0.posts_mentioning(user, limit).await
    }
    async fn profile(
        &mut self,
        user: &UserId,
    ) -> Result<Option<Option<Map<String, Value>>>, T::Error> {
        self.0.profile(user).await
    }
    async fn standing(&mut self, user: &UserId) -> Result<Standing, T::Error> {
        self.0.standing(user).await
    }
    async fn post(&mut self, id: PostId) -> Result<Option<Post>, T::Error> {
        self.0.post(id).await
    }
    async fn notice(&mut self, key: &NoticeKey) -> Result<Option<PostId>, T::Error> {
        self.0.notice(key).await
    }
    async fn notice_group(
        &mut self,
        recipient: &UserId,
        group: GroupKey,
    ) -> Result<Option<NoticeGroup>, T::Error> {
        self.0.notice_group(recipient, group).await
    }
    async fn group_notices(
        &mut self,
        recipient: &UserId,
        group: GroupKey,
        limit: usize,
    ) -> Result<Vec<(PostId, UserId)>, T::Error> {
        self.0.group_notices(recipient, group, limit).await
    }
    async fn notices_of(&mut self, user: &UserId, limit: usize) -> Result<Vec<Notice>, T::Error> {
        self.0.notices_of(user, limit).await
    }
    async fn answered_among(&mut self, posts: &[PostId]) -> Result<Vec<PostId>, T::Error> {
        self.0.answered_among(posts).await
    }
    async fn reposted(&mut self, post: PostId, user: &UserId) -> Result<Option<PostId>, T::Error> {
        self.0.reposted(post, user).await
    }
    async fn reposts_by(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(PostId, PostId, bool)>, T::Error> {
        self.0.reposts_by(user, limit).await
    }
    async fn marker(
        &mut self,
        user: &UserId,
        timeline: MarkerTimeline,
    ) -> Result<Option<Marker>, T::Error> {
        self.0.marker(user, timeline).await
    }
    async fn liked(&mut self, post: PostId, user: &UserId) -> Result<Option<u64>, T::Error> {
        self.0.liked(post, user).await
    }
    async fn likes_by(
        &mut self,
        user: &UserId,
        limit: usize,
    ) -> Result<Vec<(PostId, bool)>, T::Error> {
        self.0.likes_by(user, limit).await
    }
    /// Applies every step but the events.
    async fn apply(&mut self, steps: &[Step]) -> Result<(), T::Error> {
        let kept: Vec<Step> = steps
            .iter()
            .filter(|s| !matches!(s, Step::Emit(_)))
            .cloned()
            .collect();
        self.0.apply(&kept).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::event::Event;
    use crate::plan::run_ready;

    /// A transaction in which every user exists and nothing else does,
    /// recording what it applies.
    #[derive(Default)]
    struct Recorded(Vec<Step>);

    impl Txn for Recorded {
        type Error = Error;
        async fn existing_users(&mut self, users: &[&UserId]) -> Result<Vec<UserId>, Error> {
            Ok(users.iter().map(|u| (*u).clone()).collect())
        }
        async fn edge_lists(
            &mut self,
            _: &UserId,
            _: &UserId,
        ) -> Result<Option<Vec<ListName>>, Error> {
            Ok(None)
        }
        async fn blocked_either_way(&mut self, _: &UserId, _: &UserId) -> Result<bool, Error> {
            Ok(false)
        }
        async fn following_count(&mut self, _: &UserId) -> Result<u64, Error> {
            Ok(0)
        }
        async fn list_names(&mut self, _: &UserId) -> Result<Vec<ListName>, Error> {
            Ok(vec![])
        }
        async fn relation_exists(
            &mut self,
            _: &UserId,
            _: Relation,
            _: &UserId,
        ) -> Result<bool, Error> {
            Ok(false)
        }
        async fn relation_count(
            &mut self,
            _: &UserId,
            _: Relation,
            _: usize,
        ) -> Result<usize, Error> {
            Ok(0)
        }
        async fn is_member(&mut self, _: &GroupName, _: &UserId) -> Result<bool, Error> {
            Ok(false)
        }
        async fn group_count(&mut self, _: &UserId, _: usize) -> Result<usize, Error> {
            Ok(0)
        }
        async fn deleting(&mut self, _: &UserId) -> Result<Option<Vec<ListName>>, Error> {
            Ok(None)
        }
        async fn edge_page(
            &mut self,
            _: &UserId,
            _: Side,
            _: usize,
        ) -> Result<Vec<(UserId, Vec<ListName>)>, Error> {
            Ok(vec![])
        }
        async fn groups_of(&mut self, _: &UserId) -> Result<Vec<GroupName>, Error> {
            Ok(vec![])
        }
        async fn relations_kept(
            &mut self,
            _: &UserId,
            _: usize,
        ) -> Result<Vec<(Relation, UserId)>, Error> {
            Ok(vec![])
        }
        async fn posts_by(&mut self, _: &UserId, _: usize) -> Result<Vec<PostId>, Error> {
            Ok(vec![])
        }
        async fn posts_mentioning(&mut self, _: &UserId, _: usize) -> Result<Vec<PostId>, Error> {
            Ok(vec![])
        }
        async fn profile(
            &mut self,
            _: &UserId,
        ) -> Result<Option<Option<Map<String, Value>>>, Error> {
            Ok(Some(None))
        }
        async fn standing(&mut self, _: &UserId) -> Result<Standing, Error> {
            Ok(Standing::default())
        }
        async fn marker(&mut self, _: &UserId, _: MarkerTimeline) -> Result<Option<Marker>, Error> {
            Ok(None)
        }
        async fn liked(&mut self, _: PostId, _: &UserId) -> Result<Option<u64>, Error> {
            Ok(None)
        }
        async fn likes_by(&mut self, _: &UserId, _: usize) -> Result<Vec<(PostId, bool)>, Error> {
            Ok(vec![])
        }
        async fn notice(&mut self, _: &NoticeKey) -> Result<Option<PostId>, Error> {
            Ok(None)
        }
        async fn notice_group(
            &mut self,
            _: &UserId,
            _: GroupKey,
        ) -> Result<Option<NoticeGroup>, Error> {
            Ok(None)
        }
        async fn group_notices(
            &mut self,
            _: &UserId,
            _: GroupKey,
            _: usize,
        ) -> Result<Vec<(PostId, UserId)>, Error> {
            Ok(vec![])
        }
        async fn notices_of(&mut self, _: &UserId, _: usize) -> Result<Vec<Notice>, Error> {
            Ok(vec![])
        }
        async fn answered_among(&mut self, _: &[PostId]) -> Result<Vec<PostId>, Error> {
            Ok(vec![])
        }
        async fn reposted(&mut self, _: PostId, _: &UserId) -> Result<Option<PostId>, Error> {
            Ok(None)
        }
        async fn reposts_by(
            &mut self,
            _: &UserId,
            _: usize,
        ) -> Result<Vec<(PostId, PostId, bool)>, Error> {
            Ok(vec![])
        }
        async fn post(&mut self, _: PostId) -> Result<Option<Post>, Error> {
            Ok(None)
        }
        async fn apply(&mut self, steps: &[Step]) -> Result<(), Error> {
            self.0.extend_from_slice(steps);
            Ok(())
        }
    }

    #[test]
    fn a_quiet_plan_applies_every_step_but_its_events() {
        use crate::rules::checks::{EdgeChange, EdgeOp};
        let (a, b) = (UserId::parse("a").unwrap(), UserId::parse("b").unwrap());
        let change = EdgeChange::new(a, b, EdgeOp::Follow).unwrap();
        let mut loud = Recorded::default();
        run_ready(super::super::edge::change_edge(&mut loud, &change)).unwrap();
        let mut quiet = Recorded::default();
        run_ready(super::super::edge::change_edge(
            &mut Quiet(&mut quiet),
            &change,
        ))
        .unwrap();
        assert!(loud
            .0
            .iter()
            .any(|s| matches!(s, Step::Emit(Event::Followed { .. }))));
        let expected: Vec<Step> = loud
            .0
            .into_iter()
            .filter(|s| !matches!(s, Step::Emit(_)))
            .collect();
        assert!(!expected.is_empty());
        assert_eq!(
            quiet.0.iter().map(kind).collect::<Vec<_>>(),
            expected.iter().map(kind).collect::<Vec<_>>()
        );
    }

    fn kind(s: &Step) -> std::mem::Discriminant<Step> {
        std::mem::discriminant(s)
    }
}
