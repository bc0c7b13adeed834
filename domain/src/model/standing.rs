//! An account id's standing, as stored and carried on the log (what it
//! admits is [`crate::accounts::lifecycle`]).

/// An account id's standing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Standing {
    /// User tokens issued at or before this time (ms since the epoch) are
    /// refused: set by a revocation, a deletion and a suspension, and never
    /// moved back.
    pub tokens_after_ms: u64,
    /// A suspended account cannot act, is hidden from every reader, and its
    /// id cannot be taken by anyone else until the suspension is lifted.
    pub suspended: bool,
}

impl Standing {
    /// Also refuses the tokens issued at or before `at_ms` (the time only
    /// moves forward).
    pub fn revoked(self, at_ms: u64) -> Standing {
        Standing {
            tokens_after_ms: self.tokens_after_ms.max(at_ms),
            ..self
        }
    }

    /// This standing joined with one kept elsewhere (an imported account):
    /// tokens refused up to the later of the two times, suspended as the
    /// other says.
    pub fn merged(self, other: Standing) -> Standing {
        Standing {
            suspended: other.suspended,
            ..self.revoked(other.tokens_after_ms)
        }
    }

    /// Suspended (`on`, which revokes the tokens issued up to `at_ms`) or
    /// lifted; and whether the suspension changed.
    pub fn with_suspension(self, on: bool, at_ms: u64) -> (Standing, bool) {
        let after = match on {
            true => self.revoked(at_ms),
            false => self,
        };
        let next = Standing {
            suspended: on,
            ..after
        };
        (next, self.suspended != on)
    }
}
