//! End-to-end tests of the `tbstream` binary: `gen` and `probe` run as separate processes
//! in fresh temporary folders, with 3-men tables only (they build in milliseconds).
//! Moves printed by `probe` are replayed and cross-checked with `cozy-chess`.

use crate::fixtures;
use crate::util::{bin, Rng};
use cozy_chess::{Board, GameStatus};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

// ---------------------------------------------------------------------------------------
// Running the binary
// ---------------------------------------------------------------------------------------

/// Exit code, stdout and stderr of one run.
#[derive(Debug)]
struct Output {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs the binary with `args`, feeding `stdin` (closed at once when `None`).
fn run_with_stdin(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(bin())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting tbstream");
    let mut pipe = child.stdin.take().expect("stdin pipe");
    let input = stdin.unwrap_or("").to_string();
    // Written from a thread so that a large input cannot deadlock against a full stdout.
    let writer = std::thread::spawn(move || {
        pipe.write_all(input.as_bytes()).ok();
    });
    let out = child.wait_with_output().expect("waiting for tbstream");
    writer.join().unwrap();
    let result = Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).expect("stdout is UTF-8"),
        stderr: String::from_utf8(out.stderr).expect("stderr is UTF-8"),
    };
    assert!(!result.stderr.contains("panicked"), "tbstream {args:?} panicked:\n{}", result.stderr);
    assert_ne!(result.code, 101, "tbstream {args:?} exited with the panic code:\n{}", result.stderr);
    assert_ne!(result.code, -1, "tbstream {args:?} was killed by a signal:\n{}", result.stderr);
    result
}

fn run(args: &[&str]) -> Output {
    run_with_stdin(args, None)
}

/// Asserts a clean failure: non-zero exit, an `error:` line on stderr, no panic.
fn assert_error(out: &Output, what: &str) {
    assert_ne!(out.code, 0, "{what}: expected failure, got success; stderr:\n{}", out.stderr);
    assert!(out.stderr.starts_with("error:"), "{what}: stderr should start with 'error:', got:\n{}", out.stderr);
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("temp paths are UTF-8")
}

/// Runs `gen` for `sigs` into `dir` and asserts success.
fn gen_into(dir: &Path, sigs: &[&str], threads: usize) -> Output {
    let threads = threads.to_string();
    let mut args = vec!["gen"];
    args.extend_from_slice(sigs);
    args.extend_from_slice(&["--out", path_str(dir), "--threads", &threads]);
    let out = run(&args);
    assert_eq!(out.code, 0, "gen {sigs:?} failed:\n{}", out.stderr);
    out
}

/// Names of the entries of a folder (hidden ones included).
fn entries(dir: &Path) -> BTreeSet<String> {
    match std::fs::read_dir(dir) {
        Ok(rd) => rd.map(|e| e.unwrap().file_name().into_string().unwrap()).collect(),
        Err(_) => BTreeSet::new(),
    }
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

// ---------------------------------------------------------------------------------------
// Probing
// ---------------------------------------------------------------------------------------

/// One answered line of `probe`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Answer {
    fen: String,
    wdl: i32,
    dtz: i32,
    mv: Option<String>,
    /// The five-valued result with a fresh counter (the last field).
    category: String,
}

fn parse_answer(line: &str) -> Answer {
    let f: Vec<&str> = line.split('\t').collect();
    assert_eq!(f.len(), 5, "probe line should have 5 tab-separated fields: {line:?}");
    let category = f[4].to_string();
    let names = ["win", "cursed-win", "draw", "blessed-loss", "loss"];
    assert!(names.contains(&category.as_str()), "bad category in {line:?}");
    let answer = Answer {
        fen: f[0].to_string(),
        wdl: f[1].parse().unwrap_or_else(|_| panic!("bad wdl in {line:?}")),
        dtz: f[2].parse().unwrap_or_else(|_| panic!("bad dtz in {line:?}")),
        mv: if f[3] == "-" { None } else { Some(f[3].to_string()) },
        category,
    };
    // A result under the rule with a fresh counter is the category's (these tables have no
    // cursed positions).
    if answer.fen.ends_with(" 0 1") {
        assert_eq!(answer.category, ["loss", "draw", "win"][(answer.wdl + 1) as usize], "{line:?}");
    }
    answer
}

/// Probes FENs through stdin, expecting every line to be answered.
fn probe_all(dir: &Path, fens: &[String]) -> Vec<Answer> {
    let mut input = fens.join("\n");
    input.push('\n');
    let out = run_with_stdin(&["probe", "--tables", path_str(dir)], Some(&input));
    assert_eq!(out.code, 0, "probe failed:\n{}", out.stderr);
    let answers: Vec<Answer> = out.stdout.lines().map(parse_answer).collect();
    assert_eq!(answers.len(), fens.len(), "one answer per FEN expected");
    for (a, f) in answers.iter().zip(fens) {
        assert_eq!(&a.fen, f, "answers come back in input order");
    }
    answers
}

/// Probes one FEN given as an argument.
fn probe_one(dir: &Path, fen: &str) -> Answer {
    let out = run(&["probe", "--tables", path_str(dir), fen]);
    assert_eq!(out.code, 0, "probe {fen} failed:\n{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected for {fen}, got {:?}", out.stdout);
    let a = parse_answer(lines[0]);
    assert_eq!(a.fen, fen);
    a
}

/// Sign and parity rules every answer must obey.
fn assert_well_formed(a: &Answer) {
    assert!([-1, 0, 1].contains(&a.wdl), "{a:?}");
    match a.wdl {
        1 => assert!(a.dtz > 0 && a.dtz % 2 == 1, "a win has a positive odd dtz: {a:?}"),
        -1 => assert!(a.dtz <= 0 && a.dtz % 2 == 0, "a loss has a non-positive even dtz: {a:?}"),
        _ => assert_eq!(a.dtz, 0, "a draw has dtz 0: {a:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// cozy-chess helpers
// ---------------------------------------------------------------------------------------

fn board(fen: &str) -> Board {
    Board::from_fen(fen, false).unwrap_or_else(|e| panic!("cozy-chess rejects {fen}: {e:?}"))
}

fn legal_moves(b: &Board) -> Vec<cozy_chess::Move> {
    let mut v = Vec::new();
    b.generate_moves(|pm| {
        v.extend(pm);
        false
    });
    v
}

/// The FEN after playing a UCI move, which must be legal.
fn play(fen: &str, uci: &str) -> String {
    let mut b = board(fen);
    let mv: cozy_chess::Move = uci.parse().unwrap_or_else(|_| panic!("unparsable move {uci} for {fen}"));
    b.try_play(mv).unwrap_or_else(|_| panic!("illegal move {uci} in {fen}"));
    b.to_string()
}

/// Whether a move captures (the target square holds a man).
fn is_capture(fen: &str, uci: &str) -> bool {
    let mv: cozy_chess::Move = uci.parse().unwrap();
    board(fen).piece_on(mv.to).is_some()
}

/// FEN of men placed on distinct squares (0 = a1 .. 63 = h8).
fn fen_of(men: &[(u8, char)], white_to_move: bool, clock: u32) -> String {
    let mut rows = Vec::new();
    for rank in (0..8u8).rev() {
        let mut row = String::new();
        let mut empty = 0;
        for file in 0..8u8 {
            match men.iter().find(|(s, _)| *s == rank * 8 + file) {
                Some((_, c)) => {
                    if empty > 0 {
                        row.push_str(&empty.to_string());
                        empty = 0;
                    }
                    row.push(*c);
                }
                None => empty += 1,
            }
        }
        if empty > 0 {
            row.push_str(&empty.to_string());
        }
        rows.push(row);
    }
    format!("{} {} - - {clock} 1", rows.join("/"), if white_to_move { 'w' } else { 'b' })
}

/// Random 3-men placements of KQvK, KRvK and their colour swaps, legal or not.
fn random_placements(seed: u64, n: usize) -> Vec<String> {
    let mut rng = Rng(seed);
    let materials = [['K', 'Q', 'k'], ['K', 'R', 'k'], ['k', 'q', 'K'], ['k', 'r', 'K']];
    let mut out = Vec::new();
    while out.len() < n {
        let letters = materials[rng.below(4) as usize];
        let squares: Vec<u8> = (0..3).map(|_| rng.below(64) as u8).collect();
        if squares[0] == squares[1] || squares[0] == squares[2] || squares[1] == squares[2] {
            continue;
        }
        let men: Vec<(u8, char)> = squares.into_iter().zip(letters).collect();
        out.push(fen_of(&men, rng.below(2) == 0, 0));
    }
    out
}

/// Whether a FEN is a legal position: cozy-chess accepts it (which checks that the side not
/// to move is not in check by a piece) and the kings are not adjacent (which cozy-chess
/// 0.3 does not check).
fn is_legal(fen: &str) -> bool {
    match Board::from_fen(fen, false) {
        Ok(b) => {
            let (w, k) = (b.king(cozy_chess::Color::White), b.king(cozy_chess::Color::Black));
            let (df, dr) = ((w.file() as i32 - k.file() as i32).abs(), (w.rank() as i32 - k.rank() as i32).abs());
            df.max(dr) > 1
        }
        Err(_) => false,
    }
}

/// Random legal 3-men positions.
fn random_legal_positions(seed: u64, n: usize) -> Vec<String> {
    random_placements(seed, 4 * n).into_iter().filter(|f| is_legal(f)).take(n).collect()
}

/// Follows the printed moves from `start` to the end of the line, checking every step, and
/// returns the answers along the way (the last one is a checkmate).
fn follow_line(dir: &Path, start: &str) -> Vec<Answer> {
    let mut fen = start.to_string();
    let mut line = vec![probe_one(dir, &fen)];
    assert_ne!(line[0].wdl, 0, "{start} should be decisive");
    loop {
        let here = line.last().unwrap().clone();
        assert_well_formed(&here);
        let Some(mv) = here.mv.clone() else { break };
        assert!(!is_capture(&fen, &mv), "no captures are possible on a decisive line: {fen} {mv}");
        fen = play(&fen, &mv);
        let next = probe_one(dir, &fen);
        assert_eq!(next.wdl, -here.wdl, "{fen}: the result must flip after {mv} from {}", here.fen);
        assert_eq!(next.dtz.abs(), here.dtz.abs() - 1, "{fen}: |dtz| must drop by one after {mv} from {}", here.fen);
        line.push(next);
        assert!(line.len() <= 101, "line from {start} does not end");
    }
    let last = line.last().unwrap();
    assert_eq!((last.wdl, last.dtz), (-1, 0), "the line from {start} must end in checkmate: {last:?}");
    assert_eq!(board(&last.fen).status(), GameStatus::Won, "cozy-chess agrees that {} is checkmate", last.fen);
    assert_eq!(line.len() as i32 - 1, line[0].dtz.abs(), "plies to mate from {start} equal |dtz|");
    line
}

// ---------------------------------------------------------------------------------------
// gen
// ---------------------------------------------------------------------------------------

#[test]
fn gen_builds_requested_tables_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let out = gen_into(dir.path(), &["KQvK", "KRvK"], 2);
    assert_eq!(entries(dir.path()), set(&["KQvK.tbs", "KRvK.tbs"]), "no work or temporary files may be left");
    for name in ["KQvK.tbs", "KRvK.tbs"] {
        let bytes = std::fs::read(dir.path().join(name)).unwrap();
        assert!(bytes.len() > 4096, "{name} is only {} bytes", bytes.len());
        assert_eq!(&bytes[..8], b"TBSTREAM", "{name} starts with the magic");
    }
    assert!(out.stderr.contains("KQvK: built"), "stderr:\n{}", out.stderr);
    assert!(out.stderr.contains("KRvK: built"), "stderr:\n{}", out.stderr);
}

#[test]
fn gen_creates_missing_output_folders() {
    let dir = tempfile::tempdir().unwrap();
    let nested = dir.path().join("a").join("b");
    gen_into(&nested, &["KQvK"], 1);
    assert_eq!(entries(&nested), set(&["KQvK.tbs"]));
}

#[test]
fn gen_without_signature_builds_kqvkr_and_its_sub_endgames() {
    let dir = tempfile::tempdir().unwrap();
    gen_into(dir.path(), &[], 2);
    assert_eq!(entries(dir.path()), set(&["KQvK.tbs", "KRvK.tbs", "KQvKR.tbs", "KRvKQ.tbs"]));
}

#[test]
fn gen_accepts_every_spelling_and_is_deterministic() {
    // Plain form, one thread.
    let a = tempfile::tempdir().unwrap();
    gen_into(a.path(), &["KQvK", "KRvK"], 1);
    // Edwards form and a black-stronger signature (built as its colour swap), two threads.
    let b = tempfile::tempdir().unwrap();
    gen_into(b.path(), &["KQK", "KvKR"], 2);
    // Upper-case V separator.
    let c = tempfile::tempdir().unwrap();
    gen_into(c.path(), &["KRVK", "KQVK"], 2);
    for d in [&a, &b, &c] {
        assert_eq!(entries(d.path()), set(&["KQvK.tbs", "KRvK.tbs"]));
    }
    for name in ["KQvK.tbs", "KRvK.tbs"] {
        let x = std::fs::read(a.path().join(name)).unwrap();
        assert_eq!(x, std::fs::read(b.path().join(name)).unwrap(), "{name} differs between spellings/threads");
        assert_eq!(x, std::fs::read(c.path().join(name)).unwrap(), "{name} differs between spellings");
    }
}

/// Endings with pawns: `plan` and `gen` take them in both notations, and `probe` answers
/// with promotions as best moves.
#[test]
fn gen_plan_and_probe_take_pawns() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = run(&["plan", "KPvK", "--out", path_str(&out_dir)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("KPvK: 98304 positions/side"), "{}", out.stdout);
    let out = run(&["gen", "KPK", "--out", path_str(&out_dir)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out_dir.join("KPvK.tbs").exists() && out_dir.join("KQvK.tbs").exists());
    // White promotes at once; with black to move, the pawn is lost.
    let out = run(&["probe", "--tables", path_str(&out_dir), "8/4P3/8/8/8/8/k7/4K3 w - - 0 1"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim(), "8/4P3/8/8/8/8/k7/4K3 w - - 0 1\t1\t1\te7e8q\twin");
    let out = run(&["probe", "--tables", path_str(&out_dir), "--json", "8/8/8/8/8/8/4Pk2/K7 b - - 0 1"]);
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!((v["wdl"].as_i64(), v["dtz"].as_i64()), (Some(0), Some(0)), "{v}");
}

/// `plan` estimates each run's time by stage, and projects a 7-men pawnless endgame (beyond
/// this build) on a machine given by its threads, RAM and disk; bad machine figures are refused.
#[test]
fn plan_estimates_time_and_projects_seven_men() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = path_str(dir.path());
    let out = run(&["plan", "KQRvKQR", "--out", out_dir, "--threads", "2", "--ram", "24GiB"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let line = out.stdout.lines().find(|l| l.starts_with("KQRvKQR:")).unwrap();
    assert!(line.contains(", time ~") && line.contains("compaction"), "{line}");
    assert!(!line.contains("bound by the disk"), "{line}");
    // Twice the threads, half the time.
    let time =
        |out: &str| out.lines().find(|l| l.starts_with("total:")).unwrap().split("time ~").nth(1).unwrap().to_string();
    let four = run(&["plan", "KQRvKQR", "--out", out_dir, "--threads", "4", "--ram", "24GiB"]);
    let (t2, t4) = (time(&out.stdout), time(&four.stdout));
    let minutes = |t: &str| t.split(' ').next().unwrap().parse::<f64>().unwrap();
    assert!((minutes(&t2) / minutes(&t4) - 2.0).abs() < 0.05, "{t2} / {t4}");
    let seven = |extra: &[&str]| {
        let mut args = vec!["plan", "KQRBvKQR", "--out", out_dir];
        args.extend_from_slice(extra);
        run(&args)
    };
    let here = seven(&["--threads", "2", "--ram", "24GiB"]);
    assert_eq!(here.code, 0, "{}", here.stderr);
    assert!(here.stdout.contains("KQRBvKQR (7 men") && here.stdout.contains("687194767360 positions/side"));
    assert!(here.stdout.contains("bound by the disk"), "{}", here.stdout);
    let big = seven(&["--threads", "32", "--ram", "4TiB", "--disk-read", "3000", "--disk-write", "2000"]);
    assert!(big.stdout.contains("32 threads") && !big.stdout.contains("bound by the disk"), "{}", big.stdout);
    assert_error(&seven(&["--disk-read", "0"]), "a disk of no speed");
    assert_error(&seven(&["--ram", "lots"]), "RAM that is no size");
}

#[test]
fn gen_rejects_bad_signatures_cleanly() {
    let cases = [
        ("KPPPPPPPPPvK", "pawns"),
        ("KXvK", "unknown piece letter 'X'"),
        ("QvK", "king"),
        ("KQQQQvKR", "7 men"),
        ("KvK", "2 men"),
        ("KQvKKR", "king"),
        ("Kqvk", "unknown piece letter"),
        ("", "empty"),
    ];
    for (sig, needle) in cases {
        let dir = tempfile::tempdir().unwrap();
        let out_dir = dir.path().join("out");
        let out = run(&["gen", sig, "--out", path_str(&out_dir)]);
        assert_error(&out, &format!("gen {sig:?}"));
        assert!(out.stderr.contains(needle), "gen {sig:?}: stderr should mention {needle:?}:\n{}", out.stderr);
        if !sig.is_empty() {
            assert!(out.stderr.contains(sig), "gen {sig:?}: stderr should name the signature:\n{}", out.stderr);
        }
        assert!(out.stdout.is_empty(), "gen {sig:?} printed {:?}", out.stdout);
        assert!(entries(&out_dir).is_empty(), "gen {sig:?} must not write anything");
    }
}

#[test]
fn gen_with_one_bad_signature_builds_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["gen", "KQvK", "KXvK", "--out", path_str(dir.path())]);
    assert_error(&out, "gen KQvK KXvK");
    assert!(out.stderr.contains("KXvK"), "{}", out.stderr);
    assert!(!dir.path().join("KQvK.tbs").exists(), "signatures are all checked before any work");
}

/// Non-ASCII input in the Edwards form (no `v`) must be refused like any other bad letter.
/// Regression: up to be5155b `Material::parse` sliced `s[1..]` inside a multi-byte
/// character and panicked (fixed in 726b11b).
#[test]
fn gen_rejects_non_ascii_signatures_without_panicking() {
    for sig in ["ÄQK", "é", "ñKQK"] {
        let dir = tempfile::tempdir().unwrap();
        let mut cmd = Command::new(bin());
        let out = cmd.args(["gen", sig, "--out", path_str(dir.path())]).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !stderr.contains("panicked") && out.status.code() != Some(101),
            "`tbstream gen {sig} --out DIR` panics instead of reporting a bad signature:\n{stderr}"
        );
        assert!(!out.status.success(), "gen {sig:?} must fail");
        assert!(stderr.starts_with("error:"), "gen {sig:?}: {stderr}");
    }
}

#[test]
fn gen_rejects_zero_or_invalid_thread_counts() {
    let dir = tempfile::tempdir().unwrap();
    let out = run(&["gen", "KQvK", "--out", path_str(dir.path()), "--threads", "0"]);
    assert_error(&out, "--threads 0");
    assert!(out.stderr.contains("threads"), "{}", out.stderr);
    assert!(!dir.path().join("KQvK.tbs").exists(), "--threads 0 must not build anything");

    let out = run(&["gen", "KQvK", "--out", path_str(dir.path()), "--threads", "two"]);
    assert_ne!(out.code, 0, "--threads two must fail");
    assert!(out.stderr.contains("error"), "{}", out.stderr);
    assert!(!dir.path().join("KQvK.tbs").exists());
}

#[test]
fn gen_twice_reuses_finished_tables_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    gen_into(dir.path(), &["KQvK", "KRvK"], 2);
    let before: Vec<Vec<u8>> =
        ["KQvK.tbs", "KRvK.tbs"].iter().map(|n| std::fs::read(dir.path().join(n)).unwrap()).collect();
    let out = gen_into(dir.path(), &["KRvK", "KQK"], 2);
    assert!(out.stderr.contains("KQvK: already built"), "stderr:\n{}", out.stderr);
    assert!(out.stderr.contains("KRvK: already built"), "stderr:\n{}", out.stderr);
    assert!(!out.stderr.contains(": built in"), "nothing may be rebuilt:\n{}", out.stderr);
    let after: Vec<Vec<u8>> =
        ["KQvK.tbs", "KRvK.tbs"].iter().map(|n| std::fs::read(dir.path().join(n)).unwrap()).collect();
    assert!(before == after, "tables changed on the second run");
    assert_eq!(entries(dir.path()), set(&["KQvK.tbs", "KRvK.tbs"]));
}

#[test]
fn gen_rebuilds_damaged_tables() {
    let dir = tempfile::tempdir().unwrap();
    gen_into(dir.path(), &["KQvK"], 2);
    let path = dir.path().join("KQvK.tbs");
    let good = std::fs::read(&path).unwrap();

    // A flipped bit in the first section (sections start at 4096).
    let mut flipped = good.clone();
    flipped[4096 + 17] ^= 0x10;
    // A truncated file, and a file that is not a table at all.
    let truncated = good[..5000].to_vec();
    let garbage = b"hello, I am not a table".to_vec();

    for (what, bytes) in [("flipped", flipped), ("truncated", truncated), ("garbage", garbage)] {
        std::fs::write(&path, &bytes).unwrap();
        let out = gen_into(dir.path(), &["KQvK"], 2);
        assert!(out.stderr.contains("damaged"), "{what}: stderr should report the damage:\n{}", out.stderr);
        assert!(out.stderr.contains("KQvK: built"), "{what}: the table must be rebuilt:\n{}", out.stderr);
        assert!(std::fs::read(&path).unwrap() == good, "{what}: rebuilt table differs from the original");
    }
}

// ---------------------------------------------------------------------------------------
// probe: known positions
// ---------------------------------------------------------------------------------------

#[test]
fn probe_kqvk_win() {
    let fen = "8/8/8/8/8/2k5/8/KQ6 w - - 0 1";
    let a = probe_one(fixtures::kqvk_krvk(), fen);
    assert_eq!(a.wdl, 1, "{a:?}");
    assert!(a.dtz > 0 && a.dtz % 2 == 1, "{a:?}");
    assert!(a.dtz <= 19, "KQvK wins take at most 19 plies with white to move: {a:?}");
    let mv = a.mv.expect("a winning move");
    let child = probe_one(fixtures::kqvk_krvk(), &play(fen, &mv));
    assert_eq!((child.wdl, child.dtz), (-1, -(a.dtz - 1)), "after {mv}");
}

#[test]
fn probe_stalemate_checkmate_and_bare_kings() {
    let dir = fixtures::kqvk_krvk();
    let out = run(&[
        "probe",
        "--tables",
        path_str(dir),
        "k7/8/1QK5/8/8/8/8/8 b - - 0 1",
        "k7/1Q6/1K6/8/8/8/8/8 b - - 0 1",
        "K7/1q6/1k6/8/8/8/8/8 w - - 0 1",
        "8/8/8/8/8/2k5/8/K7 w - - 0 1",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", out.stdout);
    assert_eq!(lines[0], "k7/8/1QK5/8/8/8/8/8 b - - 0 1\t0\t0\t-\tdraw", "stalemate");
    assert_eq!(lines[1], "k7/1Q6/1K6/8/8/8/8/8 b - - 0 1\t-1\t0\t-\tloss", "black is checkmated");
    assert_eq!(lines[2], "K7/1q6/1k6/8/8/8/8/8 w - - 0 1\t-1\t0\t-\tloss", "white is checkmated (KvKQ)");
    // Bare kings need no table: a draw, with some legal king move.
    let kk = parse_answer(lines[3]);
    assert_eq!((kk.wdl, kk.dtz), (0, 0), "{kk:?}");
    play(&kk.fen, kk.mv.as_deref().expect("the king can move"));
    // Bare kings are answered even from a folder without any table.
    let empty = tempfile::tempdir().unwrap();
    let a = probe_one(empty.path(), "8/8/8/8/8/2k5/8/K7 w - - 0 1");
    assert_eq!((a.wdl, a.dtz), (0, 0));
}

#[test]
fn probe_black_to_move_losses_and_saving_captures() {
    let dir = fixtures::kqvk_krvk();
    // Kc2 in check from Qb2, which Ka1 protects: only Kd1 and Kd3 are legal, both lose.
    let a = probe_one(dir, "8/8/8/8/8/8/1Qk5/K7 b - - 0 1");
    assert_eq!(a.wdl, -1, "{a:?}");
    assert!(a.dtz < 0 && a.dtz % 2 == 0, "{a:?}");
    let mv = a.mv.clone().unwrap();
    assert!(mv == "c2d1" || mv == "c2d3", "only Kd1 and Kd3 are legal, got {mv}");
    // Kc3 in check from the unprotected Qb3: Kxb3 is the only move that saves the game.
    let a = probe_one(dir, "8/8/8/8/8/1Qk5/8/K7 b - - 0 1");
    assert_eq!((a.wdl, a.dtz, a.mv.as_deref()), (0, 0, Some("c3b3")), "{a:?}");
    // Same with an unprotected rook.
    let a = probe_one(dir, "8/8/8/8/8/1Rk5/8/K7 b - - 0 1");
    assert_eq!((a.wdl, a.dtz, a.mv.as_deref()), (0, 0, Some("c3b3")), "{a:?}");
    // With the rook protected (Ka2) black cannot capture and loses.
    let a = probe_one(dir, "8/8/8/8/8/1Rk5/K7/8 b - - 0 1");
    assert_eq!(a.wdl, -1, "{a:?}");
    assert_ne!(a.mv.as_deref(), Some("c3b3"), "Kxb3 is illegal when the rook is protected");
}

#[test]
fn probe_black_stronger_material_uses_the_colour_swap() {
    let dir = fixtures::kqvk_krvk();
    let a = probe_one(dir, "8/8/8/8/8/2K5/8/kq6 w - - 0 1");
    assert_eq!(a.wdl, -1, "{a:?}");
    assert!(a.dtz < 0 && a.dtz % 2 == 0, "negative even dtz expected: {a:?}");
    // It is the colour-swapped, mirrored image of KQvK with black to move.
    let mirror = probe_one(dir, "KQ6/8/2k5/8/8/8/8/8 b - - 0 1");
    assert_eq!((a.wdl, a.dtz), (mirror.wdl, mirror.dtz));
    // And black to move wins like white does in the image.
    let b = probe_one(dir, "8/8/8/8/8/2K5/8/kq6 b - - 0 1");
    let w = probe_one(dir, "8/8/8/8/8/2k5/8/KQ6 w - - 0 1");
    assert_eq!((b.wdl, b.dtz), (w.wdl, w.dtz));
    assert_eq!(b.wdl, 1);
}

#[test]
fn probe_best_moves_lead_to_mate_with_dtz_dropping_by_one() {
    let dir = fixtures::kqvk_krvk();
    let starts = [
        ("8/8/8/8/8/2k5/8/KQ6 w - - 0 1", 1),   // KQvK, white wins
        ("8/8/8/8/8/2k5/1R6/K7 w - - 0 1", 1),  // KRvK, one of the longest wins (31)
        ("8/8/8/8/8/8/1Rk5/K7 b - - 0 1", -1),  // KRvK, black to move loses in 32
        ("8/8/8/8/8/2K5/8/kq6 w - - 0 1", -1),  // KvKQ, white to move loses
        ("8/8/8/8/4K3/8/8/k6r b - - 0 1", 1),   // KvKR, black to move wins
        ("8/8/3k4/8/8/2R5/8/6K1 w - - 0 1", 1), // KRvK, another win
    ];
    for (fen, wdl) in starts {
        let line = follow_line(dir, fen);
        assert_eq!(line[0].wdl, wdl, "{fen}: {:?}", line[0]);
    }
    // The two longest KRvK starts take 31 and 32 plies.
    assert_eq!(probe_one(dir, "8/8/8/8/8/2k5/1R6/K7 w - - 0 1").dtz, 31);
    assert_eq!(probe_one(dir, "8/8/8/8/8/8/1Rk5/K7 b - - 0 1").dtz, -32);
}

#[test]
fn probe_respects_the_half_move_clock() {
    let dir = fixtures::kqvk_krvk();
    let win = |clock: u32| format!("8/8/8/8/8/2k5/1R6/K7 w - - {clock} 1");
    let loss = |clock: u32| format!("8/8/8/8/8/8/1Rk5/K7 b - - {clock} 1");
    let fens = vec![win(0), win(69), win(70), win(80), loss(0), loss(68), loss(69), loss(99)];
    let got: Vec<(i32, i32)> = probe_all(dir, &fens).iter().map(|a| (a.wdl, a.dtz)).collect();
    assert_eq!(
        got,
        vec![(1, 31), (1, 31), (0, 0), (0, 0), (-1, -32), (-1, -32), (0, 0), (0, 0)],
        "dtz 31 wins while clock + 31 <= 100; dtz 32 loses while clock + 32 <= 100"
    );
    // From clock 69 the line still ends in mate, exactly on the 100th half-move.
    let line = follow_line(dir, &win(69));
    let last = board(&line.last().unwrap().fen);
    assert_eq!(last.halfmove_clock(), 100);
    assert_eq!(last.status(), GameStatus::Won);
}

// ---------------------------------------------------------------------------------------
// probe: consistency over many positions
// ---------------------------------------------------------------------------------------

/// For random legal positions, the answers agree with a one-ply search over the answers of
/// the children (generated by cozy-chess), and the printed move is legal and optimal.
#[test]
fn probe_answers_agree_with_one_ply_search() {
    let dir = fixtures::kqvk_krvk();
    let parents = random_legal_positions(0x0007_b57e_4a11, 400);
    assert_eq!(parents.len(), 400);
    let mut all = parents.clone();
    let mut children: Vec<Vec<(String, bool)>> = Vec::new(); // (uci, capture) per parent
    for fen in &parents {
        let b = board(fen);
        let mut kids = Vec::new();
        for mv in legal_moves(&b) {
            let mut c = b.clone();
            c.play(mv);
            all.push(c.to_string());
            kids.push((mv.to_string(), b.piece_on(mv.to).is_some()));
        }
        children.push(kids);
    }
    let answers = probe_all(dir, &all);
    let mut next = parents.len();
    let mut seen = BTreeMap::new();
    for (i, fen) in parents.iter().enumerate() {
        let a = &answers[i];
        assert_well_formed(a);
        let kids = &children[i];
        let kid_answers: Vec<(&str, &Answer)> =
            kids.iter().enumerate().map(|(j, (uci, _))| (uci.as_str(), &answers[next + j])).collect();
        next += kids.len();
        *seen.entry(a.wdl).or_insert(0) += 1;
        if kids.is_empty() {
            assert_eq!(a.mv, None, "{fen}: no legal move, none may be printed");
            let expected = if board(fen).status() == GameStatus::Won { (-1, 0) } else { (0, 0) };
            assert_eq!((a.wdl, a.dtz), expected, "{fen}: mate or stalemate");
            continue;
        }
        let mv = a.mv.as_deref().unwrap_or_else(|| panic!("{fen}: has legal moves but none printed"));
        let (_, chosen) = kid_answers
            .iter()
            .find(|(uci, _)| *uci == mv)
            .unwrap_or_else(|| panic!("{fen}: printed move {mv} is not legal"));
        match a.wdl {
            1 => {
                let best = kid_answers.iter().filter(|(_, c)| c.wdl == -1).map(|(_, c)| c.dtz.abs()).min();
                assert_eq!(best, Some(a.dtz - 1), "{fen}: a win at {} needs a child lost at {}", a.dtz, a.dtz - 1);
                assert_eq!((chosen.wdl, chosen.dtz.abs()), (-1, a.dtz - 1), "{fen}: {mv} is not the fastest win");
            }
            -1 => {
                assert!(kid_answers.iter().all(|(_, c)| c.wdl == 1), "{fen}: a lost position has a saving move");
                let longest = kid_answers.iter().map(|(_, c)| c.dtz).max();
                assert_eq!(
                    longest,
                    Some(-a.dtz - 1),
                    "{fen}: a loss at {} needs a longest reply at {}",
                    a.dtz,
                    -a.dtz - 1
                );
                assert_eq!(chosen.dtz, -a.dtz - 1, "{fen}: {mv} is not the longest resistance");
            }
            _ => {
                assert!(kid_answers.iter().all(|(_, c)| c.wdl != -1), "{fen}: a draw has a winning move");
                assert!(kid_answers.iter().any(|(_, c)| c.wdl == 0), "{fen}: a draw has no drawing move");
                assert_eq!(chosen.wdl, 0, "{fen}: {mv} does not keep the draw");
            }
        }
    }
    assert_eq!(next, answers.len());
    // The sample holds wins, losses and draws alike (captures of a hanging piece draw).
    for wdl in [-1, 0, 1] {
        assert!(seen.get(&wdl).copied().unwrap_or(0) >= 10, "too few positions with wdl {wdl}: {seen:?}");
    }
}

/// Random placements, legal or not: probe answers exactly the positions cozy-chess accepts,
/// reports every other line by number, and still answers the rest.
#[test]
fn probe_accepts_exactly_the_legal_positions() {
    let dir = fixtures::kqvk_krvk();
    let fens = random_placements(0xc0ff_ee15_900d, 3000);
    let legal: Vec<bool> = fens.iter().map(|f| is_legal(f)).collect();
    let n_illegal = legal.iter().filter(|&&l| !l).count();
    assert!(n_illegal > 50, "the sample should include illegal placements ({n_illegal})");
    let out = run_with_stdin(&["probe", "--tables", path_str(dir)], Some(&(fens.join("\n") + "\n")));
    assert_eq!(out.code, 1, "some lines are illegal, so the exit code is 1:\n{}", out.stderr);
    let answered: Vec<String> = out.stdout.lines().map(|l| parse_answer(l).fen).collect();
    let expected: Vec<String> = fens.iter().zip(&legal).filter(|(_, &l)| l).map(|(f, _)| f.clone()).collect();
    assert!(answered == expected, "answered lines differ from the legal ones");
    let reported: BTreeSet<usize> = out
        .stderr
        .lines()
        .map(|l| {
            let rest = l.strip_prefix("error: line ").unwrap_or_else(|| panic!("unexpected stderr line {l:?}"));
            rest.split(':').next().unwrap().parse::<usize>().unwrap()
        })
        .collect();
    let illegal: BTreeSet<usize> = legal.iter().enumerate().filter(|(_, &l)| !l).map(|(i, _)| i + 1).collect();
    assert_eq!(reported, illegal, "the error lines must name exactly the illegal lines");
    assert_eq!(out.stderr.lines().count(), n_illegal, "one error line per bad line");
}

// ---------------------------------------------------------------------------------------
// probe: input handling and errors
// ---------------------------------------------------------------------------------------

#[test]
fn probe_reports_bad_lines_and_answers_the_others() {
    let dir = fixtures::kqvk_krvk();
    let input = [
        "8/8/8/8/8/2k5/8/KQ6 w - - 0 1",  // 1 good
        "not a fen at all",               // 2 garbage
        "",                               // 3 blank: skipped silently
        "8/8/8/8/8/2k5/8/KP6 w - - 0 1",  // 4 pawns
        "8/8/8/8/8/1Qk5/8/K7 w - - 0 1",  // 5 black (not to move) is in check
        "8/8/8/8/8/2k5/8/KB6 w - - 0 1",  // 6 KBvK table not built
        "k7/8/1QK5/8/8/8/8/8 b - - 0 1",  // 7 good
        "8/8/8/8/8/2k5/8/KQQ6 w - - 0 1", // 8 rank too long
        "8/8/8/8/8/2k5/8/KQ6 x - - 0 1",  // 9 bad side to move
    ]
    .join("\n");
    let out = run_with_stdin(&["probe", "--tables", path_str(dir)], Some(&input));
    assert_ne!(out.code, 0, "bad lines make the exit code non-zero");
    let answered: Vec<Answer> = out.stdout.lines().map(parse_answer).collect();
    let fens: Vec<&str> = answered.iter().map(|a| a.fen.as_str()).collect();
    assert_eq!(fens, ["8/8/8/8/8/2k5/8/KQ6 w - - 0 1", "k7/8/1QK5/8/8/8/8/8 b - - 0 1"]);
    assert_eq!(answered[0].wdl, 1);
    assert_eq!((answered[1].wdl, answered[1].dtz, answered[1].mv.clone()), (0, 0, None));
    let errors: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(errors.len(), 6, "one error per bad line:\n{}", out.stderr);
    for (line_no, needle) in
        [(2, "not a fen"), (4, "pawn"), (5, "check"), (6, "KBvK"), (8, "KQQ6"), (9, "side to move")]
    {
        let prefix = format!("error: line {line_no}:");
        let e = errors.iter().find(|e| e.starts_with(&prefix)).unwrap_or_else(|| panic!("no {prefix}\n{}", out.stderr));
        assert!(e.contains(needle), "{e:?} should mention {needle:?}");
    }
}

#[test]
fn probe_missing_table_folder_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-folder");
    let out = run(&["probe", "--tables", path_str(&missing), "8/8/8/8/8/2k5/8/KQ6 w - - 0 1"]);
    assert_error(&out, "probe of a missing folder");
    assert!(out.stderr.contains("no-such-folder"), "{}", out.stderr);
    assert!(out.stdout.is_empty());
    // Also when the positions come from stdin.
    let out = run_with_stdin(&["probe", "--tables", path_str(&missing)], Some("8/8/8/8/8/2k5/8/KQ6 w - - 0 1\n"));
    assert_error(&out, "probe of a missing folder (stdin)");
}

#[test]
fn probe_missing_or_wrong_table_file_fails_only_that_line() {
    let dir = tempfile::tempdir().unwrap();
    gen_into(dir.path(), &["KRvK"], 2);
    let krk = "8/8/8/8/8/2k5/1R6/K7 w - - 0 1";
    let kqk = "8/8/8/8/8/2k5/8/KQ6 w - - 0 1";
    // KQvK.tbs is missing.
    let out = run(&["probe", "--tables", path_str(dir.path()), kqk, krk]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.starts_with("error: line 1:") && out.stderr.contains("KQvK"), "{}", out.stderr);
    let answered: Vec<Answer> = out.stdout.lines().map(parse_answer).collect();
    assert_eq!(answered.len(), 1, "{}", out.stdout);
    assert_eq!((answered[0].fen.as_str(), answered[0].wdl, answered[0].dtz), (krk, 1, 31));
    // KQvK.tbs holds another endgame.
    std::fs::copy(dir.path().join("KRvK.tbs"), dir.path().join("KQvK.tbs")).unwrap();
    let out = run(&["probe", "--tables", path_str(dir.path()), kqk, krk]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.starts_with("error: line 1:") && out.stderr.contains("KRvK"), "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 1);
    // KQvK.tbs is truncated.
    let good = std::fs::read(fixtures::kqvk_krvk().join("KQvK.tbs")).unwrap();
    std::fs::write(dir.path().join("KQvK.tbs"), &good[..good.len() / 2]).unwrap();
    let out = run(&["probe", "--tables", path_str(dir.path()), kqk, krk]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.starts_with("error: line 1:"), "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 1);
    // Restored: both lines are answered.
    std::fs::write(dir.path().join("KQvK.tbs"), &good).unwrap();
    let out = run(&["probe", "--tables", path_str(dir.path()), kqk, krk]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.lines().count(), 2);
}

#[test]
fn probe_arguments_and_stdin_agree() {
    let dir = fixtures::kqvk_krvk();
    let fens = [
        "8/8/8/8/8/2k5/8/KQ6 w - - 0 1",
        "8/8/8/8/8/2k5/1R6/K7 w - - 0 1",
        "k7/1Q6/1K6/8/8/8/8/8 b - - 0 1",
        "8/8/8/8/8/2K5/8/kq6 w - - 0 1",
    ];
    let mut args = vec!["probe", "--tables", path_str(dir)];
    args.extend_from_slice(&fens);
    let from_args = run(&args);
    assert_eq!(from_args.code, 0, "{}", from_args.stderr);
    let from_stdin = run_with_stdin(&["probe", "--tables", path_str(dir)], Some(&(fens.join("\n") + "\n")));
    assert_eq!(from_stdin.code, 0, "{}", from_stdin.stderr);
    assert_eq!(from_args.stdout, from_stdin.stdout);
    assert_eq!(from_args.stdout.lines().count(), 4);
    // Windows line endings, surrounding spaces and a missing final newline are fine.
    let crlf = format!("  {}\r\n{}\r\n\r\n{}  \r\n{}", fens[0], fens[1], fens[2], fens[3]);
    let from_crlf = run_with_stdin(&["probe", "--tables", path_str(dir)], Some(&crlf));
    assert_eq!(from_crlf.code, 0, "{}", from_crlf.stderr);
    assert_eq!(from_crlf.stdout, from_args.stdout);
    // Short FENs (board and side to move only) mean clock 0.
    let short = probe_one(dir, "8/8/8/8/8/2k5/8/KQ6 w");
    let full = probe_one(dir, fens[0]);
    assert_eq!((short.wdl, short.dtz, short.mv), (full.wdl, full.dtz, full.mv));
    // Empty stdin: nothing to do, success.
    let empty = run_with_stdin(&["probe", "--tables", path_str(dir)], Some(""));
    assert_eq!((empty.code, empty.stdout.as_str()), (0, ""));
}

#[test]
fn probe_json_lines_parse_and_match_the_text_output() {
    let dir = fixtures::kqvk_krvk();
    let fens = [
        "8/8/8/8/8/2k5/8/KQ6 w - - 0 1",
        "k7/8/1QK5/8/8/8/8/8 b - - 0 1",
        "k7/1Q6/1K6/8/8/8/8/8 b - - 0 1",
        "8/8/8/8/8/2K5/8/kq6 w - - 0 1",
        "8/8/8/8/8/2k5/1R6/K7 w - - 80 1",
    ];
    let text = probe_all(dir, &fens.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let mut args = vec!["probe", "--tables", path_str(dir), "--json"];
    args.extend_from_slice(&fens);
    let out = run(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), fens.len());
    for (line, t) in lines.iter().zip(&text) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line:?}: {e}"));
        let obj = v.as_object().unwrap_or_else(|| panic!("{line:?} is not an object"));
        let keys: BTreeSet<&str> = obj.keys().map(|k| k.as_str()).collect();
        assert_eq!(keys, BTreeSet::from(["fen", "wdl", "dtz", "move", "category"]), "{line}");
        assert_eq!(obj["fen"].as_str(), Some(t.fen.as_str()));
        assert_eq!(obj["category"].as_str(), Some(t.category.as_str()), "{line}");
        assert_eq!(obj["wdl"].as_i64(), Some(t.wdl as i64), "{line}");
        assert_eq!(obj["dtz"].as_i64(), Some(t.dtz as i64), "{line}");
        match &t.mv {
            Some(m) => assert_eq!(obj["move"].as_str(), Some(m.as_str()), "{line}"),
            None => assert!(obj["move"].is_null(), "move must be null without a move: {line}"),
        }
    }
    // Known values, through JSON.
    let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(first["wdl"], 1);
    let stalemate: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!((stalemate["wdl"].as_i64(), stalemate["dtz"].as_i64()), (Some(0), Some(0)));
    assert!(stalemate["move"].is_null());
    let late: serde_json::Value = serde_json::from_str(lines[4]).unwrap();
    assert_eq!(late["wdl"], 0, "clock 80 turns the 31-ply win into a draw");

    // Bad lines still go to stderr, and the good ones stay valid JSON.
    let out = run_with_stdin(
        &["probe", "--tables", path_str(dir), "--json"],
        Some("garbage\n8/8/8/8/8/2k5/8/KQ6 w - - 0 1\n"),
    );
    assert_eq!(out.code, 1);
    assert!(out.stderr.starts_with("error: line 1:"), "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 1);
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(v["fen"], "8/8/8/8/8/2k5/8/KQ6 w - - 0 1");
}

// ---------------------------------------------------------------------------------------
// probe --line
// ---------------------------------------------------------------------------------------

/// One answered line of `probe --line`: the usual four fields, the line (5th field), and
/// the category (last).
fn parse_line_answer(line: &str) -> (Answer, Vec<String>) {
    let f: Vec<&str> = line.split('\t').collect();
    assert_eq!(f.len(), 6, "probe --line should print 6 tab-separated fields: {line:?}");
    let moves = if f[4] == "-" { Vec::new() } else { f[4].split(' ').map(str::to_string).collect() };
    assert!(moves.iter().all(|m| m.len() == 4), "UCI moves separated by single spaces: {line:?}");
    (parse_answer(&[f[0], f[1], f[2], f[3], f[5]].join("\t")), moves)
}

/// `probe --line` of FENs given as arguments, in order.
fn probe_lines(dir: &Path, fens: &[&str]) -> Vec<(Answer, Vec<String>)> {
    let mut args = vec!["probe", "--tables", path_str(dir), "--line"];
    args.extend_from_slice(fens);
    let out = run(&args);
    assert_eq!(out.code, 0, "probe --line failed:\n{}", out.stderr);
    let answers: Vec<_> = out.stdout.lines().map(parse_line_answer).collect();
    assert_eq!(answers.len(), fens.len(), "{}", out.stdout);
    for ((a, _), f) in answers.iter().zip(fens) {
        assert_eq!(&a.fen, f);
    }
    answers
}

/// Replays UCI moves with the library's board, checking each is legal; returns the final
/// position and whether each move captured.
fn replay(fen: &str, moves: &[String]) -> (tbstream::Position, Vec<bool>) {
    let mut pos = tbstream::Position::from_fen(fen).unwrap();
    let mut captures = Vec::new();
    for uci in moves {
        let mv = pos.parse_uci(uci).unwrap_or_else(|| panic!("{uci} is not legal in {}", pos.fen()));
        captures.push(mv.capture);
        pos = pos.play(mv);
    }
    (pos, captures)
}

#[test]
fn probe_line_of_a_win_ends_in_checkmate_after_dtz_plies() {
    let dir = fixtures::kqvk_krvk();
    let fens = [
        "8/8/8/8/8/2k5/1R6/K7 w - - 0 1",  // KRvK, white wins in 31
        "8/8/8/8/8/8/1Rk5/K7 b - - 0 1",   // KRvK, black loses in 32
        "8/8/8/8/4K3/8/8/k6r b - - 0 1",   // KvKR, black wins
        "8/8/8/8/8/2k5/8/KQ6 w - - 0 1",   // KQvK
        "8/8/8/8/8/2k5/1R6/K7 w - - 69 1", // mates exactly on the 100th half-move
    ];
    for (a, line) in probe_lines(dir, &fens) {
        assert_well_formed(&a);
        assert_ne!(a.wdl, 0, "{a:?}");
        assert_eq!(line.len() as i32, a.dtz.abs(), "{}: the line to mate takes |dtz| plies: {line:?}", a.fen);
        assert_eq!(line.first(), a.mv.as_ref(), "{}: the line starts with the printed move", a.fen);
        let (end, captures) = replay(&a.fen, &line);
        assert!(captures.iter().all(|&c| !c), "{}: no capture on the way to mate", a.fen);
        assert!(
            end.legal_moves().is_empty() && end.in_check(end.turn),
            "{}: ends in checkmate, not {}",
            a.fen,
            end.fen()
        );
        assert_eq!(board(&end.fen()).status(), GameStatus::Won, "cozy-chess agrees that {} is mate", end.fen());
        // The loser is the one mated.
        let loser_to_move = if a.wdl == 1 { line.len() % 2 == 1 } else { line.len() % 2 == 0 };
        assert!(loser_to_move, "{}: the side that was losing is mated", a.fen);
        // Every position along the line gives back the rest of the line.
        let mut fen = a.fen.clone();
        for (i, mv) in line.iter().enumerate().take(3) {
            let (b, rest) = probe_lines(dir, &[fen.as_str()]).pop().unwrap();
            assert_eq!(rest, line[i..], "{fen}");
            assert_eq!(b.dtz.abs(), a.dtz.abs() - i as i32);
            fen = play(&fen, mv);
        }
    }
    assert_eq!(probe_one(dir, fens[0]).dtz, 31);
}

#[test]
fn probe_line_ends_with_the_winning_capture() {
    let dir = fixtures::kqvkr();
    // The queen wins the rook in 5 plies (a check, then a skewer): KQvK is then a win.
    let fen = "1K6/8/3k4/7r/8/8/8/5Q2 w - - 0 1";
    let (a, line) = probe_lines(dir, &[fen]).pop().unwrap();
    assert_eq!((a.wdl, a.dtz), (1, 5), "{a:?}");
    assert_eq!(line.len(), 5, "{line:?}");
    let (end, captures) = replay(fen, &line);
    assert_eq!(captures, [false, false, false, false, true], "only the last move captures: {line:?}");
    assert!(is_capture(&play_all(fen, &line[..4]), &line[4]), "cozy-chess sees the capture");
    assert_eq!(end.halfmove, 0, "the capture resets the clock");
    let after = probe_one(dir, &end.fen());
    assert_eq!(after.wdl, -1, "black loses the KQvK that follows: {after:?}");
    // A win by capturing at once: a line of one move.
    let (b, line) = probe_lines(dir, &["8/8/2k5/8/8/8/r7/KQ6 w - - 0 1"]).pop().unwrap();
    assert_eq!((b.dtz, line), (1, vec!["a1a2".to_string()]));
}

/// Plays UCI moves one after the other with cozy-chess.
fn play_all(fen: &str, moves: &[String]) -> String {
    moves.iter().fold(fen.to_string(), |f, m| play(&f, m))
}

#[test]
fn probe_line_of_draws_and_mates_is_empty_and_plain_output_is_unchanged() {
    let dir = fixtures::kqvk_krvk();
    let fens = [
        "k7/8/1QK5/8/8/8/8/8 b - - 0 1",   // stalemate
        "k7/1Q6/1K6/8/8/8/8/8 b - - 0 1",  // checkmated
        "8/8/8/8/8/1Qk5/8/K7 b - - 0 1",   // draw by taking the queen
        "8/8/8/8/8/2k5/8/K7 w - - 0 1",    // bare kings
        "8/8/8/8/8/2k5/1R6/K7 w - - 80 1", // too late to win
    ];
    let with_line = probe_lines(dir, &fens);
    let plain = probe_all(dir, &fens.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    for ((a, line), p) in with_line.iter().zip(&plain) {
        assert_eq!(a, p, "--line keeps the first four fields");
        assert!(line.is_empty(), "{}: no line, got {line:?}", a.fen);
    }
    // Through stdin as well, and the 5th field is '-' for an empty line.
    let out = run_with_stdin(&["probe", "--tables", path_str(dir), "--line"], Some(&(fens.join("\n") + "\n")));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.lines().all(|l| l.split('\t').nth(4) == Some("-")), "{}", out.stdout);
    // Without --line, the output is the four fields and the category, byte for byte.
    let out = run(&["probe", "--tables", path_str(dir), "8/8/8/8/8/2k5/8/KR6 w - - 0 1"]);
    assert_eq!(out.stdout, "8/8/8/8/8/2k5/8/KR6 w - - 0 1\t1\t27\tb1d1\twin\n");
}

#[test]
fn probe_json_line_is_an_array_of_uci_moves() {
    let dir = fixtures::kqvk_krvk();
    let fens = ["8/8/8/8/8/2k5/1R6/K7 w - - 0 1", "k7/8/1QK5/8/8/8/8/8 b - - 0 1"];
    let text = probe_lines(dir, &fens);
    let mut args = vec!["probe", "--tables", path_str(dir), "--json", "--line"];
    args.extend_from_slice(&fens);
    let out = run(&args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines.len(), 2);
    for (line, (a, moves)) in lines.iter().zip(&text) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let obj = v.as_object().unwrap();
        let keys: BTreeSet<&str> = obj.keys().map(|k| k.as_str()).collect();
        assert_eq!(keys, BTreeSet::from(["fen", "wdl", "dtz", "move", "line", "category"]), "{line}");
        let got: Vec<&str> = obj["line"].as_array().unwrap().iter().map(|m| m.as_str().unwrap()).collect();
        assert_eq!(got, moves.iter().map(String::as_str).collect::<Vec<_>>(), "{line}");
        assert_eq!(obj["dtz"].as_i64(), Some(a.dtz as i64));
    }
    assert_eq!(text[0].1.len(), 31);
    assert!(text[1].1.is_empty());
}
