//! The IETF `RateLimit-Policy` and `RateLimit` fields
//! (draft-ietf-httpapi-ratelimit-headers) on every response to a metered
//! credential: the policies that hold for it (its requests (a bucket of two seconds' rate), and
//! its write budget's points an hour and a day, `qu="points"`), and the
//! one with the smallest share left, with what is left and the seconds
//! until it is full again. gRPC answers carry them as metadata.

use axum::http::{HeaderName, HeaderValue};
use socialite_core::budgets::Window;

pub static RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
pub static RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// The two fields for these windows; none for none.
pub fn limit_fields(windows: &[Window]) -> Option<[(HeaderName, HeaderValue); 2]> {
    let tightest = windows
        .iter()
        .min_by(|a, b| share_left(a).total_cmp(&share_left(b)))?;
    let policy: Vec<String> = windows
        .iter()
        .map(|w| {
            let unit = if w.name == "requests" {
                ""
            } else {
                ";qu=\"points\""
            };
            format!("\"{}\";q={};w={}{unit}", w.name, w.quota, w.seconds)
        })
        .collect();
    let state = format!(
        "\"{}\";r={};t={}",
        tightest.name, tightest.remaining, tightest.full_in
    );
    Some([
        (RATELIMIT_POLICY.clone(), value(policy.join(", "))),
        (RATELIMIT.clone(), value(state)),
    ])
}

fn share_left(w: &Window) -> f64 {
    f64::from(w.remaining) / f64::from(w.quota.max(1))
}

fn value(text: String) -> HeaderValue {
    HeaderValue::try_from(text).expect("names and numbers only")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policies_and_the_tightest_window() {
        let second = Window {
            name: "requests",
            quota: 100,
            seconds: 2,
            remaining: 90,
            full_in: 1,
        };
        let hour = Window {
            name: "hour",
            quota: 5000,
            seconds: 3600,
            remaining: 12,
            full_in: 3592,
        };
        let [(p, policy), (r, state)] = limit_fields(&[second, hour]).unwrap();
        assert_eq!(p, "ratelimit-policy");
        assert_eq!(
            policy,
            "\"requests\";q=100;w=2, \"hour\";q=5000;w=3600;qu=\"points\""
        );
        assert_eq!(r, "ratelimit");
        assert_eq!(state, "\"hour\";r=12;t=3592");
        assert!(limit_fields(&[]).is_none());
    }
}
