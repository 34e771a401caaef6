//! Out-of-core behaviour of `tbstream gen`: the output does not depend on the chunking,
//! a killed job resumes to byte-identical output, damage in any kind of file is reported
//! and recomputed, and a full disk is a clear error that a later run recovers from.

use crate::fixtures::{self, SMALL};
use crate::hooks::{gen_here, gen_hooked, gen_stopped_after_line, StopAfter};
use crate::util::{assert_same_tables, bin, copy_tables, gen, stderr, tables};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A reference build of KQvKR (with KQvK, KRvK, KRvKQ).
fn reference() -> &'static Path {
    fixtures::kqvkr()
}

/// A fresh folder holding the finished 3-men sub-endgames of KQvKR.
fn with_subs() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    for f in ["KQvK.tbs", "KRvK.tbs"] {
        std::fs::copy(reference().join(f), d.path().join(f)).unwrap();
    }
    d
}

#[test]
fn output_does_not_depend_on_chunks_memory_or_threads() {
    let sigs: Vec<&str> = SMALL.to_vec();
    let many = tempfile::tempdir().unwrap();
    let one = tempfile::tempdir().unwrap();
    // Default plan: as many chunks as the index allows (10 white, 8 black for 4 men).
    let o = gen(many.path(), &[&sigs[..], &["--mem", "4GiB", "--threads", "2"]].concat(), &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("KQvKR: built") && stderr(&o).contains("10 white / 8 black chunks"), "{}", stderr(&o));
    // One chunk per side (no fixed bit), one thread, a small budget.
    let (built, log) = gen_here(one.path(), &sigs, |o| {
        o.max_fixed_bits = Some(0);
        o.budget.mem = 3 << 20;
        o.budget.threads = 1;
    });
    built.unwrap();
    assert!(log.contains("KQvKR: built") && log.contains("1 white / 1 black chunks"), "{log}");
    assert_same_tables(many.path(), one.path());
    assert_eq!(tables(one.path()).len(), 30, "every run of the 3- and 4-men closure");
}

#[test]
fn a_budget_too_small_is_a_clear_error() {
    let d = with_subs();
    let o = gen(d.path(), &["KQvKR", "--mem", "64KiB"], &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("RAM budget too small for KQvKR"), "{}", stderr(&o));
    assert!(stderr(&o).contains("--mem 64.0 KiB"), "names the budget given: {}", stderr(&o));
    let o = gen(d.path(), &["KQvKR", "--block", "3MiB"], &[]);
    assert!(!o.status.success() && stderr(&o).contains("--block"), "{}", stderr(&o));
}

#[test]
fn killed_runs_resume_to_identical_output() {
    let d = with_subs();
    let mut interrupted = 0;
    let mut resumed = 0;
    // Kill moments spread over a run (a full KQvKR run takes about a second here); keep
    // killing, a little later each time, until a run gets to the end.
    for attempt in 0..60u64 {
        let mut child = Command::new(bin())
            .args(["gen", "KQvKR", "--mem", "4MiB", "--out"])
            .arg(d.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = Instant::now();
        let delay = Duration::from_millis(30 + 37 * (attempt % 8) + 11 * attempt);
        while start.elapsed() < delay && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(2));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap(); // SIGKILL
            interrupted += 1;
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{err}");
        if err.contains("resuming after") {
            resumed += 1;
        }
        if d.path().join("KRvKQ.tbs").exists() {
            // Enough kills, enough of them inside a pass (a busy machine shifts the moments).
            if interrupted >= 5 && resumed >= 3 {
                break;
            }
            // Finished before enough kills: build it again, killing some more.
            std::fs::remove_file(d.path().join("KQvKR.tbs")).unwrap();
            std::fs::remove_file(d.path().join("KRvKQ.tbs")).unwrap();
        }
    }
    let o = gen(d.path(), &["KQvKR", "--mem", "4MiB"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    println!("{interrupted} kills, {resumed} resumed runs");
    assert!(interrupted >= 5, "only {interrupted} runs were killed mid-way");
    assert!(resumed >= 3, "only {resumed} runs resumed an interrupted pass");
    assert!(!d.path().join(".work").exists(), "work folder left behind");
    assert_same_tables(d.path(), reference());
}

/// A build stopped while its compact table is written (as a kill would leave it) resumes
/// the compaction from its last whole block; the tables are identical. KQvKR's 60 blocks:
/// 10 of wtm classes, 40 of wtm distances, 10 of btm classes. The distance blocks are packed
/// with the class blocks and spilled beside the table: stopped after 5 the resume keeps the
/// first 20 of them, after 30 it pushes the spilled ones. Black's summary is counted as its
/// blocks are written: after 55 the resume counts it in a scan of its own.
#[test]
fn a_stopped_compaction_resumes_byte_identical() {
    for stop in [5, 30, 55] {
        let d = with_subs();
        let (built, _) = gen_hooked(d.path(), &["KQvKR"], Arc::new(StopAfter::blocks(stop)));
        let err = format!("{:#}", built.unwrap_err());
        assert!(err.contains("stopped on purpose after the last compaction block"), "{err}");
        assert!(d.path().join(".work/KQvKR/table.compact").exists() && !d.path().join("KQvKR.tbs").exists());
        let s = Command::new(bin()).args(["status", "--work"]).arg(d.path().join(".work")).output().unwrap();
        let text = String::from_utf8_lossy(&s.stdout);
        assert!(text.contains("KQvKR: merged, writing the compact table ("), "{text}");
        // Once the chains are complete only the tables the edge and the compaction read stay
        // (`c`: the wins by a zeroing move, which the distance section leaves out).
        let level = d.path().join(".work/KQvKR/level-00");
        let mut tables: Vec<String> = std::fs::read_dir(&level)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".bits"))
            .collect();
        tables.sort();
        assert_eq!(tables, ["c.bits", "forced-zeroing.bits", "illegal-btm.bits", "illegal-wtm.bits"]);
        let o = gen(d.path(), &["KQvKR"], &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        let resumed = format!("KQvKR: compaction resumes after {stop} of 60 blocks");
        assert!(stderr(&o).contains(&resumed), "{}", stderr(&o));
        assert!(!stderr(&o).contains("rebuild"), "{}", stderr(&o));
        assert!(!d.path().join(".work").exists(), "work folder left behind");
        assert_same_tables(d.path(), reference());
    }
}

/// Stops a run at a chunk boundary of pass 32 of KQvKR and returns its folder.
fn interrupted_run() -> tempfile::TempDir {
    let d = with_subs();
    let (built, _) = gen_hooked(d.path(), &["KQvKR"], Arc::new(StopAfter::chunks(300)));
    assert!(format!("{:#}", built.unwrap_err()).contains("stopped on purpose"));
    d
}

fn flip_byte(path: &Path, at: u64) {
    use std::os::unix::fs::FileExt;
    let f = std::fs::OpenOptions::new().read(true).write(true).open(path).unwrap();
    let mut b = [0u8];
    f.read_exact_at(&mut b, at).unwrap();
    b[0] ^= 0x5a;
    f.write_all_at(&b, at).unwrap();
}

/// A byte of the payload of a work table's middle block (docs/WORKFILES.md: block `b` of `W`
/// words stored in the slot at `b * (8 W + 8)`, after an 8-byte header), whichever way the
/// block is stored: a flip there changes its words (the rest of a slot may be unused).
fn middle_payload_byte(table: &Path, run_json: &Path) -> u64 {
    let text = std::fs::read_to_string(run_json).unwrap();
    let json = text.rsplit_once("\nxxh3:").unwrap().0;
    let run: serde_json::Value = serde_json::from_str(json).unwrap();
    let words = 1u64 << (run["block_bits"].as_u64().unwrap() - 6);
    let slot = 8 * words + 8;
    let n_blocks = std::fs::metadata(table).unwrap().len() / slot;
    (n_blocks / 2) * slot + 8
}

#[test]
fn damaged_files_are_reported_and_recomputed() {
    // (file to damage, text the resume must report)
    let cases = [
        ("t031.bits", "t031.bits: checksum mismatch in block"),
        // The table step 32 updates in place (t030's file until then).
        ("t032.bits", "t032.bits: checksum mismatch in block"),
        ("pass-032.log", "pass-032.log: checksum mismatch in record"),
        ("pass-010.log", "pass-010.log: checksum mismatch in record"),
        ("pass-011.streams", "pass-011.streams: checksum mismatch in the streams"),
        ("run.json", "run.json: manifest is damaged"),
        ("t030.sums", "rebuilding damaged"),
    ];
    for (file, message) in cases {
        let d = interrupted_run();
        let folder = if file == "run.json" { ".work/KQvKR" } else { ".work/KQvKR/level-00" };
        let path = d.path().join(folder).join(file);
        let at = match file.ends_with(".bits") {
            true => middle_payload_byte(&path, &d.path().join(".work/KQvKR/run.json")),
            false => std::fs::metadata(&path).unwrap().len() / 2,
        };
        flip_byte(&path, at);
        let o = gen(d.path(), &["KQvKR"], &[]);
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{file}: expected '{message}' in:\n{}", stderr(&o));
        assert_same_tables(d.path(), reference());
    }
    // A table a later pass needs, deleted; the job manifest, damaged.
    for (file, message) in
        [("KQvKR/level-00/t031.bits", "t031.bits is missing; rebuilding it"), ("job.json", "writing it anew")]
    {
        let d = interrupted_run();
        let path = d.path().join(".work").join(file);
        if file.ends_with(".bits") {
            std::fs::remove_file(&path).unwrap();
        } else {
            flip_byte(&path, 3);
        }
        let o = gen(d.path(), &["KQvKR"], &[]);
        assert!(o.status.success(), "{file}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{file}: expected '{message}' in:\n{}", stderr(&o));
        assert_same_tables(d.path(), reference());
    }
}

#[test]
fn damaged_final_tables_are_reported_by_probe_and_rebuilt_by_gen() {
    let d = with_subs();
    assert!(gen(d.path(), &["KQvKR"], &[]).status.success());
    let table = d.path().join("KQvKR.tbs");
    flip_byte(&table, std::fs::metadata(&table).unwrap().len() - 100);
    let o = Command::new(bin())
        .args(["probe", "--tables"])
        .arg(d.path())
        .arg("8/8/8/8/8/2k5/8/KQ4r1 w - - 0 1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        !o.status.success() && err.contains("KQvKR.tbs") && err.contains("checksum mismatch in section Summary"),
        "{err}"
    );
    let o = gen(d.path(), &["KQvKR"], &[]);
    assert!(
        o.status.success() && stderr(&o).contains("KQvKR: existing table is damaged, rebuilding"),
        "{}",
        stderr(&o)
    );
    assert_same_tables(d.path(), reference());
}

#[test]
fn a_full_disk_is_an_error_and_the_run_resumes_afterwards() {
    let d = with_subs();
    // A file-size limit of 1 MiB (ulimit counts 1 KiB blocks) stands in for a full disk.
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -f 1024; exec {} gen KQvKR --out {}", bin(), d.path().display()))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("error:") && err.contains("File too large"), "{err}");
    let o = gen(d.path(), &["KQvKR"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_same_tables(d.path(), reference());
}

#[test]
fn another_job_in_the_work_folder_is_refused() {
    let d = interrupted_run();
    let o = gen(d.path(), &["KRvKR"], &[]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("holds an interrupted job for KQvKR"), "{}", stderr(&o));
    let s = Command::new(bin()).args(["status", "--work"]).arg(d.path().join(".work")).output().unwrap();
    let text = String::from_utf8_lossy(&s.stdout);
    assert!(text.contains("KQvKR: step 32 (black), chunk 2/8"), "{text}");
}

#[test]
fn a_damaged_solved_level_is_solved_again_with_the_levels_after_it() {
    use tbstream::{Layout, Material};
    let d = tempfile::tempdir().unwrap();
    assert!(gen(d.path(), &["KPvK"], &[]).status.success());
    let table = d.path().join("KPvK.tbs");
    let whole = std::fs::read(&table).unwrap();
    std::fs::remove_file(&table).unwrap();
    // Stopped with several of KPvK's six levels solved (the highest first).
    let (built, _) = gen_hooked(d.path(), &["KPvK"], Arc::new(StopAfter::chunks(400)));
    assert!(format!("{:#}", built.unwrap_err()).contains("stopped on purpose"));
    let layout = Layout::new(&Material::parse("KPvK").unwrap());
    let mut levels = layout.levels();
    levels.sort_by_key(|l| std::cmp::Reverse(l.number));
    let second = &levels[1];
    // A solved level keeps only what the compaction and the levels below read.
    let kept = d.path().join(format!(".work/KPvK/level-{:02}", second.number));
    let names: Vec<String> =
        std::fs::read_dir(&kept).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    for name in ["illegal-wtm.bits", "exact-100.log", "final-wtm.bits", "final-btm.sums", "pass-001.streams"] {
        assert!(names.iter().any(|n| n == name), "{name} not kept: {names:?}");
    }
    assert!(!names.iter().any(|n| n.starts_with("t0") || n.starts_with("d.")), "{names:?}");
    // As after a power loss: a byte of the second solved level's illegal positions never
    // reached the disk.
    let illegal = kept.join("illegal-wtm.bits");
    flip_byte(&illegal, middle_payload_byte(&illegal, &d.path().join(".work/KPvK/run.json")));
    let o = gen(d.path(), &["KPvK"], &[]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(&format!("level {} is damaged", second.number))
            && err.contains("illegal-wtm.bits")
            && err.contains("solving it and the levels after it again"),
        "{err}"
    );
    // The first level was kept: only the damaged one and those after it are solved again.
    assert!(!err.contains(&format!("KPvK/{} init", levels[0].number)), "{err}");
    assert!(err.contains(&format!("KPvK/{} init", second.number)), "{err}");
    assert!(std::fs::read(&table).unwrap() == whole, "the resumed table differs");
}

/// KRPvKR's levels are eventual (its promotions reach cursed positions): once two steps in a
/// row find nothing, the steps up to 100 are recorded without running, their logs and the
/// chains' last tables given second names. A build stopped at the first chunk after such a
/// skip (step 101 of the first level) resumes over those files to the same bytes.
#[test]
fn a_build_stopped_after_skipped_steps_resumes_byte_identical() {
    use std::os::unix::fs::MetadataExt;
    let whole = fixtures::krpvkr();
    let runs = ["KRPvKR.tbs", "KRvKRP.tbs"];
    let d = copy_tables(whole, |name| !runs.contains(&name));
    let (built, log) = gen_stopped_after_line(d.path(), &["KRPvKR"], "recorded without running");
    assert!(format!("{:#}", built.unwrap_err()).contains("stopped on purpose"), "{log}");
    let skip = log.lines().find(|l| l.contains("recorded without running")).unwrap();
    let level: u32 = skip["KRPvKR/".len()..skip.find(' ').unwrap()].parse().unwrap();
    let folder = d.path().join(format!(".work/KRPvKR/level-{level:02}"));
    // Hard links to the logs of the last steps that ran (no file was created for them).
    for name in ["pass-099.log", "pass-100.log", "pass-100.streams", "t099.bits", "t100.bits"] {
        let meta = std::fs::metadata(folder.join(name)).unwrap_or_else(|e| panic!("{name}: {e}\n{log}"));
        if name.starts_with("pass") {
            assert!(meta.nlink() > 1, "{name} has {} names", meta.nlink());
        }
    }
    let o = gen(d.path(), &["KRPvKR"], &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    for run in runs {
        assert!(std::fs::read(d.path().join(run)).unwrap() == std::fs::read(whole.join(run)).unwrap(), "{run}");
    }
}

/// Without pawns nothing reads `t99` and `t100` after the chains, so steps 101 and 102 of
/// KRBvKR (cursed wins, not eventual) update them in place: a build stopped at the first
/// chunk of each resumes to the same bytes.
#[test]
fn builds_stopped_in_steps_101_and_102_resume_byte_identical() {
    let whole = fixtures::cursed_tables();
    let runs = ["KRBvKR.tbs", "KRvKRB.tbs"];
    for (watched, step) in [("step 100 black", 101), ("step 101 white", 102)] {
        let d = copy_tables(whole, |name| !runs.contains(&name));
        let (built, log) = gen_stopped_after_line(d.path(), &["KRBvKR"], watched);
        assert!(format!("{:#}", built.unwrap_err()).contains("stopped on purpose"), "{log}");
        // The step took `t(k-2)` over: its file bears the step's name alone.
        let folder = d.path().join(".work/KRBvKR/level-00");
        let name = |k: i32| folder.join(format!("t{k:03}.bits"));
        let listing = || std::fs::read_dir(&folder).map(|d| d.flatten().map(|e| e.file_name()).collect::<Vec<_>>());
        assert!(name(step).exists() && !name(step - 2).exists(), "step {step}: {:?}", listing());
        let o = gen(d.path(), &["KRBvKR"], &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stderr(&o).contains(&format!("pass {step}: resuming after")), "step {step}: {}", stderr(&o));
        for run in runs {
            assert!(std::fs::read(d.path().join(run)).unwrap() == std::fs::read(whole.join(run)).unwrap(), "{run}");
        }
    }
}

/// Builds `sigs` into `dense` and `sparse` with the steps forced each way; the tables are the
/// same bytes.
fn assert_sparse_equals_dense(dense: &Path, sparse: &Path, sigs: &[&str]) {
    for (dir, mode) in [(dense, "dense"), (sparse, "sparse")] {
        let o = gen(dir, &[sigs, &["--steps", mode, "--mem", "64MiB"]].concat(), &[]);
        assert!(o.status.success(), "{}", stderr(&o));
        if mode == "sparse" {
            assert!(stderr(&o).contains("sparse"), "the steps say they ran sparse: {}", stderr(&o));
        }
    }
    assert_same_tables(dense, sparse);
}

/// Sparse steps (candidates derived from the last step's new positions) and the dense
/// kernels give the same bytes, forced both ways: every 3- and 4-men table, and two with
/// pawns. (Every 5-men table the other tests build runs its late steps sparse and its early
/// ones dense, and is checked against the reference; the forced comparison at 5 men is
/// `slow_sparse_and_dense_steps_give_identical_five_men_tables`.)
#[test]
fn sparse_and_dense_steps_give_identical_tables() {
    let (dense, sparse) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    assert_sparse_equals_dense(dense.path(), sparse.path(), &[&SMALL[..], &["KRvKP", "KBPvK"]].concat());
}

/// The same at 5 men, KQRvKR, and KBBvKN (cursed wins: its chains go past step 100): a
/// minute on 2 cores, so in the slow tier (`scripts/slow-tests.sh`).
#[test]
#[ignore = "slow tier: scripts/slow-tests.sh"]
fn slow_sparse_and_dense_steps_give_identical_five_men_tables() {
    let (dense, sparse) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    for dir in [&dense, &sparse] {
        for table in crate::util::tables(fixtures::small_tables()) {
            std::fs::copy(&table, dir.path().join(table.file_name().unwrap())).unwrap();
        }
    }
    assert_sparse_equals_dense(dense.path(), sparse.path(), &["KQRvKR", "KBBvKN"]);
}
