//! What the benchmark drives: the engine in this process (no network), or a
//! running server over REST or gRPC. Each answers the same operations.

use socialite_core::ingest::Ingest;
use socialite_core::reads::Reads;
use socialite_domain::accounts::access::Caller;
use socialite_proto::v1 as pb;
use socialite_proto::v1::ingest_client::IngestClient;
use socialite_proto::v1::reads_client::ReadsClient;
use std::sync::Arc;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

pub type OpResult<T> = Result<T, String>;

/// How a failed operation's message starts when the server refused it as
/// it should under load: 429 or 503 with `Retry-After` (gRPC:
/// `RESOURCE_EXHAUSTED` or `UNAVAILABLE` with `retry-after`). The run counts
/// these apart from errors.
pub const REFUSED: &str = "refused: ";

/// A page of a timeline: post ids and the next cursor.
pub type TimelinePage = (Vec<String>, Option<String>);

#[tonic::async_trait]
pub trait Target: Send + Sync {
    async fn put_user(&self, id: &str) -> OpResult<()>;
    /// Returns the new post's id.
    async fn post(&self, author: &str, message: &str) -> OpResult<String>;
    async fn timeline(
        &self,
        user: &str,
        limit: usize,
        before: Option<&str>,
    ) -> OpResult<TimelinePage>;
    async fn follow(&self, user: &str, target: &str) -> OpResult<()>;
    async fn unfollow(&self, user: &str, target: &str) -> OpResult<()>;
    /// The first page of one of the user's lists; returns its size.
    async fn list_timeline(&self, user: &str, list: &str, limit: usize) -> OpResult<usize>;
    /// The first page of a group's timeline; returns its size.
    async fn group_timeline(&self, group: &str, limit: usize) -> OpResult<usize>;
    /// The first page of the user's mentions; returns its size.
    async fn mentions(&self, user: &str, limit: usize) -> OpResult<usize>;
    /// The first page of the user's home timeline in the balanced order;
    /// returns its size.
    async fn balanced(&self, user: &str, limit: usize) -> OpResult<usize>;
    /// `user` likes the post `post`.
    async fn like(&self, user: &str, post: &str) -> OpResult<()>;
    /// `user` reposts the post `post`.
    async fn repost(&self, user: &str, post: &str) -> OpResult<()>;
    /// The first page of the user's notifications; returns its size.
    async fn notifications(&self, user: &str, limit: usize) -> OpResult<usize>;
    /// The server's Prometheus text.
    async fn metrics(&self) -> OpResult<String>;
}

/// The core's services, called directly: measures the engine.
pub struct InProcess {
    pub ingest: Arc<Ingest>,
    pub reads: Arc<Reads>,
}

#[tonic::async_trait]
impl Target for InProcess {
    async fn put_user(&self, id: &str) -> OpResult<()> {
        self.ingest
            .put_user(&Caller::Trusted, id, None)
            .await
            .map(|_| ())
            .map_err(|e| e.chain())
    }
    async fn post(&self, author: &str, message: &str) -> OpResult<String> {
        let p = self
            .ingest
            .create_post(&Caller::Trusted, author, message.to_owned(), None)
            .await
            .map_err(|e| e.chain())?;
        Ok(p.id.to_string())
    }
    async fn timeline(
        &self,
        user: &str,
        limit: usize,
        before: Option<&str>,
    ) -> OpResult<TimelinePage> {
        let (page, _) = self
            .reads
            .timeline(&Caller::Trusted, user, Some(limit as u64), before)
            .await
            .map_err(|e| e.chain())?;
        Ok((
            page.items.iter().map(|p| p.post.id.to_string()).collect(),
            page.next_cursor.map(|c| c.to_string()),
        ))
    }
    async fn follow(&self, user: &str, target: &str) -> OpResult<()> {
        self.ingest
            .follow(&Caller::Trusted, user, target, None)
            .await
            .map(|_| ())
            .map_err(|e| e.chain())
    }
    async fn unfollow(&self, user: &str, target: &str) -> OpResult<()> {
        self.ingest
            .unfollow(&Caller::Trusted, user, target)
            .await
            .map(|_| ())
            .map_err(|e| e.chain())
    }
    async fn list_timeline(&self, user: &str, list: &str, limit: usize) -> OpResult<usize> {
        let (page, _) = self
            .reads
            .list_timeline(&Caller::Trusted, user, list, Some(limit as u64), None)
            .await
            .map_err(|e| format!("{}: {}", e.code(), e.chain()))?;
        Ok(page.items.len())
    }
    async fn group_timeline(&self, group: &str, limit: usize) -> OpResult<usize> {
        let (page, _) = self
            .reads
            .group_timeline(&Caller::Trusted, group, None, Some(limit as u64), None)
            .await
            .map_err(|e| e.chain())?;
        Ok(page.items.len())
    }
    async fn mentions(&self, user: &str, limit: usize) -> OpResult<usize> {
        let page = self
            .reads
            .mentions(&Caller::Trusted, user, Some(limit as u64), None)
            .await
            .map_err(|e| e.chain())?;
        Ok(page.items.len())
    }
    async fn balanced(&self, user: &str, limit: usize) -> OpResult<usize> {
        let order = socialite_core::reads::ranked::Order::Balanced;
        let read = self.reads.ranked_timeline(
            &Caller::Trusted,
            user,
            None,
            order,
            Some(limit as u64),
            None,
            None,
        );
        Ok(read.await.map_err(|e| e.chain())?.items.len())
    }
    async fn like(&self, user: &str, post: &str) -> OpResult<()> {
        let liked = self.ingest.like(&Caller::Trusted, user, post, true).await;
        liked.map(drop).map_err(|e| e.chain())
    }
    async fn repost(&self, user: &str, post: &str) -> OpResult<()> {
        let done = self.ingest.repost(&Caller::Trusted, user, post, true).await;
        done.map(drop)
            .map_err(|e| format!("{}: {}", e.code(), e.chain()))
    }
    async fn notifications(&self, user: &str, limit: usize) -> OpResult<usize> {
        let page = self
            .reads
            .notifications(&Caller::Trusted, user, Some(limit as u64), None)
            .await
            .map_err(|e| e.chain())?;
        Ok(page.items.len())
    }
    async fn metrics(&self) -> OpResult<String> {
        Ok(socialite_core::metrics::metrics().render(&[]))
    }
}

/// A server's REST API: measures the service.
pub struct Rest {
    pub http: reqwest::Client,
    pub base: String,
}

impl Rest {
    /// A client that sends `api_key`, if given, with every request.
    pub fn new(base: &str, api_key: Option<&str>) -> OpResult<Rest> {
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(key) = api_key {
            let value = format!("Bearer {key}")
                .parse()
                .map_err(|_| "the API key is not a valid header value".to_owned())?;
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(1024)
            .default_headers(headers)
            .build()
            .map_err(|e| format!("cannot build an HTTP client: {e}"))?;
        Ok(Rest {
            http,
            base: base.trim_end_matches('/').to_owned(),
        })
    }

    /// How many posts the page at `path` holds.
    async fn page_size(&self, path: &str) -> OpResult<usize> {
        let v = self
            .send(self.http.get(format!("{}{path}", self.base)))
            .await?;
        Ok(v["posts"].as_array().map_or(0, Vec::len))
    }

    async fn send(&self, req: reqwest::RequestBuilder) -> OpResult<serde_json::Value> {
        let resp = req.send().await.map_err(|e| e.to_string())?;
        let status = resp.status();
        let retry = resp.headers().contains_key(reqwest::header::RETRY_AFTER);
        let body = resp.bytes().await.map_err(|e| e.to_string())?;
        if !status.is_success() {
            let refused = retry && matches!(status.as_u16(), 429 | 503);
            let prefix = if refused { REFUSED } else { "" };
            return Err(format!(
                "{prefix}{status}: {}",
                String::from_utf8_lossy(&body)
            ));
        }
        if body.is_empty() {
            return Ok(serde_json::Value::Null);
        }
        serde_json::from_slice(&body).map_err(|e| e.to_string())
    }
}

#[tonic::async_trait]
impl Target for Rest {
    async fn put_user(&self, id: &str) -> OpResult<()> {
        self.send(self.http.put(format!("{}/users/{id}", self.base)))
            .await
            .map(|_| ())
    }
    async fn post(&self, author: &str, message: &str) -> OpResult<String> {
        let req = self
            .http
            .post(format!("{}/users/{author}/posts", self.base))
            .json(&serde_json::json!({ "message": message }));
        let v = self.send(req).await?;
        v["id"]
            .as_str()
            .map(str::to_owned)
            .ok_or_else(|| "no id in the answer".into())
    }
    async fn timeline(
        &self,
        user: &str,
        limit: usize,
        before: Option<&str>,
    ) -> OpResult<TimelinePage> {
        let mut url = format!("{}/users/{user}/timeline?limit={limit}", self.base);
        if let Some(b) = before {
            url.push_str("&before=");
            url.push_str(b);
        }
        let v = self.send(self.http.get(url)).await?;
        let ids = v["posts"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|p| p["id"].as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        Ok((ids, v["next_cursor"].as_str().map(str::to_owned)))
    }
    async fn follow(&self, user: &str, target: &str) -> OpResult<()> {
        self.send(
            self.http
                .put(format!("{}/users/{user}/following/{target}", self.base)),
        )
        .await
        .map(|_| ())
    }
    async fn unfollow(&self, user: &str, target: &str) -> OpResult<()> {
        self.send(
            self.http
                .delete(format!("{}/users/{user}/following/{target}", self.base)),
        )
        .await
        .map(|_| ())
    }
    async fn list_timeline(&self, user: &str, list: &str, limit: usize) -> OpResult<usize> {
        self.page_size(&format!(
            "/users/{user}/lists/{list}/timeline?limit={limit}"
        ))
        .await
    }
    async fn group_timeline(&self, group: &str, limit: usize) -> OpResult<usize> {
        self.page_size(&format!("/groups/{group}/timeline?limit={limit}"))
            .await
    }
    async fn mentions(&self, user: &str, limit: usize) -> OpResult<usize> {
        self.page_size(&format!("/users/{user}/mentions?limit={limit}"))
            .await
    }
    async fn balanced(&self, user: &str, limit: usize) -> OpResult<usize> {
        self.page_size(&format!(
            "/users/{user}/timeline?order=balanced&limit={limit}"
        ))
        .await
    }
    async fn like(&self, user: &str, post: &str) -> OpResult<()> {
        self.send(
            self.http
                .put(format!("{}/users/{user}/likes/{post}", self.base)),
        )
        .await
        .map(|_| ())
    }
    async fn repost(&self, user: &str, post: &str) -> OpResult<()> {
        let url = format!("{}/users/{user}/reposts/{post}", self.base);
        self.send(self.http.put(url)).await.map(|_| ())
    }
    async fn notifications(&self, user: &str, limit: usize) -> OpResult<usize> {
        let path = format!("/users/{user}/notifications?limit={limit}");
        let page = self
            .send(self.http.get(format!("{}{path}", self.base)))
            .await?;
        Ok(page["notifications"].as_array().map_or(0, Vec::len))
    }
    async fn metrics(&self) -> OpResult<String> {
        let resp = self
            .http
            .get(format!("{}/metrics", self.base))
            .send()
            .await
            .map_err(|e| e.to_string())?;
        resp.text().await.map_err(|e| e.to_string())
    }
}

/// Adds the API key, if any, to every gRPC call's `authorization`.
#[derive(Clone)]
pub struct Bearer(Option<MetadataValue<Ascii>>);

impl Bearer {
    pub fn new(credential: Option<&str>) -> OpResult<Bearer> {
        let value = credential
            .map(|k| format!("Bearer {k}").parse())
            .transpose()
            .map_err(|_| "the credential is not a valid metadata value".to_owned())?;
        Ok(Bearer(value))
    }
}

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

/// A channel whose calls carry the credential.
pub type Authed = InterceptedService<Channel, Bearer>;

/// A server's gRPC API (metrics still come from its REST port).
pub struct Grpc {
    pub ingest: IngestClient<Authed>,
    pub reads: ReadsClient<Authed>,
    pub rest: Rest,
}

impl Grpc {
    pub async fn connect(url: &str, rest: &str, api_key: Option<&str>) -> OpResult<Grpc> {
        let channel = Channel::from_shared(url.to_owned())
            .map_err(|e| e.to_string())?
            .connect()
            .await
            .map_err(|e| format!("cannot reach {url}: {e}"))?;
        let bearer = Bearer::new(api_key)?;
        Ok(Grpc {
            ingest: IngestClient::with_interceptor(channel.clone(), bearer.clone()),
            reads: ReadsClient::with_interceptor(channel, bearer),
            rest: Rest::new(rest, api_key)?,
        })
    }
}

fn edge(user: &str, target: &str) -> pb::FollowRequest {
    pb::FollowRequest {
        user: user.into(),
        target: target.into(),
        ..Default::default()
    }
}

fn status(s: tonic::Status) -> String {
    use tonic::Code;
    let refused = matches!(s.code(), Code::ResourceExhausted | Code::Unavailable)
        && s.metadata().get("retry-after").is_some();
    let prefix = if refused { REFUSED } else { "" };
    format!("{prefix}{:?}: {}", s.code(), s.message())
}

#[tonic::async_trait]
impl Target for Grpc {
    async fn put_user(&self, id: &str) -> OpResult<()> {
        let req = pb::PutUserRequest {
            id: id.into(),
            profile_json: String::new(),
        };
        self.ingest
            .clone()
            .put_user(req)
            .await
            .map(|_| ())
            .map_err(status)
    }
    async fn post(&self, author: &str, message: &str) -> OpResult<String> {
        let req = pb::CreatePostRequest {
            author: author.into(),
            message: message.into(),
            data_json: String::new(),
            ..Default::default()
        };
        Ok(self
            .ingest
            .clone()
            .create_post(req)
            .await
            .map_err(status)?
            .into_inner()
            .id)
    }
    async fn timeline(
        &self,
        user: &str,
        limit: usize,
        before: Option<&str>,
    ) -> OpResult<TimelinePage> {
        let req = pb::ListPostsRequest {
            user: user.into(),
            limit: limit as u32,
            before: before.unwrap_or("").into(),
            ..Default::default()
        };
        let page = self
            .reads
            .clone()
            .get_timeline(req)
            .await
            .map_err(status)?
            .into_inner();
        let next = (!page.next_cursor.is_empty()).then_some(page.next_cursor);
        Ok((page.posts.into_iter().map(|p| p.id).collect(), next))
    }
    async fn follow(&self, user: &str, target: &str) -> OpResult<()> {
        let req = edge(user, target);
        self.ingest
            .clone()
            .follow(req)
            .await
            .map(|_| ())
            .map_err(status)
    }
    async fn unfollow(&self, user: &str, target: &str) -> OpResult<()> {
        let req = edge(user, target);
        self.ingest
            .clone()
            .unfollow(req)
            .await
            .map(|_| ())
            .map_err(status)
    }
    async fn list_timeline(&self, user: &str, list: &str, limit: usize) -> OpResult<usize> {
        let req = pb::ListTimelineRequest {
            user: user.into(),
            list: list.into(),
            limit: limit as u32,
            before: String::new(),
        };
        let page = self.reads.clone().get_list_timeline(req).await;
        Ok(page.map_err(status)?.into_inner().posts.len())
    }
    async fn group_timeline(&self, group: &str, limit: usize) -> OpResult<usize> {
        let req = pb::GroupTimelineRequest {
            group: group.into(),
            limit: limit as u32,
            before: String::new(),
            viewer: String::new(),
        };
        let page = self.reads.clone().get_group_timeline(req).await;
        Ok(page.map_err(status)?.into_inner().posts.len())
    }
    async fn mentions(&self, user: &str, limit: usize) -> OpResult<usize> {
        let req = pb::ListPostsRequest {
            user: user.into(),
            limit: limit as u32,
            before: String::new(),
            ..Default::default()
        };
        let page = self.reads.clone().list_mentions(req).await;
        Ok(page.map_err(status)?.into_inner().posts.len())
    }
    async fn balanced(&self, user: &str, limit: usize) -> OpResult<usize> {
        let req = pb::RankedTimelineRequest {
            user: user.into(),
            order: "balanced".into(),
            limit: limit as u32,
            ..Default::default()
        };
        let page = self.reads.clone().get_ranked_timeline(req).await;
        Ok(page.map_err(status)?.into_inner().entries.len())
    }
    async fn like(&self, user: &str, post: &str) -> OpResult<()> {
        let req = pb::LikeRequest {
            user: user.into(),
            post_id: post.into(),
        };
        self.ingest.clone().like(req).await.map_err(status)?;
        Ok(())
    }
    async fn repost(&self, user: &str, post: &str) -> OpResult<()> {
        let req = pb::RepostRequest {
            user: user.into(),
            post_id: post.into(),
        };
        self.ingest.clone().repost(req).await.map_err(status)?;
        Ok(())
    }
    async fn notifications(&self, user: &str, limit: usize) -> OpResult<usize> {
        let req = pb::ListPostsRequest {
            user: user.into(),
            limit: limit as u32,
            ..Default::default()
        };
        let page = self.reads.clone().list_notifications(req).await;
        Ok(page.map_err(status)?.into_inner().notifications.len())
    }
    async fn metrics(&self) -> OpResult<String> {
        self.rest.metrics().await
    }
}
