//! The gRPC `Reads` service.

use crate::auth::grpc_parts;
use crate::error::to_status;
use crate::pb::{
    counted_post, edge_page, entry, limit, marker, optional, post_page, ranked_list, user,
    user_page,
};
use crate::MAX_BODY_BYTES;
use socialite_core::graph::Direction;
use socialite_core::model::{rfc3339_ms, Post};
use socialite_core::reads::ranked::Order;
use socialite_core::reads::Reads;
use socialite_domain::accounts::access::Caller;
use socialite_domain::graph::relations::Relation;
use socialite_proto::v1 as pb;
use socialite_proto::v1::reads_server::ReadsServer;
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// The gRPC service name, as health checks report it.
pub const GRPC_NAME: &str = <ReadsServer<ReadsGrpc> as tonic::server::NamedService>::NAME;

pub fn grpc_service(reads: Arc<Reads>) -> ReadsServer<ReadsGrpc> {
    ReadsServer::new(ReadsGrpc(reads)).max_decoding_message_size(MAX_BODY_BYTES)
}

pub struct ReadsGrpc(Arc<Reads>);

impl ReadsGrpc {
    async fn relations(
        &self,
        (caller, r): (Caller, pb::ListUsersRequest),
        relation: Relation,
    ) -> Result<Response<pb::UserList>, Status> {
        let (limit, cursor) = (limit(r.limit), optional(&r.cursor));
        let page = self.0.relations(&caller, &r.user, relation, limit, cursor);
        Ok(Response::new(user_page(page.await.map_err(to_status)?)))
    }

    async fn edges(
        &self,
        (caller, r): (Caller, pb::ListUsersRequest),
        d: Direction,
    ) -> Result<Response<pb::UserList>, Status> {
        let (limit, cursor) = (limit(r.limit), optional(&r.cursor));
        let list = match (d, optional(&r.list)) {
            (Direction::Following, Some(list)) => {
                self.0
                    .list_members(&caller, &r.user, list, optional(&r.viewer), limit, cursor)
                    .await
            }
            (Direction::Followers, Some(_)) => {
                return Err(Status::invalid_argument(
                    "invalid_query: list filters ListFollowing only",
                ))
            }
            (d, None) => {
                let viewer = optional(&r.viewer);
                let page = self.0.edges(&caller, &r.user, viewer, d, limit, cursor);
                let page = page.await;
                let page = page.map_err(to_status)?;
                return Ok(Response::new(edge_page(page, r.with_followed_at)));
            }
        };
        Ok(Response::new(user_page(list.map_err(to_status)?)))
    }
}

#[tonic::async_trait]
impl pb::reads_server::Reads for ReadsGrpc {
    async fn get_user(
        &self,
        req: Request<pb::GetUserRequest>,
    ) -> Result<Response<pb::User>, Status> {
        let (caller, r) = grpc_parts(req);
        let u = self.0.user(&caller, &r.id, optional(&r.viewer)).await;
        let u = u.map_err(to_status)?;
        Ok(Response::new(user(&u)))
    }

    async fn list_followers(
        &self,
        req: Request<pb::ListUsersRequest>,
    ) -> Result<Response<pb::UserList>, Status> {
        self.edges(grpc_parts(req), Direction::Followers).await
    }

    async fn list_following(
        &self,
        req: Request<pb::ListUsersRequest>,
    ) -> Result<Response<pb::UserList>, Status> {
        self.edges(grpc_parts(req), Direction::Following).await
    }

    async fn follower_count(
        &self,
        req: Request<pb::GetUserRequest>,
    ) -> Result<Response<pb::Count>, Status> {
        let (caller, r) = grpc_parts(req);
        let u = self.0.user(&caller, &r.id, optional(&r.viewer)).await;
        let u = u.map_err(to_status)?;
        Ok(Response::new(pb::Count { count: u.followers }))
    }

    async fn following_count(
        &self,
        req: Request<pb::GetUserRequest>,
    ) -> Result<Response<pb::Count>, Status> {
        let (caller, r) = grpc_parts(req);
        let u = self.0.user(&caller, &r.id, optional(&r.viewer)).await;
        let u = u.map_err(to_status)?;
        Ok(Response::new(pb::Count { count: u.following }))
    }

    async fn get_post(
        &self,
        req: Request<pb::GetPostRequest>,
    ) -> Result<Response<pb::Post>, Status> {
        let (caller, r) = grpc_parts(req);
        let viewer = optional(&r.viewer);
        let found = self.0.post_with_counts(&caller, &r.id, viewer).await;
        let (p, counts) = found.map_err(to_status)?;
        Ok(Response::new(counted_post(&p, counts)))
    }

    async fn get_thread(
        &self,
        req: Request<pb::ThreadRequest>,
    ) -> Result<Response<pb::Thread>, Status> {
        let (caller, r) = grpc_parts(req);
        let read = self.0.thread(
            &caller,
            &r.post_id,
            optional(&r.viewer),
            limit(r.limit),
            optional(&r.cursor),
        );
        let t = read.await.map_err(to_status)?;
        let counted = |p: &Post| pb::Post {
            filtered: t
                .filtered
                .get(&p.id)
                .map(|h| crate::filters::grpc::hits(h))
                .unwrap_or_default(),
            ..counted_post(p, t.counts.get(&p.id).copied().unwrap_or_default())
        };
        Ok(Response::new(pb::Thread {
            ancestors: t.ancestors.iter().map(counted).collect(),
            post: Some(counted(&t.post)),
            replies: t.replies.items.iter().map(counted).collect(),
            next_cursor: t
                .replies
                .next_cursor
                .map(|c| c.to_string())
                .unwrap_or_default(),
        }))
    }

    async fn list_notifications(
        &self,
        req: Request<pb::ListPostsRequest>,
    ) -> Result<Response<pb::NotificationList>, Status> {
        let (caller, r) = grpc_parts(req);
        let read = self
            .0
            .notifications(&caller, &r.user, limit(r.limit), optional(&r.before));
        let page = read.await.map_err(to_status)?;
        let entry = |n: &socialite_core::notifications::Notification| pb::Notification {
            kind: n.kind.as_str().to_owned(),
            post_id: n.post.map(|p| p.to_string()).unwrap_or_default(),
            actors: n.actors.iter().map(|a| a.to_string()).collect(),
            count: n.count,
            latest_at: rfc3339_ms(n.latest.unix_ms()),
            id: n.latest.to_string(),
            filtered: crate::filters::grpc::hits(&n.filtered),
        };
        Ok(Response::new(pb::NotificationList {
            notifications: page.items.iter().map(entry).collect(),
            next_cursor: page.next_cursor.map(|c| c.to_string()).unwrap_or_default(),
        }))
    }

    async fn unread_notifications(
        &self,
        req: Request<pb::UserRef>,
    ) -> Result<Response<pb::UnreadCount>, Status> {
        let (caller, r) = grpc_parts(req);
        let read = self.0.unread_notifications(&caller, &r.id);
        let (unread, more) = read.await.map_err(to_status)?;
        Ok(Response::new(pb::UnreadCount { unread, more }))
    }

    async fn list_muted_threads(
        &self,
        req: Request<pb::ListMutedThreadsRequest>,
    ) -> Result<Response<pb::ThreadList>, Status> {
        crate::thread_mutes::list(&self.0, req).await
    }

    async fn list_filters(
        &self,
        req: Request<pb::UserRef>,
    ) -> Result<Response<pb::FilterList>, Status> {
        crate::filters::grpc::list(&self.0, req).await
    }

    async fn list_bookmarks(
        &self,
        req: Request<pb::ListBookmarksRequest>,
    ) -> Result<Response<pb::BookmarkList>, Status> {
        crate::bookmarks::grpc::list(&self.0, req).await
    }

    async fn list_likers(
        &self,
        req: Request<pb::ListLikersRequest>,
    ) -> Result<Response<pb::LikerList>, Status> {
        let (caller, r) = grpc_parts(req);
        let (limit, cursor) = (limit(r.limit), optional(&r.cursor));
        let viewer = optional(&r.viewer);
        let page = self.0.likers(&caller, &r.post_id, viewer, limit, cursor);
        let page = page.await;
        let page = page.map_err(to_status)?;
        Ok(Response::new(pb::LikerList {
            liked_at: page.items.iter().map(|(_, at)| rfc3339_ms(*at)).collect(),
            users: page.items.into_iter().map(|(u, _)| u.to_string()).collect(),
            next_cursor: page.next_cursor.unwrap_or_default(),
        }))
    }

    async fn list_posts(
        &self,
        req: Request<pb::ListPostsRequest>,
    ) -> Result<Response<pb::PostList>, Status> {
        let (caller, r) = grpc_parts(req);
        let page = self
            .0
            .posts_by(
                &caller,
                &r.user,
                optional(&r.viewer),
                limit(r.limit),
                optional(&r.before),
            )
            .await
            .map_err(to_status)?;
        Ok(Response::new(post_page(&page)))
    }

    async fn get_timeline(
        &self,
        req: Request<pb::ListPostsRequest>,
    ) -> Result<Response<pb::PostList>, Status> {
        let (caller, r) = grpc_parts(req);
        if let Some(after) = optional(&r.after) {
            if optional(&r.before).is_some() {
                return Err(Status::invalid_argument(
                    "invalid_query: a page is read back from `before` or forward from `after`, not both",
                ));
            }
            let read = self
                .0
                .timeline_after(&caller, &r.user, limit(r.limit), after);
            let (page, _) = read.await.map_err(to_status)?;
            return Ok(Response::new(pb::PostList {
                posts: page.items.iter().map(entry).collect(),
                next_cursor: page.next_cursor.map(|c| c.to_string()).unwrap_or_default(),
                skipped: page.skipped,
            }));
        }
        let (page, _) = self
            .0
            .timeline(&caller, &r.user, limit(r.limit), optional(&r.before))
            .await
            .map_err(to_status)?;
        Ok(Response::new(post_page(&page)))
    }

    async fn get_ranked_timeline(
        &self,
        req: Request<pb::RankedTimelineRequest>,
    ) -> Result<Response<pb::RankedPostList>, Status> {
        let (caller, r) = grpc_parts(req);
        let order = Order::parse(optional(&r.order).unwrap_or("balanced")).map_err(to_status)?;
        let read = self.0.ranked_timeline(
            &caller,
            &r.user,
            optional(&r.list),
            order,
            limit(r.limit),
            optional(&r.cursor),
            optional(&r.since),
        );
        let page = read.await.map_err(to_status)?;
        Ok(Response::new(ranked_list(&page, order, r.explain)))
    }

    async fn list_markers(
        &self,
        req: Request<pb::UserRef>,
    ) -> Result<Response<pb::MarkerList>, Status> {
        let (caller, r) = grpc_parts(req);
        let held = self.0.markers(&caller, &r.id).await.map_err(to_status)?;
        let markers = held.iter().map(marker).collect();
        Ok(Response::new(pb::MarkerList { markers }))
    }

    async fn list_feed_preferences(
        &self,
        req: Request<pb::UserRef>,
    ) -> Result<Response<pb::FeedPreferenceList>, Status> {
        let (caller, r) = grpc_parts(req);
        let all = self
            .0
            .feed_preferences(&caller, &r.id)
            .await
            .map_err(to_status)?;
        let preferences = all
            .into_iter()
            .map(|(author, level)| pb::FeedPreference {
                user: r.id.clone(),
                author: author.as_str().to_owned(),
                priority: i32::from(level),
            })
            .collect();
        Ok(Response::new(pb::FeedPreferenceList { preferences }))
    }

    async fn get_relationship(
        &self,
        req: Request<pb::RelationshipRequest>,
    ) -> Result<Response<pb::Relationship>, Status> {
        let (caller, r) = grpc_parts(req);
        let rel = self
            .0
            .relationship(&caller, &r.user, &r.other)
            .await
            .map_err(to_status)?;
        let json = crate::json::relationship(rel);
        Ok(Response::new(pb::Relationship {
            following: json.following,
            followed_by: json.followed_by,
            lists: json.lists,
            reposts: json.reposts,
            replies: json.replies,
            notify: json.notify,
        }))
    }

    async fn list_suggestions(
        &self,
        req: Request<pb::ListSuggestionsRequest>,
    ) -> Result<Response<pb::SuggestionList>, Status> {
        let (caller, r) = grpc_parts(req);
        let list = self
            .0
            .suggestions(&caller, &r.user, limit(r.limit))
            .await
            .map_err(to_status)?;
        let users = list
            .into_iter()
            .map(|s| pb::Suggestion {
                id: s.user.to_string(),
                mutuals: s.mutuals,
            })
            .collect();
        Ok(Response::new(pb::SuggestionList { users }))
    }

    async fn list_posts_by_authors(
        &self,
        req: Request<pb::ListPostsByAuthorsRequest>,
    ) -> Result<Response<pb::PostList>, Status> {
        let (caller, r) = grpc_parts(req);
        let authors: Vec<&str> = r.authors.iter().map(String::as_str).collect();
        let page = self
            .0
            .posts_by_authors(
                &caller,
                &authors,
                optional(&r.viewer),
                limit(r.limit),
                optional(&r.before),
            )
            .await
            .map_err(to_status)?;
        Ok(Response::new(post_page(&page)))
    }

    async fn list_lists(
        &self,
        req: Request<pb::GetUserRequest>,
    ) -> Result<Response<pb::ListList>, Status> {
        let (caller, r) = grpc_parts(req);
        let lists = self.0.lists(&caller, &r.id, optional(&r.viewer)).await;
        let lists = lists.map_err(to_status)?;
        let lists = lists
            .into_iter()
            .map(|l| pb::NamedList {
                name: l.name.to_string(),
                count: l.count,
                exclusive: l.exclusive,
            })
            .collect();
        Ok(Response::new(pb::ListList { lists }))
    }

    async fn get_list_timeline(
        &self,
        req: Request<pb::ListTimelineRequest>,
    ) -> Result<Response<pb::PostList>, Status> {
        let (caller, r) = grpc_parts(req);
        let (page, _) = self
            .0
            .list_timeline(
                &caller,
                &r.user,
                &r.list,
                limit(r.limit),
                optional(&r.before),
            )
            .await
            .map_err(to_status)?;
        Ok(Response::new(post_page(&page)))
    }

    async fn list_mentions(
        &self,
        req: Request<pb::ListPostsRequest>,
    ) -> Result<Response<pb::PostList>, Status> {
        let (caller, r) = grpc_parts(req);
        let page = self
            .0
            .mentions(&caller, &r.user, limit(r.limit), optional(&r.before))
            .await
            .map_err(to_status)?;
        Ok(Response::new(post_page(&page)))
    }

    async fn get_group(&self, req: Request<pb::GroupRef>) -> Result<Response<pb::Group>, Status> {
        let (caller, r) = grpc_parts(req);
        let (name, members) = self.0.group(&caller, &r.group).await.map_err(to_status)?;
        Ok(Response::new(pb::Group {
            name: name.to_string(),
            members,
        }))
    }

    async fn list_group_members(
        &self,
        req: Request<pb::ListGroupMembersRequest>,
    ) -> Result<Response<pb::UserList>, Status> {
        let (caller, r) = grpc_parts(req);
        let page = self
            .0
            .group_members(&caller, &r.group, limit(r.limit), optional(&r.cursor))
            .await
            .map_err(to_status)?;
        Ok(Response::new(user_page(page)))
    }

    async fn get_group_timeline(
        &self,
        req: Request<pb::GroupTimelineRequest>,
    ) -> Result<Response<pb::PostList>, Status> {
        let (caller, r) = grpc_parts(req);
        let (page, _) = self
            .0
            .group_timeline(
                &caller,
                &r.group,
                optional(&r.viewer),
                limit(r.limit),
                optional(&r.before),
            )
            .await
            .map_err(to_status)?;
        Ok(Response::new(post_page(&page)))
    }

    async fn list_mutes(
        &self,
        req: Request<pb::ListUsersRequest>,
    ) -> Result<Response<pb::UserList>, Status> {
        self.relations(grpc_parts(req), Relation::Mute).await
    }

    async fn list_blocks(
        &self,
        req: Request<pb::ListUsersRequest>,
    ) -> Result<Response<pb::UserList>, Status> {
        self.relations(grpc_parts(req), Relation::Block).await
    }
}
