//! An independent reader of tbstream table files, written only from `docs/FORMAT.md`
//! (without looking at `src/format.rs`, `src/index.rs` or `src/probe.rs`), to show that the
//! document is enough to use the files.
//!
//! The reader validates the header and the sections, computes the slot of a position by the
//! document's steps, reads the bit-plane value codes and the bitbase bits, and probes FENs by
//! the document's "Probing a position" summary. Its answers are compared with the `tbstream`
//! binary (`gen`, then `probe` over stdin) on random legal positions and on every stored
//! KQvK position, and its raw codes with the library's `TableFile::value_code` at every slot.

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

/// Non-king piece kinds, in the document's order Q, R, B, N.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Kind {
    Q,
    R,
    B,
    N,
}

impl Kind {
    fn from_letter(c: char) -> Option<Kind> {
        match c.to_ascii_uppercase() {
            'Q' => Some(Kind::Q),
            'R' => Some(Kind::R),
            'B' => Some(Kind::B),
            'N' => Some(Kind::N),
            _ => None,
        }
    }

    fn letter(self) -> char {
        match self {
            Kind::Q => 'Q',
            Kind::R => 'R',
            Kind::B => 'B',
            Kind::N => 'N',
        }
    }
}

/// The name of the run `W v B` (`<white's men>v<black's men>`, pieces in the order Q R B N).
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

/// Parses a run signature such as `KQRvKR` (pieces must be in the order Q R B N).
fn parse_run(sig: &str) -> Result<(Vec<Kind>, Vec<Kind>), String> {
    let (w, b) = sig.split_once('v').ok_or_else(|| format!("signature {sig:?} has no 'v'"))?;
    let side = |s: &str| -> Result<Vec<Kind>, String> {
        let rest = s.strip_prefix('K').ok_or_else(|| format!("side {s:?} of {sig:?} does not start with K"))?;
        let kinds: Vec<Kind> = rest
            .chars()
            .map(|c| match c {
                'Q' | 'R' | 'B' | 'N' => Ok(Kind::from_letter(c).unwrap()),
                _ => Err(format!("bad piece {c:?} in {sig:?}")),
            })
            .collect::<Result<_, _>>()?;
        if kinds.windows(2).any(|p| p[0] > p[1]) {
            return Err(format!("pieces of {sig:?} are not in the order Q R B N"));
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

const HEADER_LEN: usize = 256;
const SECTION_ALIGN: u64 = 4096;

/// One table file, validated.
struct DocTable {
    signature: String,
    white: Vec<Kind>,
    black: Vec<Kind>,
    men: u8,
    last_step: u8,
    n_slots: u64,
    /// (offset, length) of the four sections.
    sections: [(usize, usize); 4],
    bytes: Vec<u8>,
    /// `rank` of each of the 128 prefixes (only those with `k < 10` are used).
    ranks: [u64; 128],
}

fn le_u16(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
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

    /// Validates the header, the section table and the section checksums.
    fn parse(bytes: Vec<u8>) -> Result<DocTable, String> {
        if bytes.len() < HEADER_LEN {
            return Err(format!("file of {} bytes is shorter than the header", bytes.len()));
        }
        if &bytes[0..8] != b"TBSTREAM" {
            return Err("bad magic".into());
        }
        let version = le_u16(&bytes, 8);
        if version != 1 {
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
        if bytes[12] != 1 {
            return Err(format!("unknown layout id {}", bytes[12]));
        }
        let men = bytes[13];
        if !(3..=6).contains(&men) {
            return Err(format!("{men} men is out of 3..6"));
        }
        let last_step = bytes[14];
        if last_step > 100 {
            return Err(format!("last step {last_step} is out of 0..100"));
        }
        if bytes[15] != 0 || bytes[136..248].iter().any(|&b| b != 0) {
            return Err("reserved header bytes are not 0".into());
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
        let n_slots = le_u64(&bytes, 32);
        if n_slots != 10 * 64u64.pow(men as u32 - 1) {
            return Err(format!("n_slots {n_slots} does not match {men} men"));
        }
        let w = n_slots / 64;
        let lengths = [8 * w, 8 * w, 48 * w, 48 * w];
        let mut sections = [(0usize, 0usize); 4];
        let mut end = 0u64;
        for (i, &expected_len) in lengths.iter().enumerate() {
            let entry = 40 + 24 * i;
            let (offset, length, checksum) =
                (le_u64(&bytes, entry), le_u64(&bytes, entry + 8), le_u64(&bytes, entry + 16));
            if offset % SECTION_ALIGN != 0 || (i == 0 && offset != SECTION_ALIGN) || offset < end {
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
            sections[i] = (o, l);
        }
        if end != bytes.len() as u64 {
            return Err(format!("file has {} bytes, section 3 ends at {end}", bytes.len()));
        }
        let mut ranks = [0u64; 128];
        for (p, r) in ranks.iter_mut().enumerate() {
            *r = prefix_rank(p as u64);
        }
        Ok(DocTable { signature, white, black, men, last_step, n_slots, sections, bytes, ranks })
    }

    fn section(&self, i: usize) -> &[u8] {
        let (o, l) = self.sections[i];
        &self.bytes[o..o + l]
    }

    /// Steps 1-6: the slot of the position with white king `wk`, black king `bk` and the
    /// pieces' squares `white`/`black` in piece order (Q R B N within each side).
    fn slot(&self, wk: u8, bk: u8, white: &[u8], black: &[u8]) -> u64 {
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
        // 5. High part: two bit sequences (held as numbers, most significant bit first),
        // interleaved one bit at a time starting with black's, from bit T-1 down.
        let (mut black_seq, mut black_len) = (k, 4);
        for &q in black {
            black_seq = black_seq << 3 | code(q).0 as u64;
            black_len += 3;
        }
        let (mut white_seq, mut white_len) = (0u64, 0);
        for &q in white {
            white_seq = white_seq << 3 | code(q).0 as u64;
            white_len += 3;
        }
        let mut index = 0u64;
        let mut next_bit = t;
        for i in 0..black_len.max(white_len) {
            for (seq, len) in [(black_seq, black_len), (white_seq, white_len)] {
                if i < len {
                    next_bit -= 1;
                    index |= ((seq >> (len - 1 - i)) & 1) << next_bit;
                }
            }
        }
        assert_eq!(next_bit, 3 * n + 6, "the high part has 4 + 3n bits");
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
}

// =======================================================================================
// Positions, attacks, and the document's probing summary
// =======================================================================================

/// The men of a position: kings and pieces by colour.
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

    fn occupancy(&self) -> u64 {
        let mut occ = (1u64 << self.wk) | (1u64 << self.bk);
        for &(_, s) in self.white.iter().chain(self.black.iter()) {
            occ |= 1u64 << s;
        }
        occ
    }

    fn overlapping(&self) -> bool {
        self.occupancy().count_ones() as usize != 2 + self.white.len() + self.black.len()
    }

    /// Is `target` attacked by the king `king` and `pieces` (all men block sliders)?
    fn attacked(&self, target: u8, king: u8, pieces: &[(Kind, u8)]) -> bool {
        let occ = self.occupancy();
        king_adjacent(king, target) || pieces.iter().any(|&(k, s)| piece_attacks(k, s, target, occ))
    }

    /// White to move: broken (two men on a square) or the black king attacked.
    fn illegal_wtm(&self) -> bool {
        self.overlapping() || self.attacked(self.bk, self.wk, &self.white)
    }

    /// Black to move: broken or the white king attacked.
    fn illegal_btm(&self) -> bool {
        self.overlapping() || self.attacked(self.wk, self.bk, &self.black)
    }

    /// Squares of each side's pieces in piece order (Q R B N; identical pieces in any order).
    fn ordered(&self) -> (Vec<u8>, Vec<u8>) {
        let sorted = |v: &[(Kind, u8)]| {
            let mut v = v.to_vec();
            v.sort();
            v.into_iter().map(|(_, s)| s).collect::<Vec<u8>>()
        };
        (sorted(&self.white), sorted(&self.black))
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

/// Does a piece of kind `k` on `from` attack `to` with the men `occ` blocking?
fn piece_attacks(k: Kind, from: u8, to: u8, occ: u64) -> bool {
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

/// A parsed FEN (pawnless; castling and en passant must be `-`).
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

    /// The value code of white-to-move (`wtm`) or black-to-move `men` in its run `W v B`.
    fn code(&self, men: &Men, wtm: bool) -> Result<u8, String> {
        let table = self.table(&men.run())?;
        let (w, b) = men.ordered();
        Ok(table.value_code(wtm, table.slot(men.wk, men.bk, &w, &b)))
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
        // 3. Wins of the side to move: the wtm value in `W v B`.
        if !men.white.is_empty() {
            match self.code(&men, true)? {
                0 => {}
                c @ 1..=50 => {
                    let d = 2 * c as i32 - 1;
                    if d <= budget {
                        return Ok((1, d));
                    }
                }
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
        let dir = tempfile::tempdir().unwrap();
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
            assert_eq!(f.len(), 4, "probe line {line:?}");
            assert_eq!(f[0], fen, "probe lines out of order");
            (f[1].parse().unwrap(), f[2].parse().unwrap())
        })
        .collect()
}

/// Compares the reader with `tbstream probe` on `fens`; returns the count of each wdl.
fn compare_with_library(fens: &[String]) -> [usize; 3] {
    let ours = doc_tables();
    let theirs = library_probe(fens);
    let mut mismatches = Vec::new();
    let mut counts = [0usize; 3];
    for (fen, &lib) in fens.iter().zip(&theirs) {
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
/// side to move; a third of them with a random half-move clock).
fn random_legal_fens(sig: &str, count: usize, seed: u64) -> Vec<String> {
    let (w, b) = parse_run(sig).unwrap();
    let mut rng = Rng(seed);
    let mut fens = Vec::with_capacity(count);
    while fens.len() < count {
        let (w, b) = if rng.below(2) == 0 { (&w, &b) } else { (&b, &w) };
        let mut occ = 0u64;
        let mut square = |rng: &mut Rng| loop {
            let s = rng.below(64) as u8;
            if occ & (1u64 << s) == 0 {
                occ |= 1u64 << s;
                return s;
            }
        };
        let wk = square(&mut rng);
        let bk = square(&mut rng);
        let white: Vec<(Kind, u8)> = w.iter().map(|&k| (k, square(&mut rng))).collect();
        let black: Vec<(Kind, u8)> = b.iter().map(|&k| (k, square(&mut rng))).collect();
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
                _ => 0,
            });
            longest = longest.max(match t.value_code(false, slot) {
                c @ 1..=51 => 2 * (c - 1),
                _ => 0,
            });
        }
        assert_eq!(t.last_step, longest, "{}: last step", t.signature);
        let w = t.n_slots / 64;
        assert_eq!(t.sections.map(|s| s.1 as u64), [8 * w, 8 * w, 48 * w, 48 * w]);
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
                    let expected = if wtm { code == 63 || (1..=50).contains(&code) } else { (1..=51).contains(&code) };
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
