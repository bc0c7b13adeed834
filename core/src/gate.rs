//! The write gate: a deployment being moved elsewhere (`socialite
//! migrate`) stops taking writes, and its last copy must hold every write
//! it acknowledged. Closing the gate refuses new writes at once and then
//! waits for those already past it to finish, so that nothing is
//! acknowledged after the close returns.

use crate::error::{Error, ErrorKind, Result};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::time::Duration;

#[derive(Default)]
pub struct WriteGate {
    closed: AtomicBool,
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

impl WriteGate {
    /// A gate closed from the start (a data directory already moved).
    pub fn closed() -> WriteGate {
        let gate = WriteGate::default();
        gate.closed.store(true, SeqCst);
        gate
    }

    /// Lets a write through, or refuses it (503 `read_only`).
    pub fn enter(&self) -> Result<Passed<'_>> {
        // Counted before the flag is read: a close that follows sees this
        // write and waits for it; one that came before refuses it here.
        self.in_flight.fetch_add(1, SeqCst);
        let passed = Passed(self);
        if self.closed.load(SeqCst) {
            return Err(read_only());
        }
        Ok(passed)
    }

    /// Refuses writes from now on, and returns once those already let
    /// through have finished.
    pub async fn close(&self) {
        self.closed.store(true, SeqCst);
        while self.in_flight.load(SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Takes writes again (a move called off).
    pub fn open(&self) {
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
}
