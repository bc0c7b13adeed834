//! A client's reading of a Server-Sent Events response: one event at a
//! time, comments skipped.

use super::DEADLINE;
use serde_json::Value;

/// One Server-Sent Event.
#[derive(Debug, Clone, PartialEq)]
pub struct Sse {
    pub event: String,
    pub id: Option<String>,
    pub data: Value,
}

pub struct SseReader {
    resp: reqwest::Response,
    buf: String,
}

impl SseReader {
    /// Reads `resp`, which must be 200 with an event stream.
    pub fn new(resp: reqwest::Response) -> SseReader {
        assert_eq!(resp.status(), reqwest::StatusCode::OK);
        let kind = resp.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(kind.starts_with("text/event-stream"), "{kind}");
        SseReader {
            resp,
            buf: String::new(),
        }
    }

    /// The next event, waiting at most the deadline.
    pub async fn next(&mut self) -> Sse {
        tokio::time::timeout(DEADLINE, self.read())
            .await
            .expect("no event within the deadline")
            .expect("the stream ended")
    }

    /// The next event, or `None` once the stream ended.
    pub async fn read(&mut self) -> Option<Sse> {
        loop {
            if let Some(end) = self.buf.find("\n\n") {
                let block: String = self.buf.drain(..end + 2).collect();
                let mut e = Sse {
                    event: String::new(),
                    id: None,
                    data: Value::Null,
                };
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        e.event = v.to_owned();
                    } else if let Some(v) = line.strip_prefix("id: ") {
                        e.id = Some(v.to_owned());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        e.data = serde_json::from_str(v).unwrap();
                    }
                }
                if !e.event.is_empty() {
                    return Some(e);
                }
                continue;
            }
            let chunk = self.resp.chunk().await.unwrap()?;
            self.buf.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    }
}
