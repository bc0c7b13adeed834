//! Secrets kept out of what is printed: a URI's password (`user:password@`)
//! and the values of query options that carry secrets are masked wherever
//! a URI is logged, shown or quoted in an error.

/// Query options whose values are secrets, by the words their names hold.
const SECRET_WORDS: [&str; 5] = ["password", "secret", "token", "key", "credential"];

/// `uri` with its password and secret options masked as `***`.
pub fn uri(uri: &str) -> String {
    let (head, query) = match uri.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (uri, None),
    };
    let mut out = match (head.find("://"), head.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let user = head[scheme + 3..at].split(':').next().unwrap_or("");
            format!("{}{user}:***{}", &head[..scheme + 3], &head[at..])
        }
        _ => head.to_owned(),
    };
    if let Some(query) = query {
        let options: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if secret(name) => format!("{name}=***"),
                _ => pair.to_owned(),
            })
            .collect();
        out = format!("{out}?{}", options.join("&"));
    }
    out
}

/// A secret value (a password, a token) that `Debug` prints as `***`, so
/// a settings struct holding it can be logged whole.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: String) -> Secret {
        Secret(value)
    }

    /// The value, for the one call that hands it to a client.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

fn secret(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    SECRET_WORDS.iter().any(|w| name.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_and_secret_options_are_masked() {
        assert_eq!(uri("mongodb://a:s3cret@h:1/db"), "mongodb://a:***@h:1/db");
        assert_eq!(uri("mongodb://h:1/db"), "mongodb://h:1/db");
        assert_eq!(
            uri("kafka://k:9092?sasl_password=pw&partitions=3&sasl_username=u"),
            "kafka://k:9092?sasl_password=***&partitions=3&sasl_username=u"
        );
        assert_eq!(
            uri("mongodb+srv://u:p@x.example/db?tlsCertificateKeyFilePassword=z&w=majority"),
            "mongodb+srv://u:***@x.example/db?tlsCertificateKeyFilePassword=***&w=majority"
        );
        assert_eq!(uri("embedded://./data"), "embedded://./data");
        // A password holding an `@` is masked whole.
        assert_eq!(uri("mongodb://a:p@ss@h/db"), "mongodb://a:***@h/db");
    }
}
