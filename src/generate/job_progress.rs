//! The progress of a job over its runs (a set of 145 tables, or one endgame's closure): a
//! line after each run with the runs done of the total, the bytes of the tables in the
//! output folder, and an ETA. The ETA weighs the runs still to build by their estimated
//! times ([`estimate_run`]), scaled by how long the runs built so far took against theirs.

use super::estimate::{estimate_run, Machine};
use super::plan::{show_duration, show_size};
use crate::chess::Material;
use crate::index::Layout;
use crate::progress::Progress;
use std::time::Instant;

pub(super) struct JobProgress {
    start: Instant,
    /// Estimated seconds of each run, in job order.
    estimates: Vec<f64>,
    done: Vec<bool>,
    /// Estimated seconds of the runs this job built (not the ones found built).
    built_estimate: f64,
    /// Bytes of the finished tables.
    bytes: u64,
}

impl JobProgress {
    pub(super) fn new(runs: &[Material], threads: usize) -> JobProgress {
        let machine = Machine::this(threads);
        JobProgress {
            start: Instant::now(),
            estimates: runs.iter().map(|m| estimate_run(&Layout::new(m), &machine).total()).collect(),
            done: vec![false; runs.len()],
            built_estimate: 0.0,
            bytes: 0,
        }
    }

    /// Run `i` is finished (`built` by this job, else found built), its table `bytes` long;
    /// logs the job's line when the job has more than one run.
    pub(super) fn finished(&mut self, i: usize, built: bool, bytes: u64, progress: &dyn Progress) {
        if std::mem::replace(&mut self.done[i], true) {
            return;
        }
        self.bytes += bytes;
        if built {
            self.built_estimate += self.estimates[i];
        }
        let total = self.done.len();
        if total < 2 {
            return;
        }
        let done = self.done.iter().filter(|&&d| d).count();
        let left: f64 = self.estimates.iter().zip(&self.done).filter(|(_, &d)| !d).map(|(e, _)| e).sum();
        let elapsed = self.start.elapsed().as_secs_f64();
        // Until a run has been built, the estimates stand as they are.
        let scale = if self.built_estimate > 0.0 { elapsed / self.built_estimate } else { 1.0 };
        progress.log(&format!(
            "job: {done} of {total} runs done ({} of tables), {} so far, ETA {}",
            show_size(self.bytes),
            show_duration(elapsed),
            show_duration(left * scale)
        ));
    }
}
