//! Faults of long unattended runs: a disk that fills up mid-run (or mid-set) and gets space
//! back, two jobs on one folder (and a killed holder), and an output folder that cannot be
//! written.

use crate::fixtures;
use crate::util::{assert_same_tables, gen_cmd, stderr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `tbstream gen KQvKR EXTRA --out OUT`, not started yet.
fn gen_kqvkr(out: &Path, extra: &[&str]) -> Command {
    gen_cmd(out, &[&["KQvKR"], extra].concat(), &[])
}

/// Asserts that `dir` holds exactly the tables of `gen KQvKR`, byte for byte.
fn assert_reference_tables(dir: &Path) {
    assert_same_tables(dir, fixtures::kqvkr());
}

/// Passes recorded in the run manifest of KQvKR in the work folder (0 if none yet).
fn passes_done(work: &Path) -> usize {
    let text = std::fs::read_to_string(work.join("KQvKR").join("run.json")).unwrap_or_default();
    text.matches("\"pass\"").count()
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: sending a signal to our own child process.
    unsafe {
        libc::kill(child.id() as libc::pid_t, sig);
    }
}

/// Starts `gen KQvKR` and stops it (SIGSTOP) once KQvKR has finished `passes` passes;
/// `None` if the run ended before (it is fast: the caller tries again).
fn start_and_stop_after(out: &Path, extra: &[&str], work: &Path, passes: usize) -> Option<Child> {
    stop_after(gen_kqvkr(out, extra), work, passes)
}

/// Starts `cmd` (a job that builds KQvKR) and stops it once KQvKR has finished `passes`
/// passes, as [`start_and_stop_after`].
fn stop_after(mut cmd: Command, work: &Path, passes: usize) -> Option<Child> {
    let mut child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    loop {
        if passes_done(work) >= passes {
            signal(&child, libc::SIGSTOP);
            return Some(child);
        }
        if child.try_wait().unwrap().is_some() {
            return None;
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

fn retrying<T>(mut f: impl FnMut() -> Option<T>) -> T {
    (0..5).find_map(|_| f()).expect("the run was stopped mid-way in one of 5 tries")
}

/// A small tmpfs mounted for the test, unmounted when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a tmpfs of `size` (e.g. `18m`), or `None` where this process may not mount.
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tbstream-test"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        ok.then_some(Tmpfs { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        Command::new("umount").arg("-l").arg(self.dir.path()).status().ok();
    }
}

/// Fills the file system of `dir` with a file until it is full; returns the file.
fn fill(dir: &Path) -> PathBuf {
    use std::io::Write;
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).unwrap();
    let block = vec![0xa5u8; 64 << 10];
    while f.write_all(&block).is_ok() {}
    while f.write_all(&block[..4096]).is_ok() {}
    while f.write_all(&block[..1]).is_ok() {}
    path
}

/// A 19 MiB file system (a tmpfs) for the disk-full tests: KQvKR's job is planned at
/// 9.7 MiB (`plan KQvKR --mem 1MiB`). None, with a note, where this process cannot mount one.
fn small_disk() -> Option<Tmpfs> {
    let fs = Tmpfs::mount("19m");
    if fs.is_none() {
        eprintln!("skipped: this process cannot mount a tmpfs (the disk-full tests need one)");
    }
    fs
}

#[test]
fn a_disk_that_fills_mid_run_then_gets_space_back_resumes_identical() {
    let Some(fs) = small_disk() else { return };
    let out = fs.path().join("tables");
    let work = out.join(".work");
    let mut child = retrying(|| {
        std::fs::remove_dir_all(&out).ok();
        start_and_stop_after(&out, &["--mem", "1MiB"], &work, 5)
    });
    // Another program fills the disk while the job sleeps; then the job goes on.
    let filler = fill(fs.path());
    signal(&child, libc::SIGCONT);
    let start = Instant::now();
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(start.elapsed() < Duration::from_secs(60));
    assert_eq!(status.code(), Some(2), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with("error: ")
            && last.contains("No space left on device")
            && last.contains(&*fs.path().to_string_lossy()),
        "the error names the file: {err}"
    );
    assert!(!err.contains("panicked"), "{err}");
    // Space comes back on the same file system: the job holds some of it already, and asks
    // only for what it still needs.
    std::fs::remove_file(&filler).unwrap();
    let o = gen_kqvkr(&out, &["--mem", "1MiB"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("resuming after"), "{}", stderr(&o));
    assert_reference_tables(&out);
    assert!(!work.exists(), "work folder left behind");
}

#[test]
fn a_disk_that_fills_during_a_set_keeps_the_finished_tables_and_the_set_resumes() {
    // The set of a list naming KQvKR (KQvK and KRvK come first): the disk fills while
    // KQvKR is built; the job ends with exit 2, the tables finished before stay as they were,
    // and once there is space the same command finishes the set with its SHA256SUMS.
    let Some(fs) = small_disk() else { return };
    let list = fs.path().join("set.txt");
    std::fs::write(&list, "KQvKR\n").unwrap();
    let out = fs.path().join("tables");
    let work = out.join(".work");
    let args = ["--list", list.to_str().unwrap(), "--mem", "1MiB"];
    let mut child = retrying(|| {
        std::fs::remove_dir_all(&out).ok();
        stop_after(gen_cmd(&out, &args, &[]), &work, 5)
    });
    let filler = fill(fs.path());
    signal(&child, libc::SIGCONT);
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert_eq!(status.code(), Some(2), "{err}");
    assert!(err.lines().last().unwrap_or_default().contains("No space left on device"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for done in ["KQvK.tbs", "KRvK.tbs"] {
        let built = std::fs::read(out.join(done)).unwrap();
        assert!(built == std::fs::read(fixtures::kqvkr().join(done)).unwrap(), "{done} kept as built");
    }
    assert!(!out.join("SHA256SUMS").exists(), "no checksums for an unfinished set");
    std::fs::remove_file(&filler).unwrap();
    let o = gen_cmd(&out, &args, &[]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("set of 1 endgames complete: 4 tables"));
    assert_reference_tables(&out);
    let sums = std::fs::read_to_string(out.join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 4, "{sums}");
}

#[test]
fn a_second_job_on_a_folder_is_refused_and_a_killed_holder_does_not_block() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("tables");
    let work = out.join(".work");
    let first = retrying(|| {
        std::fs::remove_dir_all(&out).ok();
        start_and_stop_after(&out, &["--mem", "1MiB"], &work, 3)
    });
    // A second job on the same work folder is refused at once, naming the holder.
    let start = Instant::now();
    let o = gen_kqvkr(&out, &[]).output().unwrap();
    let took = start.elapsed();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(took < Duration::from_secs(1), "refused after {took:?}");
    assert!(err.contains("in use by another tbstream job") && err.contains(&format!("pid {} ", first.id())), "{err}");
    assert!(err.contains("started ") && err.contains("gen KQvKR"), "{err}");
    // Another work folder, same output folder: the table being built is locked too.
    let other = d.path().join("other-work");
    let o = gen_kqvkr(&out, &["--work", other.to_str().unwrap()]).output().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("KQvKR.tbs is in use by another tbstream job") && err.contains(&format!("pid {} ", first.id())),
        "{err}"
    );
    // The first job finishes, untouched.
    signal(&first, libc::SIGCONT);
    let o = first.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert_reference_tables(&out);
    // A holder killed with SIGKILL leaves its lock file, but not its lock.
    for run in ["KQvKR", "KRvKQ"] {
        std::fs::remove_file(out.join(format!("{run}.tbs"))).unwrap();
    }
    let holder = retrying(|| start_and_stop_after(&out, &["--mem", "1MiB"], &work, 3));
    signal(&holder, libc::SIGKILL);
    let o = holder.wait_with_output().unwrap();
    assert!(!o.status.success());
    assert!(work.join("job.lock").exists());
    let o = gen_kqvkr(&out, &["--mem", "1MiB"]).output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("KQvKR: resuming after"), "{}", stderr(&o));
    assert_reference_tables(&out);
    assert!(!work.exists(), "work folder and its lock are gone");
}

#[test]
fn an_output_folder_that_cannot_be_written_is_refused_before_any_work() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let d = tempfile::tempdir().unwrap();
    std::fs::set_permissions(d.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = d.path().join("tables");
    let work = d.path().join("work");
    std::fs::create_dir(&out).unwrap();
    std::fs::create_dir(&work).unwrap();
    std::fs::set_permissions(&out, std::fs::Permissions::from_mode(0o555)).unwrap();
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o777)).unwrap();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    for extra in [vec![], vec!["--work".to_string(), work.display().to_string()]] {
        let mut cmd = gen_kqvkr(&out, &extra.iter().map(|s| s.as_str()).collect::<Vec<_>>());
        if root {
            // Root writes anywhere: run as nobody, for whom the folder is read-only.
            cmd.uid(65534).gid(65534);
        }
        let start = Instant::now();
        let o = cmd.output().unwrap();
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(2), "{extra:?}: {err}");
        assert!(err.contains("Permission denied") && err.contains(&*out.to_string_lossy()), "{extra:?}: {err}");
        assert!(!err.contains("starting in") && !err.contains("built"), "no work was done: {err}");
        assert!(start.elapsed() < Duration::from_secs(5));
    }
    assert_eq!(std::fs::read_dir(&work).unwrap().count(), 0, "nothing written into the work folder");
}
