//! Helpers shared by the modules: running the binary, a deterministic generator, the
//! reference positions, comparing, copying and editing tables.

pub use crate::rng::Rng;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tbstream::Material;

// =======================================================================================
// Running the binary
// =======================================================================================

/// The `tbstream` binary under test.
pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_tbstream")
}

/// The stderr of a finished run, as text.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `tbstream gen ARGS --out OUT`, with `env` added to its environment (the testing knobs,
/// set on the child only), not started yet.
pub fn gen_cmd(out: &Path, args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.arg("gen").args(args).arg("--out").arg(out);
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd
}

/// Runs [`gen_cmd`] to its end; asserts that it did not panic.
pub fn gen(out: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let o = gen_cmd(out, args, env).output().expect("run tbstream");
    assert!(!stderr(&o).contains("panicked"), "panic: {}", stderr(&o));
    o
}

/// Runs `tbstream ARGS`: the exit code, stdout and stderr (UTF-8); asserts that it did not
/// panic.
pub fn tbstream(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(bin()).args(args).output().unwrap();
    let text = |b: Vec<u8>| String::from_utf8(b).unwrap();
    let (stdout, stderr) = (text(out.stdout), text(out.stderr));
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    (out.status.code(), stdout, stderr)
}

// =======================================================================================
// A deterministic generator
// =======================================================================================

impl Rng {
    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

// =======================================================================================
// The reference positions
// =======================================================================================

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
            }
        })
        .collect()
}

// =======================================================================================
// Tables: comparing, copying, editing
// =======================================================================================

/// A signature or run, parsed.
pub fn material(s: &str) -> Material {
    Material::parse(s).unwrap()
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

/// Asserts that two folders hold the same tables (names and bytes), and some.
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

/// A private copy of the tables of `from` that `keep` accepts (by file name), to damage.
pub fn copy_tables(from: &Path, keep: impl Fn(&str) -> bool) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for p in tables(from) {
        let name = p.file_name().unwrap();
        if keep(&name.to_string_lossy()) {
            std::fs::copy(&p, dir.path().join(name)).unwrap();
        }
    }
    dir
}

/// Rewrites a compact table in place with some of its decoded blocks changed by `edit`
/// (called with every block section, block number and decoded bytes) and, if given, another
/// slice section: the index, checksums and header are rebuilt, so that only the contents are
/// wrong (what `verify` must find).
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
    // The blocks are read and written in slot order (`block_into`), so the rewritten table is.
    let slot_order = [None, None, None];
    let wtm_summary = table.wtm_summary().expect("a table of version 6");
    writer
        .finish(&layout, table.header.meta.clone(), slot_order, &table.summary(), &wtm_summary, &slices, path)
        .unwrap();
}

/// The value codes of every slot of one side to move of a compact table, as
/// `CompactTable::read_codes` gives them (63 illegal, 62 a black loss).
pub fn all_codes(path: &Path, stm: tbstream::Color) -> Vec<u8> {
    use tbstream::file::compact::{CompactTable, WDL_BLOCK_BITS};
    let table = CompactTable::open(path).unwrap();
    let layout = tbstream::Layout::new(&table.header.material);
    let n_words = (layout.n_slots / 64) as usize;
    let per_block = 1 << (WDL_BLOCK_BITS - 6);
    let mut out = Vec::with_capacity(layout.n_slots as usize);
    let mut words = Vec::new();
    for first in (0..n_words).step_by(per_block) {
        table.read_codes(Some(&layout), stm, first, per_block.min(n_words - first), &mut words).unwrap();
        out.extend(words.iter().flatten());
    }
    out
}

/// Sets the class of `slot` in decoded class-section bytes (two bit planes per word).
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

/// Makes every wtm win of the middle distance block of a compact table one code longer
/// (the table rewritten with valid checksums): wrong values a sample is sure to meet.
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

/// The first legal wtm slot from `from` on whose distance is stored, with its FEN and code: a
/// code of 2 to 50 that the probe confirms (in version 6 a win by a zeroing move holds a
/// don't-care distance, any code; the probe, which searches those moves, finds it 1 ply).
pub fn find_stored_distance(path: &Path, from: u64) -> (u64, String, u8) {
    use tbstream::file::compact::CompactTable;
    use tbstream::file::position_of_slot;
    let tb = tbstream::Tablebase::open(path.parent().unwrap()).unwrap();
    let layout = tbstream::Layout::new(&CompactTable::open(path).unwrap().header.material);
    let codes = all_codes(path, tbstream::Color::White);
    (from..layout.n_slots)
        .find_map(|slot| {
            let code = codes[slot as usize];
            if !(2..=50).contains(&code) {
                return None;
            }
            let p = position_of_slot(&layout, slot, tbstream::Color::White)?;
            (tb.probe(&p).unwrap().dtz == 2 * code as i32 - 1).then(|| (slot, p.fen(), code))
        })
        .expect("a stored distance")
}
