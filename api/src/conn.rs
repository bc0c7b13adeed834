//! Connections: how many a process holds and for how long. Every accepted
//! connection (REST and gRPC) passes the [`Gate`]: under the process's and
//! its address's caps it is served; past them it is an *overflow*
//! connection, answered only `/healthz` (so probes keep working while the
//! caps are reached) or 503 `too_many_connections`, and closed within a
//! second; past the overflow's own small cap it is closed at once.
//!
//! A served connection is [`Tracked`]: while no request is in flight on it,
//! it may stay open for the idle timeout, counted from its start (a client
//! that never sends a complete request head) and from the end of its last
//! response; then it is closed. Bytes alone do not keep it open, so a
//! client trickling a header does not either.

use socialite_core::metrics::reason;
use std::collections::HashMap;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{ready, Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// Overflow connections held at once, in all and per address.
const OVERFLOW_MAX: usize = 256;
const OVERFLOW_PER_IP: usize = 8;
/// How long an overflow connection may take to send its request.
pub const OVERFLOW_IDLE: Duration = Duration::from_secs(1);
/// File descriptors kept free of client connections (stores, logs, files).
const FD_RESERVE: usize = 512;

/// The connection caps of one process, shared by its REST and gRPC ports.
pub struct Gate {
    max: usize,
    per_ip: usize,
    pub idle: Duration,
    open: AtomicUsize,
    overflow: AtomicUsize,
    by_ip: Mutex<HashMap<IpAddr, (usize, usize)>>,
}

/// What the gate lets a new connection do.
pub enum Admission {
    Serve(Permit),
    Overflow(Permit),
    Close,
}

/// A connection's place; given back when dropped.
pub struct Permit {
    gate: Arc<Gate>,
    ip: IpAddr,
    overflow: bool,
}

/// The soft file-descriptor limit of the process, if it can be read.
fn fd_limit() -> Option<usize> {
    let text = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = text.lines().find(|l| l.starts_with("Max open files"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

impl Gate {
    /// `max` 0 takes three quarters of the file-descriptor limit (less a
    /// reserve), so the caps bite before `accept` runs out of descriptors.
    pub fn new(max: usize, per_ip: usize, idle: Duration) -> Arc<Gate> {
        let max = match max {
            0 => fd_limit().map_or(10_000, |n| n.saturating_sub(FD_RESERVE) * 3 / 4),
            n => n,
        };
        Arc::new(Gate {
            max: max.max(1),
            per_ip: per_ip.max(1),
            idle,
            open: AtomicUsize::new(0),
            overflow: AtomicUsize::new(0),
            by_ip: Mutex::default(),
        })
    }

    /// The most connections served at once.
    pub fn max(&self) -> usize {
        self.max
    }

    pub fn admit(self: &Arc<Self>, ip: IpAddr) -> Admission {
        let mut by_ip = self.by_ip.lock().expect("not poisoned");
        let (served, spilled) = by_ip.entry(ip).or_default();
        let permit = |overflow| Permit {
            gate: self.clone(),
            ip,
            overflow,
        };
        if *served < self.per_ip && self.open.load(Ordering::Relaxed) < self.max {
            *served += 1;
            self.open.fetch_add(1, Ordering::Relaxed);
            crate::metrics::transport().connections_open.inc();
            return Admission::Serve(permit(false));
        }
        let why = if *served >= self.per_ip {
            "address"
        } else {
            "process"
        };
        crate::metrics::transport()
            .connections_refused
            .get_or_create(&reason(why))
            .inc();
        if *spilled < OVERFLOW_PER_IP && self.overflow.load(Ordering::Relaxed) < OVERFLOW_MAX {
            *spilled += 1;
            self.overflow.fetch_add(1, Ordering::Relaxed);
            return Admission::Overflow(permit(true));
        }
        crate::metrics::transport()
            .connections_refused
            .get_or_create(&reason("overflow"))
            .inc();
        if *served == 0 && *spilled == 0 {
            by_ip.remove(&ip);
        }
        Admission::Close
    }
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut by_ip = self.gate.by_ip.lock().expect("not poisoned");
        if let Some((served, spilled)) = by_ip.get_mut(&self.ip) {
            if self.overflow {
                *spilled -= 1;
                self.gate.overflow.fetch_sub(1, Ordering::Relaxed);
            } else {
                *served -= 1;
                self.gate.open.fetch_sub(1, Ordering::Relaxed);
                crate::metrics::transport().connections_open.dec();
            }
            if *served == 0 && *spilled == 0 {
                by_ip.remove(&self.ip);
            }
        }
    }
}

/// Milliseconds on a process-wide monotonic clock.
fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// What a connection is doing: requests in flight (a streaming response
/// counts until its body ends) and since when it has been idle.
#[derive(Default)]
pub struct Activity {
    in_flight: AtomicUsize,
    idle_since_ms: AtomicU64,
    /// Requests that reached the router, so a response nobody asked the
    /// router for is known to be the HTTP library's own refusal.
    started: AtomicU64,
}

impl Activity {
    fn new() -> Arc<Activity> {
        let a = Activity::default();
        a.idle_since_ms.store(now_ms(), Ordering::Relaxed);
        Arc::new(a)
    }

    /// A request begins; it ends when the returned guard drops.
    pub fn begin(self: &Arc<Self>) -> Busy {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.started.fetch_add(1, Ordering::Relaxed);
        Busy(self.clone())
    }

    pub fn started(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }
}

/// A request in flight on a connection.
pub struct Busy(Arc<Activity>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.idle_since_ms.store(now_ms(), Ordering::Relaxed);
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A connection's IO, closed (a read fails with `TimedOut`) once it has
/// gone without a request in flight for the idle timeout.
pub struct Tracked<IO> {
    io: IO,
    pub activity: Arc<Activity>,
    idle: Duration,
    timer: Pin<Box<Sleep>>,
    /// The API's answer replacing one of hyper's own refusals
    /// (`crate::refusals`), still to be written.
    replacement: Vec<u8>,
    _permit: Permit,
}

impl<IO> Tracked<IO> {
    pub fn new(io: IO, permit: Permit, idle: Duration) -> Tracked<IO> {
        Tracked {
            io,
            activity: Activity::new(),
            idle,
            timer: Box::pin(tokio::time::sleep(idle)),
            replacement: Vec::new(),
            _permit: permit,
        }
    }

    /// `Err` once the connection has been idle too long. The timer only
    /// ever fires at or before the moment the connection could be idle
    /// long enough (it is set from the start, then from each firing), so
    /// it is re-armed only when it fires, not on every read.
    fn check_idle(&mut self, cx: &mut Context<'_>) -> std::io::Result<()> {
        loop {
            let next = match self.activity.in_flight.load(Ordering::Relaxed) {
                0 => {
                    let since = self.activity.idle_since_ms.load(Ordering::Relaxed);
                    let idle_for = Duration::from_millis(now_ms().saturating_sub(since));
                    if idle_for >= self.idle {
                        crate::metrics::transport().connections_idle_closed.inc();
                        return Err(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            "no request within the idle timeout",
                        ));
                    }
                    self.idle - idle_for
                }
                // Busy: look again after a while.
                _ => self.idle,
            };
            if self.timer.as_mut().poll(cx).is_pending() {
                return Ok(());
            }
            self.timer.as_mut().reset(Instant::now() + next);
        }
    }
}

impl<IO: AsyncRead + Unpin> AsyncRead for Tracked<IO> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        match Pin::new(&mut this.io).poll_read(cx, buf) {
            Poll::Pending => {
                this.check_idle(cx)?;
                Poll::Pending
            }
            ready => ready,
        }
    }
}

impl<IO: AsyncWrite + Unpin> Tracked<IO> {
    /// Writes what is left of a replacement.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while !self.replacement.is_empty() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.replacement))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.replacement.drain(..n);
        }
        Poll::Ready(Ok(()))
    }

    /// Whether `head` is one of hyper's own refusals, now replaced: only
    /// while no request of the router is in flight (its answers always are).
    fn replaced(&mut self, head: &[u8]) -> bool {
        if self.activity.in_flight.load(Ordering::Relaxed) != 0 {
            return false;
        }
        match crate::refusals::rewrite(head) {
            Some(answer) => {
                self.replacement = answer;
                true
            }
            None => false,
        }
    }
}

impl<IO: AsyncWrite + Unpin> AsyncWrite for Tracked<IO> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        ready!(this.drain(cx))?;
        if this.replaced(buf) {
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut this.io).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = &mut *self;
        ready!(this.drain(cx))?;
        if bufs.len() == 1 && this.replaced(&bufs[0]) {
            return Poll::Ready(Ok(bufs[0].len()));
        }
        Pin::new(&mut this.io).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        ready!(self.drain(cx))?;
        ready!(Pin::new(&mut self.io).poll_flush(cx))?;
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caps_per_process_and_address_spill_into_a_small_overflow() {
        let gate = Gate::new(3, 2, Duration::from_secs(5));
        let (a, b): (IpAddr, IpAddr) = ("127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap());
        let kind = |x: &Admission| match x {
            Admission::Serve(_) => "serve",
            Admission::Overflow(_) => "overflow",
            Admission::Close => "close",
        };
        let mut held = vec![gate.admit(a), gate.admit(a)];
        assert_eq!(
            held.iter().map(kind).collect::<Vec<_>>(),
            ["serve", "serve"]
        );
        // The address's cap: a third from it spills; another address is served.
        held.push(gate.admit(a));
        assert_eq!(kind(&held[2]), "overflow");
        held.push(gate.admit(b));
        assert_eq!(kind(&held[3]), "serve");
        // The process's cap.
        held.push(gate.admit(b));
        assert_eq!(kind(&held[4]), "overflow");
        // An address's overflow is small too.
        let spilled: Vec<_> = (0..OVERFLOW_PER_IP).map(|_| gate.admit(a)).collect();
        assert_eq!(kind(spilled.last().unwrap()), "close");
        drop(spilled);
        // Places come back when connections close.
        held.truncate(1);
        assert_eq!(kind(&gate.admit(b)), "serve");
        drop(held);
        assert!(gate.by_ip.lock().unwrap().is_empty());
    }
}
