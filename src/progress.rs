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

/// Passes on a progress's log lines only: for a stage that runs beside another one (a
/// compaction while the next run is solved), whose bar would fight the other's.
pub struct LogOnly<'a>(pub &'a dyn Progress);

impl Progress for LogOnly<'_> {
    fn log(&self, msg: &str) {
        self.0.log(msg)
    }
    fn start(&self, _: String, _: u64, _: &str) {}
    fn set(&self, _: u64) {}
    fn inc(&self) {}
    fn finish(&self, _: &str) {}
}
