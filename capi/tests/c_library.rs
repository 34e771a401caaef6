//! The C library as an engine uses it: `tests/c/probe_fens.c`, compiled with the system `cc`
//! against the committed header and the library this build made, probes thousands of FENs
//! of tables with and without pawns (clocks and en passant included) through every probe;
//! its lines must equal what the Rust `Tablebase` answers through the calls of
//! `tbstream probe --json` (probe, best move, category). Eight threads on one handle must
//! agree with one; missing, damaged and truncated tables and bad positions must give the
//! failure values, not a crash.
//!
//! The tables ([`SIGNATURES`] and their sub-endgames) are built once per run of this
//! binary, in a temporary folder removed at exit.

#[path = "../../tests/it/cleanup.rs"]
mod cleanup;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;
use tbstream_root::file::compact::{Part, WDL_BLOCK_BITS};
use tbstream_root::{
    generate, Category, Color, GenOptions, Material, Piece, Position, Role, SilentProgress, Tablebase,
};
use tempfile::TempDir;

/// The tables the C program probes: pawnless and with pawns, 3 to 5 men; KBNvKN (15 s on
/// 2 cores) for its cursed wins and blessed losses, which no smaller table has.
const SIGNATURES: [&str; 7] = ["KQvK", "KRvK", "KPvK", "KQvKR", "KPvKP", "KRvKP", "KBNvKN"];

/// A temporary folder removed when the test binary exits (statics are never dropped).
fn shared_tempdir() -> TempDir {
    let dir = tempfile::tempdir().unwrap();
    cleanup::remove_at_exit(dir.path());
    dir
}

/// The folder of [`SIGNATURES`] and their sub-endgames, built on first use.
fn tables() -> &'static Path {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = shared_tempdir();
        let sigs: Vec<Material> = SIGNATURES.iter().map(|s| Material::parse(s).unwrap()).collect();
        generate(&sigs, &GenOptions::new(dir.path(), 2), &SilentProgress).unwrap();
        dir
    })
    .path()
}

/// A copy of [`tables`] to damage.
fn copy_of_tables() -> TempDir {
    let copy = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(tables()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "tbs") {
            std::fs::copy(&path, copy.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    copy
}

// =======================================================================================
// The C program
// =======================================================================================

/// The folder of `libtbstream_c.so` and `.a` of this build: the test binary lies in
/// `target/<profile>/deps`, the libraries in `target/<profile>` (cargo builds the library,
/// all its crate types, before the tests that depend on it).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    let dir = deps.parent().unwrap();
    for d in [dir, deps] {
        if d.join("libtbstream_c.so").is_file() && d.join("libtbstream_c.a").is_file() {
            return d.to_path_buf();
        }
    }
    panic!("libtbstream_c.so and libtbstream_c.a are not in {} nor {}", dir.display(), deps.display());
}

/// Compiles a C program of `tests/c` with `cc` (warnings are errors) against the committed
/// header and the library, shared (found through the rpath) or static.
fn compile(source: &str, static_link: bool) -> PathBuf {
    static OUT: OnceLock<TempDir> = OnceLock::new();
    let out = OUT.get_or_init(shared_tempdir).path();
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let libs = library_dir();
    let exe = out.join(format!("{}{}", source.trim_end_matches(".c"), if static_link { "-static" } else { "" }));
    let mut cc = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".to_string()));
    cc.args(["-std=c99", "-O2", "-Wall", "-Wextra", "-Werror", "-D_POSIX_C_SOURCE=200809L"])
        .arg("-I")
        .arg(manifest.join("include"))
        .arg(manifest.join("tests/c").join(source))
        .arg("-o")
        .arg(&exe);
    if static_link {
        // What `rustc --print native-static-libs` lists for this library on Linux; unused
        // sections dropped, so that a build with the root crate's `mpi` feature (CI's: the
        // distributed code is in the archive, never called by a probe) needs no MPI library.
        cc.arg("-Wl,--gc-sections").arg(libs.join("libtbstream_c.a"));
        cc.args(["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"]);
    } else {
        cc.arg("-L").arg(&libs).arg("-ltbstream_c").arg(format!("-Wl,-rpath,{}", libs.display())).arg("-lpthread");
    }
    let o = cc.output().expect("run cc");
    assert!(o.status.success(), "cc {source}: {}", String::from_utf8_lossy(&o.stderr));
    exe
}

/// `probe_fens` linked against the shared library, compiled once.
fn probe_fens() -> &'static Path {
    static EXE: OnceLock<PathBuf> = OnceLock::new();
    EXE.get_or_init(|| compile("probe_fens.c", false))
}

/// Runs a program with `args`, the FENs on its stdin; asserts that it was not killed (a
/// crash) and that nothing panicked.
fn run(exe: &Path, args: &[&Path], fens: &[String]) -> Output {
    let mut child = Command::new(exe)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = fens.join("\n") + "\n";
    let mut stdin = child.stdin.take().unwrap();
    // A program that stops early (a failed `tbs_init`) closes the pipe: not an error here.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.code().is_some(), "{} was killed: {stderr}", exe.display());
    assert!(!stderr.contains("panicked"), "{stderr}");
    out
}

/// The answer lines of `probe_fens` on `dir` (the last line, `largest N`, apart).
fn answers(dir: &Path, fens: &[String]) -> (Vec<String>, String) {
    let out = run(probe_fens(), &[dir], fens);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut lines: Vec<String> = String::from_utf8(out.stdout).unwrap().lines().map(str::to_string).collect();
    let largest = lines.pop().unwrap();
    assert_eq!(lines.len(), fens.len());
    (lines, largest)
}

// =======================================================================================
// The positions and what Rust answers
// =======================================================================================

/// A deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// A random legal position of `material` (pawns on ranks 2 to 7), a fresh clock.
fn random_position(rng: &mut Rng, material: &Material) -> Position {
    loop {
        let mut men = Vec::new();
        for color in [Color::White, Color::Black] {
            for &role in std::iter::once(&Role::King).chain(material.side(color)) {
                let sq = if role == Role::Pawn { 8 + rng.below(48) } else { rng.below(64) } as u8;
                men.push((sq, Piece { color, role }));
            }
        }
        let turn = if rng.below(2) == 0 { Color::White } else { Color::Black };
        if let Ok(pos) = Position::from_men(&men, turn) {
            return pos;
        }
    }
}

/// Positions without a legal move, rare among random ones: checkmates and stalemates.
const GAME_OVER: [&str; 6] = [
    "k7/1Q6/1K6/8/8/8/8/8 b - - 0 1",
    "k7/8/1QK5/8/8/8/8/8 b - - 0 1",
    "R6k/8/6K1/8/8/8/8/8 b - - 0 1",
    "7k/5K2/6R1/8/8/8/8/8 b - - 0 1",
    "k7/P7/1K6/8/8/8/8/8 b - - 0 1",
    "8/8/8/8/8/1k6/1p6/1K6 w - - 0 1",
];

/// `n` random positions of each of [`SIGNATURES`] (a clock of 0 for most, 1 to 99 for the
/// others), positions just after a double step that can be taken en passant, and
/// [`GAME_OVER`].
fn sample_fens(n: usize, seed: u64) -> Vec<String> {
    let mut rng = Rng(seed);
    let mut fens: Vec<String> = GAME_OVER.iter().map(|f| f.to_string()).collect();
    for sig in SIGNATURES {
        let material = Material::parse(sig).unwrap();
        for _ in 0..n {
            let mut pos = random_position(&mut rng, &material);
            if rng.below(4) == 0 {
                pos.halfmove = 1 + rng.below(99) as u32;
            }
            fens.push(pos.fen());
        }
    }
    // KPvKP with a pawn beside the other's, which steps two squares past it.
    let mut ep = 0;
    while ep < n / 10 {
        let (file, side) = (rng.below(8) as u8, rng.below(2) as u8);
        let beside = if file == 0 || (file < 7 && rng.below(2) == 0) { file + 1 } else { file - 1 };
        let (taker, stepper, turn) = match side {
            0 => (
                Piece { color: Color::White, role: Role::Pawn },
                Piece { color: Color::Black, role: Role::Pawn },
                Color::Black,
            ),
            _ => (
                Piece { color: Color::Black, role: Role::Pawn },
                Piece { color: Color::White, role: Role::Pawn },
                Color::White,
            ),
        };
        let (taker_sq, stepper_sq) = if side == 0 { (32 + file, 48 + beside) } else { (24 + file, 8 + beside) };
        let kings = [(rng.below(64) as u8, Color::White), (rng.below(64) as u8, Color::Black)];
        let mut men = vec![(taker_sq, taker), (stepper_sq, stepper)];
        men.extend(kings.map(|(s, color)| (s, Piece { color, role: Role::King })));
        let Ok(pos) = Position::from_men(&men, turn) else { continue };
        let Some(step) = pos.legal_moves().into_iter().find(|m| m.from == stepper_sq && m.from.abs_diff(m.to) == 16)
        else {
            continue;
        };
        let after = pos.play(step);
        if after.ep.is_some() {
            fens.push(after.fen());
            ep += 1;
        }
    }
    fens
}

/// Random KBNvKN positions that are cursed wins or blessed losses (about one in a hundred
/// is), `n` of each, found through the Rust `Tablebase`.
fn cursed_fens(tb: &Tablebase, n: usize, seed: u64) -> Vec<String> {
    let (mut rng, material) = (Rng(seed), Material::parse("KBNvKN").unwrap());
    let (mut cursed, mut blessed) = (Vec::new(), Vec::new());
    while cursed.len() < n || blessed.len() < n {
        let pos = random_position(&mut rng, &material);
        match tb.category(&pos).unwrap() {
            Some(Category::CursedWin) if cursed.len() < n => cursed.push(pos.fen()),
            Some(Category::BlessedLoss) if blessed.len() < n => blessed.push(pos.fen()),
            _ => {}
        }
    }
    cursed.into_iter().chain(blessed).collect()
}

/// The five-valued result the C library gives a position with its clock: a win or loss
/// within the 50-move rule as the clock stands, else what it is without the rule.
fn result_with_clock(tb: &Tablebase, pos: &Position) -> &'static str {
    match tb.probe(pos).unwrap().wdl {
        1 => "win",
        -1 => "loss",
        _ => match tb.category(pos).unwrap().unwrap() {
            Category::Win | Category::CursedWin => "cursed-win",
            Category::Loss | Category::BlessedLoss => "blessed-loss",
            Category::Draw => "draw",
        },
    }
}

/// The result for the other side.
fn flip(result: &str) -> &'static str {
    match result {
        "win" => "loss",
        "cursed-win" => "blessed-loss",
        "draw" => "draw",
        "blessed-loss" => "cursed-win",
        "loss" => "win",
        r => panic!("result {r}"),
    }
}

/// The line `probe_fens` must print for a legal FEN, from the Rust `Tablebase`: its
/// "fen:" field holds what `tbstream probe --json` prints (category, wdl, dtz, move).
fn expected_line(tb: &Tablebase, fen: &str) -> String {
    let pos = Position::from_fen(fen).unwrap();
    // `probe_one` of the command line: the probe, a best move, the category.
    let probe = tb.probe(&pos).unwrap();
    let best = tb.best_move(&pos).unwrap().map(|(m, _)| m);
    let category = tb.category(&pos).unwrap().expect("new tables mark their cursed results");
    let best_text = best.map_or("-".to_string(), |m| m.to_string());
    let result = result_with_clock(tb, &pos);
    let entry = |m| {
        let after = pos.play(m);
        format!("{m}/{}/{}", flip(result_with_clock(tb, &after)), -tb.probe(&after).unwrap().dtz)
    };
    let legal = pos.legal_moves();
    let root = match best {
        None => format!("0 -/{result}/0"),
        Some(b) => {
            let all: Vec<String> = legal.iter().map(|&m| entry(m)).collect();
            format!("{} {} {}", legal.len(), entry(b), all.join(" "))
        }
    };
    format!(
        "{fen}\tfen: {} {} {} {best_text}\tbits: {result} {}\troot: {root}",
        category.name(),
        probe.wdl,
        probe.dtz,
        probe.dtz
    )
}

/// The fields of an answer line.
fn fields(line: &str) -> Vec<&str> {
    line.split('\t').collect()
}

// =======================================================================================
// Tests
// =======================================================================================

/// Thousands of positions of seven tables, through every probe of the library, answer as
/// the Rust `Tablebase` does; the results cover every kind (the five categories, mates,
/// en passant, clocks, promotions), and at a clock of 0 the bitboard probe's result is the
/// category.
#[test]
fn c_answers_equal_the_rust_tablebase() {
    let tb = Tablebase::open(tables()).unwrap();
    let mut fens = sample_fens(600, 1);
    fens.extend(cursed_fens(&tb, 20, 1));
    let (lines, largest) = answers(tables(), &fens);
    assert_eq!(largest, "largest 5");
    let mut seen = std::collections::BTreeMap::<String, usize>::new();
    for (fen, line) in fens.iter().zip(&lines) {
        assert_eq!(line, &expected_line(&tb, fen), "{fen}");
        let f = fields(line);
        let category = f[1].split(' ').nth(1).unwrap();
        let result = f[2].split(' ').nth(1).unwrap();
        *seen.entry(format!("category {category}")).or_default() += 1;
        let pos = Position::from_fen(fen).unwrap();
        if pos.halfmove == 0 {
            assert_eq!(category, result, "{line}");
        } else {
            *seen.entry("clock".into()).or_default() += 1;
        }
        if pos.ep.is_some() {
            *seen.entry("en passant".into()).or_default() += 1;
        }
        if f[3].starts_with("root: 0 ") {
            *seen.entry("no move".into()).or_default() += 1;
        }
        if line.contains("q/") {
            *seen.entry("promotion".into()).or_default() += 1;
        }
        // A win or a loss keeps its result with the best move.
        if matches!(result, "win" | "loss") && !f[3].starts_with("root: 0 ") {
            let best = f[3].split(' ').nth(2).unwrap();
            assert_eq!(best.split('/').nth(1), Some(result), "{line}");
        }
    }
    println!("{seen:?}");
    assert!(fens.len() > 3000, "{}", fens.len());
    for kind in [
        "category win",
        "category loss",
        "category draw",
        "category cursed-win",
        "category blessed-loss",
        "clock",
        "en passant",
        "no move",
        "promotion",
    ] {
        assert!(seen.get(kind).copied().unwrap_or(0) >= 5, "too few of {kind}: {seen:?}");
    }
}

/// Eight threads probing through one handle at once give one thread's answers.
#[test]
fn eight_threads_agree_with_one() {
    let fens = sample_fens(150, 2);
    let out = run(probe_fens(), &[tables(), Path::new("8")], &fens);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.starts_with(&format!("agree {}\n", 8 * fens.len())), "{stdout}");
}

/// A static link works too, with the same answers.
#[test]
fn static_library_links_and_answers_alike() {
    let exe = compile("probe_fens.c", true);
    let fens = sample_fens(20, 3);
    let out = run(&exe, &[tables()], &fens);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(run(probe_fens(), &[tables()], &fens).stdout).unwrap()
    );
}

/// Malformed and illegal positions, castling rights and positions without a table are
/// failure values with their kind, in every probe; good positions after them still answer.
#[test]
fn bad_positions_and_missing_tables_are_failures() {
    let cases = [
        ("not a fen", "fen: failed:bad-position\tbits: unparsed\troot: unparsed"),
        (
            "8/8/8/8/8/2k5/8/KQ6 w KQ - 0 1",
            "fen: failed:bad-position\tbits: failed:bad-position failed:bad-position\troot: failed:bad-position",
        ),
        (
            "8/8/8/8/8/2k5/8/KK6 w - - 0 1",
            "fen: failed:bad-position\tbits: failed:bad-position failed:bad-position\troot: failed:bad-position",
        ),
        (
            "k7/8/8/8/8/8/8/Q1K5 w - - 0 1",
            "fen: failed:bad-position\tbits: failed:bad-position failed:bad-position\troot: failed:bad-position",
        ),
        (
            "7k/8/8/8/8/8/PPPPP3/K7 w - - 0 1",
            "fen: failed:bad-position\tbits: failed:bad-position failed:bad-position\troot: failed:bad-position",
        ),
        (
            "4k3/8/8/3pP3/8/8/8/4K3 w - e6 0 1",
            "fen: failed:bad-position\tbits: failed:bad-position failed:bad-position\troot: failed:bad-position",
        ),
        (
            "P3k3/8/8/8/8/8/8/4K3 w - - 0 1",
            "fen: failed:bad-position\tbits: failed:bad-position failed:bad-position\troot: failed:bad-position",
        ),
        (
            "8/8/8/4k3/8/8/8/KQQ5 w - - 0 1",
            "fen: failed:missing-table\tbits: failed:missing-table failed:missing-table\troot: failed:missing-table",
        ),
        (
            "8/8/3k4/8/8/8/1r6/KQR5 w - - 0 1",
            "fen: failed:missing-table\tbits: failed:missing-table failed:missing-table\troot: failed:missing-table",
        ),
    ];
    let good = "8/8/8/8/8/2k5/8/KQ6 w - - 0 1".to_string();
    let mut fens: Vec<String> = cases.iter().map(|(fen, _)| fen.to_string()).collect();
    fens.push(good.clone());
    let (lines, _) = answers(tables(), &fens);
    for ((fen, want), line) in cases.iter().zip(&lines) {
        assert_eq!(line, &format!("{fen}\t{want}"));
    }
    let tb = Tablebase::open(tables()).unwrap();
    assert_eq!(lines.last().unwrap(), &expected_line(&tb, &good));
}

/// A damaged block (one bit flipped, checksums left alone) and a truncated table are
/// failure values (`damaged-table`) in every probe that reads them; probes of other tables
/// still answer.
#[test]
fn damaged_and_truncated_tables_are_failures_not_crashes() {
    let copy = copy_of_tables();
    let dir = copy.path();
    let tb = Tablebase::open(tables()).unwrap();
    // A KQvKR position, white to move: its probe reads its block of white's classes.
    let fen = "8/8/3k4/8/8/8/1r6/K1Q5 w - - 0 1";
    let pos = Position::from_fen(fen).unwrap();
    let run_table = tb.run(&Material::parse("KQvKR").unwrap()).unwrap();
    let block = run_table.slot_of(&pos) >> WDL_BLOCK_BITS;
    let entry = run_table.file.header.parts[Part::WtmWdl as usize];
    let n_blocks = run_table.file.n_blocks(Part::WtmWdl) as u64;
    let path = dir.join("KQvKR.tbs");
    let mut bytes = std::fs::read(&path).unwrap();
    let end = |i: u64| u64::from_le_bytes(bytes[(entry.offset + 16 * i) as usize..][..8].try_into().unwrap());
    let (start, stop) = (if block == 0 { 0 } else { end(block - 1) }, end(block));
    let data = entry.offset + 16 * n_blocks;
    bytes[(data + (start + stop) / 2) as usize] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    // KRvK cut in half.
    let krvk = dir.join("KRvK.tbs");
    let len = std::fs::metadata(&krvk).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&krvk).unwrap().set_len(len / 2).unwrap();

    let others = ["8/8/8/8/8/2k5/8/KQ6 w - - 0 1", "8/8/4k3/3p4/8/4P3/8/4K3 w - - 0 1"];
    let mut fens = vec![fen.to_string(), "8/8/8/8/8/2k5/8/KR6 w - - 0 1".to_string()];
    fens.extend(others.iter().map(|f| f.to_string()));
    let (lines, largest) = answers(dir, &fens);
    assert_eq!(largest, "largest 5");
    let damaged =
        "fen: failed:damaged-table\tbits: failed:damaged-table failed:damaged-table\troot: failed:damaged-table";
    assert_eq!(lines[0], format!("{fen}\t{damaged}"));
    assert_eq!(lines[1], format!("{}\t{damaged}", fens[1]));
    for (fen, line) in others.iter().zip(&lines[2..]) {
        assert_eq!(line, &expected_line(&tb, fen));
    }
}

/// `tbs_init` refuses a folder without tables and a missing folder: the program gets NULL
/// and the kind `no-tables`.
#[test]
fn init_refuses_folders_without_tables() {
    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("notes.txt"), "no tables here").unwrap();
    for dir in [empty.path().to_path_buf(), empty.path().join("absent")] {
        let out = run(probe_fens(), &[&dir], &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("(no-tables)"), "{stderr}");
    }
}
