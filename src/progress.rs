//! Progress reporting: a bar with ETA on a terminal, plain log lines otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Instant;

/// Reports the stages of a job.
pub struct Progress {
    mode: Mode,
    bar: Mutex<Option<(ProgressBar, Instant, String)>>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Bar,
    Log,
    Silent,
}

impl Progress {
    /// A bar on a terminal (stderr), plain lines otherwise.
    pub fn auto() -> Progress {
        let mode = if std::io::stderr().is_terminal() { Mode::Bar } else { Mode::Log };
        Progress { mode, bar: Mutex::new(None) }
    }

    /// Reports nothing (library use, tests).
    pub fn silent() -> Progress {
        Progress { mode: Mode::Silent, bar: Mutex::new(None) }
    }

    /// Prints a line (above the bar on a terminal).
    pub fn log(&self, msg: &str) {
        match self.mode {
            Mode::Silent => {}
            Mode::Log => eprintln!("{msg}"),
            Mode::Bar => match &*self.bar.lock().unwrap() {
                Some((bar, ..)) => bar.println(msg),
                None => eprintln!("{msg}"),
            },
        }
    }

    /// Starts a stage of `total` chunks.
    pub fn start(&self, label: String, total: u64) {
        let bar = if self.mode == Mode::Bar {
            let bar = ProgressBar::new(total);
            bar.set_style(
                ProgressStyle::with_template("{prefix:>22} [{bar:30}] {pos}/{len} chunks, {elapsed} (ETA {eta})")
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar.set_prefix(label.clone());
            bar
        } else {
            ProgressBar::hidden()
        };
        *self.bar.lock().unwrap() = Some((bar, Instant::now(), label));
    }

    /// One more chunk done.
    pub fn inc(&self) {
        if let Some((bar, ..)) = &*self.bar.lock().unwrap() {
            bar.inc(1);
        }
    }

    /// Ends the stage with a summary.
    pub fn finish(&self, summary: &str) {
        if let Some((bar, start, label)) = self.bar.lock().unwrap().take() {
            bar.finish_and_clear();
            if self.mode != Mode::Silent {
                eprintln!("{label}: {summary} ({:.2}s)", start.elapsed().as_secs_f64());
            }
        }
    }
}
