//! Progress on the console: a bar with ETA on a terminal, plain log lines otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tbstream::Progress;

/// Reports the stages of a job on stderr.
pub struct Console {
    mode: Mode,
    bar: Mutex<Option<Stage>>,
}

/// Plain progress lines (no terminal) come at most this often.
const LOG_EVERY: Duration = Duration::from_secs(10);

/// The stage being shown.
struct Stage {
    bar: ProgressBar,
    start: Instant,
    label: String,
    unit: String,
    /// When the last plain progress line was printed.
    logged: Instant,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Bar,
    Log,
}

impl Console {
    /// A bar on a terminal (stderr), plain lines otherwise.
    pub fn auto() -> Console {
        let mode = if std::io::stderr().is_terminal() { Mode::Bar } else { Mode::Log };
        Console { mode, bar: Mutex::new(None) }
    }

    /// Without a terminal, a plain progress line every [`LOG_EVERY`].
    fn log_now_and_then(&self, stage: &mut Stage) {
        if self.mode != Mode::Log || stage.logged.elapsed() < LOG_EVERY {
            return;
        }
        stage.logged = Instant::now();
        let (pos, len) = (stage.bar.position(), stage.bar.length().unwrap_or(0).max(1));
        let elapsed = stage.start.elapsed().as_secs_f64();
        let eta = if pos > 0 { elapsed * (len - pos.min(len)) as f64 / pos as f64 } else { f64::NAN };
        eprintln!(
            "{}: {pos}/{len} {} ({:.0}%), {elapsed:.0}s elapsed, ETA {eta:.0}s",
            stage.label,
            stage.unit,
            100.0 * pos as f64 / len as f64
        );
    }
}

impl Progress for Console {
    /// Prints a line (above the bar on a terminal).
    fn log(&self, msg: &str) {
        match self.mode {
            Mode::Log => eprintln!("{msg}"),
            Mode::Bar => match &*self.bar.lock().unwrap() {
                Some(stage) => stage.bar.println(msg),
                None => eprintln!("{msg}"),
            },
        }
    }

    fn start(&self, label: String, total: u64, unit: &str) {
        let bar = if self.mode == Mode::Bar {
            let bar = ProgressBar::new(total);
            let template =
                format!("{{prefix:>22}} [{{bar:30}}] {{human_pos}}/{{human_len}} {unit}, {{elapsed}} (ETA {{eta}})");
            bar.set_style(ProgressStyle::with_template(&template).expect("valid template").progress_chars("=> "));
            bar.set_prefix(label.clone());
            bar
        } else {
            ProgressBar::hidden()
        };
        bar.set_length(total);
        let now = Instant::now();
        *self.bar.lock().unwrap() = Some(Stage { bar, start: now, label, unit: unit.to_string(), logged: now });
    }

    fn inc(&self) {
        if let Some(stage) = &mut *self.bar.lock().unwrap() {
            stage.bar.inc(1);
            self.log_now_and_then(stage);
        }
    }

    fn set(&self, done: u64) {
        if let Some(stage) = &mut *self.bar.lock().unwrap() {
            stage.bar.set_position(done);
            self.log_now_and_then(stage);
        }
    }

    fn finish(&self, summary: &str) {
        if let Some(Stage { bar, start, label, .. }) = self.bar.lock().unwrap().take() {
            bar.finish_and_clear();
            eprintln!("{label}: {summary} ({:.2}s)", start.elapsed().as_secs_f64());
        }
    }
}
