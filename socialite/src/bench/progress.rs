//! A progress line on stderr, redrawn at most twice a second.

use std::io::Write;
use std::time::{Duration, Instant};

pub struct Progress {
    what: &'static str,
    total: u64,
    done: u64,
    started: Instant,
    drawn: Instant,
}

impl Progress {
    pub fn new(what: &'static str, total: u64) -> Progress {
        let now = Instant::now();
        Progress {
            what,
            total,
            done: 0,
            started: now,
            drawn: now,
        }
    }

    pub fn add(&mut self, n: u64) {
        self.done += n;
        if self.drawn.elapsed() >= Duration::from_millis(500) {
            self.draw();
        }
    }

    fn draw(&mut self) {
        self.drawn = Instant::now();
        let secs = self.started.elapsed().as_secs_f64().max(1e-9);
        let pct = if self.total > 0 {
            100.0 * self.done as f64 / self.total as f64
        } else {
            100.0
        };
        let width = 30;
        let filled = ((pct / 100.0) * width as f64).round().min(width as f64) as usize;
        eprint!(
            "\r{:>8} [{}{}] {:5.1}% {} in {:.1}s ({:.0}/s)   ",
            self.what,
            "#".repeat(filled),
            " ".repeat(width - filled),
            pct,
            self.done,
            secs,
            self.done as f64 / secs
        );
        let _ = std::io::stderr().flush();
    }

    pub fn finish(mut self) {
        self.draw();
        eprintln!();
    }
}
