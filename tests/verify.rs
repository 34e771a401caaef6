//! The independent verifier: it accepts freshly built tables, finds a single changed value or
//! bitbase bit (with the checksums rewritten so that only the contents are wrong), and fails
//! cleanly on damaged, truncated and missing files.

mod common;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use tbstream::file::{table_path, Section, TableFile, HEADER_LEN, VALUE_WORD_BYTES};
use tbstream::Layout;
use tbstream::Role;
use tbstream::SilentProgress;
use tbstream::TRIANGLE;
use tbstream::{generate, GenOptions};
use tbstream::{verify_run, verify_signature};
use tbstream::{Color, Material};
use tbstream::{Piece, Position};
use xxhash_rust::xxh3::xxh3_64;

const SIGNATURES: [&str; 4] = ["KQvK", "KRvK", "KQvKR", "KRvKN"];

fn m(s: &str) -> Material {
    Material::parse(s).unwrap()
}

/// The tables of `SIGNATURES` and their closure, built once per test binary.
fn tables() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = common::shared_tempdir();
        let sigs: Vec<Material> = SIGNATURES.iter().map(|s| m(s)).collect();
        generate(&sigs, &GenOptions::new(dir.path(), 2), &SilentProgress).unwrap();
        dir
    })
    .path()
}

/// A private copy of every table, to damage.
fn copy_tables() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(tables()).unwrap() {
        let p = entry.unwrap().path();
        if p.extension().is_some_and(|e| e == "tbs") {
            std::fs::copy(&p, dir.path().join(p.file_name().unwrap())).unwrap();
        }
    }
    dir
}

/// Recomputes every section checksum and the header checksum in place (docs/FORMAT.md).
fn rewrite_checksums(path: &Path) {
    let mut bytes = std::fs::read(path).unwrap();
    let u64_at = |b: &[u8], o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
    for i in 0..4 {
        let e = 40 + 24 * i;
        let (offset, length) = (u64_at(&bytes, e) as usize, u64_at(&bytes, e + 8) as usize);
        let sum = xxh3_64(&bytes[offset..offset + length]);
        bytes[e + 16..e + 24].copy_from_slice(&sum.to_le_bytes());
    }
    let sum = xxh3_64(&bytes[..248]);
    bytes[248..HEADER_LEN].copy_from_slice(&sum.to_le_bytes());
    std::fs::write(path, bytes).unwrap();
}

/// Flips bit `b` of the u64 at `offset` in the file.
fn flip_bit(path: &Path, offset: u64, b: u64) {
    let mut bytes = std::fs::read(path).unwrap();
    let o = offset as usize + (b / 8) as usize;
    bytes[o] ^= 1 << (b % 8);
    std::fs::write(path, bytes).unwrap();
}

/// The position of a slot, if legal.
fn position_of_slot(layout: &Layout, slot: u64, stm: Color) -> Option<Position> {
    let (code, pieces, wk) = layout.decode(layout.index_of_slot(slot));
    let mut men = vec![
        (wk, Piece { color: Color::White, role: Role::King }),
        (TRIANGLE[code as usize], Piece { color: Color::Black, role: Role::King }),
    ];
    men.extend(layout.pieces.iter().zip(&pieces).map(|(p, &s)| (s, Piece { color: p.color, role: p.role })));
    Position::from_men(&men, stm).ok()
}

/// The first legal slot of `stm` whose value code satisfies `want`, with its FEN and code.
fn find_slot(path: &Path, stm: Color, want: impl Fn(u8) -> bool) -> (u64, String, u8) {
    let file = TableFile::open(path).unwrap();
    let layout = Layout::new(&file.header.material);
    (0..layout.n_slots)
        .find_map(|slot| {
            let code = file.value_code(stm, slot);
            if !want(code) {
                return None;
            }
            position_of_slot(&layout, slot, stm).map(|p| (slot, p.fen(), code))
        })
        .expect("a matching slot")
}

#[test]
fn accepts_freshly_built_tables() {
    let dir = tables();
    for sig in SIGNATURES {
        let mut calls = 0u64;
        let mut last = (0, 0);
        let reports = verify_signature(dir, &m(sig), 2, |_, d, t| {
            calls += 1;
            assert!(d <= t);
            last = (d, t);
        })
        .unwrap_or_else(|e| panic!("{sig}: {e:#}"));
        assert!(calls > 0 && last.0 == last.1, "{sig}: progress ends at the total");
        let expected_runs = m(sig).runs_of_signature();
        assert_eq!(reports.iter().map(|r| r.material.clone()).collect::<Vec<_>>(), expected_runs);
        for r in &reports {
            let name = &r.material;
            for (side, s) in [("wtm", &r.wtm), ("btm", &r.btm)] {
                assert_eq!(s.slots(), r.n_slots, "{name} {side}: every slot checked");
                assert_eq!(s.derived + s.by_symmetry, s.won + s.not_won, "{name} {side}");
                assert!(s.illegal > 0 && s.won > 0 && s.derived > 0 && s.by_symmetry > 0, "{name} {side}: {s:?}");
            }
            assert!(r.btm.mates > 0 && r.btm.not_won > 0, "{name}: {:?}", r.btm);
            assert_eq!(r.last_step, r.wtm.longest.max(r.btm.longest).unwrap());
            eprintln!("{name}: {:.1}s wtm {:?} btm {:?}", r.secs, r.wtm, r.btm);
        }
    }
    // Landmarks: the longest wins of KQvK and KRvK (mate in 10 and in 16 moves).
    let longest = |run: &str| verify_run(dir, &m(run), 2, |_, _| {}).unwrap().wtm.longest;
    assert_eq!(longest("KQvK"), Some(19));
    assert_eq!(longest("KRvK"), Some(31));
}

/// A changed value code (checksums rewritten) is reported with a FEN and the stored and expected
/// values. A changed btm value is first seen at a wtm predecessor (the wtm side is checked first).
#[test]
fn detects_a_changed_value() {
    for (run, stm) in [("KQvKR", Color::White), ("KRvKN", Color::Black), ("KQvKR", Color::Black)] {
        let copy = copy_tables();
        let path = table_path(copy.path(), &m(run));
        let (slot, fen, code) = find_slot(&path, stm, |c| (2..=50).contains(&c));
        // Flip plane 0 of the slot: the code changes by one.
        let file = TableFile::open(&path).unwrap();
        let values = file.header.sections[Section::values(stm) as usize].offset;
        drop(file);
        flip_bit(&path, values + (slot >> 6) * VALUE_WORD_BYTES, slot & 63);
        rewrite_checksums(&path);
        let file = TableFile::open(&path).unwrap();
        file.verify().expect("checksums rewritten");
        assert_eq!(file.value_code(stm, slot), code ^ 1);
        drop(file);
        let err = format!("{:#}", verify_run(copy.path(), &m(run), 2, |_, _| {}).unwrap_err());
        assert!(err.contains("stored code") && err.contains(" - - 0 1"), "{run} {stm:?} slot {slot} ({fen}): {err}");
        if stm == Color::White {
            // The wtm side is checked first: the changed position itself (or a symmetric image
            // of it, which names it too) is the first wrong one.
            assert!(err.contains(&fen), "{run} slot {slot} ({fen}): {err}");
            assert!(err.contains(&format!("code {code}")) && err.contains(&format!("code {}", code ^ 1)), "{err}");
        }
    }
}

/// A cleared `t99` bit of a won position (checksums rewritten) is reported.
#[test]
fn detects_a_changed_bitbase_bit() {
    let copy = copy_tables();
    let path = table_path(copy.path(), &m("KRvKN"));
    let (slot, fen, _) = find_slot(&path, Color::White, |c| (1..=50).contains(&c));
    let file = TableFile::open(&path).unwrap();
    let t99 = file.header.sections[Section::WtmBitbase as usize].offset;
    drop(file);
    flip_bit(&path, t99 + (slot >> 6) * 8, slot & 63);
    rewrite_checksums(&path);
    let err = format!("{:#}", verify_run(copy.path(), &m("KRvKN"), 2, |_, _| {}).unwrap_err());
    assert!(err.contains(&fen) && err.contains("t99"), "{err}");
}

/// Damaged checksums, truncated files and missing sub-tables give errors, not panics.
#[test]
fn rejects_damaged_truncated_and_missing_files() {
    let copy = copy_tables();
    let dir = copy.path();
    let err_of = |run: &str| format!("{:#}", verify_run(dir, &m(run), 2, |_, _| {}).unwrap_err());
    // One bit flipped, checksums left alone.
    let path = table_path(dir, &m("KNvKR"));
    let file = TableFile::open(&path).unwrap();
    let off = file.header.sections[Section::BtmValues as usize].offset;
    drop(file);
    flip_bit(&path, off + 4096, 3);
    let err = err_of("KNvKR");
    assert!(err.contains("checksum"), "{err}");
    // A truncated table, and a run whose captures lead into it.
    let kqvk: PathBuf = table_path(dir, &m("KQvK"));
    let len = std::fs::metadata(&kqvk).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&kqvk).unwrap().set_len(len - 100).unwrap();
    let err = err_of("KQvK");
    assert!(err.contains("truncated"), "{err}");
    let err = err_of("KQvKR");
    assert!(err.contains("KQvK.tbs") && err.contains("truncated"), "{err}");
    // Cut inside the header.
    std::fs::OpenOptions::new().write(true).open(&kqvk).unwrap().set_len(100).unwrap();
    assert!(verify_run(dir, &m("KQvK"), 2, |_, _| {}).is_err());
    // A missing sub-table, a missing table.
    std::fs::remove_file(table_path(dir, &m("KRvK"))).unwrap();
    let err = err_of("KRvKQ");
    assert!(err.contains("KRvK"), "{err}");
    assert!(verify_run(dir, &m("KRvK"), 2, |_, _| {}).is_err());
    // A bare white king has no table.
    assert!(verify_run(dir, &m("KvKQ"), 2, |_, _| {}).is_err());
}

/// `tbstream verify`: exit 0 with a summary on good tables; exit 2 naming the position (FEN)
/// on a changed value, and naming the file on a truncated one.
#[test]
fn verify_command_passes_good_tables_and_names_the_wrong_position() {
    let bin = env!("CARGO_BIN_EXE_tbstream");
    let verify = |dir: &Path, sig: &str| {
        let out = std::process::Command::new(bin)
            .args(["verify", "--tables", dir.to_str().unwrap(), sig, "--threads", "2"])
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, stdout, stderr) = verify(tables(), "KRvKN");
    assert_eq!(code, Some(0), "{stderr}");
    assert!(stdout.contains("KRvKN: ok") && stdout.contains("KNvKR: ok"), "{stdout}");

    let copy = copy_tables();
    let path = table_path(copy.path(), &m("KQvKR"));
    let (slot, fen, _) = find_slot(&path, Color::White, |c| (2..=50).contains(&c));
    let values = TableFile::open(&path).unwrap().header.sections[Section::WtmValues as usize].offset;
    flip_bit(&path, values + (slot >> 6) * VALUE_WORD_BYTES, slot & 63);
    rewrite_checksums(&path);
    let (code, _, stderr) = verify(copy.path(), "KQvKR");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("error: ") && stderr.contains(&fen), "{fen}: {stderr}");

    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(len / 2).unwrap();
    let (code, _, stderr) = verify(copy.path(), "KQvKR");
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("KQvKR.tbs") && stderr.contains("truncated"), "{stderr}");
    let (code, _, stderr) = verify(copy.path(), "KQXvK");
    assert_eq!(code, Some(2), "{stderr}");
}
