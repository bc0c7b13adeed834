//! Trace context that travels with a post: the W3C `traceparent` of the
//! span that created it, stored with its event in the outbox, carried on
//! the log (inside the event, and as a Kafka record header), and read by
//! the fanout worker to tie its work to the post's trace.
//!
//! The core crate names no tracing backend. The process that exports
//! traces installs [`Hooks`]; without them, events carry no context and
//! the worker adds nothing to its spans.

use std::sync::{Arc, OnceLock};

/// A post's trace context: metadata, not content. Two events are the same
/// write whatever trace they were made in, so it is equal to any other.
#[derive(Clone, Default)]
pub struct Trace(Option<Arc<str>>);

impl Trace {
    /// The context of the current span, if traces are exported.
    pub fn current() -> Trace {
        Trace(hooks().and_then(|h| (h.current)()).map(Arc::from))
    }

    /// A context received from elsewhere (an event's field, a header),
    /// kept in its version-00 form; anything W3C Trace Context says not to
    /// continue is dropped.
    pub fn from_header(value: &str) -> Trace {
        Trace(version_00(value).map(Arc::from))
    }

    /// The `traceparent` value, if any.
    pub fn parent(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl PartialEq for Trace {
    fn eq(&self, _: &Trace) -> bool {
        true
    }
}

impl Eq for Trace {}

impl std::fmt::Debug for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.parent().unwrap_or("-"))
    }
}

/// The version-00 form of a W3C `traceparent`, or None where the spec says
/// to start a new trace: `<2 hex version>-<32 hex trace id>-<16 hex span
/// id>-<2 hex flags>`, lower-case only, neither id all zeros, version `ff`
/// invalid. Version 00 has exactly these four fields; a later version may
/// add more after a `-`, and is read for the four it shares with 00.
fn version_00(value: &str) -> Option<String> {
    let hex = |s: &str, n: usize| {
        s.len() == n && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    };
    let nonzero = |s: &str| s.bytes().any(|b| b != b'0');
    let mut parts = value.split('-');
    let version = parts.next()?;
    let (trace, span, flags) = (parts.next()?, parts.next()?, parts.next()?);
    let rest = parts.next();
    let version_ok = hex(version, 2)
        && version != "ff"
        && (if version == "00" {
            rest.is_none()
        } else {
            true
        });
    let ok = version_ok
        && hex(trace, 32)
        && nonzero(trace)
        && hex(span, 16)
        && nonzero(span)
        && hex(flags, 2);
    ok.then(|| format!("00-{trace}-{span}-{flags}"))
}

/// What a tracing backend provides (see the module's comment).
pub struct Hooks {
    /// The current span's `traceparent`.
    pub current: fn() -> Option<String>,
    /// Makes `traceparent` the parent of `span`.
    pub set_parent: fn(&tracing::Span, &str),
    /// Links `span` to `traceparent`.
    pub link: fn(&tracing::Span, &str),
    /// The trace id of `span`, for log lines.
    pub trace_id: fn(&tracing::Span) -> Option<String>,
}

static HOOKS: OnceLock<Hooks> = OnceLock::new();

/// Installs the hooks; once per process (later calls are ignored).
pub fn install(hooks: Hooks) {
    let _ = HOOKS.set(hooks);
}

/// The hooks, when traces are exported.
pub fn hooks() -> Option<&'static Hooks> {
    HOOKS.get()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_well_formed_contexts_are_kept() {
        let ok = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
        assert_eq!(Trace::from_header(ok).parent(), Some(ok));
        for bad in [
            "",
            "00-xyz-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad-01",
            "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
            "00-00000000000000000000000000000000-b7ad6b7169203331-01",
            "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-more",
        ] {
            assert_eq!(Trace::from_header(bad).parent(), None, "{bad}");
        }
    }

    #[test]
    fn a_later_version_is_read_as_00() {
        let later = "7f-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-more";
        assert_eq!(
            Trace::from_header(later).parent(),
            Some("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
        );
    }
}
