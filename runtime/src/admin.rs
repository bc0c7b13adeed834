//! A running server's admin routes, as the tools that work beside it call
//! them (`socialite backup`, `socialite migrate`).

use crate::credentials::DataDirCredentials;
use std::path::{Path, PathBuf};

/// The server that holds a data directory, called on its admin routes.
pub struct Admin {
    url: String,
    key: String,
    http: reqwest::Client,
}

impl Admin {
    /// The server at `url`, with `api_key` or else the admin key in
    /// `data_dir` (DATA_DIR/auth/admin-key).
    pub fn new(url: &str, api_key: Option<&str>, data_dir: &Path) -> Result<Admin, String> {
        let key = match api_key {
            Some(k) => k.to_owned(),
            None => {
                let path = DataDirCredentials::of(data_dir).admin_key;
                let key = std::fs::read_to_string(&path).map_err(|e| {
                    format!(
                        "a server holds the data directory; no --api-key, and cannot read {}: {e}",
                        path.display()
                    )
                })?;
                key.trim().to_owned()
            }
        };
        let url = url.trim_end_matches('/').to_owned();
        let http = reqwest::Client::new();
        Ok(Admin { url, key, http })
    }

    /// Calls `path`; the answer's JSON when its status is `expect`.
    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
        expect: u16,
    ) -> Result<serde_json::Value, String> {
        let (status, reply) = self.answer(method, path, body).await?;
        match status == expect {
            true => Ok(reply),
            false => Err(format!("{}{path}: {status} {reply}", self.url)),
        }
    }

    /// Calls `path`: the answer's status and JSON.
    async fn answer(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Option<serde_json::Value>,
    ) -> Result<(u16, serde_json::Value), String> {
        let url = format!("{}{path}", self.url);
        let mut req = self.http.request(method, &url).bearer_auth(&self.key);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let resp = req.send().await.map_err(|e| {
            format!("a server holds the data directory, and {url} does not answer: {e}")
        })?;
        let status = resp.status().as_u16();
        Ok((status, resp.json().await.unwrap_or_default()))
    }

    /// A backup named `name`, made by the server under DATA_DIR/backups
    /// (with `log_after`, a log tail: the log's events after it): where it
    /// is, and its rows. While the server makes another (one at a
    /// time), this waits and asks again.
    pub async fn backup(
        &self,
        name: &str,
        log_after: Option<u64>,
    ) -> Result<(PathBuf, u64), String> {
        let mut body = serde_json::json!({ "name": name });
        if let Some(after) = log_after {
            body["log_after"] = after.into();
        }
        let (path, mut told) = ("/admin/backup", false);
        // As long as the server lets one backup take.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3600);
        let reply = loop {
            let post = reqwest::Method::POST;
            let (status, reply) = self.answer(post, path, Some(body.clone())).await?;
            match (status, reply["error"]["code"].as_str()) {
                (201, _) => break reply,
                (409, Some("backup_in_progress")) if std::time::Instant::now() < deadline => {
                    if !std::mem::replace(&mut told, true) {
                        eprintln!("the server is making another backup; waiting for it to end");
                    }
                    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
                }
                _ => return Err(format!("{}{path}: {status} {reply}", self.url)),
            }
        };
        let made = PathBuf::from(reply["path"].as_str().unwrap_or_default());
        Ok((made, reply["rows"].as_u64().unwrap_or(0)))
    }

    /// Stops (`on`) or resumes the server's writes; stopping returns once
    /// the writes under way have finished. Account safety acts go on.
    pub async fn read_only(&self, on: bool) -> Result<(), String> {
        let body = serde_json::json!({ "read_only": on });
        let put = reqwest::Method::PUT;
        self.call(put, "/admin/read-only", Some(body), 200)
            .await
            .map(drop)
    }

    /// Marks the server's deployment moved to `to`: account safety acts
    /// stop too (and are told to go there); returns once those under way
    /// have finished.
    pub async fn moved(&self, to: &str) -> Result<(), String> {
        let body = serde_json::json!({ "read_only": true, "moved_to": to });
        let put = reqwest::Method::PUT;
        self.call(put, "/admin/read-only", Some(body), 200)
            .await
            .map(drop)
    }
}
