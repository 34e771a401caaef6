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
use std::time::{Duration, Instant};

/// `tbstream gen` on `ranks` ranks (`mpirun`), or as a plain process (0).
fn gen(ranks: usize, out: &Path, sig: &str, env: &[(&str, &str)]) -> Output {
    let mut cmd = if ranks == 0 {
        Command::new(bin())
    } else {
        let mut c = Command::new("mpirun");
        // Each rank runs threads of its own: no binding to one core each. Root in CI, and
        // more ranks than this machine's two cores.
        c.args(["--bind-to", "none", "-np", &ranks.to_string(), bin()])
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("OMPI_MCA_rmaps_base_oversubscribe", "1");
        c
    };
    cmd.args(["gen", sig, "--threads", "1", "--out"]).arg(out);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let o = cmd.output().expect("run tbstream");
    assert!(!stderr(&o).contains("panicked"), "panic: {}", stderr(&o));
    o
}

#[test]
fn two_and_three_ranks_build_the_tables_of_one_process() {
    let reference = fixtures::kqrvkr();
    for ranks in [2, 3] {
        let d = tempfile::tempdir().unwrap();
        let o = gen(ranks, d.path(), "KQRvKR", &[]);
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
        let env = [("TBSTREAM_KILL_RANK", killed), ("TBSTREAM_KILL_AFTER_CHUNKS", after)];
        let t = Instant::now();
        let o = gen(ranks, d.path(), "KQvKR", &env);
        assert!(!o.status.success(), "rank {killed} of {ranks} killed after {after} chunks: {}", stderr(&o));
        assert!(t.elapsed() < Duration::from_secs(20), "the job took {:?} to end", t.elapsed());
        assert!(d.path().join(".work").exists(), "nothing left to resume");
        let status = Command::new(bin()).args(["status", "--work"]).arg(d.path().join(".work")).output().unwrap();
        let text = String::from_utf8_lossy(&status.stdout);
        assert!(text.contains(&format!("{ranks} ranks (chunks per rank: ")), "status after the kill:\n{text}");
        let o = gen(resume, d.path(), "KQvKR", &[]);
        let err = stderr(&o);
        assert!(o.status.success(), "resumed on {resume} ranks: {err}");
        assert!(err.contains("resuming"), "rank {killed} of {ranks}, resumed on {resume}: {err}");
        assert_same_tables(d.path(), reference);
    }
}

#[test]
fn a_worker_error_ends_the_job_with_code_2() {
    let d = tempfile::tempdir().unwrap();
    let env = [("TBSTREAM_FAIL_RANK", "1"), ("TBSTREAM_FAIL_AFTER_CHUNKS", "5")];
    let t = Instant::now();
    let o = gen(2, d.path(), "KQvKR", &env);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("error (rank 1 of 2)") && err.contains("injected I/O error"), "{err}");
    assert!(t.elapsed() < Duration::from_secs(20), "the job took {:?} to end", t.elapsed());
    // What was written before is kept: the job resumes.
    let o = gen(2, d.path(), "KQvKR", &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_tables(d.path(), fixtures::kqvkr());
}

#[test]
fn a_locked_work_folder_is_refused() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join(".work")).unwrap();
    let lock = std::fs::File::create(d.path().join(".work/job.lock")).unwrap();
    lock.lock().unwrap();
    let o = gen(2, d.path(), "KQvK", &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("is in use by another tbstream job"), "{err}");
    drop(lock);
    assert!(gen(2, d.path(), "KQvK", &[]).status.success());
}
