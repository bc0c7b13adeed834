//! The gRPC `Ingest` service.

use crate::auth::grpc_parts;
use crate::error::to_status;
use crate::pb::{optional, optional_json, post, user};
use crate::MAX_BODY_BYTES;
use socialite_core::checks::EdgeTransition;
use socialite_core::ingest::Ingest;
use socialite_core::model::rfc3339_ms;
use socialite_domain::graph::mute_ends;
use socialite_domain::graph::relations::{FollowOption, Relation};
use socialite_proto::v1 as pb;
use socialite_proto::v1::ingest_server::IngestServer;
use std::sync::Arc;
use tonic::{Request, Response, Status};

/// The gRPC service name, as health checks report it.
pub const GRPC_NAME: &str = <IngestServer<IngestGrpc> as tonic::server::NamedService>::NAME;

pub fn grpc_service(ingest: Arc<Ingest>) -> IngestServer<IngestGrpc> {
    IngestServer::new(IngestGrpc(ingest)).max_decoding_message_size(MAX_BODY_BYTES)
}

pub struct IngestGrpc(Arc<Ingest>);

impl IngestGrpc {
    async fn like_as(
        &self,
        req: Request<pb::LikeRequest>,
        like: bool,
    ) -> Result<Response<pb::LikeReply>, Status> {
        let (caller, r) = grpc_parts(req);
        let changed = self.0.like(&caller, &r.user, &r.post_id, like).await;
        let changed = changed.map_err(to_status)?;
        Ok(Response::new(pb::LikeReply {
            liked: like,
            changed,
        }))
    }

    async fn repost_as(
        &self,
        req: Request<pb::RepostRequest>,
        repost: bool,
    ) -> Result<Response<pb::RepostReply>, Status> {
        let (caller, r) = grpc_parts(req);
        let done = self.0.repost(&caller, &r.user, &r.post_id, repost).await;
        let done = done.map_err(to_status)?;
        Ok(Response::new(pb::RepostReply {
            reposted: repost,
            changed: done.changed,
        }))
    }

    async fn relation(
        &self,
        req: Request<pb::RelationRequest>,
        relation: Relation,
        make: bool,
    ) -> Result<Response<pb::RelationReply>, Status> {
        let (caller, r) = grpc_parts(req);
        let (t, until) = match r.expires_in {
            Some(s) if relation == Relation::Mute && make => {
                let timed = self.0.mute_for(&caller, &r.user, &r.target, s).await;
                let (t, until) = timed.map_err(to_status)?;
                (t, Some(until))
            }
            Some(_) => return Err(to_status(mute_ends::only_a_mute_ends())),
            None => {
                let t = self.0.relation(&caller, &r.user, &r.target, relation, make);
                (t.await.map_err(to_status)?, None)
            }
        };
        Ok(Response::new(pb::RelationReply {
            active: t.active,
            changed: t.changed,
            expires_at: until.map(rfc3339_ms),
        }))
    }

    async fn suspension(
        &self,
        req: Request<pb::UserRef>,
        on: bool,
    ) -> Result<Response<pb::SuspensionReply>, Status> {
        let (caller, r) = grpc_parts(req);
        let changed = self
            .0
            .suspend(&caller, &r.id, on)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::SuspensionReply {
            suspended: on,
            changed,
        }))
    }

    async fn membership(
        &self,
        req: Request<pb::MembershipRequest>,
        join: bool,
    ) -> Result<Response<pb::MembershipReply>, Status> {
        let (caller, r) = grpc_parts(req);
        let changed = self
            .0
            .membership(&caller, &r.group, &r.user, join)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::MembershipReply {
            member: join,
            changed,
        }))
    }
}

#[tonic::async_trait]
impl pb::ingest_server::Ingest for IngestGrpc {
    async fn mute(
        &self,
        req: Request<pb::RelationRequest>,
    ) -> Result<Response<pb::RelationReply>, Status> {
        self.relation(req, Relation::Mute, true).await
    }

    async fn unmute(
        &self,
        req: Request<pb::RelationRequest>,
    ) -> Result<Response<pb::RelationReply>, Status> {
        self.relation(req, Relation::Mute, false).await
    }

    async fn block(
        &self,
        req: Request<pb::RelationRequest>,
    ) -> Result<Response<pb::RelationReply>, Status> {
        self.relation(req, Relation::Block, true).await
    }

    async fn like(&self, req: Request<pb::LikeRequest>) -> Result<Response<pb::LikeReply>, Status> {
        self.like_as(req, true).await
    }

    async fn bookmark(
        &self,
        req: Request<pb::BookmarkRequest>,
    ) -> Result<Response<pb::BookmarkReply>, Status> {
        crate::bookmarks::grpc::bookmark(&self.0, req, true).await
    }

    async fn unbookmark(
        &self,
        req: Request<pb::BookmarkRequest>,
    ) -> Result<Response<pb::BookmarkReply>, Status> {
        crate::bookmarks::grpc::bookmark(&self.0, req, false).await
    }

    async fn create_filter(
        &self,
        req: Request<pb::FilterRequest>,
    ) -> Result<Response<pb::Filter>, Status> {
        crate::filters::grpc::put(&self.0, req, false).await
    }

    async fn update_filter(
        &self,
        req: Request<pb::FilterRequest>,
    ) -> Result<Response<pb::Filter>, Status> {
        crate::filters::grpc::put(&self.0, req, true).await
    }

    async fn delete_filter(
        &self,
        req: Request<pb::FilterRef>,
    ) -> Result<Response<pb::DeleteFilterReply>, Status> {
        crate::filters::grpc::delete(&self.0, req).await
    }

    async fn set_marker(
        &self,
        req: Request<pb::SetMarkerRequest>,
    ) -> Result<Response<pb::MarkerReply>, Status> {
        let (caller, r) = grpc_parts(req);
        let set = self
            .0
            .set_marker(&caller, &r.user, &r.timeline, &r.last_read_id, r.force);
        let (held, changed) = set.await.map_err(to_status)?;
        Ok(Response::new(pb::MarkerReply {
            marker: Some(crate::pb::marker(&held)),
            changed,
        }))
    }

    async fn set_list_exclusive(
        &self,
        req: Request<pb::ListExclusiveRequest>,
    ) -> Result<Response<pb::ListExclusiveReply>, Status> {
        super::lists::set_exclusive(&self.0, req).await
    }

    async fn mute_thread(
        &self,
        req: Request<pb::ThreadMuteRequest>,
    ) -> Result<Response<pb::ThreadMuteReply>, Status> {
        crate::thread_mutes::mute(&self.0, req, true).await
    }

    async fn unmute_thread(
        &self,
        req: Request<pb::ThreadMuteRequest>,
    ) -> Result<Response<pb::ThreadMuteReply>, Status> {
        crate::thread_mutes::mute(&self.0, req, false).await
    }

    async fn show_less(
        &self,
        req: Request<pb::ShowLessRequest>,
    ) -> Result<Response<pb::ShowLessReply>, Status> {
        let (caller, r) = grpc_parts(req);
        let changed = self.0.show_less(&caller, &r.user, &r.post_id, r.on);
        let changed = changed.await.map_err(to_status)?;
        Ok(Response::new(pb::ShowLessReply { changed }))
    }

    async fn set_feed_preference(
        &self,
        req: Request<pb::FeedPreference>,
    ) -> Result<Response<pb::FeedPreferenceReply>, Status> {
        let (caller, r) = grpc_parts(req);
        let set = self
            .0
            .set_priority(&caller, &r.user, &r.author, i64::from(r.priority));
        let changed = set.await.map_err(to_status)?;
        Ok(Response::new(pb::FeedPreferenceReply {
            preference: Some(r),
            changed,
        }))
    }

    async fn unlike(
        &self,
        req: Request<pb::LikeRequest>,
    ) -> Result<Response<pb::LikeReply>, Status> {
        self.like_as(req, false).await
    }

    async fn repost(
        &self,
        req: Request<pb::RepostRequest>,
    ) -> Result<Response<pb::RepostReply>, Status> {
        self.repost_as(req, true).await
    }

    async fn unrepost(
        &self,
        req: Request<pb::RepostRequest>,
    ) -> Result<Response<pb::RepostReply>, Status> {
        self.repost_as(req, false).await
    }

    async fn unblock(
        &self,
        req: Request<pb::RelationRequest>,
    ) -> Result<Response<pb::RelationReply>, Status> {
        self.relation(req, Relation::Block, false).await
    }

    async fn put_user(
        &self,
        req: Request<pb::PutUserRequest>,
    ) -> Result<Response<pb::User>, Status> {
        let (caller, r) = grpc_parts(req);
        let profile = optional_json("profile_json", &r.profile_json)?;
        let (u, _) = self
            .0
            .put_user(&caller, &r.id, profile)
            .await
            .map_err(to_status)?;
        Ok(Response::new(user(&u)))
    }

    async fn suspend(
        &self,
        req: Request<pb::UserRef>,
    ) -> Result<Response<pb::SuspensionReply>, Status> {
        self.suspension(req, true).await
    }

    async fn unsuspend(
        &self,
        req: Request<pb::UserRef>,
    ) -> Result<Response<pb::SuspensionReply>, Status> {
        self.suspension(req, false).await
    }

    async fn backup(
        &self,
        req: Request<pb::BackupRequest>,
    ) -> Result<Response<pb::BackupReply>, Status> {
        let (caller, r) = grpc_parts(req);
        let made = self.0.backup(&caller, &r.name, r.log_after).await;
        let (path, rows) = made.map_err(to_status)?;
        let path = path.to_string_lossy().into_owned();
        Ok(Response::new(pb::BackupReply { path, rows }))
    }

    async fn set_read_only(
        &self,
        req: Request<pb::ReadOnlyRequest>,
    ) -> Result<Response<pb::ReadOnlyReply>, Status> {
        let (caller, r) = grpc_parts(req);
        let (on, moved_to) = (r.read_only, optional(&r.moved_to));
        let set = self.0.set_read_only(&caller, on, moved_to).await;
        set.map_err(to_status)?;
        // Echoed as it is kept: without the address's credentials.
        let moved_to = optional(&r.moved_to).map(socialite_core::redact::uri);
        Ok(Response::new(pb::ReadOnlyReply {
            read_only: on,
            moved_to: moved_to.unwrap_or_default(),
        }))
    }

    async fn revoke_tokens(
        &self,
        req: Request<pb::UserRef>,
    ) -> Result<Response<pb::Revoked>, Status> {
        let (caller, r) = grpc_parts(req);
        self.0
            .revoke_tokens(&caller, &r.id)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::Revoked {}))
    }

    async fn delete_user(
        &self,
        req: Request<pb::UserRef>,
    ) -> Result<Response<pb::Deleted>, Status> {
        let (caller, r) = grpc_parts(req);
        self.0
            .delete_user(&caller, &r.id)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::Deleted {}))
    }

    async fn follow(
        &self,
        req: Request<pb::FollowRequest>,
    ) -> Result<Response<pb::FollowReply>, Status> {
        let (caller, r) = grpc_parts(req);
        let lists: Vec<&str> = r.lists.iter().map(String::as_str).collect();
        let options = FollowOption::changes(r.reposts, r.replies, r.notify);
        let (t, changed) = self
            .0
            .follow_with_options(
                &caller,
                &r.user,
                &r.target,
                r.set_lists.then_some(&lists[..]),
                &options,
            )
            .await
            .map_err(to_status)?;
        let mut reply = follow_reply(&t);
        reply.changed |= changed;
        Ok(Response::new(reply))
    }

    async fn change_follows(
        &self,
        req: Request<pb::ChangeFollowsRequest>,
    ) -> Result<Response<pb::ChangeFollowsReply>, Status> {
        super::bulk::change_follows_grpc(&self.0, req).await
    }

    async fn unfollow(
        &self,
        req: Request<pb::FollowRequest>,
    ) -> Result<Response<pb::FollowReply>, Status> {
        let (caller, r) = grpc_parts(req);
        let t = self
            .0
            .unfollow(&caller, &r.user, &r.target)
            .await
            .map_err(to_status)?;
        Ok(Response::new(follow_reply(&t)))
    }

    async fn join_group(
        &self,
        req: Request<pb::MembershipRequest>,
    ) -> Result<Response<pb::MembershipReply>, Status> {
        self.membership(req, true).await
    }

    async fn leave_group(
        &self,
        req: Request<pb::MembershipRequest>,
    ) -> Result<Response<pb::MembershipReply>, Status> {
        self.membership(req, false).await
    }

    async fn create_post(
        &self,
        req: Request<pb::CreatePostRequest>,
    ) -> Result<Response<pb::Post>, Status> {
        let (caller, r) = grpc_parts(req);
        let data = optional_json("data_json", &r.data_json)?;
        let in_reply_to = optional(&r.in_reply_to);
        let p = self
            .0
            .create_reply(&caller, &r.author, r.message, data, in_reply_to)
            .await
            .map_err(to_status)?;
        Ok(Response::new(post(&p)))
    }

    async fn delete_post(
        &self,
        req: Request<pb::PostRef>,
    ) -> Result<Response<pb::Deleted>, Status> {
        let (caller, r) = grpc_parts(req);
        self.0
            .delete_post(&caller, &r.id)
            .await
            .map_err(to_status)?;
        Ok(Response::new(pb::Deleted {}))
    }
}

fn follow_reply(t: &EdgeTransition) -> pb::FollowReply {
    pb::FollowReply {
        changed: t.changed(),
        following: t.after.is_some(),
        lists: crate::json::names(t.after.as_deref().unwrap_or_default()),
    }
}
