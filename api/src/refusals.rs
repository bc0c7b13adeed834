//! The HTTP library's own refusals, in the API's form. hyper answers a
//! request it cannot parse (a URL over 64 KiB, too many or too large
//! headers, a malformed request line) itself, with an empty body, before
//! any handler runs. [`rewrite`] turns such an answer into the API's JSON
//! error with the same status; `crate::conn::Tracked` applies it to what a
//! connection writes while no request of the router is in flight (a
//! router's answer always is, so only hyper's own are rewritten).

use std::time::Duration;

/// The JSON answer that replaces `head`, when `head` is hyper's empty
/// refusal (`HTTP/1.x 4xx`, `content-length: 0`, `connection: close`);
/// the refusal is counted in the request metrics as route `unparsed`.
pub fn rewrite(head: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(head).ok()?;
    let rest = text.strip_prefix("HTTP/1.")?.get(2..)?;
    let status: u16 = rest.get(..3)?.parse().ok()?;
    let lower = text.to_ascii_lowercase();
    let empty_close = lower.ends_with("\r\n\r\n")
        && lower.contains("\r\ncontent-length: 0\r\n")
        && lower.contains("\r\nconnection: close\r\n");
    if !(400..500).contains(&status) || !empty_close {
        return None;
    }
    let (code, message) = match status {
        414 => ("uri_too_long", "the URL is longer than the server parses"),
        431 => (
            "headers_too_large",
            "the headers are more or larger than the server parses",
        ),
        _ => ("invalid_request", "the request could not be parsed as HTTP"),
    };
    crate::metrics::transport().observe_http(
        crate::metrics::RouteLabel::Fixed("unparsed"),
        "other",
        status,
        Duration::ZERO,
    );
    let body = serde_json::json!({ "error": { "code": code, "message": message } }).to_string();
    let reason = rest.get(4..)?.split("\r\n").next()?;
    Some(
        format!(
            "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n\
             content-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn only_hypers_empty_refusals_are_rewritten() {
        let hyper = b"HTTP/1.1 431 Request Header Fields Too Large\r\nconnection: close\r\n\
            content-length: 0\r\ndate: Tue, 24 Nov 2026 15:20:36 GMT\r\n\r\n";
        let out = String::from_utf8(rewrite(hyper).unwrap()).unwrap();
        assert!(out.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"));
        let (head, body) = out.split_once("\r\n\r\n").unwrap();
        assert!(head.contains(&format!("content-length: {}", body.len())));
        let v: serde_json::Value = serde_json::from_str(body).unwrap();
        assert_eq!(v["error"]["code"], "headers_too_large");
        let bad = b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n";
        assert!(String::from_utf8(rewrite(bad).unwrap())
            .unwrap()
            .contains("invalid_request"));
        // Not a refusal, or not an empty one: left alone.
        for other in [
            &b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"[..],
            b"HTTP/1.1 404 Not Found\r\ncontent-length: 5\r\nconnection: close\r\n\r\nnope!",
            b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n",
            b"{\"posts\":[]}",
        ] {
            assert!(
                rewrite(other).is_none(),
                "{}",
                String::from_utf8_lossy(other)
            );
        }
    }
}
