//! One job over several processes (`--features mpi`, run by `mpirun`): the tables are those
//! of a single-process build; a rank killed mid-pass ends the job at once, and the job
//! resumes with any number of ranks, or without MPI, to the same tables; a worker's error
//! ends the job with exit code 2; a locked work folder is refused.
//!
//! Compiled with the feature `mpi` only (`main.rs`):
//! `cargo test --release --features mpi --test it distributed::`.

use crate::fixtures;
use crate::util::{assert_same_tables, bin, stderr};
use std::path::Path;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tbstream::{GenOptions, JobHooks, Material, SilentProgress};

/// `mpirun` with `ranks` ranks: each rank runs threads of its own (no binding to one core
/// each); root in CI, and more ranks than this machine's two cores.
fn mpirun(ranks: usize) -> Command {
    let mut c = Command::new("mpirun");
    c.args(["--bind-to", "none", "-np", &ranks.to_string()])
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
    c
}

/// `tbstream gen SIG --threads 1` on `ranks` ranks (`mpirun`), or as a plain process (0).
fn gen(ranks: usize, out: &Path, sig: &str) -> Output {
    let mut cmd = match ranks {
        0 => Command::new(bin()),
        _ => {
            let mut c = mpirun(ranks);
            c.arg(bin());
            c
        }
    };
    cmd.args(["gen", sig, "--threads", "1", "--out"]).arg(out);
    finished(cmd)
}

/// Runs a command to its end; asserts that it did not panic.
fn finished(mut cmd: Command) -> Output {
    let o = cmd.output().expect("run the command");
    assert!(!stderr(&o).contains("panicked"), "panic: {}", stderr(&o));
    o
}

/// A fault on one rank: the process kills itself, or its chunk fails with an I/O error.
#[derive(Debug)]
struct RankFault {
    kill: bool,
    rank: i32,
    /// Chunks this rank computes (a worker) or commits (rank 0) before the fault.
    after: u64,
    done: AtomicU64,
}

impl JobHooks for RankFault {
    fn after_chunk(&self) -> anyhow::Result<()> {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        let rank = tbstream::cluster::world().map_or(0, |w| w.rank);
        if rank != self.rank || done <= self.after {
            return Ok(());
        }
        if self.kill {
            // SAFETY: sending a signal to this process has no preconditions.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        Err(std::io::Error::other("injected I/O error").into())
    }
}

/// The variable that hands [`rank_program`] its job: `OUT;SIG;kill|fail;RANK;AFTER`.
const RANK_JOB: &str = "IT_DISTRIBUTED_RANK_JOB";

/// What each rank of a faulty distributed job runs: this test binary itself, launched by
/// `mpirun` through [`gen_with_fault`]; the library's `gen` on every rank, with a
/// [`RankFault`] as the job's hooks. Does nothing when not launched so.
#[test]
#[ignore = "launched by mpirun from the tests below"]
fn rank_program() {
    let Ok(job) = std::env::var(RANK_JOB) else { return };
    let f: Vec<&str> = job.split(';').collect();
    let fault = RankFault {
        kill: f[2] == "kill",
        rank: f[3].parse().unwrap(),
        after: f[4].parse().unwrap(),
        done: AtomicU64::new(0),
    };
    let mut opts = GenOptions::new(Path::new(f[0]), 1);
    opts.hooks = Some(Arc::new(fault));
    let _mpi = tbstream::cluster::init().unwrap();
    tbstream::generate_on_ranks(&[Material::parse(f[1]).unwrap()], &opts, &SilentProgress).unwrap();
}

/// `gen SIG` on `ranks` ranks with a fault on rank `rank` after `after` chunks.
fn gen_with_fault(ranks: usize, out: &Path, sig: &str, kind: &str, rank: &str, after: &str) -> Output {
    let mut cmd = mpirun(ranks);
    let this = std::env::current_exe().unwrap();
    cmd.arg(this).args(["distributed::rank_program", "--exact", "--ignored", "--nocapture", "--test-threads", "1"]);
    cmd.env(RANK_JOB, format!("{};{sig};{kind};{rank};{after}", out.display()));
    finished(cmd)
}

/// KQvKR and its two 3-men sub-endgames on 2 and 3 ranks (enough chunks to share: the
/// tests below kill ranks after up to 60 of them).
#[test]
fn two_and_three_ranks_build_the_tables_of_one_process() {
    let reference = fixtures::kqvkr();
    for ranks in [2, 3] {
        let d = tempfile::tempdir().unwrap();
        let o = gen(ranks, d.path(), "KQvKR");
        let err = stderr(&o);
        assert!(o.status.success(), "{ranks} ranks: {err}");
        assert!(err.contains(&format!("distributed job: {ranks} ranks")), "{err}");
        assert!(err.contains(&format!("ranks {ranks}: ")), "pass lines name the ranks: {err}");
        assert_same_tables(d.path(), reference);
        assert!(!d.path().join(".work").exists(), "work folder left behind");
    }
}

#[test]
fn a_killed_rank_ends_the_job_and_any_launch_resumes_it() {
    let reference = fixtures::kqvkr();
    // (ranks, rank killed, its chunks before the kill; then the resuming launch's ranks)
    for (ranks, killed, after, resume) in [(2, "1", "25", 2), (2, "0", "40", 3), (3, "2", "15", 0), (3, "0", "60", 2)] {
        let d = tempfile::tempdir().unwrap();
        let t = Instant::now();
        let o = gen_with_fault(ranks, d.path(), "KQvKR", "kill", killed, after);
        assert!(!o.status.success(), "rank {killed} of {ranks} killed after {after} chunks: {}", stderr(&o));
        assert!(t.elapsed() < Duration::from_secs(20), "the job took {:?} to end", t.elapsed());
        assert!(d.path().join(".work").exists(), "nothing left to resume");
        let status = Command::new(bin()).args(["status", "--work"]).arg(d.path().join(".work")).output().unwrap();
        let text = String::from_utf8_lossy(&status.stdout);
        assert!(text.contains(&format!("{ranks} ranks (chunks per rank: ")), "status after the kill:\n{text}");
        let o = gen(resume, d.path(), "KQvKR");
        let err = stderr(&o);
        assert!(o.status.success(), "resumed on {resume} ranks: {err}");
        assert!(err.contains("resuming"), "rank {killed} of {ranks}, resumed on {resume}: {err}");
        assert_same_tables(d.path(), reference);
    }
}

#[test]
fn a_worker_error_ends_the_job_with_code_2() {
    let d = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let o = gen_with_fault(2, d.path(), "KQvKR", "fail", "1", "5");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("error (rank 1 of 2)") && err.contains("injected I/O error"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(20), "the job took {:?} to end", t.elapsed());
    // What was written before is kept: the job resumes.
    let o = gen(2, d.path(), "KQvKR");
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_tables(d.path(), fixtures::kqvkr());
}

#[test]
fn a_locked_work_folder_is_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join(".work")).unwrap();
    let lock = std::fs::File::create(d.path().join(".work/job.lock")).unwrap();
    lock.lock().unwrap();
    let o = gen(2, d.path(), "KQvK");
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("is in use by another tbstream job"), "{err}");
    drop(lock);
    assert!(gen(2, d.path(), "KQvK").status.success());
}
