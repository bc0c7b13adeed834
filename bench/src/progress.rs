//! Progress of the long steps (loading, activating) on stderr: a bar when
//! stderr is a terminal, one summary line per step otherwise, so logs and CI
//! output stay readable.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::IsTerminal;

pub struct Progress {
    what: &'static str,
    bar: ProgressBar,
}

impl Progress {
    pub fn new(what: &'static str, total: u64) -> Progress {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr_with_hz(2)
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(total), target);
        let style = ProgressStyle::with_template(
            "{prefix:>8} [{bar:30}] {percent:>3}% {human_pos} in {elapsed} ({per_sec})",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("#> ");
        bar.set_style(style);
        bar.set_prefix(what);
        Progress { what, bar }
    }

    pub fn add(&mut self, n: u64) {
        self.bar.inc(n);
    }

    pub fn finish(self) {
        let secs = self.bar.elapsed().as_secs_f64().max(1e-9);
        let done = self.bar.position();
        if self.bar.is_hidden() {
            eprintln!(
                "{}: {done} in {secs:.1}s ({:.0}/s)",
                self.what,
                done as f64 / secs
            );
        } else {
            self.bar.finish();
        }
    }
}
