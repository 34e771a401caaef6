//! Shared helpers of the integration tests: building tables once per test binary, and
//! reading the reference positions.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use tbstream::Material;
use tbstream::SilentProgress;
use tbstream::{generate, GenOptions};

/// Every 3- and 4-men pawnless signature with white at least as strong by convention of
/// the reference folder.
pub const SMALL: [&str; 24] = [
    "KQvK", "KRvK", "KBvK", "KNvK", "KQQvK", "KQRvK", "KQBvK", "KQNvK", "KRRvK", "KRBvK", "KRNvK", "KBBvK", "KBNvK",
    "KNNvK", "KQvKQ", "KQvKR", "KQvKB", "KQvKN", "KRvKR", "KRvKB", "KRvKN", "KBvKB", "KBvKN", "KNvKN",
];

/// Removes `path` when the test binary exits: the folders of tables are held in statics,
/// which are never dropped, so their `TempDir`s would otherwise stay behind.
pub fn remove_at_exit(path: &Path) {
    static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
    extern "C" fn remove_all() {
        if let Ok(paths) = PATHS.lock() {
            for p in paths.iter() {
                let _ = std::fs::remove_dir_all(p);
            }
        }
    }
    let mut paths = PATHS.lock().unwrap();
    if paths.is_empty() {
        // SAFETY: `remove_all` is a plain function that neither unwinds nor calls `exit`.
        unsafe { libc::atexit(remove_all) };
    }
    paths.push(path.to_path_buf());
}

/// A temporary folder for a static (shared by the tests of a binary), removed when the
/// test binary exits.
pub fn shared_tempdir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    remove_at_exit(dir.path());
    dir
}

/// A folder holding every 3- and 4-men table, built once per test binary (and removed when
/// it exits).
pub fn small_tables() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        remove_at_exit(dir.path());
        let sigs: Vec<Material> = SMALL.iter().map(|s| Material::parse(s).unwrap()).collect();
        generate(&sigs, &GenOptions::new(dir.path(), 2), &SilentProgress).unwrap();
        dir
    })
    .path()
}

/// The shared reference folder (`../shared/reference`, or `$TBSTREAM_REFERENCE`).
pub fn reference_dir() -> PathBuf {
    let dir = std::env::var_os("TBSTREAM_REFERENCE")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference"));
    assert!(dir.is_dir(), "reference folder {} is missing (set TBSTREAM_REFERENCE)", dir.display());
    dir
}

/// One reference line.
#[derive(Debug, Clone)]
pub struct RefLine {
    pub fen: String,
    pub wdl: i32,
    pub dtz: i32,
    pub dtz_plyacc: Option<i32>,
    pub source: String,
}

/// Reads `<table>.tsv` of the reference folder.
pub fn read_reference(table: &str) -> Vec<RefLine> {
    let path = reference_dir().join(format!("{table}.tsv"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("fen\t") && !l.trim().is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            RefLine {
                fen: f[0].to_string(),
                wdl: f[2].parse().unwrap(),
                dtz: f[3].parse().unwrap(),
                dtz_plyacc: f.get(4).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()),
                source: f.get(5).unwrap_or(&"").to_string(),
            }
        })
        .collect()
}

/// Rounds `n` up to the given parity (1 = odd, 0 = even).
pub fn round_up(n: i32, parity: i32) -> i32 {
    if n.rem_euclid(2) == parity {
        n
    } else {
        n + 1
    }
}

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The tables with pawns of the reference folder (4 and 5 men).
pub const PAWN_TABLES: [&str; 12] =
    ["KPvK", "KPvKP", "KQvKP", "KRvKP", "KBvKP", "KNvKP", "KPPvK", "KBPvK", "KNPvK", "KQPvK", "KRPvK", "KRPvKR"];

/// A folder holding the pawn tables of the reference folder but KRPvKR (and their
/// closures), built once per test binary (and removed when it exits).
pub fn pawn_tables() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        remove_at_exit(dir.path());
        let sigs: Vec<Material> = PAWN_TABLES[..11].iter().map(|s| Material::parse(s).unwrap()).collect();
        generate(&sigs, &GenOptions::new(dir.path(), 2), &SilentProgress).unwrap();
        dir
    })
    .path()
}

/// Rewrites a compact table in place with some of its decoded blocks changed by `edit`
/// (called with every block section, block number and decoded bytes) and, if given, another
/// slice section: the index, checksums and header are rebuilt, so that only the contents are
/// wrong (what `verify` must find).
#[allow(dead_code)]
pub fn rewrite_compact(
    path: &Path,
    mut edit: impl FnMut(tbstream::file::compact::Part, usize, &mut Vec<u8>),
    slices: Option<Vec<u8>>,
) {
    use tbstream::file::compact::{pack_block, slice_bytes, CompactTable, CompactWriter, Part};
    let table = CompactTable::open(path).unwrap();
    let layout = tbstream::Layout::new(&table.header.material);
    let tmp = path.with_extension("rewritten");
    let mut writer = CompactWriter::open(&tmp, table.header.n_slots, 0x5eed).unwrap();
    for part in Part::BLOCKED {
        for i in 0..table.n_blocks(part) {
            let mut block = Vec::new();
            table.block_into(part, i, &mut block).unwrap();
            edit(part, i, &mut block);
            writer.push(&pack_block(&block, None, 3).unwrap()).unwrap();
        }
    }
    let slices = slices.unwrap_or_else(|| {
        let last: Vec<u8> = table.levels().iter().map(|l| l.last_step).collect();
        slice_bytes(&layout, &last)
    });
    writer.finish(&layout, table.header.meta.clone(), &table.summary(), &slices, path).unwrap();
}

/// The value codes of every slot of one side to move of a compact table, as
/// `CompactTable::read_codes` gives them (63 illegal, 62 a black loss).
#[allow(dead_code)]
pub fn all_codes(path: &Path, stm: tbstream::Color) -> Vec<u8> {
    use tbstream::file::compact::{CompactTable, WDL_BLOCK_BITS};
    let table = CompactTable::open(path).unwrap();
    let layout = tbstream::Layout::new(&table.header.material);
    let n_words = (layout.n_slots / 64) as usize;
    let per_block = 1 << (WDL_BLOCK_BITS - 6);
    let mut out = Vec::with_capacity(layout.n_slots as usize);
    let mut words = Vec::new();
    for first in (0..n_words).step_by(per_block) {
        table.read_codes(&layout, stm, first, per_block.min(n_words - first), &mut words).unwrap();
        out.extend(words.iter().flatten());
    }
    out
}

/// Sets the class of `slot` in decoded class-section bytes (two bit planes per word).
#[allow(dead_code)]
pub fn set_class(block: &mut [u8], slot_in_block: u64, class: u8) {
    let (w, b) = ((slot_in_block / 64) as usize, slot_in_block % 64);
    for (plane, bit) in [(0, class & 1), (1, class >> 1 & 1)] {
        let at = 16 * w + 8 * plane;
        let mut v = u64::from_le_bytes(block[at..at + 8].try_into().unwrap());
        v = (v & !(1 << b)) | (bit as u64) << b;
        block[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
}

/// Changes the wtm distance code of `slot` to `code` (the table rewritten whole).
#[allow(dead_code)]
pub fn set_dtz(path: &Path, slot: u64, code: u8) {
    use tbstream::file::compact::{Part, DTZ_BLOCK_BITS};
    let block = (slot >> DTZ_BLOCK_BITS) as usize;
    rewrite_compact(
        path,
        |part, i, bytes| {
            if part == Part::WtmDtz && i == block {
                bytes[(slot & ((1 << DTZ_BLOCK_BITS) - 1)) as usize] = code;
            }
        },
        None,
    );
}

/// Changes the class of `slot` for `stm` (the table rewritten whole).
#[allow(dead_code)]
pub fn set_slot_class(path: &Path, stm: tbstream::Color, slot: u64, class: u8) {
    use tbstream::file::compact::{Part, WDL_BLOCK_BITS};
    let block = (slot >> WDL_BLOCK_BITS) as usize;
    rewrite_compact(
        path,
        |part, i, bytes| {
            if part == Part::wdl(stm) && i == block {
                set_class(bytes, slot & ((1 << WDL_BLOCK_BITS) - 1), class);
            }
        },
        None,
    );
}

/// Runs `tbstream verify --sample` with `args` (table folder included); returns the exit
/// code, stdout and stderr (never a panic).
#[allow(dead_code)]
pub fn verify_sample(args: &[&str]) -> (Option<i32>, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_tbstream")).arg("verify").args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!stderr.contains("panicked"), "{stderr}");
    (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

/// Makes every wtm win of the middle distance block of a compact table one code longer
/// (the table rewritten with valid checksums): wrong values a sample is sure to meet.
#[allow(dead_code)]
pub fn lengthen_middle_distance_block(path: &Path) {
    use tbstream::file::compact::{CompactTable, Part};
    let middle = CompactTable::open(path).unwrap().n_blocks(Part::WtmDtz) / 2;
    rewrite_compact(
        path,
        |part, i, bytes| {
            if part == Part::WtmDtz && i == middle {
                bytes.iter_mut().filter(|c| (2..=49).contains(*c)).for_each(|c| *c += 1);
            }
        },
        None,
    );
}

/// The `.tbs` files of a folder, sorted.
pub fn tables(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "tbs"))
        .collect();
    v.sort();
    v
}

pub fn assert_same_tables(a: &Path, b: &Path) {
    let (ta, tb) = (tables(a), tables(b));
    assert_eq!(
        ta.iter().map(|p| p.file_name()).collect::<Vec<_>>(),
        tb.iter().map(|p| p.file_name()).collect::<Vec<_>>()
    );
    assert!(!ta.is_empty());
    for (x, y) in ta.iter().zip(&tb) {
        assert!(std::fs::read(x).unwrap() == std::fs::read(y).unwrap(), "{} and {} differ", x.display(), y.display());
    }
}
