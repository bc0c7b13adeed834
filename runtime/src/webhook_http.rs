//! Webhook requests over HTTP: one client for the process, which follows
//! no redirect, times out, reads at most `MAX_ANSWER_BYTES` of an answer,
//! and resolves names itself so that every connection is checked against
//! the internal addresses (unless the operator allows them): a name that
//! resolves to one is refused, whenever it is resolved.

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use socialite_core::webhooks::{
    address, Answer, Outbound, Request, WebhookConfig, MAX_ANSWER_BYTES,
};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

pub struct HttpOutbound {
    client: reqwest::Client,
    allow_internal: bool,
}

impl HttpOutbound {
    pub fn new(config: &WebhookConfig) -> Result<HttpOutbound, String> {
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            // A proxy would resolve the endpoint's name itself, past the
            // check of every address below.
            .no_proxy()
            .timeout(config.timeout)
            .connect_timeout(config.timeout.min(Duration::from_secs(5)))
            .user_agent(concat!("Socialite-Webhooks/", env!("CARGO_PKG_VERSION")))
            .pool_idle_timeout(Duration::from_secs(30))
            .dns_resolver(Arc::new(Checked {
                allow_internal: config.allow_internal,
            }))
            .build()
            .map_err(|e| format!("cannot make the webhook client: {e}"))?;
        Ok(HttpOutbound {
            client,
            allow_internal: config.allow_internal,
        })
    }

    /// An IP address in the URL is connected to without resolving: it is
    /// checked here (names are, by the resolver, on every connection).
    fn refused_literal(&self, url: &str) -> Option<String> {
        if self.allow_internal {
            return None;
        }
        let parsed = address::url(url).ok()?;
        match address::target(&parsed) {
            address::Target::Ip(ip) if address::internal(ip) => {
                Some(address::refused(&ip.to_string(), ip).message().to_owned())
            }
            _ => None,
        }
    }
}

#[async_trait::async_trait]
impl Outbound for HttpOutbound {
    async fn post(&self, request: Request) -> Answer {
        if let Some(refused) = self.refused_literal(&request.url) {
            return Answer::Failed(refused);
        }
        let mut call = self.client.post(&request.url).body(request.body);
        for (name, value) in request.headers {
            call = call.header(name, value);
        }
        let mut answer = match call.send().await {
            Ok(a) => a,
            Err(e) => return Answer::Failed(why(&e)),
        };
        let status = answer.status().as_u16();
        let retry_after = answer
            .headers()
            .get(reqwest::header::RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        // The body is read up to the cap and dropped: an endpoint cannot
        // make the process hold more (the timeout bounds a slow one).
        let mut read = 0;
        while read < MAX_ANSWER_BYTES {
            match answer.chunk().await {
                Ok(Some(chunk)) => read += chunk.len(),
                Ok(None) => break,
                Err(e) => return Answer::Failed(why(&e)),
            }
        }
        Answer::Status {
            status,
            retry_after,
        }
    }
}

/// Why a request failed, without its URL (which may carry a token in its
/// query).
fn why(e: &reqwest::Error) -> String {
    let mut text = match () {
        _ if e.is_timeout() => "timed out".to_owned(),
        _ if e.is_connect() => "could not connect".to_owned(),
        _ => "request failed".to_owned(),
    };
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

/// Resolves with the system's resolver, refusing a name any of whose
/// addresses is internal.
struct Checked {
    allow_internal: bool,
}

impl Resolve for Checked {
    fn resolve(&self, name: Name) -> Resolving {
        let allow = self.allow_internal;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            if !allow {
                if let Some(bad) = found.iter().find(|a| address::internal(a.ip())) {
                    let refused = address::refused(&host, bad.ip());
                    return Err(refused.message().to_owned().into());
                }
            }
            let addrs: Addrs = Box::new(found.into_iter());
            Ok(addrs)
        })
    }
}

/// Delivers the webhooks of the endpoints this process takes, until
/// `shutdown`.
pub(crate) async fn deliver(
    backends: socialite_core::backends::Backends,
    config: WebhookConfig,
    shutdown: socialite_core::shutdown::Shutdown,
) -> socialite_core::error::Result<()> {
    let outbound = HttpOutbound::new(&config).map_err(socialite_core::error::Error::internal)?;
    let deliveries = socialite_core::webhooks::Deliveries::new(
        backends.webhooks.clone(),
        backends.log.clone(),
        Arc::new(outbound),
        Arc::new(socialite_api::webhooks::body),
        config,
    );
    deliveries.run(shutdown).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(url: String) -> Request {
        Request {
            url,
            headers: vec![],
            body: b"{}".to_vec(),
        }
    }

    /// A receiver on loopback answering 204 to anything.
    async fn receiver() -> u16 {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = l.local_addr().unwrap().port();
        tokio::spawn(async move {
            while let Ok((mut s, _)) = l.accept().await {
                tokio::spawn(async move {
                    use tokio::io::{AsyncReadExt, AsyncWriteExt};
                    let mut buf = [0u8; 4096];
                    let _ = s.read(&mut buf).await;
                    let _ = s
                        .write_all(b"HTTP/1.1 204 No Content\r\ncontent-length: 0\r\n\r\n")
                        .await;
                });
            }
        });
        port
    }

    #[tokio::test]
    async fn internal_addresses_are_refused_by_name_and_by_number_unless_allowed() {
        let port = receiver().await;
        let strict = HttpOutbound::new(&WebhookConfig::default()).unwrap();
        for url in [
            format!("http://localhost:{port}/in"),
            format!("http://127.0.0.1:{port}/in"),
            format!("http://[::ffff:127.0.0.1]:{port}/in"),
        ] {
            match strict.post(request(url.clone())).await {
                Answer::Failed(why) => assert!(why.contains("internal address"), "{url}: {why}"),
                other => panic!("{url} was called: {other:?}"),
            }
        }
        let open = HttpOutbound::new(&WebhookConfig {
            allow_internal: true,
            ..Default::default()
        })
        .unwrap();
        let answer = open
            .post(request(format!("http://localhost:{port}/in")))
            .await;
        assert_eq!(
            answer,
            Answer::Status {
                status: 204,
                retry_after: None
            }
        );
    }
}
