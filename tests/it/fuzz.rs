//! Fuzzing of the untrusted inputs (issue 4): the FEN parser, the signature parser and the
//! table reader must answer any input with `Ok` or `Err`, never a panic or an out-of-bounds
//! read.
//!
//! Each target mixes purely arbitrary input (any string, any bytes) with structured inputs that
//! get past the first checks: strings over the format's own alphabet, valid inputs with a few
//! mutations, and for table files a real table with flipped bits, truncations, extensions and
//! header fields overwritten (with the checksums optionally rewritten so the damage is not
//! caught at the door). Whatever parses is then exercised further (round trips, moves, probes).
//!
//! - `cargo test --release --test it fuzz::` runs each target for a small fixed number of cases.
//! - `scripts/fuzz.sh [SECONDS]` runs the `#[ignore]`d `timed_*` tests, which repeat batches of
//!   cases until `FUZZ_SECS` seconds have passed and print how many cases ran.
//!
//! A panic inside a case is caught and reported by proptest as a failure, shrunk to a minimal
//! input, with the panic's message and location; the failing seed is saved under
//! `proptest-regressions/` and replayed first on the next run.

use crate::fixtures;
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, FileFailurePersistence, TestCaseError, TestError, TestRunner};
use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};
use tbstream::file::cache::BlockCache;
use tbstream::file::compact::CompactTable;
use tbstream::file::{table_path, HEADER_LEN};
use tbstream::verify_run;
use tbstream::Layout;
use tbstream::Role;
use tbstream::{is_built, load_bitbase};
use tbstream::{Color, Material, Tablebase};
use tbstream::{Piece, Position};
use xxhash_rust::xxh3::xxh3_64;

// =======================================================================================
// Harness: fixed-size runs for `cargo test`, time-budgeted runs for `scripts/fuzz.sh`
// =======================================================================================

thread_local! {
    /// Set while a fuzz case runs on this thread: its panics are recorded, not printed.
    static IN_CASE: Cell<bool> = const { Cell::new(false) };
    /// Message and location of the last panic of a case on this thread.
    static LAST_PANIC: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Installs (once) a panic hook that records the message and location of a panic inside a
/// case, so that the failure report says where it happened; other panics (the harness's own
/// failure reports) go to the previous hook as usual.
fn install_panic_hook() {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if IN_CASE.with(|c| c.get()) {
                LAST_PANIC.with(|p| *p.borrow_mut() = info.to_string());
            } else {
                previous(info);
            }
        }));
    });
}

/// Runs one case, turning a panic into a test failure that carries the panic's message and
/// location (proptest then shrinks the input as for any failure).
fn guarded<T>(test: &impl Fn(T) -> Result<(), TestCaseError>, value: T) -> Result<(), TestCaseError> {
    IN_CASE.with(|c| c.set(true));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| test(value)));
    IN_CASE.with(|c| c.set(false));
    match result {
        Ok(r) => r,
        Err(_) => Err(TestCaseError::fail(format!("PANIC: {}", LAST_PANIC.with(|p| p.take())))),
    }
}

fn config(cases: u32) -> Config {
    Config {
        cases,
        // Failing seeds are saved in proptest-regressions/fuzz.txt and replayed first.
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/proptest-regressions/fuzz.txt"
        )))),
        // Shrinking gives up after a minute and reports the smallest input found so far
        // (set here: the environment's PROPTEST_MAX_SHRINK_ITERS may be small).
        max_shrink_time: 60_000,
        max_shrink_iters: 1_000_000,
        ..Config::default()
    }
}

fn report_failure<V: Debug>(name: &str, passed: u64, err: TestError<V>) -> ! {
    match err {
        TestError::Fail(why, input) => {
            panic!("fuzz {name}: FAILED ({passed} cases passed before this batch): {why}\nminimal failing input: {input:#?}")
        }
        TestError::Abort(why) => panic!("fuzz {name}: aborted ({passed} cases passed before this batch): {why}"),
    }
}

/// Runs `cases` cases of a target (the quick mode of `cargo test`).
fn fuzz_quick<S: Strategy>(name: &str, strategy: S, cases: u32, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S::Value: Debug,
{
    install_panic_hook();
    let mut runner = TestRunner::new(config(cases));
    if let Err(e) = runner.run(&strategy, |v| guarded(&test, v)) {
        report_failure(name, 0, e);
    }
}

/// Runs batches of cases with fresh random seeds until `FUZZ_SECS` (default 600) seconds have
/// passed, then prints the number of cases. Batches grow while they take under a second and
/// are cut to the time left, so the budget is kept to within about one case.
fn fuzz_timed<S: Strategy>(name: &str, strategy: S, test: impl Fn(S::Value) -> Result<(), TestCaseError>)
where
    S::Value: Debug,
{
    install_panic_hook();
    let secs: f64 = std::env::var("FUZZ_SECS").ok().and_then(|s| s.trim().parse().ok()).unwrap_or(600.0);
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(secs);
    let mut total: u64 = 0;
    let mut batch: u32 = 16;
    let mut per_case = Duration::from_millis(1);
    let mut next_report = start + Duration::from_secs(60);
    while Instant::now() < deadline {
        let left = deadline.saturating_duration_since(Instant::now());
        let fit = (left.as_secs_f64() / per_case.as_secs_f64().max(1e-7)).ceil().max(1.0);
        let cases = (batch as f64).min(fit) as u32;
        let t = Instant::now();
        let mut runner = TestRunner::new(config(cases));
        if let Err(e) = runner.run(&strategy, |v| guarded(&test, v)) {
            report_failure(name, total, e);
        }
        let took = t.elapsed();
        total += cases as u64;
        per_case = took / cases.max(1);
        if took < Duration::from_secs(1) {
            batch = batch.saturating_mul(2).min(1 << 20);
        } else if took > Duration::from_secs(4) {
            batch = (batch / 2).max(1);
        }
        if Instant::now() >= next_report {
            println!("fuzz {name}: {total} cases so far ({:.0} s)", start.elapsed().as_secs_f64());
            next_report += Duration::from_secs(60);
        }
    }
    println!("fuzz {name}: {total} cases in {:.1} s, no panic found", start.elapsed().as_secs_f64());
    println!("fuzz {name}: of which {}", stats_of(name));
}

/// How deep the cases of each target got (e.g. `table: verified`), shown by the timed runs.
static STATS: Mutex<BTreeMap<(&str, &str), u64>> = Mutex::new(BTreeMap::new());

fn count(target: &'static str, what: &'static str) {
    *STATS.lock().unwrap().entry((target, what)).or_default() += 1;
}

fn stats_of(target: &str) -> String {
    let stats = STATS.lock().unwrap();
    let parts: Vec<String> =
        stats.iter().filter(|((t, _), _)| *t == target).map(|((_, w), n)| format!("{w} {n}")).collect();
    parts.join(", ")
}

/// Fails the case (with a message) unless `cond` holds.
macro_rules! check {
    ($cond:expr, $($fmt:tt)+) => {
        if !$cond {
            return Err(TestCaseError::fail(format!($($fmt)+)));
        }
    };
}

// =======================================================================================
// Shared tables
// =======================================================================================

/// KQvK, KRvK, KQvKR and KRvKQ, built once per test binary.
fn good_tables() -> &'static Path {
    fixtures::kqvkr()
}

fn good_tablebase() -> &'static Tablebase {
    static TB: OnceLock<Tablebase> = OnceLock::new();
    TB.get_or_init(|| Tablebase::open(good_tables()).unwrap())
}

/// The good table files (name, bytes), read once.
fn good_files() -> &'static [(String, Vec<u8>)] {
    static FILES: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    FILES.get_or_init(|| {
        ["KRvK", "KQvK", "KQvKR", "KRvKQ"]
            .iter()
            .map(|n| (n.to_string(), std::fs::read(good_tables().join(format!("{n}.tbs"))).unwrap()))
            .collect()
    })
}

// =======================================================================================
// Positions: probing invariants shared by the FEN and table targets
// =======================================================================================

/// Probes a position and its best move; checks the answers are in range and consistent.
/// Returns whether the probe was answered.
fn exercise_probe(tb: &Tablebase, pos: &Position) -> Result<bool, TestCaseError> {
    let probe = match tb.probe(pos) {
        Ok(p) => p,
        Err(e) => {
            check!(!format!("{e:#}").is_empty(), "empty error");
            return Ok(false);
        }
    };
    check!((-1..=1).contains(&probe.wdl), "wdl {} out of range for {}", probe.wdl, pos.fen());
    check!(
        probe.dtz.signum() as i8 == probe.wdl || probe.dtz == 0,
        "dtz {probe:?} disagrees with wdl for {}",
        pos.fen()
    );
    check!(probe.dtz.abs() <= 124, "dtz {probe:?} beyond any 6-bit code for {}", pos.fen());
    let flipped = tb.probe(&pos.flipped());
    check!(flipped.as_ref().ok() == Some(&probe), "colour swap of {} probes {flipped:?}, not {probe:?}", pos.fen());
    if let Ok(Some((mv, child))) = tb.best_move(pos) {
        check!(pos.legal_moves().contains(&mv), "best move {mv} of {} is not legal", pos.fen());
        let again = tb.probe(&pos.play(mv));
        check!(again.as_ref().ok() == Some(&child), "best move {mv} of {}: {child:?} then {again:?}", pos.fen());
    }
    Ok(true)
}

/// Everything a parsed position offers: FEN round trip, moves, play, colour swap, material.
fn exercise_position(pos: &Position) -> Result<(), TestCaseError> {
    let fen = pos.fen();
    check!(Position::from_fen(&fen).as_ref() == Ok(pos), "FEN {fen} does not parse back to the same position");
    let men = pos.pieces().count();
    check!((2..=6).contains(&men), "{men} men accepted: {fen}");
    let flipped = pos.flipped();
    check!(flipped.flipped() == *pos, "flipping twice changes {fen}");
    check!(
        Position::from_fen(&flipped.fen()).as_ref() == Ok(&flipped),
        "colour swap {} of {fen} is refused",
        flipped.fen()
    );
    let material = pos.material();
    check!(flipped.material() == material.swapped(), "colour swap of {fen} has material {}", flipped.material());
    if men >= 3 {
        let text = material.to_string();
        check!(Material::parse(&text).as_ref() == Ok(&material), "material {text} of {fen} does not parse back");
    }
    let moves = pos.legal_moves();
    check!(moves.len() == flipped.legal_moves().len(), "{fen} and its colour swap have different move counts");
    for mv in &moves {
        check!(pos.parse_uci(&mv.to_string()) == Some(*mv), "move {mv} of {fen} does not parse back");
        let next = pos.play(*mv);
        let expected_clock = if mv.is_zeroing() { 0 } else { pos.halfmove.saturating_add(1) };
        check!(next.halfmove == expected_clock, "{mv} from {fen} sets the clock to {}", next.halfmove);
        check!(next.turn != pos.turn, "{mv} from {fen} keeps the side to move");
        check!(
            Position::from_fen(&next.fen()).as_ref() == Ok(&next),
            "{mv} from {fen} gives {}, which is refused",
            next.fen()
        );
    }
    if exercise_probe(good_tablebase(), pos)? {
        count("fen", "probed");
    }
    Ok(())
}

// =======================================================================================
// Target 1: FEN parser
// =======================================================================================

/// Numbers as they may appear in clock fields: small, at the u32 boundary, huge, signed, junk.
fn number() -> BoxedStrategy<String> {
    prop_oneof![
        4 => (0u32..120).prop_map(|n| n.to_string()),
        2 => prop::sample::select(vec![
            "4294967295", "4294967294", "4294967296", "18446744073709551615", "18446744073709551616",
            "99999999999999999999999999999999", "-0", "-1", "+7", "007", "0x10", "1e3", "", "٣",
        ])
        .prop_map(String::from),
        1 => any::<u64>().prop_map(|n| n.to_string()),
        1 => any::<i64>().prop_map(|n| n.to_string()),
    ]
    .boxed()
}

/// Pieces of a board field, mostly the ones the parser accepts.
fn piece_letter() -> impl Strategy<Value = char> {
    prop_oneof![
        24 => prop::sample::select(vec!['Q', 'R', 'B', 'N', 'q', 'r', 'b', 'n']),
        2 => prop::sample::select(vec!['K', 'k', 'P', 'p']),
        1 => any::<char>(),
    ]
}

/// A board field from men on squares (later ones overwrite earlier ones); runs of empty
/// squares are sometimes split into several digits ("44" for "8").
fn board_field(men: &[(u8, char)], split: &[bool]) -> String {
    let mut cells = [None; 64];
    for &(sq, c) in men {
        cells[sq as usize % 64] = Some(c);
    }
    let mut s = String::new();
    let mut k = 0;
    for rank in (0..8).rev() {
        let mut empty = 0u32;
        for file in 0..8 {
            match cells[rank * 8 + file] {
                None => {
                    empty += 1;
                    if split.get(k).copied().unwrap_or(false) {
                        s.push_str(&empty.to_string());
                        empty = 0;
                    }
                    k += 1;
                }
                Some(c) => {
                    if empty > 0 {
                        s.push_str(&empty.to_string());
                        empty = 0;
                    }
                    s.push(c);
                }
            }
        }
        if empty > 0 {
            s.push_str(&empty.to_string());
        }
        if rank > 0 {
            s.push('/');
        }
    }
    s
}

/// A FEN built from men on squares: two kings (usually), up to 6 more men, a side to move
/// and 0 to 4 further fields, sometimes odd ones.
fn placed_fen() -> impl Strategy<Value = String> {
    let men = (0u8..64, 0u8..64, prop::bool::weighted(0.9), prop::collection::vec((0u8..64, piece_letter()), 0..6));
    let field = prop_oneof![
        20 => Just("-".to_string()),
        1 => prop::sample::select(vec!["KQkq", "K", "e3", "a6", "--", "w", "b"]).prop_map(String::from),
        1 => number(),
    ];
    let turn = prop_oneof![20 => prop::sample::select(vec!["w", "b"]).prop_map(String::from), 1 => number()];
    let clock = prop_oneof![6 => (0u32..120).prop_map(|n| n.to_string()), 1 => number()];
    let splits = prop::collection::vec(prop::bool::weighted(0.1), 0..64);
    (men, splits, turn, field.clone(), field, clock.clone(), clock, 0usize..5).prop_map(
        |((wk, bk, kings, others), split, turn, castle, ep, half, full, n)| {
            let mut all = others;
            if kings {
                all.insert(0, (wk, 'K'));
                all.insert(0, (bk, 'k'));
            }
            let mut fen = format!("{} {turn}", board_field(&all, &split));
            for f in [castle, ep, half, full].iter().take(n) {
                fen.push(' ');
                fen.push_str(f);
            }
            fen
        },
    )
}

/// Tokens of the FEN alphabet, plus numbers and a few odd characters.
fn fen_token() -> BoxedStrategy<String> {
    prop_oneof![
        12 => prop::sample::select(vec![
            "K", "Q", "R", "B", "N", "P", "k", "q", "r", "b", "n", "p", "1", "2", "3", "4", "5", "6", "7", "8",
            "0", "9", "/", " ", " ", "w", "b", "-", "8/", " w ", " b ", " - - ",
        ])
        .prop_map(String::from),
        2 => number(),
        1 => prop::sample::select(vec!["\t", "\n", "\u{a0}", "\u{3000}", "Ä", "K", "８", "\u{0}", "/", "//"])
            .prop_map(String::from),
        1 => any::<char>().prop_map(String::from),
    ]
    .boxed()
}

/// One edit of a string, at a character position.
#[derive(Clone, Debug)]
enum Edit {
    Replace(Index, String),
    Insert(Index, String),
    Delete(Index, usize),
    /// Swaps two whitespace-separated fields.
    SwapFields(Index, Index),
    /// Repeats a field.
    DuplicateField(Index),
}

fn edit(token: BoxedStrategy<String>) -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<Index>(), token.clone()).prop_map(|(i, t)| Edit::Replace(i, t)),
        (any::<Index>(), token).prop_map(|(i, t)| Edit::Insert(i, t)),
        (any::<Index>(), 1usize..4).prop_map(|(i, n)| Edit::Delete(i, n)),
        (any::<Index>(), any::<Index>()).prop_map(|(i, j)| Edit::SwapFields(i, j)),
        any::<Index>().prop_map(Edit::DuplicateField),
    ]
}

fn apply_edits(text: &str, edits: &[Edit]) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    for e in edits {
        match e {
            Edit::Replace(i, t) if !chars.is_empty() => {
                let at = i.index(chars.len());
                chars.splice(at..at + 1, t.chars());
            }
            Edit::Insert(i, t) => {
                let at = i.index(chars.len() + 1);
                chars.splice(at..at, t.chars());
            }
            Edit::Delete(i, n) if !chars.is_empty() => {
                let at = i.index(chars.len());
                chars.drain(at..(at + n).min(chars.len()));
            }
            Edit::SwapFields(i, j) => {
                let s: String = chars.iter().collect();
                let mut fields: Vec<&str> = s.split(' ').collect();
                let (a, b) = (i.index(fields.len()), j.index(fields.len()));
                fields.swap(a, b);
                chars = fields.join(" ").chars().collect();
            }
            Edit::DuplicateField(i) => {
                let s: String = chars.iter().collect();
                let mut fields: Vec<&str> = s.split(' ').collect();
                let a = i.index(fields.len());
                fields.insert(a, fields[a]);
                chars = fields.join(" ").chars().collect();
            }
            _ => {}
        }
    }
    chars.into_iter().collect()
}

/// Arbitrary strings and bytes, FEN-alphabet soup, and valid-looking FENs with edits.
fn fen_input() -> impl Strategy<Value = String> {
    let tokens = prop::collection::vec(fen_token(), 0..60).prop_map(|t| t.concat());
    prop_oneof![
        1 => any::<String>(),
        1 => prop::collection::vec(any::<u8>(), 0..120).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        2 => tokens,
        4 => placed_fen(),
        4 => (placed_fen(), prop::collection::vec(edit(fen_token()), 1..4)).prop_map(|(f, e)| apply_edits(&f, &e)),
    ]
}

fn fen_case(fen: String) -> Result<(), TestCaseError> {
    match Position::from_fen(&fen) {
        Ok(pos) => {
            count("fen", "parsed");
            exercise_position(&pos)
        }
        Err(e) => {
            check!(!e.to_string().is_empty(), "empty error for {fen:?}");
            Ok(())
        }
    }
}

#[test]
fn fen() {
    fuzz_quick("fen", fen_input(), 3000, fen_case);
}

#[test]
#[ignore = "time-budgeted: scripts/fuzz.sh"]
fn timed_fen() {
    good_tablebase();
    fuzz_timed("fen", fen_input(), fen_case);
}

// =======================================================================================
// Target 2: signature parser
// =======================================================================================

fn signature_token() -> BoxedStrategy<String> {
    prop_oneof![
        12 => prop::sample::select(vec![
            "K", "Q", "R", "B", "N", "P", "k", "q", "r", "b", "n", "p", "v", "V", " ", "KQ", "Kv", "vK",
        ])
        .prop_map(String::from),
        2 => prop::sample::select(vec![
            "Ä", "K", "ｖ", "Ｋ", "\u{2003}", "\t", "\n", "\u{0}", "ß", "ǅ", "\u{301}", "é", "x", "X", "1", "-",
        ])
        .prop_map(String::from),
        1 => any::<char>().prop_map(String::from),
    ]
    .boxed()
}

/// A signature written one of the accepted ways (`v`, `V`, Edwards form), pieces in any
/// order, possibly too many, with surrounding whitespace.
fn written_signature() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec!['Q', 'R', 'B', 'N']);
    let side = prop::collection::vec(piece, 0..5);
    let pad = prop::sample::select(vec!["", "", "", " ", "\t", "\n", " \u{3000}"]);
    (side.clone(), side, prop::sample::select(vec!["v", "V", ""]), pad.clone(), pad).prop_map(|(w, b, sep, l, r)| {
        let w: String = w.into_iter().collect();
        let b: String = b.into_iter().collect();
        format!("{l}K{w}{sep}K{b}{r}")
    })
}

fn signature_input() -> impl Strategy<Value = String> {
    let tokens = prop::collection::vec(signature_token(), 0..16).prop_map(|t| t.concat());
    prop_oneof![
        1 => any::<String>(),
        1 => prop::collection::vec(any::<u8>(), 0..24).prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        3 => tokens,
        3 => written_signature(),
        3 => (written_signature(), prop::collection::vec(edit(signature_token()), 1..3))
            .prop_map(|(s, e)| apply_edits(&s, &e)),
    ]
}

fn signature_case(text: String) -> Result<(), TestCaseError> {
    let parsed = Material::parse(&text);
    check!(text.parse::<Material>() == parsed, "FromStr and parse disagree on {text:?}");
    let m = match parsed {
        Ok(m) => m,
        Err(e) => {
            let msg = e.to_string();
            check!(!msg.is_empty(), "empty error for {text:?}");
            // Every refusal but the empty one names the signature.
            check!(text.trim().is_empty() || msg.contains(text.as_str()), "error {msg:?} does not name {text:?}");
            return Ok(());
        }
    };
    count("signature", "accepted");
    check!((3..=6).contains(&m.men()), "{text:?} accepted with {} men", m.men());
    let shown = m.to_string();
    let (w, b) = shown.split_once('v').unwrap_or_default();
    let well_formed = |s: &str| s.starts_with('K') && s[1..].chars().all(|c| "QRBNP".contains(c));
    check!(well_formed(w) && well_formed(b), "{text:?} is shown as {shown:?}");
    check!(Material::parse(&shown).as_ref() == Ok(&m), "{text:?} -> {shown:?} does not parse back");
    let edwards = shown.replace('v', "");
    check!(Material::parse(&edwards).as_ref() == Ok(&m), "Edwards form {edwards:?} of {text:?} differs");
    check!(Material::parse(&shown.replace('v', "V")).as_ref() == Ok(&m), "V form of {text:?} differs");
    check!(m.swapped().swapped() == m, "double colour swap changes {shown}");
    check!(Material::parse(&m.swapped().to_string()).as_ref() == Ok(&m.swapped()), "swap of {shown} does not parse");
    let closure = m.closure();
    for run in m.runs_of_signature() {
        check!(closure.contains(&run), "closure of {shown} lacks its run {run}");
    }
    for run in &closure {
        check!(!run.white_bare() && run.men() <= m.men(), "closure of {shown} holds {run}");
        if run.has_pawns() {
            continue;
        }
        let layout = Layout::new(run);
        check!(layout.n_slots == 10u64 << (6 * (run.men() - 1)), "layout of {run} has {} slots", layout.n_slots);
    }
    Ok(())
}

#[test]
fn signature() {
    fuzz_quick("signature", signature_input(), 20_000, signature_case);
}

#[test]
#[ignore = "time-budgeted: scripts/fuzz.sh"]
fn timed_signature() {
    fuzz_timed("signature", signature_input(), signature_case);
}

// =======================================================================================
// Target 3: table reader
// =======================================================================================

/// What the damaged file starts from.
#[derive(Clone, Debug)]
enum Base {
    /// One of the good tables (index into `good_files`).
    Good(usize),
    /// Arbitrary bytes.
    Bytes(Vec<u8>),
    /// The magic and version, then arbitrary bytes (a header checksum may be fixed later).
    Magic(Vec<u8>),
}

/// Header fields holding 64-bit numbers: `n_slots`, and each of the 5 sections' offset,
/// length, checksum.
const U64_FIELDS: [usize; 16] = [32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 120, 128, 136, 144, 152];
/// Sections of a compact table, and how many of them are block sections.
const SECTIONS: usize = 5;
const BLOCK_SECTIONS: usize = 3;

#[derive(Clone, Debug)]
enum Damage {
    FlipBit(Index, u8),
    SetByte(Index, u8),
    /// A byte of the header.
    SetHeaderByte(u8, u8),
    /// A 64-bit header field (index into `U64_FIELDS`).
    SetField(usize, u64),
    /// Version (8) or header length (10).
    SetU16(bool, u16),
    /// The signature field, NUL-padded or cut at 16 bytes.
    SetName(Vec<u8>),
    /// A byte inside one section's data.
    SetSectionByte(usize, Index, u8),
    Truncate(Index),
    TruncateTo(usize),
    Extend(Vec<u8>),
    ExtendZeros(usize),
}

/// Where the damaged file is put in the table folder.
#[derive(Clone, Debug)]
enum SaveAs {
    /// Under the name of the table it came from.
    Own,
    /// Under the signature its header names (if readable).
    HeaderName,
    /// Under another run's name.
    Other(&'static str),
}

#[derive(Clone, Debug)]
struct TableCase {
    base: Base,
    damage: Vec<Damage>,
    /// Rewrite the blocks' checksums and the section checksums after the damage (so only
    /// the contents are wrong).
    fix_sections: bool,
    /// Rewrite the header checksum after the damage.
    fix_header: bool,
    save_as: SaveAs,
    /// Reads at random slots (white to move?, raw slot, reduced modulo the slot count).
    reads: Vec<(bool, u64)>,
    /// Positions to probe: material, squares of the men (kings first), black to move, clock.
    probes: Vec<(usize, Vec<u8>, bool, u32)>,
    /// Run the independent verifier over the folder (3-men runs only; slower).
    verify_run: bool,
}

const RUN_NAMES: [&str; 9] = ["KRvK", "KQvK", "KQvKR", "KRvKQ", "KNvK", "KBvK", "KQQvK", "KQRvKR", "KvKR"];
const PROBE_MATERIALS: [&str; 7] = ["KRvK", "KQvK", "KQvKR", "KRvKQ", "KvKR", "KNvK", "KvK"];

fn interesting_u64() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => prop::sample::select(vec![
            0u64, 1, 8, 63, 64, 255, 256, 4095, 4096, 4097, 8192, 40960, 83968, 2621440, 4591616,
            u32::MAX as u64, 1 << 32, 1 << 40, 1 << 62, 1 << 63, i64::MAX as u64, u64::MAX - 4095, u64::MAX - 1, u64::MAX,
        ]),
        1 => any::<u64>(),
    ]
}

fn damage() -> impl Strategy<Value = Damage> {
    let name = prop_oneof![
        3 => prop::sample::select(RUN_NAMES.to_vec()).prop_map(|s| s.as_bytes().to_vec()),
        1 => prop::sample::select(vec!["KQvKQ", "KvK", "KQQQQvK", "KPvK", "QvK", "", "KRvK\u{0}x", "KRRRRRRRRRRRRRRRRvK"])
            .prop_map(|s| s.as_bytes().to_vec()),
        1 => prop::collection::vec(any::<u8>(), 0..20),
    ];
    prop_oneof![
        3 => (any::<Index>(), 0u8..8).prop_map(|(i, b)| Damage::FlipBit(i, b)),
        2 => (any::<Index>(), any::<u8>()).prop_map(|(i, v)| Damage::SetByte(i, v)),
        2 => (any::<u8>(), any::<u8>()).prop_map(|(i, v)| Damage::SetHeaderByte(i, v)),
        4 => (0..U64_FIELDS.len(), interesting_u64()).prop_map(|(f, v)| Damage::SetField(f, v)),
        1 => (any::<bool>(), prop_oneof![Just(0u16), Just(1), Just(2), Just(256), Just(u16::MAX), any::<u16>()])
            .prop_map(|(f, v)| Damage::SetU16(f, v)),
        2 => name.prop_map(Damage::SetName),
        4 => (0usize..SECTIONS, any::<Index>(), any::<u8>()).prop_map(|(s, i, v)| Damage::SetSectionByte(s, i, v)),
        2 => any::<Index>().prop_map(Damage::Truncate),
        1 => prop_oneof![0usize..300, Just(4096), Just(4097), Just(8191)].prop_map(Damage::TruncateTo),
        1 => prop::collection::vec(any::<u8>(), 1..64).prop_map(Damage::Extend),
        1 => prop_oneof![Just(1usize), Just(4095), Just(4096), 1usize..10_000].prop_map(Damage::ExtendZeros),
    ]
}

fn table_case() -> impl Strategy<Value = TableCase> {
    let base = prop_oneof![
        // The 3-men files are small, so they make up most cases.
        6 => (0usize..2).prop_map(Base::Good),
        1 => (2usize..4).prop_map(Base::Good),
        1 => prop::collection::vec(any::<u8>(), 0..600).prop_map(Base::Bytes),
        1 => prop::collection::vec(any::<u8>(), 0..600).prop_map(Base::Magic),
    ];
    let save_as = prop_oneof![
        4 => Just(SaveAs::Own),
        1 => Just(SaveAs::HeaderName),
        1 => prop::sample::select(RUN_NAMES.to_vec()).prop_map(SaveAs::Other),
    ];
    let probe = (
        0..PROBE_MATERIALS.len(),
        prop::collection::vec(0u8..64, 4),
        any::<bool>(),
        prop_oneof![
            4 => Just(0u32),
            2 => 0u32..120,
            1 => Just(u32::MAX),
        ],
    );
    (
        base,
        prop::collection::vec(damage(), 0..4),
        any::<bool>(),
        prop::bool::weighted(0.8),
        save_as,
        prop::collection::vec((any::<bool>(), any::<u64>()), 0..16),
        prop::collection::vec(probe, 0..6),
        prop::bool::weighted(0.02),
    )
        .prop_map(|(base, damage, fix_sections, fix_header, save_as, reads, probes, verify_run)| TableCase {
            base,
            damage,
            fix_sections,
            fix_header,
            save_as,
            reads,
            probes,
            verify_run,
        })
}

fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().unwrap()))
}

fn put(b: &mut [u8], o: usize, bytes: &[u8]) {
    if let Some(dst) = b.get_mut(o..o + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

/// The damaged file's bytes and the name of the table it came from.
fn damaged_bytes(case: &TableCase) -> (Vec<u8>, &'static str) {
    let (mut bytes, own) = match &case.base {
        Base::Good(i) => (good_files()[*i].1.clone(), ["KRvK", "KQvK", "KQvKR", "KRvKQ"][*i]),
        Base::Bytes(b) => (b.clone(), "KRvK"),
        Base::Magic(b) => {
            let mut v = b"TBSTREAM\x03\x00".to_vec();
            v.extend_from_slice(b);
            (v, "KRvK")
        }
    };
    for d in &case.damage {
        let len = bytes.len();
        match d {
            Damage::FlipBit(i, bit) if len > 0 => bytes[i.index(len)] ^= 1 << bit,
            Damage::SetByte(i, v) if len > 0 => bytes[i.index(len)] = *v,
            Damage::SetHeaderByte(i, v) => put(&mut bytes, *i as usize, &[*v]),
            Damage::SetField(f, v) => put(&mut bytes, U64_FIELDS[*f], &v.to_le_bytes()),
            Damage::SetU16(version, v) => put(&mut bytes, if *version { 8 } else { 10 }, &v.to_le_bytes()),
            Damage::SetName(name) => {
                let mut field = [0u8; 16];
                let n = name.len().min(16);
                field[..n].copy_from_slice(&name[..n]);
                put(&mut bytes, 16, &field);
            }
            Damage::SetSectionByte(s, i, v) => {
                let e = 40 + 24 * s;
                if let (Some(off), Some(l)) = (u64_at(&bytes, e), u64_at(&bytes, e + 8)) {
                    if l > 0 && off.checked_add(l).is_some_and(|end| end <= len as u64) {
                        bytes[off as usize + i.index(l as usize)] = *v;
                    }
                }
            }
            Damage::Truncate(i) => bytes.truncate(i.index(len + 1)),
            Damage::TruncateTo(n) => bytes.truncate(*n),
            Damage::Extend(b) => bytes.extend_from_slice(b),
            Damage::ExtendZeros(n) => bytes.resize(len + n, 0),
            _ => {}
        }
    }
    if case.fix_sections && bytes.len() >= HEADER_LEN {
        fix_checksums(&mut bytes);
    }
    if case.fix_header && bytes.len() >= HEADER_LEN {
        let sum = xxh3_64(&bytes[..248]);
        put(&mut bytes, 248, &sum.to_le_bytes());
    }
    (bytes, own)
}

/// Rewrites every block's checksum in its index (where the index and the block lie inside
/// the file), then every section's checksum: the index's for a block section, the whole
/// section's for the others (docs/FORMAT.md, Part I).
fn fix_checksums(bytes: &mut [u8]) {
    let n_slots = u64_at(bytes, 32).unwrap();
    for s in 0..SECTIONS {
        let e = 40 + 24 * s;
        let (off, l) = (u64_at(bytes, e).unwrap(), u64_at(bytes, e + 8).unwrap());
        let Some(end) = off.checked_add(l).filter(|&end| end <= bytes.len() as u64) else { continue };
        let covered = if s < BLOCK_SECTIONS {
            let bits = if s == 1 { 16 } else { 18 };
            let n = n_slots.div_ceil(1 << bits);
            let Some(index_len) = n.checked_mul(16).filter(|&i| i <= l) else { continue };
            let data = off + index_len;
            let mut start = 0u64;
            for i in 0..n {
                let at = (off + 16 * i) as usize;
                let stop = u64_at(bytes, at).unwrap();
                if let Some(block) =
                    data.checked_add(start).zip(data.checked_add(stop)).filter(|(a, b)| a <= b && *b <= end)
                {
                    let sum = xxh3_64(&bytes[block.0 as usize..block.1 as usize]);
                    put(bytes, at + 8, &sum.to_le_bytes());
                }
                start = stop;
            }
            index_len
        } else {
            l
        };
        let sum = xxh3_64(&bytes[off as usize..(off + covered) as usize]);
        put(bytes, e + 16, &sum.to_le_bytes());
    }
}

fn good_bytes(name: &str) -> &'static [u8] {
    good_files().iter().find(|(n, _)| n == name).map_or(&[], |(_, b)| b)
}

/// The signature field of a header, if it is text.
fn header_name(bytes: &[u8]) -> Option<String> {
    let field = bytes.get(16..32)?;
    let end = field.iter().position(|&b| b == 0).unwrap_or(16);
    let name = std::str::from_utf8(&field[..end]).ok()?;
    (!name.is_empty() && !name.contains('/')).then(|| name.to_string())
}

/// A folder with the good tables (hard links) and the damaged file written under its name.
fn table_folder(case: &TableCase, bytes: &[u8], own: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let name = match &case.save_as {
        SaveAs::Own => own.to_string(),
        SaveAs::HeaderName => header_name(bytes).unwrap_or_else(|| own.to_string()),
        SaveAs::Other(n) => n.to_string(),
    };
    let path = dir.path().join(format!("{name}.tbs"));
    for (good, _) in good_files() {
        let p = dir.path().join(format!("{good}.tbs"));
        // Never write through a link to a shared good file.
        if p != path {
            std::fs::hard_link(good_tables().join(format!("{good}.tbs")), &p).unwrap();
        }
    }
    std::fs::write(&path, bytes).unwrap();
    (dir, path)
}

/// A position of `PROBE_MATERIALS[material]` from squares (kings first), if legal.
fn probe_position(material: usize, squares: &[u8], black: bool, clock: u32) -> Option<Position> {
    let m = Material::parse(PROBE_MATERIALS[material]).unwrap_or(Material::new(vec![], vec![]));
    let men: Vec<(Color, Role)> = [(Color::White, Role::King), (Color::Black, Role::King)]
        .into_iter()
        .chain(m.white.iter().map(|&r| (Color::White, r)))
        .chain(m.black.iter().map(|&r| (Color::Black, r)))
        .collect();
    let placed: Vec<_> = men.iter().zip(squares).map(|(&(color, role), &s)| (s, Piece { color, role })).collect();
    if placed.len() < men.len() {
        return None;
    }
    let mut pos = Position::from_men(&placed, if black { Color::Black } else { Color::White }).ok()?;
    pos.halfmove = clock;
    Some(pos)
}

fn table_case_run(case: TableCase) -> Result<(), TestCaseError> {
    let (bytes, own) = damaged_bytes(&case);
    let (dir, path) = table_folder(&case, &bytes, own);
    match CompactTable::open(&path) {
        Err(e) => check!(!format!("{e:#}").is_empty(), "empty error"),
        Ok(table) => {
            count("table", "opened");
            let h = &table.header;
            let layout = Layout::new(&h.material);
            let end = h.parts[4].offset + h.parts[4].length;
            check!(
                end == bytes.len() as u64 && h.n_slots == layout.n_slots,
                "accepted header {h:?} for a file of {} bytes",
                bytes.len()
            );
            let verified = table.check_sums();
            let words = (h.n_slots / 64) as usize;
            for stm in [Color::White, Color::Black] {
                let mut n = 0;
                let loaded = table.bitbase_words(stm, &mut |_, _| {
                    n += 1;
                    Ok(())
                });
                check!(loaded.is_err() || n == words, "bitbase of {n} words, not {words}");
            }
            let cache = BlockCache::new(1 << 20).unwrap();
            let mut codes = Vec::new();
            for &(white, raw) in &case.reads {
                let stm = if white { Color::White } else { Color::Black };
                for slot in [raw % h.n_slots, h.n_slots - 1] {
                    let _ = table.class(stm, slot, &cache);
                    let _ = table.dtz_code(slot, &cache);
                    let word = (slot / 64) as usize;
                    if table.read_codes(Some(&layout), stm, word, 1, &mut codes).is_ok() {
                        check!(codes.len() == 1 && codes[0].iter().all(|&c| c < 64), "codes {codes:?}");
                    }
                }
            }
            match verified {
                Ok(()) if bytes != good_bytes(&h.material.to_string()) => count("table", "damaged but verified"),
                Ok(()) => count("table", "verified"),
                Err(e) => check!(!e.to_string().is_empty(), "empty error"),
            }
        }
    }
    // The generator's readers of finished tables, for the names that may hold the damaged file.
    let saved_as = path.file_stem().unwrap().to_string_lossy().into_owned();
    for name in [Some(saved_as), header_name(&bytes)].into_iter().flatten() {
        let Ok(m) = Material::parse(&name) else { continue };
        if m.white_bare() {
            continue;
        }
        let built = is_built(dir.path(), &m);
        if let Ok(b) = load_bitbase(dir.path(), &m) {
            let n = Layout::new(&m).n_words();
            check!(
                b.wtm.len() == n && b.btm.len() == n,
                "{name}: bitbase of {} words loaded, layout has {n}",
                b.wtm.len()
            );
            check!(built, "{name}: bitbase loads but the table is not built");
        }
        if built {
            let header = CompactTable::open(&table_path(dir.path(), &m)).map(|f| f.header.material);
            check!(header.as_ref().ok() == Some(&m), "{name}.tbs holding {header:?} counts as built");
        }
    }
    // Probing through a fresh Tablebase (nothing cached from other cases).
    let tb = Tablebase::open(dir.path()).map_err(|e| TestCaseError::fail(format!("{e:#}")))?;
    for (material, squares, black, clock) in &case.probes {
        if let Some(pos) = probe_position(*material, squares, *black, *clock) {
            count("table", "probes");
            if exercise_probe(&tb, &pos)? {
                count("table", "probes answered");
            }
        }
    }
    if case.verify_run {
        for name in ["KRvK", "KQvK"] {
            let _ = verify_run(dir.path(), &Material::parse(name).unwrap(), 1, |_, _| {});
        }
    }
    Ok(())
}

#[test]
fn table() {
    fuzz_quick("table", table_case(), 200, table_case_run);
}

#[test]
#[ignore = "time-budgeted: scripts/fuzz.sh"]
fn timed_table() {
    good_files();
    fuzz_timed("table", table_case(), table_case_run);
}

// =======================================================================================
// Regressions: exact inputs of panics and wrong answers found by fuzzing
// =======================================================================================

/// `Position::play` added 1 to a clock of u32::MAX: it wrapped to a fresh 0 in release builds
/// (and panicked with overflow checks), so the position after the move looked winnable again.
#[test]
fn regression_clock_at_u32_max() {
    let fen = "8/8/8/8/8/8/8/K1k5 w - - 4294967295";
    let pos = Position::from_fen(fen).unwrap();
    for mv in pos.legal_moves() {
        assert_eq!(pos.play(mv).halfmove, u32::MAX, "{mv}");
    }
    // A winning KQvK position with an exhausted clock stays a draw one move later.
    let pos = Position::from_fen("8/8/8/8/8/2k5/8/KQ6 w - - 4294967295 1").unwrap();
    for mv in pos.legal_moves() {
        let child = pos.play(mv);
        assert_eq!(good_tablebase().probe(&child).unwrap().wdl, 0, "{mv}: {}", child.fen());
    }
    fen_case(fen.to_string()).unwrap();
}

/// A table under another run's name (`KRvK.tbs` copied to `KQvK.tbs`, same size) counted as
/// built and its bitbase was loaded as KQvK's; a 4-men table under a 3-men name gave a bitbase
/// of the wrong size to the generator. Now every reader checks the run the header names.
#[test]
fn regression_misnamed_table() {
    for (from, to) in [("KRvK", "KQvK"), ("KQvKR", "KRvK"), ("KRvKQ", "KQvKR")] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::copy(good_tables().join(format!("{from}.tbs")), dir.path().join(format!("{to}.tbs"))).unwrap();
        let m = Material::parse(to).unwrap();
        assert!(!is_built(dir.path(), &m), "{from} as {to}");
        let err = format!("{:#}", load_bitbase(dir.path(), &m).err().unwrap());
        assert!(err.contains(&format!("holds the table of {from}, not {to}")), "{err}");
        let case = TableCase {
            base: Base::Good(["KRvK", "KQvK", "KQvKR", "KRvKQ"].iter().position(|n| *n == from).unwrap()),
            damage: vec![],
            fix_sections: false,
            fix_header: false,
            save_as: SaveAs::Other(RUN_NAMES.iter().find(|n| **n == to).unwrap()),
            reads: vec![],
            probes: vec![],
            verify_run: false,
        };
        table_case_run(case).unwrap();
    }
    // The probe names both runs.
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(good_tables().join("KRvK.tbs"), dir.path().join("KQvK.tbs")).unwrap();
    let tb = Tablebase::open(dir.path()).unwrap();
    let err = format!("{:#}", tb.probe(&Position::from_fen("8/8/8/8/8/2k5/8/KQ6 w - - 0 1").unwrap()).unwrap_err());
    assert!(err.contains("KQvK.tbs: holds the table of KRvK, not KQvK"), "{err}");
}

/// An empty file or one cut inside the header was reported as "not a tbstream table (bad
/// magic)"; it is now reported as truncated, with its length.
#[test]
fn short_files_are_reported_as_truncated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("KQvK.tbs");
    let good = good_bytes("KQvK");
    let cut = format!("file is 5000 bytes, header says {}: truncated or damaged", good.len());
    for (len, expected) in [
        (0, "file is 0 bytes, shorter than the 256-byte header: truncated or empty"),
        (5, "file is 5 bytes, shorter than the 256-byte header"),
        (100, "file is 100 bytes, shorter than the 256-byte header"),
        (5000, cut.as_str()),
    ] {
        std::fs::write(&path, &good[..len]).unwrap();
        let err = CompactTable::open(&path).err().unwrap().to_string();
        assert!(err.contains(expected), "{len} bytes: {err}");
    }
    std::fs::write(&path, b"TBSTREAX").unwrap();
    let err = CompactTable::open(&path).err().unwrap().to_string();
    assert!(err.ends_with("KQvK.tbs: not a tbstream table (bad magic)"), "{err}");
}
