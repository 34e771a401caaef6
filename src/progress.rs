//! Progress reporting, as the library sees it: a small trait the command line implements
//! (a bar on a terminal, plain lines in a log) and a silent implementation for library use.

/// Receives the stages of a long job. Implementations must be cheap to call from the thread
/// that drives a stage (once per chunk or batch).
pub trait Progress: Sync {
    /// A line of news (a run starts, resumes, repairs something, is built).
    fn log(&self, msg: &str);
    /// A stage of `total` units (`unit`: "chunks", "positions") begins.
    fn start(&self, label: String, total: u64, unit: &str);
    /// `done` units of the current stage are done (a running total).
    fn set(&self, done: u64);
    /// One more unit of the current stage is done.
    fn inc(&self);
    /// The current stage ends with a summary.
    fn finish(&self, summary: &str);
}

/// Reports nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct SilentProgress;

impl Progress for SilentProgress {
    fn log(&self, _: &str) {}
    fn start(&self, _: String, _: u64, _: &str) {}
    fn set(&self, _: u64) {}
    fn inc(&self) {}
    fn finish(&self, _: &str) {}
}

/// Passes on a progress's log lines only, and each stage's summary as a line of its own: for
/// work that runs beside another stage (a run solved or compacted while the next one is),
/// whose bar would fight the other's.
pub struct LogOnly<'a> {
    progress: &'a dyn Progress,
    /// The current stage's label and start.
    stage: std::sync::Mutex<Option<(String, std::time::Instant)>>,
}

impl<'a> LogOnly<'a> {
    pub fn new(progress: &'a dyn Progress) -> LogOnly<'a> {
        LogOnly { progress, stage: std::sync::Mutex::new(None) }
    }
}

impl Progress for LogOnly<'_> {
    fn log(&self, msg: &str) {
        self.progress.log(msg)
    }
    fn start(&self, label: String, _: u64, _: &str) {
        *self.stage.lock().unwrap_or_else(|e| e.into_inner()) = Some((label, std::time::Instant::now()));
    }
    fn set(&self, _: u64) {}
    fn inc(&self) {}
    fn finish(&self, summary: &str) {
        if let Some((label, start)) = self.stage.lock().unwrap_or_else(|e| e.into_inner()).take() {
            self.progress.log(&format!("{label}: {summary} ({:.2}s)", start.elapsed().as_secs_f64()));
        }
    }
}
