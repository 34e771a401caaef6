//! The tests' side of the job's seam (`tbstream::JobHooks`): jobs built in this process with
//! hooks that stop them where a kill would, or that collect the edge sets; and a progress
//! that keeps the job's log lines, which the tests read as they would read `gen`'s stderr.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use tbstream::{generate, GenOptions, JobHooks, Material, Progress};

/// Stops a job with an error right after its `n`-th committed chunk or written compaction
/// block, leaving the work folder as a kill at that moment would.
#[derive(Debug)]
pub struct StopAfter {
    chunks: AtomicI64,
    blocks: AtomicI64,
}

impl StopAfter {
    pub fn chunks(n: i64) -> StopAfter {
        StopAfter { chunks: AtomicI64::new(n), blocks: AtomicI64::new(-1) }
    }

    pub fn blocks(n: i64) -> StopAfter {
        StopAfter { chunks: AtomicI64::new(-1), blocks: AtomicI64::new(n) }
    }
}

/// Counts `left` down; an error when it reaches 0 (a negative count never stops).
fn count_down(left: &AtomicI64, what: &str) -> anyhow::Result<()> {
    match left.fetch_sub(1, Ordering::Relaxed) {
        1 => anyhow::bail!("stopped on purpose after the last {what}"),
        _ => Ok(()),
    }
}

impl JobHooks for StopAfter {
    fn after_chunk(&self) -> anyhow::Result<()> {
        count_down(&self.chunks, "chunk")
    }

    fn after_compaction_block(&self) -> anyhow::Result<()> {
        count_down(&self.blocks, "compaction block")
    }
}

/// Collects every edge set `E_k` of a job: (run, k, slots).
#[derive(Debug, Default)]
pub struct EdgeSets(pub Mutex<Vec<(Material, u16, Vec<u64>)>>);

impl JobHooks for EdgeSets {
    fn wants_edge_sets(&self) -> bool {
        true
    }

    fn edge_set(&self, run: &Material, k: u16, slots: &[u64]) {
        self.0.lock().unwrap().push((run.clone(), k, slots.to_vec()));
    }
}

/// Keeps a job's log lines and stage summaries, one per line, as `gen` prints them.
#[derive(Debug, Default)]
pub struct Lines(Mutex<String>);

impl Lines {
    pub fn text(&self) -> String {
        self.0.lock().unwrap().clone()
    }

    fn push(&self, line: &str) {
        let mut text = self.0.lock().unwrap();
        text.push_str(line);
        text.push('\n');
    }
}

impl Progress for Lines {
    fn log(&self, msg: &str) {
        self.push(msg);
    }
    fn start(&self, _: String, _: u64, _: &str) {}
    fn set(&self, _: u64) {}
    fn inc(&self) {}
    fn finish(&self, summary: &str) {
        self.push(summary);
    }
}

/// Builds `signatures` into `out` in this process, with two threads and the options `adjust`
/// sets (hooks among them): the outcome and the job's log lines.
pub fn gen_here(out: &Path, signatures: &[&str], adjust: impl FnOnce(&mut GenOptions)) -> (anyhow::Result<()>, String) {
    let lines = Lines::default();
    let outcome = gen_with(out, signatures, adjust, &lines);
    (outcome, lines.text())
}

/// Builds `signatures` into `out` in this process, with two threads, the options `adjust`
/// sets and `progress`.
fn gen_with(
    out: &Path,
    signatures: &[&str],
    adjust: impl FnOnce(&mut GenOptions),
    progress: &dyn Progress,
) -> anyhow::Result<()> {
    let mut opts = GenOptions::new(out, 2);
    adjust(&mut opts);
    let materials: Vec<Material> = signatures.iter().map(|s| Material::parse(s).unwrap()).collect();
    generate(&materials, &opts, progress).map(drop)
}

/// [`gen_here`] with `hooks` as the job's hooks.
pub fn gen_hooked(out: &Path, signatures: &[&str], hooks: Arc<dyn JobHooks>) -> (anyhow::Result<()>, String) {
    gen_here(out, signatures, |o| o.hooks = Some(hooks))
}

/// Stops a job with an error at the first chunk committed after a log line containing
/// `watched` (the hooks see no log lines: this is the job's progress too, keeping its lines).
#[derive(Debug)]
struct StopAfterLine {
    watched: &'static str,
    seen: AtomicBool,
    lines: Lines,
    /// The stage under way: a summary line is matched as `gen` prints it, after its label.
    stage: Mutex<String>,
}

impl JobHooks for StopAfterLine {
    fn after_chunk(&self) -> anyhow::Result<()> {
        match self.seen.load(Ordering::Relaxed) {
            true => anyhow::bail!("stopped on purpose after the line {:?}", self.watched),
            false => Ok(()),
        }
    }
}

impl Progress for StopAfterLine {
    fn log(&self, msg: &str) {
        self.seen.fetch_or(msg.contains(self.watched), Ordering::Relaxed);
        self.lines.log(msg);
    }
    fn start(&self, label: String, _: u64, _: &str) {
        *self.stage.lock().unwrap() = label;
    }
    fn set(&self, _: u64) {}
    fn inc(&self) {}
    fn finish(&self, summary: &str) {
        let line = format!("{}: {summary}", self.stage.lock().unwrap());
        self.seen.fetch_or(line.contains(self.watched), Ordering::Relaxed);
        self.lines.finish(summary);
    }
}

/// Builds `signatures` into `out` in this process, stopped at the first chunk committed
/// after a log or summary line containing `watched`: the outcome and the job's lines up to
/// then.
pub fn gen_stopped_after_line(out: &Path, signatures: &[&str], watched: &'static str) -> (anyhow::Result<()>, String) {
    let stop = Arc::new(StopAfterLine {
        watched,
        seen: AtomicBool::new(false),
        lines: Lines::default(),
        stage: Mutex::default(),
    });
    let outcome = gen_with(out, signatures, |o| o.hooks = Some(stop.clone()), stop.as_ref());
    (outcome, stop.lines.text())
}
