//! An independent reader of tbstream table files, written only from `docs/FORMAT.md`
//! (without looking at `src/format.rs`, `src/index.rs` or `src/probe.rs`), to show that the
//! document is enough to use the files.
//!
//! The reader validates the header and the sections (version 1, and version 2 with its
//! section 4 of slice keys and level records), enumerates the stored pawn configurations by
//! the document's rules, computes the slot of a position by the document's steps (with or
//! without pawns), reads the bit-plane value codes and the bitbase bits, and probes FENs by
//! the document's "Probing a position" summary. Its answers are compared with the library:
//! pawnless tables through the `tbstream` binary (`gen`, then `probe` over stdin) on random
//! legal positions and on every stored KQvK position, tables with pawns through
//! `Tablebase::probe` on every KPvK position and on random legal positions of KPvKP, KPPvK,
//! KQvKP and KRPvK; its raw codes are compared with the library's `TableFile::value_code`.

mod common;

use cozy_chess::Board;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use xxhash_rust::xxh3::xxh3_64;

// =======================================================================================
// The reader (everything here comes from docs/FORMAT.md)
// =======================================================================================

/// Men other than kings, in the document's order Q, R, B, N, then P (pawns last on each
/// side of a run's name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Kind {
    Q,
    R,
    B,
    N,
    P,
}

impl Kind {
    fn from_letter(c: char) -> Option<Kind> {
        match c.to_ascii_uppercase() {
            'Q' => Some(Kind::Q),
            'R' => Some(Kind::R),
            'B' => Some(Kind::B),
            'N' => Some(Kind::N),
            'P' => Some(Kind::P),
            _ => None,
        }
    }

    fn letter(self) -> char {
        match self {
            Kind::Q => 'Q',
            Kind::R => 'R',
            Kind::B => 'B',
            Kind::N => 'N',
            Kind::P => 'P',
        }
    }
}

/// The name of the run `W v B` (`<white's men>v<black's men>`, in the order Q R B N P).
fn run_name(white: &[Kind], black: &[Kind]) -> String {
    let mut w = white.to_vec();
    let mut b = black.to_vec();
    w.sort();
    b.sort();
    let mut s = String::from("K");
    s.extend(w.iter().map(|k| k.letter()));
    s.push_str("vK");
    s.extend(b.iter().map(|k| k.letter()));
    s
}

/// Parses a run signature such as `KQRvKR` or `KRPvKP` (men must be in the order Q R B N P).
fn parse_run(sig: &str) -> Result<(Vec<Kind>, Vec<Kind>), String> {
    let (w, b) = sig.split_once('v').ok_or_else(|| format!("signature {sig:?} has no 'v'"))?;
    let side = |s: &str| -> Result<Vec<Kind>, String> {
        let rest = s.strip_prefix('K').ok_or_else(|| format!("side {s:?} of {sig:?} does not start with K"))?;
        let kinds: Vec<Kind> = rest
            .chars()
            .map(|c| match c {
                'Q' | 'R' | 'B' | 'N' | 'P' => Ok(Kind::from_letter(c).unwrap()),
                _ => Err(format!("bad man {c:?} in {sig:?}")),
            })
            .collect::<Result<_, _>>()?;
        if kinds.windows(2).any(|p| p[0] > p[1]) {
            return Err(format!("men of {sig:?} are not in the order Q R B N P"));
        }
        Ok(kinds)
    };
    Ok((side(w)?, side(b)?))
}

/// Step 2's triangle, in code order: a1, b1, c1, d1, b2, c2, d2, c3, d3, d4.
const TRIANGLE: [u8; 10] = [0, 1, 2, 3, 9, 10, 11, 18, 19, 27];

/// Step 3's diagram, copied verbatim from the document (a test checks that it still is).
const DIAGRAM: &str = "\
8  64 04 14 24 26 16 06 66
7  05 65 34 44 46 36 67 07
6  15 35 74 54 56 76 37 17
5  25 45 55 75 77 57 47 27
4  21 41 51 71 73 53 43 23
3  11 31 70 50 52 72 33 13
2  01 61 30 40 42 32 63 03
1  60 00 10 20 22 12 02 62
    a  b  c  d  e  f  g  h";

/// Square -> (H, L) from the diagram.
fn square_codes() -> &'static [(u8, u8); 64] {
    static CODES: OnceLock<[(u8, u8); 64]> = OnceLock::new();
    CODES.get_or_init(|| {
        let mut codes = [(255u8, 255u8); 64];
        for line in DIAGRAM.lines().take(8) {
            let mut fields = line.split_whitespace();
            let rank: u8 = fields.next().unwrap().parse().unwrap();
            let cells: Vec<&str> = fields.collect();
            assert_eq!(cells.len(), 8, "diagram line {line:?}");
            for (file, cell) in cells.iter().enumerate() {
                let d: Vec<u8> = cell.bytes().map(|b| b - b'0').collect();
                assert!(d.len() == 2 && d[0] < 8 && d[1] < 8, "diagram cell {cell:?} is not two octal digits");
                codes[(rank as usize - 1) * 8 + file] = (d[0], d[1]);
            }
        }
        codes
    })
}

/// Step 1: the symmetry that brings `bk` into the triangle, as a square map.
#[derive(Clone, Copy, Debug)]
struct Orientation {
    mirror: bool,
    flip: bool,
    transpose: bool,
}

impl Orientation {
    fn of_black_king(bk: u8) -> Orientation {
        let (mut f, mut r) = (bk % 8, bk / 8);
        let mirror = f > 3;
        if mirror {
            f = 7 - f;
        }
        let flip = r > 3;
        if flip {
            r = 7 - r;
        }
        Orientation { mirror, flip, transpose: r > f }
    }

    fn apply(self, sq: u8) -> u8 {
        let (mut f, mut r) = (sq % 8, sq / 8);
        if self.mirror {
            f = 7 - f;
        }
        if self.flip {
            r = 7 - r;
        }
        if self.transpose {
            std::mem::swap(&mut f, &mut r);
        }
        r * 8 + f
    }
}

/// Black-king code `k` of the prefix `k3 W2 k2 W1 k1 W0 k0` (step 6).
fn prefix_king_code(prefix: u64) -> u64 {
    ((prefix >> 6) & 1) << 3 | ((prefix >> 4) & 1) << 2 | ((prefix >> 2) & 1) << 1 | (prefix & 1)
}

/// `rank(prefix)`: the number of stored prefixes (`k < 10`) below it.
fn prefix_rank(prefix: u64) -> u64 {
    (0..prefix).filter(|&p| prefix_king_code(p) < 10).count() as u64
}

/// The high part of an index: two bit sequences `(bits, length)`, each read most significant
/// bit first, interleaved one bit at a time starting with `black`; when one runs out the rest
/// of the other follows. The first bit ends up highest of the `length_b + length_w` bits.
fn interleave(black: (u64, u32), white: (u64, u32)) -> u64 {
    let mut out = 0u64;
    for i in 0..black.1.max(white.1) {
        for (seq, len) in [black, white] {
            if i < len {
                out = out << 1 | ((seq >> (len - 1 - i)) & 1);
            }
        }
    }
    out
}

/// A pawn configuration: the white and the black pawn squares, each in increasing order.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PawnConfig {
    white: Vec<u8>,
    black: Vec<u8>,
}

impl PawnConfig {
    fn new(white: &[u8], black: &[u8]) -> PawnConfig {
        let (mut white, mut black) = (white.to_vec(), black.to_vec());
        white.sort();
        black.sort();
        PawnConfig { white, black }
    }

    /// The u32 key: the white squares in increasing order, then the black ones, 6 bits each,
    /// the first in the highest used bits.
    fn key(&self) -> u32 {
        self.white.iter().chain(&self.black).fold(0, |k, &s| k * 64 + s as u32)
    }

    /// The white pawn files in increasing order, then the black pawn files in increasing order.
    fn file_pattern(&self) -> Vec<u8> {
        let files = |v: &[u8]| {
            let mut f: Vec<u8> = v.iter().map(|s| s % 8).collect();
            f.sort();
            f
        };
        let mut p = files(&self.white);
        p.extend(files(&self.black));
        p
    }

    /// The left-right mirror image (files a <-> h).
    fn mirror(&self) -> PawnConfig {
        let m = |v: &[u8]| v.iter().map(|s| s ^ 7).collect::<Vec<u8>>();
        PawnConfig::new(&m(&self.white), &m(&self.black))
    }

    /// Stored iff its file pattern is lexicographically at most its mirror's.
    fn stored(&self) -> bool {
        self.file_pattern() <= self.mirror().file_pattern()
    }

    /// Its file pattern equals its mirror's: the configuration and its mirror are both stored.
    fn symmetric(&self) -> bool {
        self.file_pattern() == self.mirror().file_pattern()
    }

    /// Sum over white pawns of (rank - 2), plus sum over black pawns of (7 - rank), ranks 1..8.
    fn level(&self) -> u32 {
        let rank = |s: u8| (s / 8 + 1) as u32;
        self.white.iter().map(|&s| rank(s) - 2).sum::<u32>() + self.black.iter().map(|&s| 7 - rank(s)).sum::<u32>()
    }
}

/// The sets of `count` squares on ranks 2 to 7, each in increasing order.
fn pawn_square_sets(count: usize) -> Vec<Vec<u8>> {
    fn extend(from: u8, left: usize, current: &mut Vec<u8>, out: &mut Vec<Vec<u8>>) {
        if left == 0 {
            out.push(current.clone());
            return;
        }
        for s in from..56 {
            current.push(s);
            extend(s + 1, left - 1, current, out);
            current.pop();
        }
    }
    let mut out = Vec::new();
    extend(8, count, &mut Vec::new(), &mut out);
    out
}

/// The stored pawn configurations of a run with `white` and `black` pawns, in slice order:
/// level descending, then key ascending. (White and black pawns never share a square.)
fn stored_configurations(white: usize, black: usize) -> Vec<PawnConfig> {
    let white_sets = pawn_square_sets(white);
    let black_sets = pawn_square_sets(black);
    let mut out = Vec::new();
    for w in &white_sets {
        for b in &black_sets {
            if w.iter().any(|s| b.contains(s)) {
                continue;
            }
            let c = PawnConfig { white: w.clone(), black: b.clone() };
            if c.stored() {
                out.push(c);
            }
        }
    }
    out.sort_by_key(|c| (std::cmp::Reverse(c.level()), c.key()));
    out
}

const HEADER_LEN: usize = 256;
const SECTION_ALIGN: u64 = 4096;

/// One level record of section 4.
#[derive(Clone, Debug)]
struct LevelRecord {
    first: u32,
    count: u32,
    last_step: u8,
    /// XXH3-64 of the level's byte ranges in sections 0 to 3.
    checksums: [u64; 4],
}

/// What version 2 adds: the slices (pawn configurations) and the levels.
struct PawnLayout {
    /// `T`: index bits inside a slice.
    t: u32,
    white_pawns: usize,
    black_pawns: usize,
    /// The configuration of each slice (section 4's keys, checked against the enumeration).
    configs: Vec<PawnConfig>,
    /// Slice of each stored key.
    slice_of: HashMap<u32, u32>,
    levels: Vec<LevelRecord>,
}

/// One table file, validated.
struct DocTable {
    signature: String,
    version: u16,
    /// All of each side's men but the king (pawns last), as in the signature.
    white: Vec<Kind>,
    black: Vec<Kind>,
    men: u8,
    last_step: u8,
    n_slots: u64,
    /// (offset, length) of the sections (4 in version 1, 5 in version 2).
    sections: Vec<(usize, usize)>,
    bytes: Vec<u8>,
    /// `rank` of each of the 128 prefixes (version 1; only those with `k < 10` are used).
    ranks: [u64; 128],
    /// Version 2 only.
    pawns: Option<PawnLayout>,
}

fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}

fn le_u64(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

impl DocTable {
    /// Reads and validates `path`; the file name must be `<signature>.tbs`.
    fn open(path: &Path) -> Result<DocTable, String> {
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let table = DocTable::parse(bytes)?;
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if name != format!("{}.tbs", table.signature) {
            return Err(format!("file {name:?} holds run {}", table.signature));
        }
        Ok(table)
    }

    /// Validates the header, the section table and the section checksums, and in version 2
    /// section 4: the slice keys (against the document's enumeration) and the level records.
    fn parse(bytes: Vec<u8>) -> Result<DocTable, String> {
        if bytes.len() < HEADER_LEN {
            return Err(format!("file of {} bytes is shorter than the header", bytes.len()));
        }
        if &bytes[0..8] != b"TBSTREAM" {
            return Err("bad magic".into());
        }
        let version = le_u16(&bytes, 8);
        if version != 1 && version != 2 {
            return Err(format!("unsupported format version {version}"));
        }
        let header_len = le_u16(&bytes, 10);
        if header_len as usize != HEADER_LEN {
            return Err(format!("header length {header_len}, expected 256"));
        }
        let stored = le_u64(&bytes, 248);
        let computed = xxh3_64(&bytes[0..248]);
        if stored != computed {
            return Err(format!("header checksum mismatch: stored {stored:016x}, computed {computed:016x}"));
        }
        if bytes[12] as u16 != version {
            return Err(format!("layout id {} with format version {version}", bytes[12]));
        }
        let men = bytes[13];
        if !(3..=6).contains(&men) {
            return Err(format!("{men} men is out of 3..6"));
        }
        let last_step = bytes[14];
        if last_step > 100 {
            return Err(format!("last step {last_step} is out of 0..100"));
        }
        let n_sections = if version == 1 { 4 } else { 5 };
        let reserved_from = 40 + 24 * n_sections + if version == 1 { 0 } else { 8 };
        if bytes[15] > 3 {
            return Err(format!("flags byte {} has unknown bits", bytes[15]));
        }
        if bytes[reserved_from..240].iter().chain(&bytes[244..248]).any(|&b| b != 0) {
            return Err("reserved header bytes are not 0".into());
        }
        // Longest cursed wins (steps beyond 100, wtm and btm), 0 or above 100.
        for at in [240, 242] {
            let step = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
            if step != 0 && step <= 100 {
                return Err(format!("longest cursed step {step} is not beyond 100"));
            }
        }
        let sig_field = &bytes[16..32];
        let sig_len = sig_field.iter().position(|&b| b == 0).unwrap_or(16);
        if sig_field[sig_len..].iter().any(|&b| b != 0) || !sig_field[..sig_len].is_ascii() {
            return Err("signature is not ASCII padded with NULs".into());
        }
        let signature = String::from_utf8(sig_field[..sig_len].to_vec()).unwrap();
        let (white, black) = parse_run(&signature)?;
        if white.is_empty() {
            return Err(format!("run {signature} has a bare white king and should have no file"));
        }
        if 2 + white.len() + black.len() != men as usize {
            return Err(format!("run {signature} does not have {men} men"));
        }
        let white_pawns = white.iter().filter(|&&k| k == Kind::P).count();
        let black_pawns = black.iter().filter(|&&k| k == Kind::P).count();
        let pieces = white.len() + black.len() - white_pawns - black_pawns;
        // Version 2 header fields: n_slices, T, pawn counts, number of levels.
        let (expected_slots, n_slices, t, n_levels) = if version == 1 {
            if white_pawns + black_pawns > 0 {
                return Err(format!("run {signature} has pawns but format version 1"));
            }
            (10 * 64u64.pow(men as u32 - 1), 0, 0, 0)
        } else {
            if white_pawns + black_pawns == 0 || white_pawns + black_pawns > 4 {
                return Err(format!("run {signature}: version 2 needs 1 to 4 pawns"));
            }
            let n_slices = le_u32(&bytes, 160);
            let t = bytes[164] as u32;
            if t != 6 * (pieces as u32 + 1) + 6 {
                return Err(format!("T = {t} for {pieces} pieces, expected {}", 6 * (pieces + 1) + 6));
            }
            if (bytes[165] as usize, bytes[166] as usize) != (white_pawns, black_pawns) {
                return Err(format!("pawn counts {}/{} do not match run {signature}", bytes[165], bytes[166]));
            }
            ((n_slices as u64) << t, n_slices, t, bytes[167] as usize)
        };
        let n_slots = le_u64(&bytes, 32);
        if n_slots != expected_slots {
            return Err(format!("n_slots {n_slots}, expected {expected_slots}"));
        }
        let w = n_slots / 64;
        let mut lengths = vec![8 * w, 8 * w, 48 * w, 48 * w];
        if version == 2 {
            lengths.push(4 * n_slices as u64 + 48 * n_levels as u64);
        }
        let mut sections = Vec::with_capacity(n_sections);
        let mut end = 0u64;
        for (i, &expected_len) in lengths.iter().enumerate() {
            let entry = 40 + 24 * i;
            let (offset, length, checksum) =
                (le_u64(&bytes, entry), le_u64(&bytes, entry + 8), le_u64(&bytes, entry + 16));
            let bad_offset = match i {
                0 => offset != SECTION_ALIGN,
                // "Section 4 follows section 3 at the next multiple of 4096".
                4 => offset != end.div_ceil(SECTION_ALIGN) * SECTION_ALIGN,
                _ => offset % SECTION_ALIGN != 0 || offset < end,
            };
            if bad_offset {
                return Err(format!("section {i} at bad offset {offset}"));
            }
            if length != expected_len {
                return Err(format!("section {i} has length {length}, expected {expected_len}"));
            }
            end = offset + length;
            if end > bytes.len() as u64 {
                return Err(format!("section {i} ends at {end}, past the end of the file ({} bytes)", bytes.len()));
            }
            let (o, l) = (offset as usize, length as usize);
            let computed = xxh3_64(&bytes[o..o + l]);
            if computed != checksum {
                return Err(format!("section {i} checksum mismatch: stored {checksum:016x}, computed {computed:016x}"));
            }
            sections.push((o, l));
        }
        if end != bytes.len() as u64 {
            return Err(format!("file has {} bytes, section {} ends at {end}", bytes.len(), n_sections - 1));
        }
        let mut ranks = [0u64; 128];
        for (p, r) in ranks.iter_mut().enumerate() {
            *r = prefix_rank(p as u64);
        }
        let mut table =
            DocTable { signature, version, white, black, men, last_step, n_slots, sections, bytes, ranks, pawns: None };
        if version == 2 {
            table.pawns = Some(table.parse_section_4(n_slices, t, white_pawns, black_pawns, n_levels)?);
        }
        Ok(table)
    }

    /// Section 4: the slice keys must be the document's stored configurations in slice order;
    /// the levels must tile the slices in order (one record per level value, levels
    /// descending), their checksums match their byte ranges, and the header's last step is
    /// the largest of theirs.
    fn parse_section_4(
        &self,
        n_slices: u32,
        t: u32,
        white_pawns: usize,
        black_pawns: usize,
        n_levels: usize,
    ) -> Result<PawnLayout, String> {
        let sec = self.section(4);
        let configs = stored_configurations(white_pawns, black_pawns);
        if configs.len() != n_slices as usize {
            return Err(format!("{n_slices} slices, the document's rules give {}", configs.len()));
        }
        for (s, c) in configs.iter().enumerate() {
            let key = le_u32(sec, 4 * s);
            if key != c.key() {
                return Err(format!("slice {s} has key {key:#x}, the document's order gives {:#x} ({c:?})", c.key()));
            }
        }
        let slice_of: HashMap<u32, u32> = configs.iter().enumerate().map(|(s, c)| (c.key(), s as u32)).collect();
        let mut levels: Vec<LevelRecord> = Vec::with_capacity(n_levels);
        let mut next = 0u32;
        for j in 0..n_levels {
            let r = &sec[4 * n_slices as usize + 48 * j..][..48];
            let record = LevelRecord {
                first: le_u32(r, 0),
                count: le_u32(r, 4),
                last_step: r[8],
                checksums: [0, 1, 2, 3].map(|i| le_u64(r, 16 + 8 * i)),
            };
            if r[9..16].iter().any(|&b| b != 0) {
                return Err(format!("level {j}: bytes 9..16 are not 0"));
            }
            if record.first != next || record.count == 0 || record.first as u64 + record.count as u64 > n_slices as u64
            {
                return Err(format!("level {j} ({record:?}) does not continue the tiling at slice {next}"));
            }
            next = record.first + record.count;
            if record.last_step > 100 {
                return Err(format!("level {j}: last step {} is out of 0..100", record.last_step));
            }
            // One level value per record, descending.
            let value = configs[record.first as usize].level();
            if configs[record.first as usize..next as usize].iter().any(|c| c.level() != value) {
                return Err(format!("level {j} holds slices of different levels"));
            }
            if let Some(prev) = levels.last() {
                if configs[prev.first as usize].level() <= value {
                    return Err(format!("level {j} (level {value}) does not come after a higher level"));
                }
            }
            for i in 0..4 {
                let (from, to) = ((record.first as u64) << t, (next as u64) << t);
                let (a, b) = if i < 2 { (from / 8, to / 8) } else { (from / 64 * 48, to / 64 * 48) };
                let computed = xxh3_64(&self.section(i)[a as usize..b as usize]);
                if computed != record.checksums[i] {
                    return Err(format!(
                        "level {j} checksum of section {i} mismatch: stored {:016x}, computed {computed:016x}",
                        record.checksums[i]
                    ));
                }
            }
            levels.push(record);
        }
        if next != n_slices {
            return Err(format!("the levels cover {next} of {n_slices} slices"));
        }
        let max_step = levels.iter().map(|l| l.last_step).max().unwrap_or(0);
        if self.last_step != max_step {
            return Err(format!("header last step {}, the levels' largest is {max_step}", self.last_step));
        }
        Ok(PawnLayout { t, white_pawns, black_pawns, configs, slice_of, levels })
    }

    fn section(&self, i: usize) -> &[u8] {
        let (o, l) = self.sections[i];
        &self.bytes[o..o + l]
    }

    /// The non-pawn pieces of each side, in piece order.
    fn pieces(&self) -> (Vec<Kind>, Vec<Kind>) {
        let f = |v: &[Kind]| v.iter().copied().filter(|&k| k != Kind::P).collect::<Vec<_>>();
        (f(&self.white), f(&self.black))
    }

    /// Version 1, steps 1-6: the slot of the position with white king `wk`, black king `bk`
    /// and the pieces' squares `white`/`black` in piece order (Q R B N within each side).
    fn slot(&self, wk: u8, bk: u8, white: &[u8], black: &[u8]) -> u64 {
        assert_eq!(self.version, 1, "{}", self.signature);
        assert_eq!((white.len(), black.len()), (self.white.len(), self.black.len()), "{}", self.signature);
        // 1. Canonical orientation (applied to every man below).
        let s = Orientation::of_black_king(bk);
        // 2. Black-king code.
        let k = TRIANGLE.iter().position(|&t| t == s.apply(bk)).expect("black king in the triangle") as u64;
        // 3. Square codes (H, L); 4. piece order: white's pieces, then black's.
        let codes = square_codes();
        let code = |q: u8| codes[s.apply(q) as usize];
        let n = white.len() + black.len();
        let t = 4 + 3 * n + 3 * n + 6;
        // 5. High part: black's sequence (k, then H of each black piece) and white's (H of each
        // white piece), interleaved starting with black's, from bit T-1 down.
        let black_seq = black.iter().fold((k, 4), |(s, l), &q| (s << 3 | code(q).0 as u64, l + 3));
        let white_seq = white.iter().fold((0, 0), |(s, l), &q| (s << 3 | code(q).0 as u64, l + 3));
        let mut index = interleave(black_seq, white_seq) << (3 * n + 6);
        // Low part: the L digit of piece p at bits 6 + 3(n-1-p).., the white king at 0..5.
        for (p, &q) in white.iter().chain(black.iter()).enumerate() {
            index |= (code(q).1 as u64) << (6 + 3 * (n - 1 - p));
        }
        index |= s.apply(wk) as u64;
        // 6. Slot.
        let low_bits = t - 7;
        let prefix = index >> low_bits;
        assert!(prefix_king_code(prefix) < 10);
        self.ranks[prefix as usize] * (1u64 << low_bits) + (index & ((1u64 << low_bits) - 1))
    }

    /// Version 2, step 1: the slice of the pawn configuration (`wp`, `bp`) and whether the
    /// position must be mirrored to reach it; `None` if no slice holds it (a pawn on rank 1
    /// or 8, or white and black pawns on one square).
    fn find_slice(&self, wp: &[u8], bp: &[u8]) -> Option<(u32, bool)> {
        let layout = self.pawns.as_ref().expect("version 2");
        let config = PawnConfig::new(wp, bp);
        let image = config.mirror();
        let mirror = config.file_pattern() > image.file_pattern();
        let config = if mirror { image } else { config };
        layout.slice_of.get(&config.key()).map(|&s| (s, mirror))
    }

    /// Version 2, steps 2-4: the slot in slice `s` of the other men (`mirror`: mirror every
    /// man first), the pieces `white`/`black` in piece order.
    fn slot_in_slice(&self, s: u32, mirror: bool, wk: u8, bk: u8, white: &[u8], black: &[u8]) -> u64 {
        let layout = self.pawns.as_ref().expect("version 2");
        let n = white.len() + black.len();
        let t = 6 * (n as u32 + 1) + 6;
        assert_eq!(t, layout.t, "{}", self.signature);
        let m = |q: u8| if mirror { q ^ 7 } else { q };
        let codes = square_codes();
        let code = |q: u8| codes[m(q) as usize];
        // 3. High part: black's sequence (H of the black king, then of each black piece) and
        // white's (H of each white piece), interleaved starting with black's.
        let black_seq = black.iter().fold((code(bk).0 as u64, 3), |(s, l), &q| (s << 3 | code(q).0 as u64, l + 3));
        let white_seq = white.iter().fold((0, 0), |(s, l), &q| (s << 3 | code(q).0 as u64, l + 3));
        let mut index = interleave(black_seq, white_seq) << (t as usize - 3 * (n + 1));
        // Low part: the black king's L digit, then each piece's, then the white king.
        index |= (code(bk).1 as u64) << (6 + 3 * n);
        for (p, &q) in white.iter().chain(black.iter()).enumerate() {
            index |= (code(q).1 as u64) << (6 + 3 * (n - 1 - p));
        }
        index |= m(wk) as u64;
        // 4. Slot.
        ((s as u64) << t) + index
    }

    /// Version 2: the slot of a position with pawns (`None` if no slice holds its pawns).
    fn pawn_slot(&self, wk: u8, bk: u8, white: &[u8], black: &[u8], wp: &[u8], bp: &[u8]) -> Option<u64> {
        let (s, mirror) = self.find_slice(wp, bp)?;
        Some(self.slot_in_slice(s, mirror, wk, bk, white, black))
    }

    /// The bitbase bit of `slot`: `t99` (wtm) or `t100` (btm).
    fn bitbase_bit(&self, wtm: bool, slot: u64) -> bool {
        assert!(slot < self.n_slots);
        let word = le_u64(self.section(if wtm { 0 } else { 1 }), 8 * (slot / 64) as usize);
        (word >> (slot % 64)) & 1 == 1
    }

    /// The 6-bit value code of `slot`, from the six bit planes of its word.
    fn value_code(&self, wtm: bool, slot: u64) -> u8 {
        assert!(slot < self.n_slots);
        let sec = self.section(if wtm { 2 } else { 3 });
        let (w, b) = ((slot / 64) as usize, slot % 64);
        (0..6).map(|j| (((le_u64(sec, 48 * w + 8 * j) >> b) & 1) as u8) << j).sum()
    }

    /// The largest stored distance (plies) of slots `from..to`, both sides to move.
    fn longest_distance(&self, from: u64, to: u64) -> u8 {
        let mut longest = 0;
        for w in from / 64..to.div_ceil(64) {
            for (wtm, sec) in [(true, self.section(2)), (false, self.section(3))] {
                let planes: Vec<u64> = (0..6).map(|j| le_u64(sec, 48 * w as usize + 8 * j)).collect();
                for b in 0..64 {
                    let c: u8 = (0..6).map(|j| (((planes[j] >> b) & 1) as u8) << j).sum();
                    let d = match (wtm, c) {
                        (true, 1..=50) => 2 * c - 1,
                        (true, 53) => 100,
                        (false, 1..=51) => 2 * (c - 1),
                        _ => 0,
                    };
                    longest = longest.max(d);
                }
            }
        }
        longest
    }
}

// =======================================================================================
// Positions, attacks, and the document's probing summary
// =======================================================================================

/// The men of a position: kings, and the other men (pieces and pawns) by colour.
#[derive(Clone, Debug)]
struct Men {
    wk: u8,
    bk: u8,
    white: Vec<(Kind, u8)>,
    black: Vec<(Kind, u8)>,
}

impl Men {
    /// Board flipped top to bottom with colours exchanged.
    fn flipped(&self) -> Men {
        let f = |v: &[(Kind, u8)]| v.iter().map(|&(k, s)| (k, s ^ 56)).collect::<Vec<_>>();
        Men { wk: self.bk ^ 56, bk: self.wk ^ 56, white: f(&self.black), black: f(&self.white) }
    }

    /// Board mirrored left to right (files a <-> h).
    fn mirrored(&self) -> Men {
        let f = |v: &[(Kind, u8)]| v.iter().map(|&(k, s)| (k, s ^ 7)).collect::<Vec<_>>();
        Men { wk: self.wk ^ 7, bk: self.bk ^ 7, white: f(&self.white), black: f(&self.black) }
    }

    fn occupancy(&self) -> u64 {
        let mut occ = (1u64 << self.wk) | (1u64 << self.bk);
        for &(_, s) in self.white.iter().chain(self.black.iter()) {
            occ |= 1u64 << s;
        }
        occ
    }

    /// Two men on a square, or a pawn on rank 1 or 8.
    fn broken(&self) -> bool {
        let pawn_off_board = self.white.iter().chain(&self.black).any(|&(k, s)| k == Kind::P && !(8..56).contains(&s));
        pawn_off_board || self.occupancy().count_ones() as usize != 2 + self.white.len() + self.black.len()
    }

    /// Is `target` attacked by the king `king` and the men `others` of one side (white's if
    /// `by_white`; all men block sliders)?
    fn attacked(&self, target: u8, king: u8, others: &[(Kind, u8)], by_white: bool) -> bool {
        let occ = self.occupancy();
        king_adjacent(king, target) || others.iter().any(|&(k, s)| attacks(k, by_white, s, target, occ))
    }

    /// White to move: broken or the black king attacked.
    fn illegal_wtm(&self) -> bool {
        self.broken() || self.attacked(self.bk, self.wk, &self.white, true)
    }

    /// Black to move: broken or the white king attacked.
    fn illegal_btm(&self) -> bool {
        self.broken() || self.attacked(self.wk, self.bk, &self.black, false)
    }

    /// Squares of each side's pieces (no pawns) in piece order (Q R B N; identical pieces in
    /// any order).
    fn ordered(&self) -> (Vec<u8>, Vec<u8>) {
        let sorted = |v: &[(Kind, u8)]| {
            let mut v: Vec<(Kind, u8)> = v.iter().copied().filter(|&(k, _)| k != Kind::P).collect();
            v.sort();
            v.into_iter().map(|(_, s)| s).collect::<Vec<u8>>()
        };
        (sorted(&self.white), sorted(&self.black))
    }

    /// Squares of each side's pawns.
    fn pawns(&self) -> (Vec<u8>, Vec<u8>) {
        let f = |v: &[(Kind, u8)]| v.iter().filter(|&&(k, _)| k == Kind::P).map(|&(_, s)| s).collect::<Vec<u8>>();
        (f(&self.white), f(&self.black))
    }

    fn run(&self) -> String {
        let kinds = |v: &[(Kind, u8)]| v.iter().map(|&(k, _)| k).collect::<Vec<_>>();
        run_name(&kinds(&self.white), &kinds(&self.black))
    }

    /// The FEN board field.
    fn board_fen(&self) -> String {
        let mut cells = [' '; 64];
        cells[self.wk as usize] = 'K';
        cells[self.bk as usize] = 'k';
        for &(k, s) in &self.white {
            cells[s as usize] = k.letter();
        }
        for &(k, s) in &self.black {
            cells[s as usize] = k.letter().to_ascii_lowercase();
        }
        let mut out = String::new();
        for rank in (0..8).rev() {
            let mut empty = 0;
            for file in 0..8 {
                let c = cells[rank * 8 + file];
                if c == ' ' {
                    empty += 1;
                } else {
                    if empty > 0 {
                        out.push_str(&empty.to_string());
                        empty = 0;
                    }
                    out.push(c);
                }
            }
            if empty > 0 {
                out.push_str(&empty.to_string());
            }
            if rank > 0 {
                out.push('/');
            }
        }
        out
    }

    fn fen(&self, white_to_move: bool, halfmove: u32) -> String {
        format!("{} {} - - {halfmove} 1", self.board_fen(), if white_to_move { 'w' } else { 'b' })
    }
}

fn king_adjacent(a: u8, b: u8) -> bool {
    let df = (a % 8) as i32 - (b % 8) as i32;
    let dr = (a / 8) as i32 - (b / 8) as i32;
    a != b && df.abs() <= 1 && dr.abs() <= 1
}

/// Does a man of kind `k` (white's if `white`) on `from` attack `to` with the men `occ`
/// blocking?
fn attacks(k: Kind, white: bool, from: u8, to: u8, occ: u64) -> bool {
    if from == to {
        return false;
    }
    let (ff, fr) = ((from % 8) as i32, (from / 8) as i32);
    let (tf, tr) = ((to % 8) as i32, (to / 8) as i32);
    let (df, dr) = (tf - ff, tr - fr);
    let straight = df == 0 || dr == 0;
    let diagonal = df.abs() == dr.abs();
    let slides = match k {
        Kind::N => return (df.abs() == 1 && dr.abs() == 2) || (df.abs() == 2 && dr.abs() == 1),
        Kind::P => return df.abs() == 1 && dr == if white { 1 } else { -1 },
        Kind::Q => straight || diagonal,
        Kind::R => straight,
        Kind::B => diagonal,
    };
    if !slides {
        return false;
    }
    let (sf, sr) = (df.signum(), dr.signum());
    let (mut f, mut r) = (ff + sf, fr + sr);
    while (f, r) != (tf, tr) {
        if occ & (1u64 << (r * 8 + f)) != 0 {
            return false;
        }
        f += sf;
        r += sr;
    }
    true
}

/// A parsed FEN (castling and en passant must be `-`).
struct FenPos {
    men: Men,
    white_to_move: bool,
    halfmove: u32,
}

fn parse_fen(fen: &str) -> Result<FenPos, String> {
    let fields: Vec<&str> = fen.split_whitespace().collect();
    if fields.len() < 2 {
        return Err(format!("{fen:?}: too few fields"));
    }
    if fields.get(2).is_some_and(|&c| c != "-") || fields.get(3).is_some_and(|&e| e != "-") {
        return Err(format!("{fen:?}: castling or en passant (the reader handles neither)"));
    }
    let (mut wk, mut bk) = (None, None);
    let (mut white, mut black) = (Vec::new(), Vec::new());
    let ranks: Vec<&str> = fields[0].split('/').collect();
    if ranks.len() != 8 {
        return Err(format!("{fen:?}: not 8 ranks"));
    }
    for (i, rank) in ranks.iter().enumerate() {
        let r = 7 - i as u8;
        let mut f = 0u8;
        for c in rank.chars() {
            if let Some(d) = c.to_digit(10) {
                f += d as u8;
                continue;
            }
            if f > 7 {
                return Err(format!("{fen:?}: rank {} too long", r + 1));
            }
            let sq = r * 8 + f;
            match c {
                'K' if wk.is_none() => wk = Some(sq),
                'k' if bk.is_none() => bk = Some(sq),
                _ => {
                    let kind = Kind::from_letter(c).ok_or_else(|| format!("{fen:?}: bad man {c:?}"))?;
                    let side = if c.is_ascii_uppercase() { &mut white } else { &mut black };
                    side.push((kind, sq));
                }
            }
            f += 1;
        }
        if f != 8 {
            return Err(format!("{fen:?}: rank {} has {f} files", r + 1));
        }
    }
    let white_to_move = match fields[1] {
        "w" => true,
        "b" => false,
        s => return Err(format!("{fen:?}: bad side to move {s:?}")),
    };
    let halfmove = fields.get(4).map_or(Ok(0), |h| h.parse::<u32>()).map_err(|e| format!("{fen:?}: {e}"))?;
    let (wk, bk) = (wk.ok_or("no white king")?, bk.ok_or("no black king")?);
    Ok(FenPos { men: Men { wk, bk, white, black }, white_to_move, halfmove })
}

/// All tables of a folder, read with the document's reader.
struct DocTables {
    tables: HashMap<String, DocTable>,
}

impl DocTables {
    fn open(dir: &Path) -> DocTables {
        let mut tables = HashMap::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "tbs") {
                let t = DocTable::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                tables.insert(t.signature.clone(), t);
            }
        }
        DocTables { tables }
    }

    fn table(&self, run: &str) -> Result<&DocTable, String> {
        self.tables.get(run).ok_or_else(|| format!("no table {run}.tbs"))
    }

    /// The slot of `men` in its run `W v B` (version 1 or 2).
    fn slot(&self, men: &Men) -> Result<(&DocTable, u64), String> {
        let table = self.table(&men.run())?;
        let (w, b) = men.ordered();
        let slot = if table.version == 1 {
            table.slot(men.wk, men.bk, &w, &b)
        } else {
            let (wp, bp) = men.pawns();
            table
                .pawn_slot(men.wk, men.bk, &w, &b, &wp, &bp)
                .ok_or_else(|| format!("{}: no slice holds white pawns {wp:?}, black pawns {bp:?}", table.signature))?
        };
        Ok((table, slot))
    }

    /// The value code of white-to-move (`wtm`) or black-to-move `men` in its run `W v B`.
    fn code(&self, men: &Men, wtm: bool) -> Result<u8, String> {
        let (table, slot) = self.slot(men)?;
        Ok(table.value_code(wtm, slot))
    }

    /// The document's "Probing a position": (wdl, signed distance) for the side to move.
    fn probe(&self, fen: &str) -> Result<(i32, i32), String> {
        let pos = parse_fen(fen)?;
        let men = &pos.men;
        let illegal = if pos.white_to_move { men.illegal_wtm() } else { men.illegal_btm() };
        if illegal {
            return Err(format!("{fen}: illegal position"));
        }
        // 1. No legal move: checkmate or stalemate.
        let board = Board::from_fen(fen, false).map_err(|e| format!("{fen}: cozy-chess: {e:?}"))?;
        let has_move = board.generate_moves(|_| true);
        if !has_move {
            return Ok(if board.checkers().is_empty() { (0, 0) } else { (-1, 0) });
        }
        // 2. White to move.
        let men = if pos.white_to_move { men.clone() } else { men.flipped() };
        let budget = 100 - pos.halfmove as i32;
        // 3. Wins of the side to move: the wtm value in `W v B` (if `W` is more than a bare
        // king: a piece or a pawn).
        if !men.white.is_empty() {
            match self.code(&men, true)? {
                0 => {}
                c @ 1..=50 => {
                    let d = 2 * c as i32 - 1;
                    if d <= budget {
                        return Ok((1, d));
                    }
                }
                // Won in exactly 100 plies: a win with a fresh counter.
                53 if budget >= 100 => return Ok((1, 100)),
                53 => {}
                // Won only without the 50-move rule (52), or in 100 or 101 plies (51, older
                // tables): not a win within `budget <= 100` plies unless the edge is resolved,
                // which this reader leaves to the category (a draw here, as the library's WDL).
                51 | 52 => {}
                c => return Err(format!("{fen}: wtm code {c} for a legal position")),
            }
        }
        // 4. Losses: flip, and read the btm value in `B v W`.
        if !men.black.is_empty() {
            match self.code(&men.flipped(), false)? {
                0 => {}
                c @ 1..=51 => {
                    let d = 2 * (c as i32 - 1);
                    if d <= budget {
                        return Ok((-1, -d));
                    }
                }
                52 => {}
                c => return Err(format!("{fen}: btm code {c} for a legal position")),
            }
        }
        // 5. Draw.
        Ok((0, 0))
    }
}

// =======================================================================================
// The library side: tables built by the binary, probes through `tbstream probe`
// =======================================================================================

/// The tables of `gen KQvKR KRvKN KRRvK` (with their sub-endgames), built once.
fn tables_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = common::shared_tempdir();
        let out = Command::new(env!("CARGO_BIN_EXE_tbstream"))
            .args(["gen", "KQvKR", "KRvKN", "KRRvK", "--out"])
            .arg(dir.path())
            .output()
            .expect("running tbstream gen");
        assert!(out.status.success(), "tbstream gen failed:\n{}", String::from_utf8_lossy(&out.stderr));
        dir
    })
    .path()
}

fn doc_tables() -> &'static DocTables {
    static TABLES: OnceLock<DocTables> = OnceLock::new();
    TABLES.get_or_init(|| DocTables::open(tables_dir()))
}

fn table_path(run: &str) -> PathBuf {
    tables_dir().join(format!("{run}.tbs"))
}

/// `tbstream probe` over stdin: (wdl, dtz) per FEN, in order.
fn library_probe(fens: &[String]) -> Vec<(i32, i32)> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tbstream"))
        .args(["probe", "--tables"])
        .arg(tables_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting tbstream probe");
    let mut pipe = child.stdin.take().unwrap();
    let input: String = fens.iter().map(|f| format!("{f}\n")).collect();
    let writer = std::thread::spawn(move || pipe.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "tbstream probe failed:\n{stderr}");
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), fens.len(), "probe answered {} of {} lines; stderr:\n{stderr}", lines.len(), fens.len());
    lines
        .iter()
        .zip(fens)
        .map(|(line, fen)| {
            let f: Vec<&str> = line.split('\t').collect();
            // FEN, WDL, DTZ, best move, and the category with a fresh counter.
            assert_eq!(f.len(), 5, "probe line {line:?}");
            let names = ["win", "cursed-win", "draw", "blessed-loss", "loss"];
            assert!(names.contains(&f[4]), "probe line {line:?}");
            assert_eq!(f[0], fen, "probe lines out of order");
            (f[1].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect()
}

/// Compares the reader's probes of `fens` with the library's answers `theirs`; returns the
/// count of each wdl.
fn compare(ours: &DocTables, fens: &[String], theirs: &[(i32, i32)]) -> [usize; 3] {
    let mut mismatches = Vec::new();
    let mut counts = [0usize; 3];
    for (fen, &lib) in fens.iter().zip(theirs) {
        let mine = ours.probe(fen).unwrap_or_else(|e| panic!("reader: {e}"));
        counts[(mine.0 + 1) as usize] += 1;
        if mine != lib {
            mismatches.push(format!("{fen}: reader {mine:?}, library {lib:?}"));
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} of {} positions differ, e.g.:\n{}",
        mismatches.len(),
        fens.len(),
        mismatches[..mismatches.len().min(20)].join("\n")
    );
    counts
}

/// Compares the reader with `tbstream probe` on `fens` (pawnless tables).
fn compare_with_library(fens: &[String]) -> [usize; 3] {
    compare(doc_tables(), fens, &library_probe(fens))
}

/// The tables with pawns of `tests/common` (KPvK .. KRPvK and their closures, pawnless
/// sub-endgames included), read by the reader.
fn pawn_doc_tables() -> &'static DocTables {
    static TABLES: OnceLock<DocTables> = OnceLock::new();
    TABLES.get_or_init(|| DocTables::open(pawn_dir()))
}

/// `common::pawn_tables()` (removed when the test binary exits).
fn pawn_dir() -> &'static Path {
    common::pawn_tables()
}

/// The library's `Tablebase::probe` of each FEN over the tables with pawns.
fn library_pawn_probe(fens: &[String]) -> Vec<(i32, i32)> {
    let tb = tbstream::Tablebase::open(pawn_dir()).unwrap();
    fens.iter()
        .map(|fen| {
            let pos = tbstream::Position::from_fen(fen).unwrap_or_else(|e| panic!("library rejects {fen}: {e}"));
            let p = tb.probe(&pos).unwrap_or_else(|e| panic!("library probe of {fen}: {e}"));
            (p.wdl as i32, p.dtz)
        })
        .collect()
}

/// Compares the reader with the library on `fens` (tables with pawns).
fn compare_pawns_with_library(fens: &[String]) -> [usize; 3] {
    compare(pawn_doc_tables(), fens, &library_pawn_probe(fens))
}

/// SplitMix64.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// `count` random legal positions of `sig` (either colour holding either side's men, either
/// side to move; pawns on ranks 2 to 7, no en-passant square; a third of them with a random
/// half-move clock).
fn random_legal_fens(sig: &str, count: usize, seed: u64) -> Vec<String> {
    let (w, b) = parse_run(sig).unwrap();
    let mut rng = Rng(seed);
    let mut fens = Vec::with_capacity(count);
    while fens.len() < count {
        let (w, b) = if rng.below(2) == 0 { (&w, &b) } else { (&b, &w) };
        let mut occ = 0u64;
        let mut square = |rng: &mut Rng, pawn: bool| loop {
            let s = if pawn { 8 + rng.below(48) as u8 } else { rng.below(64) as u8 };
            if occ & (1u64 << s) == 0 {
                occ |= 1u64 << s;
                return s;
            }
        };
        let wk = square(&mut rng, false);
        let bk = square(&mut rng, false);
        let white: Vec<(Kind, u8)> = w.iter().map(|&k| (k, square(&mut rng, k == Kind::P))).collect();
        let black: Vec<(Kind, u8)> = b.iter().map(|&k| (k, square(&mut rng, k == Kind::P))).collect();
        let men = Men { wk, bk, white, black };
        let wtm = rng.below(2) == 0;
        if if wtm { men.illegal_wtm() } else { men.illegal_btm() } {
            continue;
        }
        let halfmove = if rng.below(3) == 0 { rng.below(101) as u32 } else { 0 };
        let fen = men.fen(wtm, halfmove);
        assert!(Board::from_fen(&fen, false).is_ok(), "cozy-chess rejects {fen}, which the reader thinks legal");
        fens.push(fen);
    }
    fens
}

/// The eight board symmetries as square maps.
fn symmetry(i: u8, sq: u8) -> u8 {
    let (mut f, mut r) = (sq % 8, sq / 8);
    if i & 1 != 0 {
        f = 7 - f;
    }
    if i & 2 != 0 {
        r = 7 - r;
    }
    if i & 4 != 0 {
        std::mem::swap(&mut f, &mut r);
    }
    r * 8 + f
}

// =======================================================================================
// Tests
// =======================================================================================

/// The diagram above is the document's, and it is a bijection of the squares onto 00..77.
#[test]
fn diagram_is_the_documents_and_a_bijection() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/FORMAT.md")).unwrap();
    assert!(doc.contains(DIAGRAM), "docs/FORMAT.md no longer holds the square-code diagram this reader uses");
    let codes = square_codes();
    let mut seen = [false; 64];
    for &(h, l) in codes.iter() {
        assert!(!seen[(h * 8 + l) as usize], "code {h}{l} appears twice");
        seen[(h * 8 + l) as usize] = true;
    }
    // The document's examples.
    assert_eq!(codes[4 + 8 * 3], (7, 3), "e4");
    assert_eq!(codes[1], (0, 0), "b1");
    // Step 1 brings every square into the triangle, and only the triangle's squares stay put.
    for bk in 0..64u8 {
        let s = Orientation::of_black_king(bk);
        assert!(TRIANGLE.contains(&s.apply(bk)), "black king {bk}");
        let image: Vec<u8> = (0..64).map(|q| s.apply(q)).collect();
        let mut sorted = image.clone();
        sorted.sort();
        assert_eq!(sorted, (0..64).collect::<Vec<u8>>(), "orientation of {bk} is a permutation");
    }
    // Step 6: 80 stored prefixes.
    assert_eq!(prefix_rank(128), 80);
}

/// Every header field the document describes, for every table `gen` wrote.
#[test]
fn headers_and_sections_are_valid() {
    let tables = doc_tables();
    let mut names: Vec<&String> = tables.tables.keys().collect();
    names.sort();
    assert_eq!(names, ["KNvK", "KNvKR", "KQvK", "KQvKR", "KRRvK", "KRvK", "KRvKN", "KRvKQ"]);
    for t in tables.tables.values() {
        assert_eq!(t.men as usize, 2 + t.white.len() + t.black.len());
        // "Last step k of the chains that added positions": the greatest stored distance.
        let mut longest = 0;
        for slot in 0..t.n_slots {
            longest = longest.max(match t.value_code(true, slot) {
                c @ 1..=50 => 2 * c - 1,
                53 => 100,
                _ => 0,
            });
            longest = longest.max(match t.value_code(false, slot) {
                c @ 1..=51 => 2 * (c - 1),
                _ => 0,
            });
        }
        assert_eq!(t.last_step, longest, "{}: last step", t.signature);
        let w = t.n_slots / 64;
        assert_eq!(t.sections.iter().map(|s| s.1 as u64).collect::<Vec<_>>(), [8 * w, 8 * w, 48 * w, 48 * w]);
        assert_eq!(t.sections[0].0, 4096);
    }
}

/// The slot map sends the positions with the black king in the triangle (any squares for
/// the others) one-to-one onto `0..n_slots`; a stored code is 63 exactly for broken or illegal
/// positions; the bitbases agree with the codes; diagonal black-king positions and their
/// transposes, and swapped identical pieces, hold equal values. Exhaustive for KQvK, KRvKN,
/// KQvKR and KRRvK.
#[test]
fn slots_are_a_bijection_and_illegal_codes_match() {
    let tables = doc_tables();
    for run in ["KQvK", "KRvKN", "KQvKR", "KRRvK"] {
        let t = tables.table(run).unwrap();
        let (nw, nb) = (t.white.len(), t.black.len());
        let others = (t.men - 1) as u32;
        let mut hit = vec![false; t.n_slots as usize];
        let mut illegal = [0u64; 2];
        for bk in TRIANGLE {
            for n in 0..64u64.pow(others) {
                let sq = |i: usize| ((n >> (6 * i)) & 63) as u8;
                let wk = sq(0);
                let white: Vec<u8> = (0..nw).map(|i| sq(1 + i)).collect();
                let black: Vec<u8> = (0..nb).map(|i| sq(1 + nw + i)).collect();
                let slot = t.slot(wk, bk, &white, &black);
                assert!(!std::mem::replace(&mut hit[slot as usize], true), "{run}: slot {slot} reached twice");
                let men = Men {
                    wk,
                    bk,
                    white: t.white.iter().copied().zip(white.iter().copied()).collect(),
                    black: t.black.iter().copied().zip(black.iter().copied()).collect(),
                };
                for (side, wtm) in [true, false].into_iter().enumerate() {
                    let code = t.value_code(wtm, slot);
                    let bad = if wtm { men.illegal_wtm() } else { men.illegal_btm() };
                    illegal[side] += bad as u64;
                    assert_eq!(code == 63, bad, "{run} {} wtm={wtm}: code {code}", men.fen(wtm, 0));
                    let bit = t.bitbase_bit(wtm, slot);
                    let expected = if wtm {
                        code == 63 || code == 53 || (1..=50).contains(&code)
                    } else {
                        (1..=51).contains(&code)
                    };
                    assert_eq!(bit, expected, "{run} {} wtm={wtm}: code {code}, bitbase bit {bit}", men.fen(wtm, 0));
                    // Step 1: with the black king on the a1-d4 diagonal, the transpose is
                    // stored too, with the same value.
                    if bk % 8 == bk / 8 {
                        let tr = |q: u8| (q % 8) * 8 + q / 8;
                        let tw: Vec<u8> = white.iter().map(|&q| tr(q)).collect();
                        let tb: Vec<u8> = black.iter().map(|&q| tr(q)).collect();
                        let other = t.value_code(wtm, t.slot(tr(wk), bk, &tw, &tb));
                        assert_eq!(code, other, "{run} {} wtm={wtm}: transpose differs", men.fen(wtm, 0));
                    }
                    // Step 4: two identical pieces may be given in either order.
                    if nw == 2 && t.white[0] == t.white[1] {
                        let other = t.value_code(wtm, t.slot(wk, bk, &[white[1], white[0]], &black));
                        assert_eq!(code, other, "{run} {} wtm={wtm}: swapped pieces differ", men.fen(wtm, 0));
                    }
                }
            }
        }
        assert!(hit.iter().all(|&h| h), "{run}: some slots are not reached");
        assert!(illegal[0] > 0 && illegal[1] > 0);
    }
}

/// The reader's raw value code equals the library's at every slot of both sides, for
/// every table (all slots of KQvK and the other runs).
#[test]
fn raw_codes_match_the_library_at_every_slot() {
    use tbstream::file::TableFile;
    use tbstream::Color;
    let tables = doc_tables();
    for (run, t) in &tables.tables {
        let lib = TableFile::open(&table_path(run)).unwrap();
        for (color, wtm) in [(Color::White, true), (Color::Black, false)] {
            for slot in 0..t.n_slots {
                let mine = t.value_code(wtm, slot);
                let theirs = lib.value_code(color, slot);
                assert_eq!(mine, theirs, "{run} {color:?} slot {slot}");
            }
        }
    }
}

/// Every stored legal KQvK position (black king in the triangle, both sides to move), each
/// under a random one of the 8 symmetries, probed by the reader and by `tbstream probe`.
#[test]
fn every_kqvk_position_matches_the_library() {
    let mut rng = Rng(0x4b51_764b);
    let mut fens = Vec::new();
    for bk in TRIANGLE {
        for wk in 0..64u8 {
            for q in 0..64u8 {
                let men = Men { wk, bk, white: vec![(Kind::Q, q)], black: vec![] };
                for wtm in [true, false] {
                    if if wtm { men.illegal_wtm() } else { men.illegal_btm() } {
                        continue;
                    }
                    let s = rng.below(8) as u8;
                    let image = Men {
                        wk: symmetry(s, wk),
                        bk: symmetry(s, bk),
                        white: vec![(Kind::Q, symmetry(s, q))],
                        black: vec![],
                    };
                    fens.push(image.fen(wtm, 0));
                }
            }
        }
    }
    let counts = compare_with_library(&fens);
    // Sanity: KQvK is won for white to move (bar stalemates and the queen hanging).
    assert!(counts[2] > counts[1] && counts[0] > 0, "wdl counts {counts:?}");
}

/// 3000 random legal positions per endgame (colours and side to move random, a third with
/// a random half-move clock), probed by the reader and by `tbstream probe`.
#[test]
fn random_positions_match_the_library() {
    let mut fens = Vec::new();
    for (i, sig) in ["KQvKR", "KRvKN", "KRRvK", "KQvK", "KRvK"].iter().enumerate() {
        fens.extend(random_legal_fens(sig, 3000, 0x7462_7374 + i as u64));
    }
    let counts = compare_with_library(&fens);
    assert!(counts.iter().all(|&c| c > 500), "wdl counts {counts:?}");
}

/// Known positions: mates, a stalemate and the README's KRvK example.
#[test]
fn known_positions() {
    let tables = doc_tables();
    assert_eq!(tables.probe("8/8/8/8/8/2k5/8/KR6 w - - 0 1"), Ok((1, 27)));
    assert_eq!(tables.probe("8/8/8/8/8/2k5/8/KR6 w - - 80 1"), Ok((0, 0)));
    // Checkmated and stalemated.
    assert_eq!(tables.probe("k7/1Q6/1K6/8/8/8/8/8 b - - 0 1"), Ok((-1, 0)));
    assert_eq!(tables.probe("k7/2Q5/1K6/8/8/8/8/8 b - - 0 1"), Ok((0, 0)));
    // Mate in one: distance 1.
    assert_eq!(tables.probe("k7/8/1K6/8/8/8/7Q/8 w - - 0 1"), Ok((1, 1)));
    // Illegal: adjacent kings; the side not to move in check.
    assert!(tables.probe("8/8/8/8/8/8/8/KkQ5 w - - 0 1").is_err());
    assert!(tables.probe("k7/8/8/8/8/8/8/QK6 w - - 0 1").is_err());
}

/// The reader rejects damaged files: a flipped byte in any section or in the header, a
/// truncated or extended file, and a file whose name does not match its run.
#[test]
fn damaged_files_are_rejected() {
    let path = table_path("KQvK");
    let good = std::fs::read(&path).unwrap();
    let t = DocTable::parse(good.clone()).unwrap();
    for (i, &(offset, length)) in t.sections.iter().enumerate() {
        for at in [offset, offset + length / 2, offset + length - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            let err = DocTable::parse(bad).err().unwrap_or_else(|| panic!("flipped byte {at} accepted"));
            assert!(err.contains(&format!("section {i} checksum")), "flipped byte {at}: {err}");
        }
    }
    for at in [0, 9, 13, 20, 33, 45, 140, 250] {
        let mut bad = good.clone();
        bad[at] ^= 0x01;
        assert!(DocTable::parse(bad).is_err(), "flipped header byte {at} accepted");
    }
    for len in [0, 100, 255, 256, 4096, t.sections[3].0 + 10, good.len() - 1] {
        let err = DocTable::parse(good[..len].to_vec()).err();
        assert!(err.is_some(), "file truncated to {len} bytes accepted");
    }
    let mut longer = good.clone();
    longer.push(0);
    assert!(DocTable::parse(longer).is_err(), "file with a trailing byte accepted");
    let dir = tempfile::tempdir().unwrap();
    let renamed = dir.path().join("KRvK.tbs");
    std::fs::write(&renamed, &good).unwrap();
    assert!(DocTable::open(&renamed).is_err(), "KQvK data under the name KRvK.tbs accepted");
}

// =======================================================================================
// Tests of version 2 (runs with pawns)
// =======================================================================================

/// Every file of the pawn folder validates (version 1 without pawns, version 2 with); in
/// version 2 section 4 lists exactly the document's stored configurations in slice order,
/// there is one level record per level value (highest first), each level's last step is the
/// longest distance stored in its slots, and the header's is the largest of the levels'.
#[test]
fn pawn_headers_sections_and_levels_are_valid() {
    let tables = pawn_doc_tables();
    for t in tables.tables.values() {
        let has_pawns = t.white.iter().chain(&t.black).any(|&k| k == Kind::P);
        assert_eq!(t.version, if has_pawns { 2 } else { 1 }, "{}", t.signature);
        assert_eq!(t.sections.len(), if has_pawns { 5 } else { 4 }, "{}", t.signature);
    }
    let mut with_pawns: Vec<&DocTable> = tables.tables.values().filter(|t| t.version == 2).collect();
    with_pawns.sort_by(|a, b| a.signature.cmp(&b.signature));
    let names: Vec<&str> = with_pawns.iter().map(|t| t.signature.as_str()).collect();
    for run in ["KPvK", "KPvKP", "KPPvK", "KQvKP", "KPvKQ", "KRPvK"] {
        assert!(names.contains(&run), "no {run} among {names:?}");
    }
    for t in with_pawns {
        let run = &t.signature;
        let l = t.pawns.as_ref().unwrap();
        let configs = stored_configurations(l.white_pawns, l.black_pawns);
        let keys: Vec<u32> = (0..configs.len()).map(|s| le_u32(t.section(4), 4 * s)).collect();
        assert_eq!(keys, configs.iter().map(|c| c.key()).collect::<Vec<_>>(), "{run}: slice keys");
        assert_eq!(l.configs, configs, "{run}");
        let (wp, bp) = t.pieces();
        assert_eq!(l.t as usize, 6 * (wp.len() + bp.len() + 1) + 6, "{run}: T");
        assert_eq!(t.n_slots, (configs.len() as u64) << l.t, "{run}: n_slots");
        assert_eq!(t.sections[4].1, 4 * configs.len() + 48 * l.levels.len(), "{run}: section 4 length");
        let pawns = (l.white_pawns + l.black_pawns) as u32;
        assert_eq!(l.levels.len() as u32, 5 * pawns + 1, "{run}: levels");
        let per = 1u64 << l.t;
        let mut largest = 0;
        for (j, rec) in l.levels.iter().enumerate() {
            assert_eq!(configs[rec.first as usize].level(), 5 * pawns - j as u32, "{run}: level {j}");
            let from = rec.first as u64 * per;
            let longest = t.longest_distance(from, from + rec.count as u64 * per);
            assert_eq!(rec.last_step, longest, "{run}: last step of level {j}");
            largest = largest.max(rec.last_step);
        }
        assert_eq!(t.last_step, largest, "{run}: header last step");
    }
}

/// The stored configurations follow the document's examples: a lone white pawn on files a
/// to d; `KPvKP` a white pawn on a-d and the black pawn anywhere else; two white pawns when
/// `f1 + f2 <= 7`, both orientations when the sum is 7. A push raises the level by 1, a
/// double step by 2; slices go by level descending, then key ascending.
#[test]
fn pawn_configurations_follow_the_documents_examples() {
    let lone = stored_configurations(1, 0);
    assert_eq!(lone.len(), 24);
    assert!(lone.iter().all(|c| c.white[0] % 8 <= 3));
    // KPvK's first slice is a7 (level 5, key 48), its last d2 (level 0, key 11).
    assert_eq!((lone[0].white[0], lone[0].level()), (48, 5));
    assert_eq!((lone[23].white[0], lone[23].level()), (11, 0));
    let one_each = stored_configurations(1, 1);
    assert_eq!(one_each.len(), 24 * 47);
    assert!(one_each.iter().all(|c| c.white[0] % 8 <= 3 && c.white[0] != c.black[0]));
    let two = stored_configurations(2, 0);
    let mut symmetric = 0;
    for set in pawn_square_sets(2) {
        let (f1, f2) = ((set[0] % 8).min(set[1] % 8), (set[0] % 8).max(set[1] % 8));
        let c = PawnConfig::new(&set, &[]);
        assert_eq!(two.contains(&c), f1 + f2 <= 7, "{set:?}");
        if f1 + f2 == 7 {
            assert!(c.symmetric() && two.contains(&c.mirror()));
            symmetric += 1;
        }
    }
    assert_eq!(symmetric, 4 * 36);
    // Levels: pushes and double steps.
    for s in 8..48u8 {
        let c = PawnConfig::new(&[s], &[63 - s]);
        assert_eq!(PawnConfig::new(&[s + 8], &[63 - s]).level(), c.level() + 1);
        assert_eq!(PawnConfig::new(&[s], &[63 - s - 8]).level(), c.level() + 1);
        if s < 16 {
            assert_eq!(PawnConfig::new(&[s + 16], &[63 - s]).level(), c.level() + 2);
        }
    }
    for list in [&lone, &one_each, &two] {
        assert!(list.windows(2).all(|p| (p[0].level(), p[1].key()) > (p[1].level(), p[0].key())));
    }
}

/// Inside each slice, the slot map sends the placements of the kings and pieces one-to-one
/// onto the slice's `2^T` slots; a stored code is 63 exactly for broken or illegal
/// positions; the bitbases agree with the codes; a position and its mirror image read equal
/// values when the file pattern is symmetric (both configurations stored). Every slice of
/// KPvK, KPvKP and KPPvK (so all their slots), every seventh slice of KQvKP and KRPvK.
#[test]
fn pawn_slots_are_a_bijection_and_illegal_codes_match() {
    let tables = pawn_doc_tables();
    let mut mirrors_checked = 0u64;
    for (run, slice_step) in [("KPvK", 1), ("KPvKP", 1), ("KPPvK", 1), ("KQvKP", 7), ("KRPvK", 7)] {
        let t = tables.table(run).unwrap();
        let l = t.pawns.as_ref().unwrap();
        let (wpieces, bpieces) = t.pieces();
        let (nw, nb) = (wpieces.len(), bpieces.len());
        let per = 1u64 << l.t;
        let mut illegal = [0u64; 2];
        let mut hit = vec![false; per as usize];
        for s in (0..l.configs.len() as u32).step_by(slice_step) {
            let config = &l.configs[s as usize];
            assert_eq!(t.find_slice(&config.white, &config.black), Some((s, false)), "{run}: slice {s}");
            let symmetric = config.symmetric();
            hit.fill(false);
            let mut men = Men {
                wk: 0,
                bk: 0,
                white: wpieces.iter().map(|&k| (k, 0)).chain(config.white.iter().map(|&q| (Kind::P, q))).collect(),
                black: bpieces.iter().map(|&k| (k, 0)).chain(config.black.iter().map(|&q| (Kind::P, q))).collect(),
            };
            let mut sq = [0u8; 4];
            for n in 0..per {
                let at = |i: usize| ((n >> (6 * i)) & 63) as u8;
                (men.wk, men.bk) = (at(0), at(1));
                for (i, q) in sq.iter_mut().enumerate().take(nw + nb) {
                    *q = at(2 + i);
                }
                for (man, &q) in men.white.iter_mut().zip(&sq[..nw]) {
                    man.1 = q;
                }
                for (man, &q) in men.black.iter_mut().zip(&sq[nw..nw + nb]) {
                    man.1 = q;
                }
                let slot = t.slot_in_slice(s, false, men.wk, men.bk, &sq[..nw], &sq[nw..nw + nb]);
                assert_eq!(slot / per, s as u64, "{run}: slot {slot} outside slice {s}");
                assert!(!std::mem::replace(&mut hit[(slot % per) as usize], true), "{run}: slot {slot} reached twice");
                let image = if symmetric { Some(tables.slot(&men.mirrored()).unwrap()) } else { None };
                for (side, wtm) in [true, false].into_iter().enumerate() {
                    let code = t.value_code(wtm, slot);
                    let bad = if wtm { men.illegal_wtm() } else { men.illegal_btm() };
                    illegal[side] += bad as u64;
                    assert_eq!(code == 63, bad, "{run} {} wtm={wtm}: code {code}", men.fen(wtm, 0));
                    let bit = t.bitbase_bit(wtm, slot);
                    let expected = if wtm {
                        code == 63 || code == 53 || (1..=50).contains(&code)
                    } else {
                        (1..=51).contains(&code)
                    };
                    assert_eq!(bit, expected, "{run} {} wtm={wtm}: code {code}, bitbase bit {bit}", men.fen(wtm, 0));
                    if let Some((image_table, image_slot)) = image {
                        assert_eq!(image_table.signature, t.signature);
                        let other = t.value_code(wtm, image_slot);
                        assert_eq!(code, other, "{run} {} wtm={wtm}: mirror image differs", men.fen(wtm, 0));
                        mirrors_checked += 1;
                    }
                }
            }
            assert!(hit.iter().all(|&h| h), "{run}: some slots of slice {s} are not reached");
        }
        assert!(illegal[0] > 0 && illegal[1] > 0, "{run}");
    }
    assert!(mirrors_checked > 100_000, "only {mirrors_checked} mirror images checked");
}

/// The reader's raw value code equals the library's at every slot of both sides of KPvK,
/// KPvKP and KPPvK.
#[test]
fn raw_pawn_codes_match_the_library_at_every_slot() {
    use tbstream::file::TableFile;
    use tbstream::Color;
    let tables = pawn_doc_tables();
    for run in ["KPvK", "KPvKP", "KPPvK"] {
        let t = tables.table(run).unwrap();
        let lib = TableFile::open(&pawn_dir().join(format!("{run}.tbs"))).unwrap();
        for (color, wtm) in [(Color::White, true), (Color::Black, false)] {
            for slot in 0..t.n_slots {
                assert_eq!(t.value_code(wtm, slot), lib.value_code(color, slot), "{run} {color:?} slot {slot}");
            }
        }
    }
}

/// Every legal KPvK position (no en-passant square), both sides to move, and the same with
/// colours exchanged (the pawn black's), probed by the reader and by `Tablebase::probe`.
#[test]
fn every_kpvk_position_matches_the_library() {
    let mut fens = Vec::new();
    for p in 8..56u8 {
        for wk in 0..64u8 {
            for bk in 0..64u8 {
                let men = Men { wk, bk, white: vec![(Kind::P, p)], black: vec![] };
                for wtm in [true, false] {
                    if if wtm { men.illegal_wtm() } else { men.illegal_btm() } {
                        continue;
                    }
                    fens.push(men.fen(wtm, 0));
                    fens.push(men.flipped().fen(!wtm, 0));
                }
            }
        }
    }
    let counts = compare_pawns_with_library(&fens);
    assert!(counts.iter().all(|&c| c > 10_000), "wdl counts {counts:?}");
}

/// 3000 random legal positions (no en-passant square) of each of KPvKP, KPPvK, KQvKP and
/// KRPvK, either colour holding either side's men (both runs of each signature), either side
/// to move, a third with a random half-move clock, probed by the reader and by the library.
#[test]
fn random_pawn_positions_match_the_library() {
    let mut fens = Vec::new();
    for (i, sig) in ["KPvKP", "KPPvK", "KQvKP", "KRPvK"].iter().enumerate() {
        let some = random_legal_fens(sig, 3000, 0x7061_776e + i as u64);
        let counts = compare_pawns_with_library(&some);
        assert!(counts.iter().all(|&c| c > 20), "{sig}: wdl counts {counts:?}");
        fens.extend(some);
    }
    // Both colours hold the pawns: white's pawns on the board, and black's.
    assert!(fens.iter().any(|f| f.split(' ').next().unwrap().contains('P')));
    assert!(fens.iter().any(|f| f.split(' ').next().unwrap().contains('p')));
}

/// Recomputes every section checksum the section table covers and the header checksum, so
/// that damage is left to the other checks.
fn repair_checksums(bytes: &mut [u8]) {
    for i in 0..5 {
        let e = 40 + 24 * i;
        let (o, l) = (le_u64(bytes, e) as usize, le_u64(bytes, e + 8) as usize);
        if l > 0 && o + l <= bytes.len() {
            let c = xxh3_64(&bytes[o..o + l]);
            bytes[e + 16..e + 24].copy_from_slice(&c.to_le_bytes());
        }
    }
    let c = xxh3_64(&bytes[..248]);
    bytes[248..256].copy_from_slice(&c.to_le_bytes());
}

/// The reader rejects damaged version-2 files: a flipped byte in any of the five sections
/// (the section checksums), a flipped byte in sections 0 to 3 with the section and header
/// checksums recomputed (the level records' checksums), damage to section 4 with its checksum
/// recomputed (keys, tiling, zero bytes, last steps), changed version-2 header fields, and a
/// truncated or extended file.
#[test]
fn damaged_version_2_files_are_rejected() {
    let good = std::fs::read(pawn_dir().join("KPvKP.tbs")).unwrap();
    let t = DocTable::parse(good.clone()).unwrap();
    let l = t.pawns.as_ref().unwrap();
    assert_eq!(t.sections.len(), 5);
    for (i, &(offset, length)) in t.sections.iter().enumerate() {
        for at in [offset, offset + length / 2, offset + length - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x10;
            let err = DocTable::parse(bad).err().unwrap_or_else(|| panic!("flipped byte {at} accepted"));
            assert!(err.contains(&format!("section {i} checksum")), "flipped byte {at}: {err}");
        }
    }
    // Sections 0 to 3: the level checksums catch what the section checksum no longer does.
    for i in 0..4 {
        let (offset, length) = t.sections[i];
        for at in [offset, offset + length / 3, offset + length - 1] {
            let mut bad = good.clone();
            bad[at] ^= 0x04;
            repair_checksums(&mut bad);
            let err = DocTable::parse(bad).err().unwrap_or_else(|| panic!("flipped byte {at} accepted"));
            assert!(err.contains(&format!("checksum of section {i}")), "flipped byte {at}: {err}");
        }
    }
    // Section 4 with its checksum recomputed.
    let (o4, n) = (t.sections[4].0, l.configs.len());
    let records = o4 + 4 * n;
    for (what, at, bit) in [
        ("a key", o4 + 4 * 5, 0x01),
        ("the last key", o4 + 4 * (n - 1), 0x02),
        ("a level's first slice", records + 48 + 1, 0x01),
        ("a level's count", records + 48 * 3 + 4, 0x01),
        ("a level's last step", records + 48 * 2 + 8, 0x40),
        ("a level's zero bytes", records + 48 + 12, 0x01),
        ("a level checksum", records + 48 * 4 + 16 + 8 * 2, 0x01),
    ] {
        let mut bad = good.clone();
        bad[at] ^= bit;
        repair_checksums(&mut bad);
        assert!(DocTable::parse(bad).is_err(), "changed {what} (byte {at}) accepted");
    }
    // The level last steps: raising the header's last step alone is caught.
    let mut bad = good.clone();
    bad[14] += 1;
    repair_checksums(&mut bad);
    assert!(DocTable::parse(bad).is_err(), "header last step above the levels' accepted");
    // Header fields of version 2, with and without the header checksum recomputed.
    for at in [8, 12, 160, 161, 164, 165, 166, 167, 168, 200, 247] {
        for repair in [false, true] {
            let mut bad = good.clone();
            bad[at] ^= 0x01;
            if repair {
                repair_checksums(&mut bad);
            }
            assert!(DocTable::parse(bad).is_err(), "flipped header byte {at} (repaired: {repair}) accepted");
        }
    }
    for len in [4096, t.sections[3].0 + 10, o4, o4 + 4 * n, good.len() - 1] {
        assert!(DocTable::parse(good[..len].to_vec()).is_err(), "file truncated to {len} bytes accepted");
    }
    let mut longer = good.clone();
    longer.push(0);
    assert!(DocTable::parse(longer).is_err(), "file with a trailing byte accepted");
}
