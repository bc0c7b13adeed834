//! The write gate: a deployment being moved elsewhere (`socialite
//! migrate`) stops taking writes, and its last copy must hold every write
//! it acknowledged. Closing the gate refuses new writes at once and then
//! waits for those already past it to finish, so that nothing is
//! acknowledged after the close returns.
//!
//! Account safety acts (revoking a user's tokens, suspending an account)
//! are not stopped by a close: a stolen token must be revocable while a
//! move is under way. They stop only when the gate is *sealed*, which
//! migrate does once the move is final and before its very last copy, so
//! an act let through before the seal is in that copy and carried to the
//! target; one after it is refused with `moved`, naming where to act.

use crate::error::{Error, ErrorKind, Result};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::RwLock;
use std::time::Duration;

#[derive(Default)]
pub struct WriteGate {
    /// Ordinary writes are refused.
    closed: AtomicBool,
    /// Everything is refused, safety acts too: the deployment this one
    /// was moved to (its address, without credentials).
    sealed: RwLock<Option<String>>,
    in_flight: AtomicUsize,
}

/// A write past the gate; it counts until dropped.
pub struct Passed<'a>(&'a WriteGate);

impl Drop for Passed<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, SeqCst);
    }
}

/// Why a write is refused while the gate is closed.
pub fn read_only() -> Error {
    Error::new(
        ErrorKind::Unavailable,
        "read_only",
        "this deployment takes no writes: an operator stopped them, as socialite migrate does to move it to another deployment; write there once it is moved",
    )
}

/// Why a write is refused once the deployment was moved to `to`: an
/// ordinary write answers `read_only` still, a safety act `moved`.
fn refused_moved(to: &str, safety: bool) -> Error {
    let (code, what) = match safety {
        true => ("moved", "revoke tokens and suspend accounts"),
        false => ("read_only", "write"),
    };
    Error::new(
        ErrorKind::Unavailable,
        code,
        format!("this deployment was moved to {to} by socialite migrate and takes no writes: {what} there"),
    )
}

impl WriteGate {
    /// A gate sealed from the start: a data directory already moved to
    /// `to`.
    pub fn sealed(to: &str) -> WriteGate {
        let gate = WriteGate::default();
        gate.closed.store(true, SeqCst);
        *gate.sealed.write().expect("not poisoned") = Some(to.to_owned());
        gate
    }

    /// Lets a write through, or refuses it (503 `read_only`).
    pub fn enter(&self) -> Result<Passed<'_>> {
        // Counted before the flag is read: a close that follows sees this
        // write and waits for it; one that came before refuses it here.
        self.in_flight.fetch_add(1, SeqCst);
        let passed = Passed(self);
        if self.closed.load(SeqCst) {
            return Err(self.moved_to(false).unwrap_or_else(read_only));
        }
        Ok(passed)
    }

    /// Lets an account safety act through (a revocation, a suspension),
    /// also while writes are stopped; refuses it once the gate is sealed
    /// (503 `moved`).
    pub fn enter_safety(&self) -> Result<Passed<'_>> {
        self.in_flight.fetch_add(1, SeqCst);
        let passed = Passed(self);
        match self.moved_to(true) {
            Some(refused) => Err(refused),
            None => Ok(passed),
        }
    }

    /// The refusal once sealed.
    fn moved_to(&self, safety: bool) -> Option<Error> {
        let sealed = self.sealed.read().expect("not poisoned");
        sealed.as_deref().map(|to| refused_moved(to, safety))
    }

    /// Refuses writes from now on, and returns once those already let
    /// through have finished. Safety acts still pass.
    pub async fn close(&self) {
        self.closed.store(true, SeqCst);
        self.drain().await;
    }

    /// Refuses everything from now on, safety acts too, naming `to` as
    /// where the deployment went; returns once what was let through has
    /// finished.
    pub async fn seal(&self, to: &str) {
        self.closed.store(true, SeqCst);
        *self.sealed.write().expect("not poisoned") = Some(to.to_owned());
        self.drain().await;
    }

    async fn drain(&self) {
        while self.in_flight.load(SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Takes writes again (a move called off).
    pub fn open(&self) {
        *self.sealed.write().expect("not poisoned") = None;
        self.closed.store(false, SeqCst);
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(SeqCst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_close_refuses_new_writes_and_waits_for_those_let_through() {
        let gate = std::sync::Arc::new(WriteGate::default());
        let passed = gate.enter().unwrap();
        let closing = tokio::spawn({
            let gate = gate.clone();
            async move { gate.close().await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(
            !closing.is_finished(),
            "a write let through is still running"
        );
        assert_eq!(gate.enter().err().map(|e| e.code()), Some("read_only"));
        drop(passed);
        closing.await.unwrap();
        gate.open();
        assert!(gate.enter().is_ok());
    }

    #[tokio::test]
    async fn safety_acts_pass_a_close_and_stop_at_the_seal() {
        let gate = std::sync::Arc::new(WriteGate::default());
        gate.close().await;
        assert_eq!(gate.enter().err().map(|e| e.code()), Some("read_only"));
        let revoking = gate.enter_safety().unwrap();
        let sealing = tokio::spawn({
            let gate = gate.clone();
            async move { gate.seal("mongodb://db.example/app").await }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!sealing.is_finished(), "a safety act let through runs");
        drop(revoking);
        sealing.await.unwrap();
        let refused = gate.enter_safety().err().unwrap();
        assert_eq!(refused.code(), "moved");
        assert!(refused.message().contains("mongodb://db.example/app"));
        let write = gate.enter().err().unwrap();
        assert_eq!(write.code(), "read_only");
        assert!(write.message().contains("mongodb://db.example/app"));
        gate.open();
        assert!(gate.enter().is_ok() && gate.enter_safety().is_ok());
        let moved = WriteGate::sealed("elsewhere");
        assert_eq!(moved.enter_safety().err().map(|e| e.code()), Some("moved"));
    }
}
