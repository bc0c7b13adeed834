//! A webhook receiver on loopback, for the webhook tests: it keeps every
//! request and answers by the path's first segment: `ok` 204, `slow` 204
//! after two seconds, `gone` 410, `busy` 429 with `Retry-After: 1` the
//! first time then 204, `fail` 500, `redirect` 302 to `/ok/...`, `big` a
//! 20 MiB body, `loris` a body trickled forever.

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: BTreeMap<String, String>,
    pub body: Vec<u8>,
    pub at: Instant,
}

impl Received {
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }
}

#[derive(Clone)]
pub struct Receiver {
    pub base: String,
    got: Arc<Mutex<Vec<Received>>>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", l.local_addr().unwrap());
        let got: Arc<Mutex<Vec<Received>>> = Arc::default();
        let kept = got.clone();
        let app = axum::Router::new().fallback(
            move |uri: Uri, headers: HeaderMap, body: axum::body::Bytes| {
                let kept = kept.clone();
                async move { answer(&kept, uri, headers, body).await }
            },
        );
        tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
        Receiver { base, got }
    }

    /// What came to paths starting with `prefix`.
    pub fn at(&self, prefix: &str) -> Vec<Received> {
        let got = self.got.lock().unwrap();
        got.iter()
            .filter(|r| r.path.starts_with(prefix))
            .cloned()
            .collect()
    }

    /// Waits until `prefix` received `n` requests (a minute at most).
    pub async fn wait_for(&self, prefix: &str, n: usize) -> Vec<Received> {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let got = self.at(prefix);
            if got.len() >= n {
                return got;
            }
            assert!(
                Instant::now() < deadline,
                "{prefix}: {} of {n} requests came",
                got.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn answer(
    kept: &Mutex<Vec<Received>>,
    uri: Uri,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let path = uri.path().to_owned();
    let headers: BTreeMap<String, String> = headers
        .iter()
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    let seen_before = {
        let mut got = kept.lock().unwrap();
        let before = got.iter().filter(|r| r.path == path).count();
        got.push(Received {
            path: path.clone(),
            headers,
            body: body.to_vec(),
            at: Instant::now(),
        });
        before
    };
    let first = path.trim_start_matches('/').split('/').next().unwrap_or("");
    match first {
        "slow" => {
            tokio::time::sleep(Duration::from_secs(2)).await;
            StatusCode::NO_CONTENT.into_response()
        }
        "gone" => StatusCode::GONE.into_response(),
        "busy" if seen_before == 0 => {
            (StatusCode::TOO_MANY_REQUESTS, [("retry-after", "1")]).into_response()
        }
        "fail" => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
        "redirect" => (StatusCode::FOUND, [("location", "/ok/redirected")]).into_response(),
        "big" => {
            let chunk = axum::body::Bytes::from(vec![b'x'; 1 << 20]);
            let chunks = (0..20).map(move |_| Ok::<_, std::io::Error>(chunk.clone()));
            Response::new(Body::from_stream(futures_util::stream::iter(chunks)))
        }
        "loris" => {
            let trickle = futures_util::stream::unfold((), |_| async {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Some((
                    Ok::<_, std::io::Error>(axum::body::Bytes::from_static(b"x")),
                    (),
                ))
            });
            Response::new(Body::from_stream(trickle))
        }
        _ => StatusCode::NO_CONTENT.into_response(),
    }
}
