//! What a store says when it cannot serve: why ([`FaultReason`], a small
//! fixed set for readiness and the `socialite_store_fault` metric) and, for a
//! fault it knows of without asking anything, whether it recovers by itself
//! ([`StoreFault`]). The ports report them; `health` reads them.

use crate::error::{Error, ErrorKind};
use serde::Serialize;

/// Why a store cannot serve: a small fixed set, the `reason` label of
/// `socialite_store_fault`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultReason {
    /// Its file system is full (or the user's quota is used up).
    NoSpace,
    /// Another I/O error of its files.
    IoError,
    /// Its server does not answer (MongoDB, Kafka), or not in time.
    Unreachable,
    /// Anything else.
    Failing,
}

impl FaultReason {
    pub const ALL: [FaultReason; 4] = [
        FaultReason::NoSpace,
        FaultReason::IoError,
        FaultReason::Unreachable,
        FaultReason::Failing,
    ];

    pub fn label(self) -> &'static str {
        match self {
            FaultReason::NoSpace => "no_space",
            FaultReason::IoError => "io_error",
            FaultReason::Unreachable => "unreachable",
            FaultReason::Failing => "failing",
        }
    }

    /// A full disk or quota is `NoSpace`; any other I/O error `IoError`.
    pub fn of_io(e: &std::io::Error) -> FaultReason {
        use std::io::ErrorKind as Io;
        match e.kind() {
            Io::StorageFull | Io::QuotaExceeded => FaultReason::NoSpace,
            _ => FaultReason::IoError,
        }
    }

    /// The reason of a failed check: an I/O error among its causes decides;
    /// otherwise an unavailable backend is unreachable.
    pub fn of(e: &Error) -> FaultReason {
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(c) = cause {
            if let Some(io) = c.downcast_ref::<std::io::Error>() {
                return FaultReason::of_io(io);
            }
            cause = c.source();
        }
        match e.kind() {
            ErrorKind::Unavailable => FaultReason::Unreachable,
            _ => FaultReason::Failing,
        }
    }
}

/// A fault a store knows of without asking anything: the embedded stores
/// after an I/O error, until they reopened.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreFault {
    pub reason: FaultReason,
    /// For operators: what failed, since when, and what happens next.
    pub message: String,
    /// False when the store cannot recover by itself (a corrupt file, a
    /// writer that stopped): the process is then not alive.
    pub recovers: bool,
}

impl StoreFault {
    /// The error a write meets meanwhile (503 `unavailable`).
    pub fn error(&self) -> Error {
        Error::unavailable(self.message.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_io_error_among_the_causes_decides_the_reason() {
        let full = std::io::Error::from(std::io::ErrorKind::StorageFull);
        let e = Error::backend(ErrorKind::Internal, "commit", full);
        assert_eq!(FaultReason::of(&e), FaultReason::NoSpace);
        let eio = std::io::Error::other("bad sector");
        let e = Error::backend(ErrorKind::Unavailable, "read", eio);
        assert_eq!(FaultReason::of(&e), FaultReason::IoError);
        let e = Error::unavailable("pinging MongoDB failed");
        assert_eq!(FaultReason::of(&e), FaultReason::Unreachable);
        let e = Error::internal("a bug");
        assert_eq!(FaultReason::of(&e), FaultReason::Failing);
    }
}
