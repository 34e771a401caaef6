//! An independent reader of tbstream's published table files (format version 7, the compact
//! format, and the older versions 6, 5, 4 and 3 it extends), written only from `docs/FORMAT.md`
//! (without looking at `src/`), to show that the document is enough to use the files.
//!
//! The reader validates the header (magic, version 3 to 7, the header checksum, every field,
//! the three order records of versions 4 to 7, the placement and lengths of the five sections,
//! section 3 of 816 bytes or 1632 in versions 6 and 7, the file length), each section's checksum (the
//! index of a block section, the whole of sections 3 and 4), the block indexes, the summary
//! (black's half, and in versions 6 and 7 white's) and, with pawns, section 4 (the slice keys against
//! the document's enumeration of pawn configurations, the level records). It decodes a block
//! (one constant byte, or one zstd frame of the documented size) only after checking its XXH3,
//! reads classes from the two bit planes and white-to-move distance codes from section 1, each
//! at the slot's stored position by its section's order ("Stored order (version 4)": the
//! mixed-radix digits of the men's ranks inside each unit of `2^U` slots), in version 7
//! first at the slot `s*` of its identical pieces sorted by H digit ("Identical men
//! (version 7)": a stable sort of each run of identical pieces, when their H digits are out of
//! order), and in versions 5 to 7 without pawns at the slot's kept twin ("Transposed twins
//! (version 5)": the smaller of the slot and the slot of its men transposed, when the black
//! king stands on the a1-h8 diagonal).
//! In versions 6 and 7 it resolves the don't-cares of section 1 wherever it uses a white-to-move
//! distance ("Wins by a zeroing move (version 6)": a code other than 1 stands unless one of
//! white's captures, promotions or pawn moves leaves black, to move with a fresh counter,
//! checkmated or of btm class 1 in the sub-endgame's run or, after a push, in this run, an
//! en-passant capture that a double step allows weighed in; such a win is 1 ply): in its
//! probes, in the black-to-move distances it derives by the document's one-ply rule (legal
//! moves from cozy-chess), and in its scans. It computes the slot of a position by Part II's
//! steps (with or without pawns) and probes FENs by Part I's "Probing a position (versions 3
//! to 7)", flipped board included.
//!
//! Its answers are compared with the library: pawnless tables through the `tbstream` binary
//! (`gen`, then `probe` over stdin) on random legal positions and on every stored KQvK
//! position, tables with pawns through `Tablebase::probe` on every KPvK position and on random
//! legal positions of KPvKP, KPPvK, KQvKP and KRPvK (WDL, DTZ and the five-valued category);
//! its resolved white-to-move distances with `Tablebase::probe` at every legal won position
//! whose code is not 1 of KQvKR, KRvKN, KRvKQ, KPvKP and part of KQvKP (some win by a zeroing
//! move; in KPvKP some double steps are spoiled by en passant); its classes and raw distance
//! codes (through the sorted identical men and the kept twins, don't-cares included) with
//! `Run::class` and `Run::dtz_code`
//! at every legal slot of the small tables, its slots with `Run::slot_of`, its legality with
//! `Position::from_men`, its decoded blocks with `CompactTable::block`; both halves of its
//! summaries, and its longest distances, with a scan of every position by the document's rules
//! (resolved distances). Its stored orders are checked to be permutations of each unit, to read
//! the men's codes where the slot map puts them, and to give the document's `KQvK` example; its
//! kept twins to be the smaller slot of each transposed pair, in one unit of every order,
//! reading the library's answers for a position and for its transposed image; its slots of
//! identical men out of order (KRRvK) to be read at the slot with them sorted by H digit, in
//! whole storage words, as the library reads them (`Run::slot_of`, `Run::class`,
//! `Run::dtz_code`, `Tablebase::probe`), whatever symmetry the position comes in; tables
//! rewritten as version 3 (every section in slot order, by the reader's orders, each slot of
//! identical men out of order and each dropped twin given its kept slot's value, every won
//! position's resolved distance stored, black's half of the summary) read the same in the
//! reader and in `tbstream probe`, and decode to the library's slot-order blocks
//! (`CompactTable::block_into`) but at the resolved don't-cares.

#[path = "it/cleanup.rs"]
mod cleanup;
use cleanup::remove_at_exit;
use cozy_chess::{Board, BoardBuilder};
use std::collections::HashMap;
use std::io::Write;
use std::ops::Range;
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

    fn cozy(self) -> cozy_chess::Piece {
        match self {
            Kind::Q => cozy_chess::Piece::Queen,
            Kind::R => cozy_chess::Piece::Rook,
            Kind::B => cozy_chess::Piece::Bishop,
            Kind::N => cozy_chess::Piece::Knight,
            Kind::P => cozy_chess::Piece::Pawn,
        }
    }

    /// The kind of a cozy-chess piece (`None` for a king).
    fn of_cozy(p: cozy_chess::Piece) -> Option<Kind> {
        match p {
            cozy_chess::Piece::Queen => Some(Kind::Q),
            cozy_chess::Piece::Rook => Some(Kind::R),
            cozy_chess::Piece::Bishop => Some(Kind::B),
            cozy_chess::Piece::Knight => Some(Kind::N),
            cozy_chess::Piece::Pawn => Some(Kind::P),
            cozy_chess::Piece::King => None,
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

/// Diagram code `8H + L` -> square (the diagram is a bijection).
fn square_of_code() -> &'static [u8; 64] {
    static SQUARES: OnceLock<[u8; 64]> = OnceLock::new();
    SQUARES.get_or_init(|| {
        let mut squares = [255u8; 64];
        for (q, &(h, l)) in square_codes().iter().enumerate() {
            squares[(8 * h + l) as usize] = q as u8;
        }
        squares
    })
}

/// "Transposed twins (version 5)": the transposition `t(sq) = 8 * file + rank`.
fn transpose(sq: u8) -> u8 {
    8 * (sq % 8) + sq / 8
}

/// Is the triangle square of black-king code `k` on the a1-h8 diagonal (a1, b2, c3, d4: the
/// codes 0, 4, 7, 9 the document names)?
fn on_diagonal_code(k: u64) -> bool {
    let sq = TRIANGLE[k as usize];
    sq % 8 == sq / 8
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
/// "Each next section starts at the first multiple of 8 at or after the end of the one before".
const SECTION_ALIGN: usize = 8;
/// A block section's index entry: `end` and the block's XXH3-64.
const INDEX_ENTRY: usize = 16;
/// Section 3: 101 counts and one slot (versions 6 and 7: two such halves, black's then white's).
const SUMMARY_LEN: usize = 816;
/// A level record of section 4.
const LEVEL_RECORD: usize = 16;

/// The sections, by number.
const WTM_CLASSES: usize = 0;
const WTM_CODES: usize = 1;
const BTM_CLASSES: usize = 2;
const SUMMARY: usize = 3;
const SLICES: usize = 4;

/// Distances counted by the summary: 0..=100 plies.
const SUMMARY_DISTANCES: usize = 101;

/// A decoded block.
#[derive(Debug, PartialEq, Eq)]
enum Block {
    /// One stored byte: every position of the block holds this value.
    Constant(u8),
    /// The decoded bytes of the block's zstd frame.
    Bytes(Vec<u8>),
}

/// A block section (0, 1 or 2): where each block's stored bytes lie, their checksums, and the
/// blocks decoded so far (each decoded once, after its checksum is checked).
struct BlockSection {
    /// `B`: a block holds `2^B` positions (`W` for classes, `D` for distance codes).
    bits: u32,
    /// Each block's stored bytes (a range of the file) and the XXH3-64 the index gives them.
    blocks: Vec<(Range<usize>, u64)>,
    decoded: Vec<OnceLock<Result<Block, String>>>,
}

/// One half of section 3 (black's, or in versions 6 and 7 white's).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Summary {
    /// Legal btm positions lost (wtm positions won) in `d` plies, `d` = 0..=100, each counted
    /// once up to symmetry.
    counts: Vec<u64>,
    /// The smallest counted slot lost (won) in the longest distance with a count, or
    /// `u64::MAX`.
    first_longest: u64,
}

/// One level record of section 4.
#[derive(Clone, Debug)]
struct LevelRecord {
    first: u32,
    count: u32,
    /// The longest distance stored in the level's slots, either side to move (plies).
    longest: u8,
}

/// The slices (pawn configurations) and the levels of a run with pawns.
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

/// The header's order records: three of 9 bytes from byte 172, for sections 0, 1, 2.
const ORDER_RECORDS: usize = 172;
const ORDER_RECORD: usize = 9;
/// A digit byte of an order record: the black king (runs with pawns only).
const DIGIT_BLACK_KING: u8 = 0x80;
/// The padding of an order record's digits (and its digits when `U = 0`).
const DIGIT_PAD: u8 = 0xFF;

/// A man whose square the index codes in 6 bits ("Stored order (version 4)", "Codes").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IndexMan {
    /// Its square number (after the orientation), index bits 0..5.
    WhiteKing,
    /// Non-king piece `p` (piece order; pawns are not pieces): its diagram code `8H + L`.
    Piece(usize),
    /// With pawns only: the black king's diagram code `8H + L`.
    BlackKing,
}

impl IndexMan {
    /// The man a digit byte names (`0`, `1 + p`, `0x80`), if the layout has it.
    fn of_digit(byte: u8, pieces: usize, has_pawns: bool) -> Option<IndexMan> {
        match byte {
            0 => Some(IndexMan::WhiteKing),
            DIGIT_BLACK_KING if has_pawns => Some(IndexMan::BlackKing),
            b if (1..=pieces).contains(&(b as usize)) => Some(IndexMan::Piece(b as usize - 1)),
            _ => None,
        }
    }

    /// `code(q)`: the code of square `q` for this man (the square itself for the white king,
    /// the diagram code `8H + L` for the others).
    fn code(self, q: u8) -> u8 {
        match self {
            IndexMan::WhiteKing => q,
            _ => {
                let (h, l) = square_codes()[q as usize];
                8 * h + l
            }
        }
    }
}

/// Where the index holds each man's code: for each man with a 6-bit code, the index bit of
/// each code bit (`L` = code bits 0..2, `H` = 3..5; the white king's square bits 0..5), from
/// Part II steps 5 (without pawns: the black king's `k` is no square code and is left out) and
/// version 2's step 3 (with pawns).
fn code_bit_positions(t: u32, white_pieces: usize, black_pieces: usize, has_pawns: bool) -> Vec<(IndexMan, [u32; 6])> {
    let n = white_pieces + black_pieces;
    // The high part's two sequences, most significant bit first, each bit labelled with its
    // man and code bit (`None`: a bit of the black-king code `k` without pawns).
    let h_bits = |m: IndexMan| [Some((m, 5)), Some((m, 4)), Some((m, 3))];
    let mut black: Vec<Option<(IndexMan, u32)>> =
        if has_pawns { h_bits(IndexMan::BlackKing).to_vec() } else { vec![None; 4] };
    black.extend((white_pieces..n).flat_map(|p| h_bits(IndexMan::Piece(p))));
    let white: Vec<Option<(IndexMan, u32)>> = (0..white_pieces).flat_map(|p| h_bits(IndexMan::Piece(p))).collect();
    let mut high = Vec::new();
    for i in 0..black.len().max(white.len()) {
        high.extend(black.get(i).copied());
        high.extend(white.get(i).copied());
    }
    let mut men: Vec<(IndexMan, [u32; 6])> = vec![(IndexMan::WhiteKing, [0, 1, 2, 3, 4, 5])];
    men.extend((0..n).map(|p| (IndexMan::Piece(p), [6 + 3 * (n - 1 - p) as u32; 6])));
    if has_pawns {
        men.push((IndexMan::BlackKing, [6 + 3 * n as u32; 6]));
    }
    // Low part: the L digits (code bits 0..2) at their 3 bits.
    for (m, pos) in men.iter_mut() {
        if *m != IndexMan::WhiteKing {
            let base = pos[0];
            for (j, p) in pos.iter_mut().enumerate().take(3) {
                *p = base + j as u32;
            }
        }
    }
    // High part: the first bit at T - 1, the next at T - 2, ...
    for (k, label) in high.iter().enumerate() {
        if let Some((m, j)) = *label {
            let man = men.iter_mut().find(|(x, _)| *x == m).expect("a man of the layout");
            man.1[j as usize] = t - 1 - k as u32;
        }
    }
    men
}

/// One digit of a stored order.
#[derive(Clone, Debug)]
struct Digit {
    man: IndexMan,
    /// The index bit of each of its code bits.
    positions: [u32; 6],
    /// Its radix bits, `6 - |F_m|`.
    bits: u32,
    /// Its place: the radix bits of the digits after it.
    shift: u32,
    /// `r_m` of each code `c_m` (a function of the code alone, `F_m` being the section's).
    rank: [u8; 64],
}

/// A block section's order ("Stored order (version 4)").
#[derive(Clone, Debug)]
struct StoredOrder {
    /// `U`: 0 for slot order.
    u: u32,
    /// Slowest first.
    digits: Vec<Digit>,
    /// The 9 bytes of the record (all 0 for a version 3 file).
    record: [u8; ORDER_RECORD],
}

impl StoredOrder {
    /// Slot order (version 3, or `U = 0`).
    fn slot_order(record: [u8; ORDER_RECORD]) -> StoredOrder {
        StoredOrder { u: 0, digits: Vec::new(), record }
    }

    /// Parses and validates an order record for a layout with `t` index bits, of which
    /// `below` lie below the prefix (without pawns) or the slice (with pawns), and the men
    /// `men` (`code_bit_positions`).
    fn parse(
        record: [u8; ORDER_RECORD],
        below: u32,
        men: &[(IndexMan, [u32; 6])],
        pieces: usize,
        has_pawns: bool,
    ) -> Result<StoredOrder, String> {
        let u = record[0] as u32;
        let digit_bytes = &record[1..];
        if u == 0 {
            if digit_bytes.iter().any(|&b| b != DIGIT_PAD) {
                return Err(format!("order record {record:02x?}: U = 0 with digits"));
            }
            return Ok(StoredOrder::slot_order(record));
        }
        if u > below {
            return Err(format!("order record {record:02x?}: U = {u} exceeds the {below} index bits below the prefix"));
        }
        let used = digit_bytes.iter().position(|&b| b == DIGIT_PAD).unwrap_or(digit_bytes.len());
        if digit_bytes[used..].iter().any(|&b| b != DIGIT_PAD) {
            return Err(format!("order record {record:02x?}: a digit after the padding"));
        }
        let free_bits = |pos: &[u32; 6]| pos.iter().filter(|&&p| p < u).count() as u32;
        let mut digits: Vec<Digit> = Vec::with_capacity(used);
        for &b in &digit_bytes[..used] {
            let man = IndexMan::of_digit(b, pieces, has_pawns)
                .ok_or_else(|| format!("order record {record:02x?}: digit {b:#04x} names no man of the layout"))?;
            if digits.iter().any(|d| d.man == man) {
                return Err(format!("order record {record:02x?}: {man:?} is a digit twice"));
            }
            let positions = men.iter().find(|(m, _)| *m == man).expect("every man of the layout has a code").1;
            let bits = free_bits(&positions);
            if bits == 0 {
                return Err(format!("order record {record:02x?}: {man:?} has no free bits"));
            }
            digits.push(Digit { man, positions, bits, shift: 0, rank: [0; 64] });
        }
        if let Some((m, _)) = men.iter().find(|(m, p)| free_bits(p) > 0 && !digits.iter().any(|d| d.man == *m)) {
            return Err(format!("order record {record:02x?}: {m:?} has free bits but is no digit"));
        }
        let total: u32 = digits.iter().map(|d| d.bits).sum();
        if total != u {
            return Err(format!("order record {record:02x?}: the radix bits add up to {total}, not U = {u}"));
        }
        // Places: the last digit fastest.
        let mut shift = 0;
        for d in digits.iter_mut().rev() {
            d.shift = shift;
            shift += d.bits;
            // F_m as a mask of code bits: those at index bits >= U.
            let fixed = (0..6).filter(|&j| d.positions[j] >= u).fold(0u8, |f, j| f | 1 << j);
            let mut square_of = [0u8; 64];
            for q in 0..64u8 {
                square_of[d.man.code(q) as usize] = q;
            }
            for c in 0..64u8 {
                let below_it = (0..square_of[c as usize]).filter(|&q| d.man.code(q) & fixed == c & fixed).count();
                d.rank[c as usize] = below_it as u8;
            }
        }
        Ok(StoredOrder { u, digits, record })
    }

    /// `stored(s)` of the slot `slot` whose index is `index`.
    fn stored(&self, slot: u64, index: u64) -> u64 {
        if self.u == 0 {
            return slot;
        }
        let mut offset = 0u64;
        for d in &self.digits {
            let code = (0..6).fold(0usize, |c, j| c | (((index >> d.positions[j]) & 1) as usize) << j);
            offset += (d.rank[code] as u64) << d.shift;
        }
        (slot >> self.u << self.u) + offset
    }
}

/// One table file, validated.
struct DocTable {
    signature: String,
    /// All of each side's men but the king (pawns last), as in the signature.
    white: Vec<Kind>,
    black: Vec<Kind>,
    men: u8,
    /// Byte 14: the longest distance stored, in plies.
    longest: u8,
    /// Byte 15. Bit 0: every cursed position is marked; bit 1: every wtm class 3 is cursed.
    flags: u8,
    /// Bytes 240..244: the last steps beyond 100 that added wtm and btm positions (0 if none).
    cursed_steps: [u16; 2],
    n_slots: u64,
    /// (offset, length) of the five sections.
    sections: Vec<(usize, usize)>,
    /// Sections 0, 1 and 2.
    block_sections: Vec<BlockSection>,
    /// Section 3's first half: black's distances.
    summary: Summary,
    /// Versions 6 and 7: section 3's second half, white's distances.
    wtm_summary: Option<Summary>,
    bytes: Vec<u8>,
    /// `rank` of each of the 128 prefixes (without pawns; only those with `k < 10` are used).
    ranks: [u64; 128],
    /// The stored prefixes (`k < 10`) in increasing order: the prefix of each rank.
    prefixes: Vec<u64>,
    /// Byte 8: 3 to 7.
    version: u16,
    /// `T`: the index bits (Part II step 5 without pawns, version 2's step 3 with pawns).
    index_bits: u32,
    /// The stored order of each block section (sections 0, 1, 2).
    orders: Vec<StoredOrder>,
    /// Where the index holds each man's code (`code_bit_positions`).
    men_codes: Vec<(IndexMan, [u32; 6])>,
    /// Versions 5 to 7 without pawns: the dropped transposed twins are don't-cares, read at
    /// their kept twins ("Transposed twins (version 5)").
    twins_dropped: bool,
    /// The runs of identical pieces (same colour and role, adjacent in piece order; two or
    /// more; pawns are not pieces), as ranges of piece numbers `p` (Part II step 4).
    identical_runs: Vec<Range<usize>>,
    /// Version 7 with identical pieces (`identical_runs` not empty): a slot whose
    /// identical men have H digits out of order is a don't-care, read at the slot with them
    /// sorted ("Identical men (version 7)").
    identical_dropped: bool,
    /// Versions 6 and 7: section 1 holds a don't-care at a win by a zeroing move, which a reader of
    /// distances finds by searching white's zeroing moves ("Wins by a zeroing move (version
    /// 6)").
    zeroing_dont_cares: bool,
    /// With pawns only.
    pawns: Option<PawnLayout>,
    /// A scan of every position by the document's rules, made on first use (tests only).
    scan: OnceLock<Result<Scan, String>>,
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

/// The distance in plies of a wtm value code ("Values": `c` in 1..50 is `2c - 1` plies, 53 is
/// exactly 100 plies); `None` for a code that is no wtm win under the rule.
fn wtm_plies(code: u8) -> Option<u32> {
    match code {
        1..=50 => Some(2 * code as u32 - 1),
        53 => Some(100),
        _ => None,
    }
}

/// Section 3's length: 816 bytes, 1632 in versions 6 and 7 (black's half, then white's).
fn summary_len(version: u16) -> usize {
    if version >= 6 {
        2 * SUMMARY_LEN
    } else {
        SUMMARY_LEN
    }
}

/// One half of section 3, checked: btm losses are even (`d` = 0..100), wtm wins odd in 1..99
/// or exactly 100 (code 53); the slot is that of a counted position (below `n_slots`), or
/// 2^64 - 1 when nothing is counted; no distance counted is longer than the header's longest.
fn parse_summary(s: &[u8], wtm: bool, n_slots: u64, longest: u8) -> Result<Summary, String> {
    let side = if wtm { "wtm wins" } else { "btm losses" };
    let counts: Vec<u64> = (0..SUMMARY_DISTANCES).map(|d| le_u64(s, 8 * d)).collect();
    let first_longest = le_u64(s, 8 * SUMMARY_DISTANCES);
    let possible = |d: usize| if wtm { !d.is_multiple_of(2) || d == 100 } else { d.is_multiple_of(2) };
    if let Some(d) = (0..SUMMARY_DISTANCES).find(|&d| counts[d] > 0 && !possible(d)) {
        return Err(format!("the summary counts {side} in {d} plies"));
    }
    match counts.iter().rposition(|&c| c > 0) {
        None if first_longest != u64::MAX => {
            return Err(format!("the summary has no {side} but slot {first_longest}"));
        }
        Some(d) if first_longest >= n_slots || d > longest as usize => {
            return Err(format!(
                "the summary's longest of the {side} ({d} plies, slot {first_longest}) does not fit the table \
                 ({n_slots} slots, longest distance {longest})"
            ));
        }
        _ => {}
    }
    Ok(Summary { counts, first_longest })
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

    /// Validates the header, the section table, the section checksums (the indexes of the
    /// block sections, the whole of sections 3 and 4), the block indexes, the summary and,
    /// with pawns, section 4. Blocks are checked when they are first decoded ("A reader checks
    /// a block's checksum before it uses the block"); `check_all_blocks` checks them all.
    fn parse(bytes: Vec<u8>) -> Result<DocTable, String> {
        if bytes.len() < HEADER_LEN {
            return Err(format!("file of {} bytes is shorter than the header", bytes.len()));
        }
        if &bytes[0..8] != b"TBSTREAM" {
            return Err("bad magic".into());
        }
        let version = le_u16(&bytes, 8);
        if version == 1 || version == 2 {
            return Err(format!(
                "format version {version} is the uncompressed format (Part II), which `tbstream compact` converts"
            ));
        }
        if !(3..=7).contains(&version) {
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
        let layout = bytes[12];
        let men = bytes[13];
        if !(3..=6).contains(&men) {
            return Err(format!("{men} men is out of 3..6"));
        }
        let longest = bytes[14];
        if longest > 100 {
            return Err(format!("longest distance {longest} is out of 0..100"));
        }
        let flags = bytes[15];
        if flags > 3 {
            return Err(format!("flags byte {flags} has unknown bits"));
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
        let has_pawns = white_pawns + black_pawns > 0;
        if layout != if has_pawns { 2 } else { 1 } {
            return Err(format!("layout {layout} for run {signature}"));
        }
        if bytes[160] != 1 {
            return Err(format!("codec {} is not zstd (1)", bytes[160]));
        }
        let (class_bits, code_bits) = (bytes[161] as u32, bytes[162] as u32);
        // Blocks hold whole words of 64 slots.
        if !(6..=40).contains(&class_bits) || !(6..=40).contains(&code_bits) {
            return Err(format!("block sizes W = {class_bits}, D = {code_bits} are out of 6..40"));
        }
        if bytes[163] != 0 {
            return Err(format!("header byte 163 is {}, not 0", bytes[163]));
        }
        let (n_slices, t, n_levels, expected_slots) = if has_pawns {
            if white_pawns + black_pawns > 4 {
                return Err(format!("run {signature} has more than 4 pawns"));
            }
            let n_slices = le_u32(&bytes, 164);
            let t = bytes[168] as u32;
            if t != 6 * (pieces as u32 + 1) + 6 {
                return Err(format!("T = {t} for {pieces} pieces, expected {}", 6 * (pieces + 1) + 6));
            }
            if (bytes[169] as usize, bytes[170] as usize) != (white_pawns, black_pawns) {
                return Err(format!("pawn counts {}/{} do not match run {signature}", bytes[169], bytes[170]));
            }
            (n_slices, t, bytes[171] as usize, (n_slices as u64) << t)
        } else {
            if bytes[164..172].iter().any(|&b| b != 0) {
                return Err("the pawn fields of a run without pawns are not 0".into());
            }
            (0, 0, 0, 10 * 64u64.pow(men as u32 - 1))
        };
        // Versions 4 to 7: the order records (version 3: none, bytes 172..199 are reserved, 0).
        let records_end = ORDER_RECORDS + 3 * ORDER_RECORD;
        let reserved_from = if version == 3 { ORDER_RECORDS } else { records_end };
        if bytes[reserved_from..240].iter().chain(&bytes[244..248]).any(|&b| b != 0) {
            return Err("reserved header bytes are not 0".into());
        }
        let index_bits = if has_pawns { t } else { 4 + 6 * pieces as u32 + 6 };
        let below = if has_pawns { index_bits } else { index_bits - 7 };
        let white_pieces = white.iter().filter(|&&k| k != Kind::P).count();
        let men_codes = code_bit_positions(index_bits, white_pieces, pieces - white_pieces, has_pawns);
        let mut orders = Vec::with_capacity(3);
        for k in 0..3 {
            let record: [u8; ORDER_RECORD] =
                bytes[ORDER_RECORDS + ORDER_RECORD * k..][..ORDER_RECORD].try_into().unwrap();
            orders.push(if version == 3 {
                StoredOrder::slot_order(record)
            } else {
                StoredOrder::parse(record, below, &men_codes, pieces, has_pawns)
                    .map_err(|e| format!("section {k}: {e}"))?
            });
        }
        // The longest cursed steps: 0, or beyond 100 rounded up to odd (wtm) or even (btm).
        let cursed_steps = [le_u16(&bytes, 240), le_u16(&bytes, 242)];
        for (side, (&step, parity)) in ["wtm", "btm"].iter().zip(cursed_steps.iter().zip([1, 0])) {
            if step != 0 && (step <= 100 || step % 2 != parity) {
                return Err(format!("{side} longest cursed step {step} is neither 0 nor beyond 100 with its parity"));
            }
        }
        let n_slots = le_u64(&bytes, 32);
        if n_slots != expected_slots {
            return Err(format!("n_slots {n_slots}, expected {expected_slots}"));
        }
        // The section table.
        let bits = [class_bits, code_bits, class_bits];
        let n_blocks: Vec<usize> = bits.iter().map(|&b| n_slots.div_ceil(1 << b) as usize).collect();
        let section_4_len = 4 * n_slices as usize + LEVEL_RECORD * n_levels;
        let mut sections = Vec::with_capacity(5);
        let mut end = HEADER_LEN;
        for i in 0..5 {
            let entry = 40 + 24 * i;
            let (offset, length, checksum) =
                (le_u64(&bytes, entry), le_u64(&bytes, entry + 8), le_u64(&bytes, entry + 16));
            let expected = end.next_multiple_of(SECTION_ALIGN);
            if offset != expected as u64 {
                return Err(format!("section {i} at offset {offset}, expected {expected}"));
            }
            if expected > bytes.len() || length > (bytes.len() - expected) as u64 {
                return Err(format!(
                    "section {i} ({length} bytes at {offset}) runs past the end of the file ({} bytes)",
                    bytes.len()
                ));
            }
            if bytes[end..expected].iter().any(|&b| b != 0) {
                return Err(format!("the bytes before section {i} are not 0"));
            }
            let (o, l) = (expected, length as usize);
            let checked = match i {
                WTM_CLASSES | WTM_CODES | BTM_CLASSES => {
                    // The index, then at least one byte per block.
                    let blocks = n_blocks.get(i).copied().unwrap_or(0);
                    let index = INDEX_ENTRY * blocks;
                    if l < index + blocks {
                        return Err(format!("section {i} of {l} bytes cannot hold {blocks} blocks"));
                    }
                    index
                }
                SUMMARY if l != summary_len(version) => {
                    return Err(format!("section 3 has {l} bytes, expected {}", summary_len(version)));
                }
                SLICES if l != section_4_len => {
                    return Err(format!("section 4 has {l} bytes, expected {section_4_len}"));
                }
                _ => l,
            };
            let computed = xxh3_64(&bytes[o..o + checked]);
            if computed != checksum {
                return Err(format!("section {i} checksum mismatch: stored {checksum:016x}, computed {computed:016x}"));
            }
            sections.push((o, l));
            end = o + l;
        }
        if end != bytes.len() {
            return Err(format!("file has {} bytes, section 4 ends at {end}", bytes.len()));
        }
        // The block indexes: block i's stored bytes are data bytes end(i-1)..end(i), never
        // empty, and the last block ends at the end of the section.
        let mut block_sections = Vec::with_capacity(3);
        for (i, (&b, &n)) in bits.iter().zip(&n_blocks).enumerate() {
            let (o, l) = sections[i];
            let data = o + INDEX_ENTRY * n;
            let data_len = (l - INDEX_ENTRY * n) as u64;
            let mut blocks = Vec::with_capacity(n);
            let mut previous = 0u64;
            for block in 0..n {
                let entry = o + INDEX_ENTRY * block;
                let (block_end, checksum) = (le_u64(&bytes, entry), le_u64(&bytes, entry + 8));
                if block_end <= previous || block_end > data_len {
                    return Err(format!(
                        "section {i} block {block}: end {block_end} after {previous} (data of {data_len} bytes)"
                    ));
                }
                blocks.push((data + previous as usize..data + block_end as usize, checksum));
                previous = block_end;
            }
            if previous != data_len {
                return Err(format!("section {i}: the last block ends at {previous} of {data_len} data bytes"));
            }
            let decoded = (0..n).map(|_| OnceLock::new()).collect();
            block_sections.push(BlockSection { bits: b, blocks, decoded });
        }
        // The summary: black's half, then in versions 6 and 7 white's.
        let s = &bytes[sections[SUMMARY].0..][..summary_len(version)];
        let summary = parse_summary(&s[..SUMMARY_LEN], false, n_slots, longest)?;
        let wtm_summary =
            if version >= 6 { Some(parse_summary(&s[SUMMARY_LEN..], true, n_slots, longest)?) } else { None };
        let mut ranks = [0u64; 128];
        for (p, r) in ranks.iter_mut().enumerate() {
            *r = prefix_rank(p as u64);
        }
        let prefixes: Vec<u64> = (0..128).filter(|&p| prefix_king_code(p) < 10).collect();
        // Runs of identical pieces: piece order is white's pieces, then black's (Part II step
        // 4), so a run never crosses from white's to black's.
        // Pawns are not pieces here (they sit last on each side: Q R B N P).
        let mut identical_runs = Vec::new();
        let mut first = 0;
        for side in [&white, &black] {
            let side_pieces: Vec<&Kind> = side.iter().filter(|&&k| k != Kind::P).collect();
            for run in side_pieces.chunk_by(|a, b| a == b) {
                if run.len() > 1 {
                    identical_runs.push(first..first + run.len());
                }
                first += run.len();
            }
        }
        let mut table = DocTable {
            signature,
            white,
            black,
            men,
            longest,
            flags,
            cursed_steps,
            n_slots,
            sections,
            block_sections,
            summary,
            wtm_summary,
            bytes,
            ranks,
            prefixes,
            version,
            index_bits,
            orders,
            men_codes,
            twins_dropped: version >= 5 && !has_pawns,
            identical_dropped: version >= 7 && !identical_runs.is_empty(),
            identical_runs,
            zeroing_dont_cares: version >= 6,
            pawns: None,
            scan: OnceLock::new(),
        };
        if has_pawns {
            table.pawns = Some(table.parse_section_4(n_slices, t, white_pawns, black_pawns, n_levels)?);
        }
        Ok(table)
    }

    /// Section 4: the slice keys must be the document's stored configurations in slice order;
    /// the levels must tile the slices in order (one record per level value, levels
    /// descending), with zero bytes 9..16, and the header's longest distance is the largest of
    /// the levels' (the levels cover every slot).
    fn parse_section_4(
        &self,
        n_slices: u32,
        t: u32,
        white_pawns: usize,
        black_pawns: usize,
        n_levels: usize,
    ) -> Result<PawnLayout, String> {
        let sec = self.section(SLICES);
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
            let r = &sec[4 * n_slices as usize + LEVEL_RECORD * j..][..LEVEL_RECORD];
            let record = LevelRecord { first: le_u32(r, 0), count: le_u32(r, 4), longest: r[8] };
            if r[9..16].iter().any(|&b| b != 0) {
                return Err(format!("level {j}: bytes 9..16 are not 0"));
            }
            if record.first != next || record.count == 0 || record.first as u64 + record.count as u64 > n_slices as u64
            {
                return Err(format!("level {j} ({record:?}) does not continue the tiling at slice {next}"));
            }
            next = record.first + record.count;
            if record.longest > 100 {
                return Err(format!("level {j}: longest distance {} is out of 0..100", record.longest));
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
            levels.push(record);
        }
        if next != n_slices {
            return Err(format!("the levels cover {next} of {n_slices} slices"));
        }
        let max_longest = levels.iter().map(|l| l.longest).max().unwrap_or(0);
        if self.longest != max_longest {
            return Err(format!("header longest distance {}, the levels' largest is {max_longest}", self.longest));
        }
        Ok(PawnLayout { t, white_pawns, black_pawns, configs, slice_of, levels })
    }

    fn section(&self, i: usize) -> &[u8] {
        let (o, l) = self.sections[i];
        &self.bytes[o..o + l]
    }

    /// Block `i` of block section `section`, decoded: its checksum is checked first, then it
    /// is one constant byte or one zstd frame of the documented decoded size.
    fn block(&self, section: usize, i: usize) -> Result<&Block, String> {
        let s = &self.block_sections[section];
        s.decoded[i].get_or_init(|| self.decode_block(section, i)).as_ref().map_err(|e| e.clone())
    }

    fn decode_block(&self, section: usize, i: usize) -> Result<Block, String> {
        let s = &self.block_sections[section];
        let (range, checksum) = &s.blocks[i];
        let stored = &self.bytes[range.clone()];
        let at = |what: String| format!("{}.tbs: section {section} block {i}: {what}", self.signature);
        let computed = xxh3_64(stored);
        if computed != *checksum {
            return Err(at(format!("checksum mismatch: stored {checksum:016x}, computed {computed:016x}")));
        }
        if let [v] = *stored {
            if section != WTM_CODES && v > 3 {
                return Err(at(format!("constant block of class {v}")));
            }
            return Ok(Block::Constant(v));
        }
        // Positions of this block; the class sections take 16 bytes per word of 64 slots
        // (`n_slots` is a multiple of 64), the distance section one byte per slot.
        let first = (i as u64) << s.bits;
        let positions = (self.n_slots - first).min(1 << s.bits) as usize;
        let expected = if section == WTM_CODES { positions } else { positions / 64 * 16 };
        match zstd::zstd_safe::get_frame_content_size(stored) {
            Ok(Some(size)) if size == expected as u64 => {}
            other => return Err(at(format!("zstd frame content size {other:?}, expected {expected}"))),
        }
        match zstd::zstd_safe::find_frame_compressed_size(stored) {
            Ok(n) if n == stored.len() => {}
            other => return Err(at(format!("not one zstd frame of {} bytes ({other:?})", stored.len()))),
        }
        let decoded = zstd::bulk::decompress(stored, expected).map_err(|e| at(format!("zstd: {e}")))?;
        if decoded.len() != expected {
            return Err(at(format!("{} decoded bytes, expected {expected}", decoded.len())));
        }
        Ok(Block::Bytes(decoded))
    }

    /// Decodes every block of the three block sections (checking every block checksum).
    fn check_all_blocks(&self) -> Result<(), String> {
        for (section, s) in self.block_sections.iter().enumerate() {
            for i in 0..s.blocks.len() {
                self.block(section, i)?;
            }
        }
        Ok(())
    }

    /// The index (Part II) of `slot`: without pawns step 6 undone (the prefix of rank
    /// `slot >> (T - 7)`, then the low bits), with pawns the slot's bits inside its slice.
    fn index_of_slot(&self, slot: u64) -> u64 {
        let t = self.index_bits;
        if self.pawns.is_some() {
            return slot & ((1u64 << t) - 1);
        }
        let low_bits = t - 7;
        self.prefixes[(slot >> low_bits) as usize] << low_bits | (slot & ((1u64 << low_bits) - 1))
    }

    /// Without pawns, the position of `slot` (Part II's steps undone): the white king's
    /// square, the black king's (the triangle square of its code `k`), and the squares of the
    /// non-king pieces in piece order (the first `white.len()` white's), each read from the
    /// index bits where `code_bit_positions` puts its code. Step 1 changes nothing in it.
    fn position_of_slot(&self, slot: u64) -> (u8, u8, [u8; 4]) {
        assert!(self.pawns.is_none(), "{}", self.signature);
        let index = self.index_of_slot(slot);
        let bk = TRIANGLE[prefix_king_code(index >> (self.index_bits - 7)) as usize];
        let (mut wk, mut pieces) = (0, [0u8; 4]);
        for &(man, positions) in &self.men_codes {
            let code = (0..6).fold(0u8, |c, j| c | (((index >> positions[j]) & 1) as u8) << j);
            match man {
                IndexMan::WhiteKing => wk = code,
                IndexMan::Piece(p) => pieces[p] = square_of_code()[code as usize],
                IndexMan::BlackKing => unreachable!("no black-king code without pawns"),
            }
        }
        (wk, bk, pieces)
    }

    /// "Transposed twins (version 5)": the image slot `s'` of `slot`, the slot of its black
    /// king's same code and every other man transposed (`t(sq) = 8 * file + rank`), the
    /// pieces in the same piece order (identical men not re-sorted).
    fn image_slot(&self, slot: u64) -> u64 {
        let (wk, bk, pieces) = self.position_of_slot(slot);
        let n_white = self.white.len();
        let image: Vec<u8> = pieces[..n_white + self.black.len()].iter().map(|&q| transpose(q)).collect();
        self.slot(transpose(wk), bk, &image[..n_white], &image[n_white..])
    }

    /// `kept(s)`: the transposed twin that holds the value of `slot`. In versions 5 to 7
    /// without pawns, when the black king stands on the a1-h8 diagonal (codes 0, 4, 7, 9), the
    /// smaller of the slot and its image slot ("Transposed twins (version 5)"); else the slot
    /// itself. (In version 7 a reader goes first to `sorted_slot`: `resolve`.)
    fn kept(&self, slot: u64) -> u64 {
        if !self.twins_dropped {
            return slot;
        }
        let index = self.index_of_slot(slot);
        if !on_diagonal_code(prefix_king_code(index >> (self.index_bits - 7))) {
            return slot;
        }
        slot.min(self.image_slot(slot))
    }

    /// The 6-bit diagram code `HL` of each non-king piece of index `index`, in piece order,
    /// read from the index bits where `code_bit_positions` puts them (Part II step 5).
    fn piece_codes(&self, index: u64) -> [u8; 4] {
        let mut codes = [0u8; 4];
        for &(man, positions) in &self.men_codes {
            if let IndexMan::Piece(p) = man {
                codes[p] = (0..6).fold(0u8, |c, j| c | (((index >> positions[j]) & 1) as u8) << j);
            }
        }
        codes
    }

    /// "Identical men (version 7)": are the H digits (`code >> 3`) of every run of identical
    /// pieces of `slot` non-decreasing (`H(p) <= H(p+1) <= ...`)? Always true but in version 7.
    fn identical_in_order(&self, slot: u64) -> bool {
        if !self.identical_dropped {
            return true;
        }
        let codes = self.piece_codes(self.index_of_slot(slot));
        self.identical_runs.iter().all(|run| codes[run.clone()].windows(2).all(|p| p[0] >> 3 <= p[1] >> 3))
    }

    /// `s*` ("Identical men (version 7)"): for a slot whose identical men are out of order, the
    /// slot of the same black-king code `k`, the same white-king square, and each run of
    /// identical pieces given its squares sorted by H digit (a stable sort: men of equal H
    /// digit keep their order; with pawns, in the same slice); else the slot itself. The
    /// pieces' codes move in the index bits (Part II step 5), and step 6 gives the slot.
    fn sorted_slot(&self, slot: u64) -> u64 {
        if self.identical_in_order(slot) {
            return slot;
        }
        // Each piece's 6-bit diagram code, read from and written back to the index bits where
        // `code_bit_positions` puts it: sorting the codes by H digit moves the men.
        let index = self.index_of_slot(slot);
        let mut codes = self.piece_codes(index);
        for run in &self.identical_runs {
            codes[run.clone()].sort_by_key(|&c| c >> 3);
        }
        let mut sorted = index;
        for &(man, positions) in &self.men_codes {
            if let IndexMan::Piece(p) = man {
                for (j, &bit) in positions.iter().enumerate() {
                    sorted = sorted & !(1u64 << bit) | (((codes[p] >> j) & 1) as u64) << bit;
                }
            }
        }
        if self.pawns.is_some() {
            // The same slice: the slot's bits above the index inside it.
            return slot >> self.index_bits << self.index_bits | sorted;
        }
        let low_bits = self.index_bits - 7;
        self.ranks[(sorted >> low_bits) as usize] << low_bits | (sorted & ((1u64 << low_bits) - 1))
    }

    /// The slot whose stored value a reader of `slot` reads: in version 7 first `s*`
    /// (`sorted_slot`), then in versions 5 to 7 its kept twin (`kept`): `kept(s*)`.
    fn resolve(&self, slot: u64) -> u64 {
        self.kept(self.sorted_slot(slot))
    }

    /// `stored(s)`: the stored position of `slot` in block section `section`, by the
    /// section's order record ("Stored order (version 4)"); the reads below take it of the
    /// slot the table holds the value at (`resolve`: identical men sorted, then the kept
    /// twin).
    fn stored(&self, section: usize, slot: u64) -> u64 {
        let order = &self.orders[section];
        if order.u == 0 {
            return slot;
        }
        order.stored(slot, self.index_of_slot(slot))
    }

    /// The class of `slot` for white (`wtm`) or black to move: at the stored position `p` of
    /// the resolved slot (`resolve`) in its section, bit `b` of the planes `L`, `H` of `p`'s
    /// word, `L + 2H`.
    fn class(&self, wtm: bool, slot: u64) -> Result<u8, String> {
        assert!(slot < self.n_slots, "{}: slot {slot} of {}", self.signature, self.n_slots);
        let section = if wtm { WTM_CLASSES } else { BTM_CLASSES };
        self.class_at(section, self.stored(section, self.resolve(slot)))
    }

    /// The class at stored position `p` of class section `section`.
    fn class_at(&self, section: usize, p: u64) -> Result<u8, String> {
        let bits = self.block_sections[section].bits;
        let within = p & ((1 << bits) - 1);
        Ok(match self.block(section, (p >> bits) as usize)? {
            Block::Constant(v) => *v,
            Block::Bytes(b) => {
                let (w, bit) = ((within / 64) as usize, within % 64);
                let (l, h) = (le_u64(b, 16 * w), le_u64(b, 16 * w + 8));
                (((l >> bit) & 1) + 2 * ((h >> bit) & 1)) as u8
            }
        })
    }

    /// Section 1's wtm value code of `slot` (meaningful where the wtm class is 1), at the
    /// stored position of the resolved slot (`resolve`) by section 1's order.
    fn dtz_code(&self, slot: u64) -> Result<u8, String> {
        assert!(slot < self.n_slots, "{}: slot {slot} of {}", self.signature, self.n_slots);
        self.dtz_code_at(self.stored(WTM_CODES, self.resolve(slot)))
    }

    /// The wtm value code at stored position `p` of section 1.
    fn dtz_code_at(&self, p: u64) -> Result<u8, String> {
        let bits = self.block_sections[WTM_CODES].bits;
        let within = p & ((1 << bits) - 1);
        Ok(match self.block(WTM_CODES, (p >> bits) as usize)? {
            Block::Constant(v) => *v,
            Block::Bytes(b) => b[within as usize],
        })
    }

    /// "Black-to-move distances": the distance in plies of the legal black-to-move position
    /// `men` of this run (white's men are the run's white), whose btm class is 1: 0 when
    /// checkmated, else the largest of 2 and, over black's legal moves that are neither
    /// captures nor pawn moves, 1 + the wtm distance of the position reached, given by
    /// `wtm_distance` (which must refuse a position whose wtm class is not 1: in versions 6 and 7 it
    /// resolves the wins by a zeroing move, `DocTables::wtm_distance`). A stalemate, or a move
    /// into a wtm position that is not of class 1, contradicts class 1 and is an error.
    fn btm_distance(
        &self,
        men: &Men,
        mut wtm_distance: impl FnMut(&Men) -> Result<u32, String>,
    ) -> Result<u32, String> {
        let board = men.cozy(false)?;
        let white = board.colors(cozy_chess::Color::White);
        let mut any_move = false;
        let mut longest = 2;
        let mut error = None;
        board.generate_moves(|moves| {
            any_move |= !moves.to.is_empty();
            if moves.piece == cozy_chess::Piece::Pawn {
                return false;
            }
            for to in moves.to & !white {
                match wtm_distance(&men.moved(moves.from as u8, to as u8)) {
                    Ok(d) => longest = longest.max(1 + d),
                    Err(e) => {
                        error = Some(format!("after {}{}: {e}", moves.from, to));
                        return true;
                    }
                }
            }
            false
        });
        let fen = men.fen(false, 0);
        if let Some(e) = error {
            return Err(format!("{fen} ({}, btm class 1): {e}", self.signature));
        }
        if !any_move {
            return if board.checkers().is_empty() {
                Err(format!("{fen} ({}): stalemate of btm class 1", self.signature))
            } else {
                Ok(0)
            };
        }
        if longest > 100 {
            return Err(format!("{fen} ({}): btm class 1 but lost in {longest} plies", self.signature));
        }
        Ok(longest)
    }

    /// The non-pawn pieces of each side, in piece order.
    fn pieces(&self) -> (Vec<Kind>, Vec<Kind>) {
        let f = |v: &[Kind]| v.iter().copied().filter(|&k| k != Kind::P).collect::<Vec<_>>();
        (f(&self.white), f(&self.black))
    }

    /// The slot of `men` (a position of this run, white's men the run's white); identical men
    /// may come in either order.
    fn slot_of(&self, men: &Men) -> Result<u64, String> {
        let (w, b) = men.ordered();
        if self.pawns.is_none() {
            return Ok(self.slot(men.wk, men.bk, &w, &b));
        }
        let (wp, bp) = men.pawns();
        self.pawn_slot(men.wk, men.bk, &w, &b, &wp, &bp)
            .ok_or_else(|| format!("{}: no slice holds white pawns {wp:?}, black pawns {bp:?}", self.signature))
    }

    /// Without pawns, steps 1-6: the slot of the position with white king `wk`, black king
    /// `bk` and the pieces' squares `white`/`black` in piece order (Q R B N within each side).
    fn slot(&self, wk: u8, bk: u8, white: &[u8], black: &[u8]) -> u64 {
        assert!(self.pawns.is_none(), "{}", self.signature);
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

    /// With pawns, step 1: the slice of the pawn configuration (`wp`, `bp`) and whether the
    /// position must be mirrored to reach it; `None` if no slice holds it (a pawn on rank 1
    /// or 8, or white and black pawns on one square).
    fn find_slice(&self, wp: &[u8], bp: &[u8]) -> Option<(u32, bool)> {
        let layout = self.pawns.as_ref().expect("a run with pawns");
        let config = PawnConfig::new(wp, bp);
        let image = config.mirror();
        let mirror = config.file_pattern() > image.file_pattern();
        let config = if mirror { image } else { config };
        layout.slice_of.get(&config.key()).map(|&s| (s, mirror))
    }

    /// With pawns, steps 2-4: the slot in slice `s` of the other men (`mirror`: mirror every
    /// man first), the pieces `white`/`black` in piece order.
    fn slot_in_slice(&self, s: u32, mirror: bool, wk: u8, bk: u8, white: &[u8], black: &[u8]) -> u64 {
        let layout = self.pawns.as_ref().expect("a run with pawns");
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

    /// With pawns: the slot of a position (`None` if no slice holds its pawns).
    fn pawn_slot(&self, wk: u8, bk: u8, white: &[u8], black: &[u8], wp: &[u8], bp: &[u8]) -> Option<u64> {
        let (s, mirror) = self.find_slice(wp, bp)?;
        Some(self.slot_in_slice(s, mirror, wk, bk, white, black))
    }

    /// Section 3's rule: is the legal position `men` (of `slot`, either side to move) counted, i.e. are its
    /// identical men in increasing square order and, when the board has a symmetry that keeps
    /// it stored (the black king on the a1-h8 diagonal without pawns, a slice whose file
    /// pattern is its own mirror image with pawns), is the slot of the image (identical men in
    /// increasing order) not smaller than its own?
    fn counted(&self, men: &Men, slot: u64) -> Result<bool, String> {
        let increasing = |v: &[(Kind, u8)]| v.windows(2).all(|p| p[0].0 != p[1].0 || p[0].1 < p[1].1);
        if !increasing(&men.white) || !increasing(&men.black) {
            return Ok(false);
        }
        let image = match &self.pawns {
            None if men.bk % 8 == men.bk / 8 => men.transposed(),
            Some(l) if l.configs[(slot >> l.t) as usize].symmetric() => men.mirrored(),
            _ => return Ok(true),
        };
        Ok(self.slot_of(&image.canonical())? >= slot)
    }

    /// The scan of every position of this table (made once), the wins by a zeroing move
    /// searched in `tables` (the folder that holds this table).
    fn scan(&self, tables: &DocTables) -> &Scan {
        self.scan
            .get_or_init(|| scan(tables, self))
            .as_ref()
            .unwrap_or_else(|e| panic!("{}: scan: {e}", self.signature))
    }
}

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
    /// the order given: either is stored).
    fn ordered(&self) -> (Vec<u8>, Vec<u8>) {
        let sorted = |v: &[(Kind, u8)]| {
            let mut v: Vec<(Kind, u8)> = v.iter().copied().filter(|&(k, _)| k != Kind::P).collect();
            v.sort_by_key(|&(k, _)| k);
            v.into_iter().map(|(_, s)| s).collect::<Vec<u8>>()
        };
        (sorted(&self.white), sorted(&self.black))
    }

    /// The same position with each side's men in piece order and identical men in
    /// increasing square order.
    fn canonical(&self) -> Men {
        let mut m = self.clone();
        m.white.sort();
        m.black.sort();
        m
    }

    /// Board transposed: every square's file and rank exchanged (a symmetry without pawns),
    /// each man keeping his place in the lists.
    fn transposed(&self) -> Men {
        let f = |v: &[(Kind, u8)]| v.iter().map(|&(k, s)| (k, transpose(s))).collect::<Vec<_>>();
        Men { wk: transpose(self.wk), bk: transpose(self.bk), white: f(&self.white), black: f(&self.black) }
    }

    /// The position after the man on `from` goes to the empty square `to`.
    fn moved(&self, from: u8, to: u8) -> Men {
        let mut m = self.clone();
        if m.wk == from {
            m.wk = to;
        } else if m.bk == from {
            m.bk = to;
        } else {
            for man in m.white.iter_mut().chain(m.black.iter_mut()).filter(|man| man.1 == from) {
                man.1 = to;
            }
        }
        m
    }

    /// The position as a cozy-chess board (no castling, no en passant).
    fn cozy(&self, white_to_move: bool) -> Result<Board, String> {
        use cozy_chess::{Color, Piece};
        let mut b = BoardBuilder::empty();
        b.board[self.wk as usize] = Some((Piece::King, Color::White));
        b.board[self.bk as usize] = Some((Piece::King, Color::Black));
        for (men, color) in [(&self.white, Color::White), (&self.black, Color::Black)] {
            for &(k, s) in men {
                b.board[s as usize] = Some((k.cozy(), color));
            }
        }
        b.side_to_move = if white_to_move { Color::White } else { Color::Black };
        b.build().map_err(|e| format!("cozy-chess rejects {}: {e:?}", self.fen(white_to_move, 0)))
    }

    /// The men of a cozy-chess board (its side to move, castling and en-passant file are the
    /// caller's business).
    fn of_cozy(board: &Board) -> Men {
        use cozy_chess::Color;
        let mut men = Men { wk: 0, bk: 0, white: Vec::new(), black: Vec::new() };
        for color in [Color::White, Color::Black] {
            for sq in board.colors(color) {
                let piece = board.piece_on(sq).expect("an occupied square");
                let side = if color == Color::White { &mut men.white } else { &mut men.black };
                match Kind::of_cozy(piece) {
                    Some(k) => side.push((k, sq as u8)),
                    None if color == Color::White => men.wk = sq as u8,
                    None => men.bk = sq as u8,
                }
            }
        }
        men
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

/// The result of a probe for the side to move: WDL and signed distance under the 50-move rule
/// (given the position's clock), and the five-valued category with a fresh counter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Answer {
    wdl: i32,
    dtz: i32,
    /// "win", "cursed-win", "draw", "blessed-loss", "loss", or "unknown".
    category: &'static str,
}

impl Answer {
    const fn new(wdl: i32, dtz: i32, category: &'static str) -> Answer {
        Answer { wdl, dtz, category }
    }
}

/// All tables of a folder, read with the document's reader.
struct DocTables {
    tables: HashMap<String, DocTable>,
}

impl DocTables {
    fn open(dir: &Path) -> DocTables {
        let mut tables = HashMap::new();
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for entry in entries {
            let path = entry.unwrap_or_else(|e| panic!("{}: {e}", dir.display())).path();
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

    /// The wtm distance in plies of the legal white-to-move position `men` of run `t`, at
    /// `slot`, whose wtm class is 1 ("Wins by a zeroing move (version 6)"): read section 1's
    /// code `c`; 1 ply if `c` is 1; in versions 6 and 7, when `c` is not 1, 1 ply if white wins by a
    /// zeroing move (the code is then a don't-care, any byte at all); else `c`'s distance.
    fn wtm_distance(&self, t: &DocTable, men: &Men, slot: u64) -> Result<u32, String> {
        let code = t.dtz_code(slot)?;
        if code == 1 || (t.zeroing_dont_cares && self.wins_by_zeroing_move(t, men, true)?) {
            return Ok(1);
        }
        wtm_plies(code).ok_or_else(|| {
            format!("{} ({}, slot {slot}): wtm class 1 but distance code {code}", men.fen(true, 0), t.signature)
        })
    }

    /// The wtm distance of the legal white-to-move position `men` of run `t`, which must be of
    /// class 1 (a position reached by a quiet move of black's in "Black-to-move distances").
    fn wtm_distance_of(&self, t: &DocTable, men: &Men) -> Result<u32, String> {
        let slot = t.slot_of(men)?;
        match t.class(true, slot)? {
            1 => self.wtm_distance(t, men, slot),
            c => Err(format!("{} ({}): wtm class {c} where class 1 is needed", men.fen(true, 0), t.signature)),
        }
    }

    /// "Black-to-move distances" of the legal black-to-move position `men` of run `t`, whose
    /// btm class is 1, the positions reached read by `wtm_distance_of` (resolved in versions 6 and 7).
    fn btm_distance(&self, t: &DocTable, men: &Men) -> Result<u32, String> {
        t.btm_distance(men, |m| self.wtm_distance_of(t, m))
    }

    /// "Wins by a zeroing move (version 6)": has white, to move in the legal position `men` of
    /// run `t`, a zeroing move (a capture, promotions with capture included, or a pawn move)
    /// after which black, to move with a fresh counter, is lost under the 50-move rule? After a
    /// capture or a promotion: a checkmate, or btm class 1 in the sub-endgame's run (`W' v B'`,
    /// whose table must be here); after a pawn push or double step: btm class 1 in this run,
    /// an en-passant capture that the double step allows weighed in as Part II's "Probing a
    /// position with pawns" says (`en_passant`; false only to show, in a test, that the rule
    /// matters).
    fn wins_by_zeroing_move(&self, t: &DocTable, men: &Men, en_passant: bool) -> Result<bool, String> {
        use cozy_chess::{Color, Piece};
        let board = men.cozy(true)?;
        let black = board.colors(Color::Black);
        let mut zeroing = Vec::new();
        board.generate_moves(|moves| {
            let pawn = moves.piece == Piece::Pawn;
            zeroing.extend(moves.into_iter().filter(|mv| pawn || black.has(mv.to)));
            false
        });
        for mv in zeroing {
            let new_material = black.has(mv.to) || mv.promotion.is_some();
            let mut after = board.clone();
            after.play_unchecked(mv);
            let lost = self
                .black_lost_after_zeroing_move(t, &after, new_material, en_passant)
                .map_err(|e| format!("{} ({}) after {mv}: {e}", men.fen(true, 0), t.signature))?;
            if lost {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Is black, to move with a fresh counter on `after` (white's zeroing move just played in
    /// run `t`), lost under the 50-move rule? See `wins_by_zeroing_move`.
    fn black_lost_after_zeroing_move(
        &self,
        t: &DocTable,
        after: &Board,
        new_material: bool,
        en_passant: bool,
    ) -> Result<bool, String> {
        let mut replies = Vec::new();
        after.generate_moves(|moves| {
            replies.extend(moves);
            false
        });
        if replies.is_empty() {
            // Checkmate: lost; stalemate: a draw.
            return Ok(!after.checkers().is_empty());
        }
        let men = Men::of_cozy(after);
        if new_material {
            // A capture or a promotion: the sub-endgame `W' v B'` (white keeps a man).
            let sub = self.table(&men.run())?;
            return Ok(sub.class(false, sub.slot_of(&men)?)? == 1);
        }
        // A pawn push or double step: this run, another slice.
        let class = t.class(false, t.slot_of(&men)?)?;
        // After a double step, black's legal en-passant captures (to the square the pawn
        // passed over, on rank 3).
        let target = after.en_passant().map(|f| cozy_chess::Square::new(f, cozy_chess::Rank::Third));
        let captures: Vec<cozy_chess::Move> = replies
            .iter()
            .copied()
            .filter(|mv| Some(mv.to) == target && after.piece_on(mv.from) == Some(cozy_chess::Piece::Pawn))
            .collect();
        if !en_passant || captures.is_empty() {
            return Ok(class == 1);
        }
        // "Its result is the better of the stored value and the results of the en-passant
        // captures ...; if only en-passant captures are legal they decide": black is lost iff
        // the stored value is a loss (or every legal move is an en-passant capture) and every
        // en-passant capture loses, i.e. leaves white, to move with a fresh counter, a win.
        if class != 1 && captures.len() < replies.len() {
            return Ok(false);
        }
        for mv in captures {
            let mut next = after.clone();
            next.play_unchecked(mv);
            if !self.white_wins(&next)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Does white, to move with a fresh counter on `board` (no en-passant square), win under
    /// the 50-move rule: wtm class 1 in `W v B`? A checkmate or stalemate is no win, and a bare
    /// white king wins nothing.
    fn white_wins(&self, board: &Board) -> Result<bool, String> {
        if !board.generate_moves(|_| true) {
            return Ok(false);
        }
        let men = Men::of_cozy(board);
        if men.white.is_empty() {
            return Ok(false);
        }
        let t = self.table(&men.run())?;
        Ok(t.class(true, t.slot_of(&men)?)? == 1)
    }

    /// Part I, "Probing a position (versions 3 to 7)": `class` and `dtz_code` read each slot
    /// at the stored position of its resolved slot (in version 7 its identical pieces sorted
    /// by H digit, then in versions 5 to 7 without pawns its kept twin; else the
    /// slot itself); in versions 6 and 7 a wtm distance whose code is not 1 is resolved by a search
    /// of white's zeroing moves (`wtm_distance`).
    fn probe(&self, fen: &str) -> Result<Answer, String> {
        let pos = parse_fen(fen)?;
        let men = &pos.men;
        let illegal = if pos.white_to_move { men.illegal_wtm() } else { men.illegal_btm() };
        if illegal {
            return Err(format!("{fen}: illegal position"));
        }
        // 1. No legal move: checkmate or stalemate.
        let board = Board::from_fen(fen, false).map_err(|e| format!("{fen}: cozy-chess: {e:?}"))?;
        if !board.generate_moves(|_| true) {
            return Ok(if board.checkers().is_empty() {
                Answer::new(0, 0, "draw")
            } else {
                Answer::new(-1, 0, "loss")
            });
        }
        // 2. White to move (otherwise flip the board and swap colours).
        let men = if pos.white_to_move { men.clone() } else { men.flipped() };
        let budget = 100 - pos.halfmove as i32;
        // Every run read has header bit 0 (all cursed positions marked): a draw is a draw.
        let mut complete = true;
        let mut cursed = None;
        // 3. The wtm class in `W v B`, if `W` has a man besides its king.
        if !men.white.is_empty() {
            let t = self.table(&men.run())?;
            complete &= t.flags & 1 != 0;
            let slot = t.slot_of(&men)?;
            match t.class(true, slot)? {
                1 => {
                    let d = self.wtm_distance(t, &men, slot)? as i32;
                    let (wdl, dtz) = if d <= budget { (1, d) } else { (0, 0) };
                    return Ok(Answer::new(wdl, dtz, "win"));
                }
                2 => cursed = Some("cursed-win"),
                3 => cursed = Some(if t.flags & 2 != 0 { "cursed-win" } else { "unknown" }),
                _ => {}
            }
        }
        // 4. The btm class of the flipped position in `B v W`, if `B` has a man besides its king.
        if !men.black.is_empty() {
            let flipped = men.flipped();
            let t = self.table(&flipped.run())?;
            complete &= t.flags & 1 != 0;
            let slot = t.slot_of(&flipped)?;
            let class = t.class(false, slot)?;
            if class != 0 && cursed.is_some() {
                return Err(format!(
                    "{fen}: a cursed win ({cursed:?}) that {} also marks lost (class {class})",
                    t.signature
                ));
            }
            match class {
                0 => {}
                1 => {
                    let d = self.btm_distance(t, &flipped)? as i32;
                    let (wdl, dtz) = if d <= budget { (-1, -d) } else { (0, 0) };
                    return Ok(Answer::new(wdl, dtz, "loss"));
                }
                2 => return Ok(Answer::new(0, 0, "blessed-loss")),
                c => return Err(format!("{fen}: btm class {c} in {}", t.signature)),
            }
        }
        // 5. A draw (unknown if a run read lacks header bit 0).
        Ok(Answer::new(0, 0, cursed.unwrap_or(if complete { "draw" } else { "unknown" })))
    }
}

// =======================================================================================
// Full scans: every position of a table, by the document's rules
// =======================================================================================

/// Calls `f` on the position of every slot of `t` (of every `slice_step`-th slice with
/// pawns), white's men being the run's white: without pawns the black king on each triangle
/// square (where step 1 changes nothing) and the other men on every square, with pawns each
/// slice's pawns and the other men on every square. Stops at the first error.
fn for_each_position(
    t: &DocTable,
    slice_step: usize,
    mut f: impl FnMut(&Men) -> Result<(), String>,
) -> Result<(), String> {
    let (wp, bp) = t.pieces();
    let mut men =
        Men { wk: 0, bk: 0, white: wp.iter().map(|&k| (k, 0)).collect(), black: bp.iter().map(|&k| (k, 0)).collect() };
    // The pieces' squares from `n`, 6 bits each from bit `6 * first` (pieces come first in
    // `men.white` and `men.black`, pawns after them).
    let place = |men: &mut Men, n: u64, first: usize| {
        let pieces = men.white.iter_mut().take(wp.len()).chain(men.black.iter_mut().take(bp.len()));
        for (i, man) in pieces.enumerate() {
            man.1 = ((n >> (6 * (first + i))) & 63) as u8;
        }
    };
    match &t.pawns {
        None => {
            for bk in TRIANGLE {
                men.bk = bk;
                for n in 0..64u64.pow(1 + (wp.len() + bp.len()) as u32) {
                    men.wk = (n & 63) as u8;
                    place(&mut men, n, 1);
                    f(&men)?;
                }
            }
        }
        Some(l) => {
            for config in l.configs.iter().step_by(slice_step) {
                men.white.truncate(wp.len());
                men.white.extend(config.white.iter().map(|&q| (Kind::P, q)));
                men.black.truncate(bp.len());
                men.black.extend(config.black.iter().map(|&q| (Kind::P, q)));
                for n in 0..1u64 << l.t {
                    (men.wk, men.bk) = ((n & 63) as u8, ((n >> 6) & 63) as u8);
                    place(&mut men, n, 2);
                    f(&men)?;
                }
            }
        }
    }
    Ok(())
}

/// What a scan of every position of a table finds.
#[derive(Debug)]
struct Scan {
    /// Section 3's first half recomputed: counted legal btm positions of class 1 by distance
    /// (the one-ply rule), and the smallest counted slot of the longest.
    summary: Summary,
    /// Section 3's second half (versions 6 and 7) recomputed: counted legal wtm positions of class 1
    /// by distance (resolved), and the smallest counted slot of the longest.
    wtm_summary: Summary,
    /// The wtm distance (plies, resolved) of every slot whose position is legal with white to
    /// move and of wtm class 1; 0 elsewhere.
    wtm_distances: Vec<u8>,
    /// Legal wtm positions of class 1 whose code is not 1 but that win by a zeroing move (1
    /// ply): the don't-cares of versions 6 and 7 that the code alone would misread (and, among them,
    /// those whose code is no win at all).
    resolved: [u64; 2],
    /// The longest wtm distance of a legal wtm position of class 1 (plies).
    longest_wtm: u32,
    /// The longest btm distance of a counted legal btm position of class 1 (plies).
    longest_btm: u32,
    /// Legal positions of each class, wtm then btm.
    classes: [[u64; 4]; 2],
    /// With pawns: the longest distance of each level, either side to move.
    level_longest: Vec<u32>,
}

/// Counts of legal positions by distance, and the smallest counted slot of each distance.
struct Histogram {
    counts: Vec<u64>,
    first: Vec<u64>,
}

impl Histogram {
    fn new() -> Histogram {
        Histogram { counts: vec![0; SUMMARY_DISTANCES], first: vec![u64::MAX; SUMMARY_DISTANCES] }
    }

    fn add(&mut self, d: u32, slot: u64) {
        self.counts[d as usize] += 1;
        self.first[d as usize] = self.first[d as usize].min(slot);
    }

    /// The summary: the counts, and the smallest counted slot of the longest distance.
    fn summary(self) -> Summary {
        let first_longest = self.counts.iter().rposition(|&c| c > 0).map_or(u64::MAX, |d| self.first[d]);
        Summary { counts: self.counts, first_longest }
    }
}

/// Scans every position of `t` by the document's rules, in two passes: white to move first
/// (the classes, and the distance of every position of class 1, resolved in versions 6 and 7 by a
/// search of white's zeroing moves in `tables`), then black to move (the classes, and the
/// distance of every counted position of class 1 by the one-ply rule over the wtm distances
/// of the first pass).
fn scan(tables: &DocTables, t: &DocTable) -> Result<Scan, String> {
    let mut classes = [[0u64; 4]; 2];
    let (mut longest_wtm, mut longest_btm) = (0, 0);
    let (mut wtm, mut btm) = (Histogram::new(), Histogram::new());
    let mut resolved = [0u64; 2];
    let mut wtm_distances = vec![0u8; t.n_slots as usize];
    let level_of_slice: Vec<usize> = t.pawns.as_ref().map_or(Vec::new(), |l| {
        l.levels.iter().enumerate().flat_map(|(j, r)| std::iter::repeat_n(j, r.count as usize)).collect()
    });
    let level = |slot: u64| t.pawns.as_ref().map(|l| level_of_slice[(slot >> l.t) as usize]);
    let mut level_longest = vec![0; t.pawns.as_ref().map_or(0, |l| l.levels.len())];
    for_each_position(t, 1, |men| {
        if men.illegal_wtm() {
            return Ok(());
        }
        let slot = t.slot_of(men)?;
        let class = t.class(true, slot)?;
        classes[0][class as usize] += 1;
        if class == 1 {
            let d = tables.wtm_distance(t, men, slot)?;
            let code = t.dtz_code(slot)?;
            if d == 1 && code != 1 {
                resolved[0] += 1;
                resolved[1] += wtm_plies(code).is_none() as u64;
            }
            wtm_distances[slot as usize] = d as u8;
            longest_wtm = longest_wtm.max(d);
            if t.counted(men, slot)? {
                wtm.add(d, slot);
            }
            if let Some(j) = level(slot) {
                level_longest[j] = level_longest[j].max(d);
            }
        }
        Ok(())
    })?;
    // Black's quiet moves lead to positions of this run: their distances are the first pass's.
    let wtm_distance = |m: &Men| -> Result<u32, String> {
        match wtm_distances[t.slot_of(m)? as usize] {
            0 => Err(format!("{} ({}): not a legal wtm position of class 1", m.fen(true, 0), t.signature)),
            d => Ok(d as u32),
        }
    };
    for_each_position(t, 1, |men| {
        if men.illegal_btm() {
            return Ok(());
        }
        let slot = t.slot_of(men)?;
        let class = t.class(false, slot)?;
        classes[1][class as usize] += 1;
        // Every stored position is the image of a counted one, with the same values.
        if class == 1 && t.counted(men, slot)? {
            let d = t.btm_distance(men, wtm_distance)?;
            btm.add(d, slot);
            longest_btm = longest_btm.max(d);
            if let Some(j) = level(slot) {
                level_longest[j] = level_longest[j].max(d);
            }
        }
        Ok(())
    })?;
    Ok(Scan {
        summary: btm.summary(),
        wtm_summary: wtm.summary(),
        wtm_distances,
        resolved,
        longest_wtm,
        longest_btm,
        classes,
        level_longest,
    })
}

// =======================================================================================
// The library side: tables built by the binary, probes through `tbstream probe`
// =======================================================================================

/// A folder of the tables `tbstream gen ARGS` builds, made once per `cell` (and removed when
/// the test binary exits).
fn gen_once(cell: &'static OnceLock<tempfile::TempDir>, args: &[&str]) -> &'static Path {
    cell.get_or_init(|| {
        let dir = tempfile::tempdir().expect("a temporary folder");
        remove_at_exit(dir.path());
        let out = Command::new(env!("CARGO_BIN_EXE_tbstream"))
            .arg("gen")
            .args(args)
            .arg("--out")
            .arg(dir.path())
            .output()
            .expect("running tbstream gen");
        assert!(out.status.success(), "tbstream gen failed:\n{}", String::from_utf8_lossy(&out.stderr));
        dir
    })
    .path()
}

/// The tables of `gen KQvKR KRvKN KRRvK` (with their sub-endgames), built once.
fn tables_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    gen_once(&DIR, &["KQvKR", "KRvKN", "KRRvK"])
}

fn doc_tables() -> &'static DocTables {
    static TABLES: OnceLock<DocTables> = OnceLock::new();
    TABLES.get_or_init(|| DocTables::open(tables_dir()))
}

/// The library's view of `tables_dir()`.
fn library_tables() -> &'static tbstream::Tablebase {
    static TB: OnceLock<tbstream::Tablebase> = OnceLock::new();
    TB.get_or_init(|| tbstream::Tablebase::open(tables_dir()).unwrap_or_else(|e| panic!("library: {e}")))
}

/// The library's table of `run` in `tb`.
fn library_run(tb: &tbstream::Tablebase, run: &str) -> std::sync::Arc<tbstream::Run> {
    let m = tbstream::Material::parse(run).unwrap_or_else(|e| panic!("{run}: {e}"));
    tb.run(&m).unwrap_or_else(|e| panic!("library: {run}: {e}"))
}

/// The library's `Position` of `men` (white's men the run's white), through
/// `Position::from_men`, which checks legality like a FEN.
fn library_position(men: &Men, white_to_move: bool) -> Result<tbstream::Position, tbstream::FenError> {
    use tbstream::{Color, Piece, Role};
    let role = |k: Kind| match k {
        Kind::Q => Role::Queen,
        Kind::R => Role::Rook,
        Kind::B => Role::Bishop,
        Kind::N => Role::Knight,
        Kind::P => Role::Pawn,
    };
    let mut all = vec![
        (men.wk, Piece { color: Color::White, role: Role::King }),
        (men.bk, Piece { color: Color::Black, role: Role::King }),
    ];
    all.extend(men.white.iter().map(|&(k, s)| (s, Piece { color: Color::White, role: role(k) })));
    all.extend(men.black.iter().map(|&(k, s)| (s, Piece { color: Color::Black, role: role(k) })));
    tbstream::Position::from_men(&all, if white_to_move { Color::White } else { Color::Black })
}

fn table_path(run: &str) -> PathBuf {
    tables_dir().join(format!("{run}.tbs"))
}

/// `tbstream probe --tables dir` over stdin: the exit status, stdout and stderr.
fn run_probe(dir: &Path, fens: &[String]) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tbstream"))
        .args(["probe", "--tables"])
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starting tbstream probe");
    let mut pipe = child.stdin.take().unwrap();
    let input: String = fens.iter().map(|f| format!("{f}\n")).collect();
    // A probe that stops early closes its stdin: a failed write is then no error of ours.
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("waiting for tbstream probe");
    writer.join().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `tbstream probe` over stdin on the pawnless tables: one answer per FEN, in order.
fn library_probe(fens: &[String]) -> Vec<Answer> {
    let (ok, stdout, stderr) = run_probe(tables_dir(), fens);
    assert!(ok, "tbstream probe failed:\n{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), fens.len(), "probe answered {} of {} lines; stderr:\n{stderr}", lines.len(), fens.len());
    let names = ["win", "cursed-win", "draw", "blessed-loss", "loss", "unknown"];
    lines
        .iter()
        .zip(fens)
        .map(|(line, fen)| {
            let f: Vec<&str> = line.split('\t').collect();
            // FEN, WDL, DTZ, best move, and the category with a fresh counter.
            assert_eq!(f.len(), 5, "probe line {line:?}");
            assert_eq!(f[0], fen, "probe lines out of order");
            let category = names.iter().find(|&&n| n == f[4]).unwrap_or_else(|| panic!("probe line {line:?}"));
            let number = |s: &str| s.parse().unwrap_or_else(|e| panic!("probe line {line:?}: {e}"));
            Answer::new(number(f[1]), number(f[2]), category)
        })
        .collect()
}

/// Compares the reader's probes of `fens` with the library's answers `theirs`; returns the
/// count of each wdl.
fn compare(ours: &DocTables, fens: &[String], theirs: &[Answer]) -> [usize; 3] {
    let mut mismatches = Vec::new();
    let mut counts = [0usize; 3];
    for (fen, &lib) in fens.iter().zip(theirs) {
        let mine = ours.probe(fen).unwrap_or_else(|e| panic!("reader: {e}"));
        counts[(mine.wdl + 1) as usize] += 1;
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

/// The tables with pawns of the reference folder but KRPvKR (KPvK .. KRPvK and their
/// closures, pawnless sub-endgames included), read by the reader.
fn pawn_doc_tables() -> &'static DocTables {
    static TABLES: OnceLock<DocTables> = OnceLock::new();
    TABLES.get_or_init(|| DocTables::open(pawn_dir()))
}

/// The tables of `gen KPvK KPvKP KQvKP KRvKP KBvKP KNvKP KPPvK KBPvK KNPvK KQPvK KRPvK`,
/// built once (as `fixtures::pawn_tables()` of the `it` binary, which cannot share them).
fn pawn_dir() -> &'static Path {
    static DIR: OnceLock<tempfile::TempDir> = OnceLock::new();
    let sigs = ["KPvK", "KPvKP", "KQvKP", "KRvKP", "KBvKP", "KNvKP", "KPPvK", "KBPvK", "KNPvK", "KQPvK", "KRPvK"];
    gen_once(&DIR, &[&sigs[..], &["--threads", "2"]].concat())
}

/// The library's view of `pawn_dir()`.
fn library_pawn_tables() -> &'static tbstream::Tablebase {
    static TB: OnceLock<tbstream::Tablebase> = OnceLock::new();
    TB.get_or_init(|| tbstream::Tablebase::open(pawn_dir()).unwrap_or_else(|e| panic!("library: {e}")))
}

/// The library's `Tablebase::probe` and `Tablebase::category` of each FEN over the tables
/// with pawns.
fn library_pawn_probe(fens: &[String]) -> Vec<Answer> {
    tablebase_probe(library_pawn_tables(), fens)
}

/// `Tablebase::probe` and `Tablebase::category` of each FEN over `tb`.
fn tablebase_probe(tb: &tbstream::Tablebase, fens: &[String]) -> Vec<Answer> {
    fens.iter()
        .map(|fen| {
            let pos = tbstream::Position::from_fen(fen).unwrap_or_else(|e| panic!("library rejects {fen}: {e}"));
            let p = tb.probe(&pos).unwrap_or_else(|e| panic!("library probe of {fen}: {e}"));
            let c = tb.category(&pos).unwrap_or_else(|e| panic!("library category of {fen}: {e}"));
            Answer::new(p.wdl as i32, p.dtz, c.map_or("unknown", |c| c.name()))
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
    let (w, b) = parse_run(sig).unwrap_or_else(|e| panic!("{e}"));
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

/// The stored values of the legal position `men` at `slot` (read at its kept twin): the class
/// and, where the wtm class is 1, the wtm distance code.
fn values(t: &DocTable, wtm: bool, slot: u64) -> Result<(u8, Option<u8>), String> {
    let class = t.class(wtm, slot)?;
    Ok((class, if wtm && class == 1 { Some(t.dtz_code(slot)?) } else { None }))
}

/// Checks that an image of a position (at `image_slot`) holds the position's `value`;
/// `what` names the image in the error.
fn image_agrees(
    t: &DocTable,
    wtm: bool,
    image_slot: u64,
    value: (u8, Option<u8>),
    fen: &dyn Fn() -> String,
    what: &str,
) -> Result<(), String> {
    let other = values(t, wtm, image_slot)?;
    if other != value {
        return Err(format!("{}: {value:?}, {what} {other:?}", fen()));
    }
    Ok(())
}

/// Every slot the document allows for `men` without pawns: identical men in either order
/// (every group of identical men reversed; complete for pairs), and the transposed position
/// when the black king stands on the a1-h8 diagonal.
fn equivalent_slots(t: &DocTable, men: &Men) -> Result<Vec<u64>, String> {
    let reversed = |m: &Men| {
        let rev = |v: &[(Kind, u8)]| {
            let mut v = v.to_vec();
            v.sort_by_key(|&(k, _)| k);
            for group in v.chunk_by_mut(|a, b| a.0 == b.0) {
                group.reverse();
            }
            v
        };
        Men { wk: m.wk, bk: m.bk, white: rev(&m.white), black: rev(&m.black) }
    };
    let mut images = vec![men.clone()];
    if men.bk % 8 == men.bk / 8 {
        images.push(men.transposed());
    }
    let mut slots = Vec::new();
    for image in images {
        slots.push(t.slot_of(&image)?);
        slots.push(t.slot_of(&reversed(&image))?);
    }
    Ok(slots)
}

/// Recomputes the checksums of the five sections (the indexes of the block sections, the
/// whole of sections 3 and 4) and of the header, so that damage is left to the other checks.
fn repair_checksums(bytes: &mut [u8]) {
    let n_slots = le_u64(bytes, 32);
    let bits = [bytes[161], bytes[162], bytes[161]];
    for i in 0..5 {
        let e = 40 + 24 * i;
        let (o, l) = (le_u64(bytes, e) as usize, le_u64(bytes, e + 8) as usize);
        let covered = match bits.get(i) {
            Some(&b) => INDEX_ENTRY * n_slots.div_ceil(1u64.checked_shl(b as u32).unwrap_or(u64::MAX)) as usize,
            None => l,
        };
        if o.checked_add(covered).is_some_and(|end| end <= bytes.len()) {
            let c = xxh3_64(&bytes[o..o + covered]);
            bytes[e + 16..e + 24].copy_from_slice(&c.to_le_bytes());
        }
    }
    let c = xxh3_64(&bytes[..248]);
    bytes[248..256].copy_from_slice(&c.to_le_bytes());
}

/// Copies every table of `from` into a new temporary folder.
fn copy_tables(from: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("a temporary folder");
    for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{}: {e}", from.display())) {
        let path = entry.unwrap_or_else(|e| panic!("{}: {e}", from.display())).path();
        if path.extension().is_some_and(|e| e == "tbs") {
            let to = dir.path().join(path.file_name().unwrap());
            std::fs::copy(&path, &to).unwrap_or_else(|e| panic!("{} -> {}: {e}", path.display(), to.display()));
        }
    }
    dir
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

/// Every header field and section the document describes, for every table `gen` wrote: the
/// version (7; identical men dropped in KRRvK only), the block sizes, the number of blocks, the placement of the sections (section
/// 3 of 1632 bytes), the flags of tables built now, every block decoded (its checksum
/// checked), no class 3, and the longest distance (byte 14) equal to the longest of a scan of
/// every legal position (wtm distances from section 1, resolved by a search of the zeroing
/// moves, btm ones by the one-ply rule).
#[test]
fn headers_and_sections_are_valid() {
    let tables = doc_tables();
    let mut names: Vec<&String> = tables.tables.keys().collect();
    names.sort();
    assert_eq!(names, ["KNvK", "KNvKR", "KQvK", "KQvKR", "KRRvK", "KRvK", "KRvKN", "KRvKQ"]);
    for name in names {
        let t = tables.table(name).unwrap();
        assert!(t.pawns.is_none(), "{name}");
        assert_eq!(t.bytes[12], 1, "{name}: layout");
        assert_eq!(t.men as usize, 2 + t.white.len() + t.black.len(), "{name}");
        assert_eq!(t.n_slots, 10 * 64u64.pow(t.men as u32 - 1), "{name}");
        assert_eq!((t.bytes[160], t.bytes[161], t.bytes[162]), (1, 18, 16), "{name}: codec, W, D");
        for s in &t.block_sections {
            assert_eq!(s.blocks.len() as u64, t.n_slots.div_ceil(1 << s.bits), "{name}: blocks");
        }
        assert_eq!(t.sections[0].0, HEADER_LEN, "{name}");
        assert_eq!(t.version, 7, "{name}");
        assert_eq!(t.identical_dropped, name == "KRRvK", "{name}: identical men dropped");
        assert_eq!((t.sections[3].1, t.sections[4].1), (2 * SUMMARY_LEN, 0), "{name}");
        assert_eq!(t.sections[4].0, t.bytes.len(), "{name}: an empty section 4 ends the file");
        // Tables built now: every cursed position marked (bit 0), no class 3 (bit 1).
        assert_eq!(t.flags, 3, "{name}: flags");
        t.check_all_blocks().unwrap_or_else(|e| panic!("{e}"));
        let scan = t.scan(tables);
        assert_eq!(t.longest as u32, scan.longest_wtm.max(scan.longest_btm), "{name}: longest distance");
        assert_eq!((scan.classes[0][3], scan.classes[1][3]), (0, 0), "{name}: legal positions of class 3");
        for side in 0..2 {
            if scan.classes[side][2] > 0 {
                assert!(t.cursed_steps[side] > 100, "{name}: cursed positions but no step beyond 100");
            }
        }
        // Every legal position has a class; white wins somewhere in every run with a file but
        // KNvK and KNvKR.
        assert!(scan.classes[0].iter().sum::<u64>() > 0 && scan.classes[1].iter().sum::<u64>() > 0, "{name}");
        if !name.starts_with("KN") {
            assert!(scan.classes[0][1] > 0 && scan.classes[1][1] > 0, "{name}: no win");
        }
    }
}

/// Section 3 holds what the document says: the number of legal black-to-move positions lost
/// in each distance (by the one-ply rule over section 1, the wins by a zeroing move
/// resolved), each counted once up to the board's symmetries, and the smallest counted slot
/// among the longest losses; then (versions 6 and 7) the same for the legal white-to-move positions
/// won in each distance (resolved: a win by a zeroing move is 1 ply whatever its code);
/// recomputed from every position of every table `gen` wrote. The resolution matters: some
/// won positions hold a code other than 1 (some no win's code at all) but win by a zeroing
/// move.
#[test]
fn summaries_match_the_distances() {
    let tables = doc_tables();
    let mut resolved = HashMap::new();
    for t in tables.tables.values() {
        let scan = t.scan(tables);
        assert_eq!(t.summary, scan.summary, "{}: btm summary", t.signature);
        assert_eq!(t.wtm_summary.as_ref(), Some(&scan.wtm_summary), "{}: wtm summary", t.signature);
        resolved.insert(t.signature.as_str(), scan.resolved);
    }
    eprintln!("wins by a zeroing move whose code is not 1 (of which no win's code): {resolved:?}");
    // Captures win in KQvKR, KRvKN and KRvKQ; KQvK, KRvK and KRRvK have nothing to capture.
    for run in ["KQvKR", "KRvKN"] {
        assert!(resolved[run][0] > 0, "{run}: no win by a zeroing move resolved");
    }
    for run in ["KQvK", "KRvK", "KRRvK"] {
        assert_eq!(resolved[run], [0, 0], "{run}");
    }
    // KQvK: mates, and losses up to the longest; KNvK: nothing is lost, nothing won.
    let kqvk = tables.table("KQvK").unwrap();
    let (btm, wtm) = (&kqvk.summary, kqvk.wtm_summary.as_ref().unwrap());
    assert!(btm.counts[0] > 0 && btm.counts[2] > 0 && btm.first_longest < 40960, "{btm:?}");
    assert!(wtm.counts[1] > 0 && wtm.counts[0] == 0 && wtm.first_longest < 40960, "{wtm:?}");
    let knvk = tables.table("KNvK").unwrap();
    assert_eq!((knvk.summary.first_longest, knvk.wtm_summary.as_ref().unwrap().first_longest), (u64::MAX, u64::MAX));
}

/// The slot map sends the positions with the black king in the triangle (any squares for the
/// others) one-to-one onto `0..n_slots`; the positions the library refuses as illegal
/// (`Position::from_men`) are exactly those the document calls illegal (the side not to move
/// in check; two men on a square are left out: the library cannot even place them); the
/// library's slot of each legal position is one the document allows (identical men in either
/// order, the transpose when the black king is on the diagonal), and those alternatives hold
/// equal values. Exhaustive for KQvK, KRvKN, KQvKR and KRRvK.
#[test]
fn slots_are_a_bijection_and_legality_is_the_documents() {
    let tables = doc_tables();
    for run in ["KQvK", "KRvKN", "KQvKR", "KRRvK"] {
        let t = tables.table(run).unwrap();
        let lib = library_run(library_tables(), run);
        let mut hit = vec![false; t.n_slots as usize];
        let mut illegal = [0u64; 2];
        let (mut transposes, mut swaps) = (0u64, 0u64);
        let identical_pair = t.white.len() == 2 && t.white[0] == t.white[1];
        for_each_position(t, 1, |men| {
            let slot = t.slot_of(men)?;
            if std::mem::replace(&mut hit[slot as usize], true) {
                return Err(format!("slot {slot} reached twice"));
            }
            for (side, wtm) in [true, false].into_iter().enumerate() {
                // Written only into an error: most slots never need their FEN.
                let fen = || men.fen(wtm, 0);
                let bad = if wtm { men.illegal_wtm() } else { men.illegal_btm() };
                illegal[side] += bad as u64;
                if men.broken() {
                    continue;
                }
                if let Some(pos) = library_agrees_on_legality(men, wtm, bad)? {
                    let theirs = lib.slot_of(&pos);
                    let ours = equivalent_slots(t, men)?;
                    if !ours.contains(&theirs) {
                        return Err(format!("{}: library slot {theirs}, the document's {ours:?}", fen()));
                    }
                }
                if bad {
                    continue;
                }
                let value = values(t, wtm, slot)?;
                // Step 1: with the black king on the a1-d4 diagonal, the transpose is stored too
                // (in versions 5 to 7 both slots read their kept twin).
                if men.bk % 8 == men.bk / 8 {
                    image_agrees(t, wtm, t.slot_of(&men.transposed())?, value, &fen, "its transpose")?;
                    transposes += 1;
                }
                // Step 4: two identical pieces may be given in either order (in version 7 both
                // slots read the slot with them sorted by H digit).
                if identical_pair {
                    let swapped = Men { white: vec![men.white[1], men.white[0]], ..men.clone() };
                    image_agrees(t, wtm, t.slot_of(&swapped)?, value, &fen, "with the pieces swapped")?;
                    swaps += 1;
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{run}: {e}"));
        assert!(hit.iter().all(|&h| h), "{run}: some slots are not reached");
        assert!(illegal[0] > 0 && illegal[1] > 0, "{run}: {illegal:?}");
        assert!(transposes > 1000, "{run}: {transposes} transposes");
        assert_eq!(swaps > 0, identical_pair, "{run}: {swaps} swaps");
    }
}

/// The library's position of `men` when the document calls it legal (`bad` false), after
/// checking that the library refuses exactly the positions the document calls illegal.
fn library_agrees_on_legality(men: &Men, wtm: bool, bad: bool) -> Result<Option<tbstream::Position>, String> {
    let fen = || men.fen(wtm, 0);
    match library_position(men, wtm) {
        Ok(_) if bad => Err(format!("{}: the library accepts a position the document calls illegal", fen())),
        Ok(pos) => Ok(Some(pos)),
        Err(e) if !bad => Err(format!("{}: the library refuses a legal position: {e}", fen())),
        Err(_) => Ok(None),
    }
}

/// Compares the reader's class (both sides to move) and wtm distance code (where the wtm
/// class is 1) with the library's at every legal slot of a table (a dropped twin read at its
/// kept twin by both); returns how many legal slots of each side were compared.
fn compare_values(t: &DocTable, lib: &tbstream::Run, run: &str) -> [u64; 2] {
    use tbstream::Color;
    let mut compared = [0u64; 2];
    for_each_position(t, 1, |men| {
        let slot = t.slot_of(men)?;
        for (side, (wtm, color)) in [(true, Color::White), (false, Color::Black)].into_iter().enumerate() {
            if if wtm { men.illegal_wtm() } else { men.illegal_btm() } {
                continue;
            }
            // Written only into an error: most slots never need their FEN.
            let fen = || men.fen(wtm, 0);
            let ours = t.class(wtm, slot)?;
            let theirs = lib.class(color, slot).map(|c| c.bits()).map_err(|e| format!("{}: library: {e}", fen()))?;
            if ours != theirs {
                return Err(format!("{} (slot {slot}): class {ours}, library {theirs}", fen()));
            }
            if wtm && ours == 1 {
                let (ours, theirs) = (t.dtz_code(slot)?, lib.dtz_code(slot).map_err(|e| format!("{}: {e}", fen()))?);
                if ours != theirs {
                    return Err(format!("{} (slot {slot}): distance code {ours}, library {theirs}", fen()));
                }
            }
            compared[side] += 1;
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{run}: {e}"));
    compared
}

/// The reader's class (both sides to move) and wtm distance code (where the wtm class is 1)
/// equal the library's `Run::class` and `Run::dtz_code` at every legal slot of every table
/// `gen` wrote.
#[test]
fn classes_and_codes_match_the_library_at_every_legal_slot() {
    let tables = doc_tables();
    for (run, t) in &tables.tables {
        let compared = compare_values(t, &library_run(library_tables(), run), run);
        assert!(compared[0] > t.n_slots / 4 && compared[1] > t.n_slots / 4, "{run}: {compared:?} compared");
    }
}

/// Every block of every table `gen` wrote, and of every table with pawns, decodes in the
/// reader to the library's `CompactTable::block` (constant or bytes alike: the bytes as
/// stored, dropped twins included), and the library counts the same blocks.
#[test]
fn decoded_blocks_match_the_library() {
    use tbstream::file::compact::{BlockData, CompactTable, Part};
    let mut tables: Vec<(PathBuf, &DocTable)> =
        doc_tables().tables.values().map(|t| (table_path(&t.signature), t)).collect();
    let with_pawns = pawn_doc_tables().tables.values().filter(|t| t.pawns.is_some());
    tables.extend(with_pawns.map(|t| (pawn_dir().join(format!("{}.tbs", t.signature)), t)));
    let mut counts = [0usize; 2];
    for (path, t) in tables {
        let lib = CompactTable::open(&path).unwrap_or_else(|e| panic!("library: {}: {e}", path.display()));
        lib.check_sums().unwrap_or_else(|e| panic!("library: {}: {e}", path.display()));
        for (section, part) in [(WTM_CLASSES, Part::WtmWdl), (WTM_CODES, Part::WtmDtz), (BTM_CLASSES, Part::BtmWdl)] {
            let n = t.block_sections[section].blocks.len();
            assert_eq!(lib.n_blocks(part), n, "{}: section {section}", t.signature);
            for i in 0..n {
                let ours = t.block(section, i).unwrap_or_else(|e| panic!("{e}"));
                let theirs = lib.block(part, i).unwrap_or_else(|e| panic!("library: {}: {e}", t.signature));
                let same = match (ours, &theirs) {
                    (Block::Constant(a), BlockData::Constant(b)) => a == b,
                    (Block::Bytes(a), BlockData::Bytes(b)) => a == b,
                    _ => false,
                };
                assert!(same, "{}: section {section} block {i} differs", t.signature);
                counts[matches!(ours, Block::Bytes(_)) as usize] += 1;
            }
        }
    }
    // Both kinds of blocks are met.
    assert!(counts[0] > 0 && counts[1] > 0, "constant and zstd blocks: {counts:?}");
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

/// Does white, to move in the legal position `men`, mate in one?
fn mates_in_one(men: &Men) -> Result<bool, String> {
    let board = men.cozy(true)?;
    let mut mate = false;
    board.generate_moves(|moves| {
        for mv in moves {
            let mut after = board.clone();
            after.play_unchecked(mv);
            mate |= !after.checkers().is_empty() && !after.generate_moves(|_| true);
        }
        mate
    });
    Ok(mate)
}

/// "Wins by a zeroing move (version 6)", position by position, at every legal wtm position of
/// class 1 of KQvKR, KRvKN, KRvKQ, KPvKP and (every third slice) KQvKP. Where the code is not
/// 1 (where the reader searches white's zeroing moves), the reader's resolved distance equals
/// the library's (`Tablebase::probe`, a fresh counter); without pawns some of those positions
/// win by a zeroing move (the tables leave them out); in KPvKP some pawn double steps that
/// would win are spoiled by the en-passant capture they allow, as the rule weighs it in (the
/// library agreeing). Where the code is 1 (a win in 1 ply), the search finds a win by a
/// zeroing move unless white mates in one, and finds some (captures, promotions, pushes).
#[test]
fn resolved_wtm_distances_match_the_library() {
    let runs = [
        (doc_tables(), library_tables(), "KQvKR", 1),
        (doc_tables(), library_tables(), "KRvKN", 1),
        (doc_tables(), library_tables(), "KRvKQ", 1),
        (pawn_doc_tables(), library_pawn_tables(), "KPvKP", 1),
        (pawn_doc_tables(), library_pawn_tables(), "KQvKP", 3),
    ];
    for (tables, tb, run, slice_step) in runs {
        let t = tables.table(run).unwrap();
        assert!(t.zeroing_dont_cares, "{run}");
        let (mut searched, mut zeroing, mut spoiled) = (0u64, 0u64, 0u64);
        let (mut ones, mut zeroing_ones) = (0u64, 0u64);
        let mut mismatches = Vec::new();
        for_each_position(t, slice_step, |men| {
            if men.illegal_wtm() {
                return Ok(());
            }
            let slot = t.slot_of(men)?;
            if t.class(true, slot)? != 1 {
                return Ok(());
            }
            let fen = men.fen(true, 0);
            if t.dtz_code(slot)? == 1 {
                ones += 1;
                let by_zeroing = tables.wins_by_zeroing_move(t, men, true)?;
                zeroing_ones += by_zeroing as u64;
                if !by_zeroing && !mates_in_one(men)? {
                    return Err(format!("{fen}: code 1, but neither a win by a zeroing move nor a mate in one"));
                }
                return Ok(());
            }
            searched += 1;
            let ours = tables.wtm_distance(t, men, slot)?;
            zeroing += (ours == 1) as u64;
            if t.pawns.is_some() && tables.wins_by_zeroing_move(t, men, false)? != (ours == 1) {
                spoiled += 1;
            }
            let pos = library_position(men, true).map_err(|e| format!("library rejects {fen}: {e}"))?;
            let p = tb.probe(&pos).map_err(|e| format!("library probe of {fen}: {e}"))?;
            if (p.wdl as i32, p.dtz) != (1, ours as i32) && mismatches.len() < 20 {
                mismatches.push(format!("{fen}: reader wins in {ours}, library wdl {} dtz {}", p.wdl as i32, p.dtz));
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{run}: {e}"));
        eprintln!(
            "{run}: code not 1: {searched} searched, {zeroing} win by a zeroing move, {spoiled} spoiled by en passant; \
             code 1: {ones}, {zeroing_ones} by a zeroing move"
        );
        assert!(mismatches.is_empty(), "{run}:\n{}", mismatches.join("\n"));
        assert!(zeroing > 0 && zeroing < searched, "{run}: {zeroing} of {searched} left out");
        // Code 1 at a win by a zeroing move: a don't-care that holds 1 (pawn tables, whose
        // wins are mostly by a pawn move, may hold none).
        if t.pawns.is_none() {
            assert!(zeroing_ones > 0, "{run}");
        }
        assert_eq!(spoiled > 0, run == "KPvKP", "{run}: {spoiled} double steps spoiled by en passant");
    }
}

/// Known positions: mates, a stalemate, the README's KRvK example with and without a clock
/// that leaves too little, and a black-to-move loss read through the flipped board.
#[test]
fn known_positions() {
    let tables = doc_tables();
    assert_eq!(tables.probe("8/8/8/8/8/2k5/8/KR6 w - - 0 1"), Ok(Answer::new(1, 27, "win")));
    assert_eq!(tables.probe("8/8/8/8/8/2k5/8/KR6 w - - 80 1"), Ok(Answer::new(0, 0, "win")));
    // Checkmated and stalemated.
    assert_eq!(tables.probe("k7/1Q6/1K6/8/8/8/8/8 b - - 0 1"), Ok(Answer::new(-1, 0, "loss")));
    assert_eq!(tables.probe("k7/2Q5/1K6/8/8/8/8/8 b - - 0 1"), Ok(Answer::new(0, 0, "draw")));
    // Mate in one: distance 1; black to move, mated next move: lost in 2.
    assert_eq!(tables.probe("k7/8/1K6/8/8/8/7Q/8 w - - 0 1"), Ok(Answer::new(1, 1, "win")));
    // (Kh8 has one move, Kg8, and Qg7 mates.)
    assert_eq!(tables.probe("7k/Q7/6K1/8/8/8/8/8 b - - 0 1"), Ok(Answer::new(-1, -2, "loss")));
    // The same with colours exchanged: black's queen, white to move.
    assert_eq!(tables.probe("8/8/8/8/8/6k1/q7/7K w - - 0 1"), Ok(Answer::new(-1, -2, "loss")));
    // Illegal: adjacent kings; the side not to move in check.
    assert!(tables.probe("8/8/8/8/8/8/8/KkQ5 w - - 0 1").is_err());
    assert!(tables.probe("k7/8/8/8/8/8/8/QK6 w - - 0 1").is_err());
}

/// The reader rejects damaged files: a flipped byte in a block's stored bytes when it decodes
/// that block (the index checksum does not cover the blocks, so the file still opens, and the
/// other blocks still decode); a flipped byte in an index or in the summary (the section
/// checksums); a damaged index with its checksum recomputed (ends out of order, past or short
/// of the data, a wrong block checksum); a flipped header byte, with or without the header
/// checksum recomputed; a truncated or extended file; a file whose name does not match its run.
#[test]
fn damaged_files_are_rejected() {
    for run in ["KQvK", "KQvKR"] {
        let good = std::fs::read(table_path(run)).unwrap_or_else(|e| panic!("{run}: {e}"));
        let t = DocTable::parse(good.clone()).unwrap_or_else(|e| panic!("{run}: {e}"));
        t.check_all_blocks().unwrap_or_else(|e| panic!("{e}"));
        let flipped = |at: usize, bit: u8| {
            let mut bad = good.clone();
            bad[at] ^= bit;
            bad
        };
        // A flipped byte in a block: the file opens, that block is refused, the others decode.
        for (section, s) in t.block_sections.iter().enumerate() {
            let n = s.blocks.len();
            let mut picked = vec![0, n / 2, n - 1];
            picked.dedup();
            for i in picked {
                let range = s.blocks[i].0.clone();
                for at in [range.start, (range.start + range.end) / 2, range.end - 1] {
                    let damaged = DocTable::parse(flipped(at, 0x10)).unwrap_or_else(|e| {
                        panic!("{run}: byte {at} of section {section} block {i}: refused at open: {e}")
                    });
                    let err =
                        damaged.block(section, i).err().unwrap_or_else(|| panic!("{run}: flipped byte {at} accepted"));
                    assert!(err.contains(&format!("section {section} block {i}: checksum mismatch")), "{run}: {err}");
                    assert!(damaged.check_all_blocks().is_err(), "{run}: flipped byte {at} accepted");
                    if n > 1 {
                        assert!(damaged.block(section, (i + 1) % n).is_ok(), "{run}: another block refused");
                    }
                }
            }
        }
        // A flipped byte in an index (an end, a block checksum) or in the summary.
        for section in [WTM_CLASSES, WTM_CODES, BTM_CLASSES, SUMMARY] {
            let (o, l) = t.sections[section];
            let covered = if section == SUMMARY { l } else { INDEX_ENTRY * t.block_sections[section].blocks.len() };
            for at in [o, o + 8, o + covered / 2, o + covered - 1] {
                let err =
                    DocTable::parse(flipped(at, 0x01)).err().unwrap_or_else(|| panic!("{run}: byte {at} accepted"));
                assert!(err.contains(&format!("section {section} checksum mismatch")), "{run}: byte {at}: {err}");
            }
        }
        // A damaged index with its checksums recomputed.
        for (section, s) in t.block_sections.iter().enumerate() {
            let (o, l) = t.sections[section];
            let n = s.blocks.len();
            let data_len = (l - INDEX_ENTRY * n) as u64;
            let with_end = |i: usize, end: u64| {
                let mut bad = good.clone();
                bad[o + INDEX_ENTRY * i..][..8].copy_from_slice(&end.to_le_bytes());
                repair_checksums(&mut bad);
                DocTable::parse(bad)
            };
            assert!(with_end(0, 0).is_err(), "{run}: section {section}: an empty block 0 accepted");
            assert!(with_end(n - 1, data_len + 1).is_err(), "{run}: section {section}: a block past the data");
            assert!(with_end(n - 1, data_len - 1).is_err(), "{run}: section {section}: data after the last block");
            if n > 1 && s.blocks[1].0.len() > 1 {
                let moved = with_end(0, s.blocks[0].0.len() as u64 + 1).unwrap_or_else(|e| panic!("{run}: {e}"));
                assert!(moved.block(section, 0).is_err() && moved.block(section, 1).is_err(), "{run}: moved end");
            }
            let mut bad = flipped(o + 8, 0x01);
            repair_checksums(&mut bad);
            let damaged = DocTable::parse(bad).unwrap_or_else(|e| panic!("{run}: {e}"));
            assert!(damaged.block(section, 0).is_err(), "{run}: section {section}: a wrong block checksum accepted");
        }
        // The header: any flipped byte breaks its checksum; with the checksum recomputed, the
        // fields are checked one by one.
        for at in (0..HEADER_LEN).step_by(7).chain([247, 248, 255]) {
            assert!(DocTable::parse(flipped(at, 0x01)).is_err(), "{run}: flipped header byte {at} accepted");
        }
        for (at, bit) in [
            (8, 0x08),               // version 15
            (10, 0x01),              // header length
            (12, 0x02),              // layout
            (13, 0x01),              // men
            (14, 0x80),              // longest distance beyond 100
            (15, 0x04),              // an unknown flag
            (16, 0x01),              // the signature
            (32, 0x01),              // n_slots
            (40, 0x08),              // section 0's offset
            (48, 0x01),              // section 0's length
            (40 + 24 * 3 + 8, 0x01), // section 3's length
            (40 + 24 * 4, 0x08),     // section 4's offset
            (160, 0x02),             // codec
            (161, 0x40),             // W
            (162, 0x40),             // D
            (163, 0x01),
            (164, 0x01), // n_slices without pawns
            (168, 0x01), // T without pawns
            (200, 0x01), // reserved
            (240, 0x01), // a wtm cursed step of 1
            (245, 0x01), // reserved
        ] {
            let mut bad = flipped(at, bit);
            repair_checksums(&mut bad);
            assert!(DocTable::parse(bad).is_err(), "{run}: header byte {at} ^ {bit:#x} accepted");
        }
        // The version: labelled 5 or 4, the file's section 3 of 1632 bytes (both halves of the
        // summary) is one of versions 6 and 7 only; labelled 6 it opens (these runs have no
        // identical men, which is all that tells the two apart).
        assert_eq!(t.version, 7, "{run}");
        let mut relabelled = good.clone();
        relabelled[8..10].copy_from_slice(&6u16.to_le_bytes());
        repair_checksums(&mut relabelled);
        let v6 = DocTable::parse(relabelled).unwrap_or_else(|e| panic!("{run} labelled version 6: {e}"));
        assert!(v6.version == 6 && !v6.identical_dropped && !t.identical_dropped, "{run}");
        for version in [5u16, 4] {
            let mut relabelled = good.clone();
            relabelled[8..10].copy_from_slice(&version.to_le_bytes());
            repair_checksums(&mut relabelled);
            let err = DocTable::parse(relabelled).err().unwrap_or_else(|| panic!("{run} labelled version {version}"));
            assert!(err.contains("section 3 has 1632 bytes, expected 816"), "{run} labelled version {version}: {err}");
        }
        // White's half of the summary, with the checksums recomputed: a win counted in an even
        // number of plies (but 100), or in a distance beyond the header's longest; a longest
        // win's slot past the slots, or with no win counted.
        let w = t.wtm_summary.as_ref().unwrap();
        let half = t.sections[SUMMARY].0 + SUMMARY_LEN;
        let longest_win = w.counts.iter().rposition(|&c| c > 0).unwrap();
        let beyond = (t.longest as usize + 1..SUMMARY_DISTANCES).find(|d| d % 2 == 1 || *d == 100);
        let mut summary_changes = vec![
            ("a win in 2 plies", half + 8 * 2, 1u64),
            ("a win in 0 plies", half, 1),
            ("the longest win's slot past the slots", half + 8 * SUMMARY_DISTANCES, t.n_slots),
            ("no win but a slot", half + 8 * longest_win, 0),
        ];
        if let Some(d) = beyond {
            summary_changes.push(("a win beyond the longest distance", half + 8 * d, 1));
        }
        for (what, at, value) in summary_changes {
            let mut bad = good.clone();
            bad[at..at + 8].copy_from_slice(&value.to_le_bytes());
            if what.starts_with("no win") {
                for d in 0..SUMMARY_DISTANCES {
                    bad[half + 8 * d..][..8].fill(0);
                }
            }
            repair_checksums(&mut bad);
            let err = DocTable::parse(bad).err().unwrap_or_else(|| panic!("{run}: {what} accepted"));
            assert!(err.contains("wtm wins"), "{run}: {what}: {err}");
        }
        // The order records, with the checksums recomputed.
        let mut with_version_3 = good.clone();
        with_version_3[8..10].copy_from_slice(&3u16.to_le_bytes());
        repair_checksums(&mut with_version_3);
        let err = DocTable::parse(with_version_3).err().unwrap_or_else(|| panic!("{run}: version 3 with records"));
        assert!(err.contains("reserved"), "{run}: {err}");
        for (k, order) in t.orders.iter().enumerate() {
            let r = ORDER_RECORDS + ORDER_RECORD * k;
            let mut changes: Vec<(&str, usize, u8)> = Vec::new();
            if order.u == 0 {
                changes.push(("a digit with U = 0", r + 1, 0));
            } else {
                let used = order.digits.len();
                changes.push(("U + 1", r, order.record[0] + 1));
                changes.push(("a digit naming no man", r + 1, 0x7f));
                changes.push(("the black king without pawns", r + 1, DIGIT_BLACK_KING));
                if used >= 2 {
                    changes.push(("a man twice", r + used, order.record[1]));
                }
                changes.push(("the last digit left out", r + used, DIGIT_PAD));
                if used < ORDER_RECORD - 1 {
                    changes.push(("a digit after the padding", r + ORDER_RECORD - 1, 0));
                }
            }
            for (what, at, value) in changes {
                let mut bad = good.clone();
                bad[at] = value;
                repair_checksums(&mut bad);
                let err = DocTable::parse(bad).err().unwrap_or_else(|| panic!("{run}: section {k}: {what} accepted"));
                assert!(err.contains(&format!("section {k}: order record")), "{run}: section {k}: {what}: {err}");
            }
        }
        for len in [0, 100, 255, 256, t.sections[1].0 + 3, t.sections[3].0 + 10, good.len() - 1] {
            assert!(DocTable::parse(good[..len].to_vec()).is_err(), "{run}: file truncated to {len} bytes accepted");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(DocTable::parse(longer).is_err(), "{run}: file with a trailing byte accepted");
    }
    let dir = tempfile::tempdir().expect("a temporary folder");
    let renamed = dir.path().join("KRvK.tbs");
    std::fs::write(&renamed, std::fs::read(table_path("KQvK")).unwrap()).unwrap();
    assert!(DocTable::open(&renamed).is_err(), "KQvK data under the name KRvK.tbs accepted");
}

/// A flipped byte inside one block of a multi-block table: the reader refuses that block (its
/// checksum) and so the probe of a position in it, and `tbstream probe` of the same position
/// reports the damage, naming the table file and the block.
#[test]
fn damaged_block_is_reported_by_the_reader_and_by_tbstream_probe() {
    let run = "KQvKR";
    let t = doc_tables().table(run).unwrap();
    let s = &t.block_sections[WTM_CODES];
    let j = s.blocks.len() / 2;
    // A legal white-to-move position of class 1 (so that the probe reads its distance), with
    // a legal move, whose slot's kept twin is stored in block j of section 1 (by section 1's
    // order).
    let mut found = None;
    for_each_position(t, 1, |men| {
        if found.is_none() && !men.illegal_wtm() {
            let slot = t.slot_of(men)?;
            // The probe reads the resolved slot (identical men sorted, then the kept twin).
            let stored = t.stored(WTM_CODES, t.resolve(slot));
            if stored >> s.bits == j as u64 && t.class(true, slot)? == 1 && men.cozy(true)?.generate_moves(|_| true) {
                found = Some(men.fen(true, 0));
            }
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{e}"));
    let fen = found.unwrap_or_else(|| panic!("no won position in block {j} of section 1"));
    assert_eq!(doc_tables().probe(&fen).map(|a| a.category), Ok("win"), "{fen}");
    let dir = copy_tables(tables_dir());
    let path = dir.path().join(format!("{run}.tbs"));
    let mut bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let range = s.blocks[j].0.clone();
    bytes[(range.start + range.end) / 2] ^= 0x20;
    std::fs::write(&path, &bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // The reader: the file opens, the block and the probe are refused.
    let damaged = DocTables::open(dir.path());
    let err = damaged.probe(&fen).err().unwrap_or_else(|| panic!("{fen}: probed through a damaged block"));
    assert!(err.contains(&format!("{run}.tbs: section 1 block {j}: checksum mismatch")), "{err}");
    // The library.
    let (ok, stdout, stderr) = run_probe(dir.path(), std::slice::from_ref(&fen));
    assert!(!ok, "tbstream probe succeeded on a damaged block:\n{stdout}");
    assert!(!stdout.contains(&format!("{fen}\t")), "tbstream probe answered {fen}:\n{stdout}");
    assert!(
        stderr.contains(&format!("{run}.tbs")) && stderr.contains(&format!("block {j}")),
        "tbstream probe's error does not name {run}.tbs and block {j}:\n{stderr}"
    );
}

/// A version-1 table (Part II: header, four sections at multiples of 4096, their checksums)
/// is refused by the reader and by `tbstream probe`, whose message points to
/// `tbstream compact`.
#[test]
fn version_1_file_is_refused_by_tbstream_probe() {
    let n_slots = 10 * 64u64.pow(2);
    let w = n_slots / 64;
    let mut header = vec![0u8; HEADER_LEN];
    header[0..8].copy_from_slice(b"TBSTREAM");
    header[8..10].copy_from_slice(&1u16.to_le_bytes());
    header[10..12].copy_from_slice(&256u16.to_le_bytes());
    header[12] = 1; // layout: Koistinen interleaved index
    header[13] = 3; // men
    header[14] = 19; // last step
    header[15] = 3; // flags
    header[16..20].copy_from_slice(b"KQvK");
    header[32..40].copy_from_slice(&n_slots.to_le_bytes());
    let mut offset = 4096u64;
    let mut end = 0;
    for (i, length) in [8 * w, 8 * w, 48 * w, 48 * w].into_iter().enumerate() {
        let e = 40 + 24 * i;
        header[e..e + 8].copy_from_slice(&offset.to_le_bytes());
        header[e + 8..e + 16].copy_from_slice(&length.to_le_bytes());
        header[e + 16..e + 24].copy_from_slice(&xxh3_64(&vec![0u8; length as usize]).to_le_bytes());
        end = offset + length;
        offset = end.next_multiple_of(4096);
    }
    let checksum = xxh3_64(&header[..248]);
    header[248..256].copy_from_slice(&checksum.to_le_bytes());
    let mut bytes = header;
    bytes.resize(end as usize, 0);
    let err = DocTable::parse(bytes.clone()).err().expect("the reader accepts a version-1 file");
    assert!(err.contains("tbstream compact"), "{err}");
    let dir = tempfile::tempdir().expect("a temporary folder");
    std::fs::write(dir.path().join("KQvK.tbs"), &bytes).expect("writing KQvK.tbs");
    let fen = "8/8/8/8/8/2k5/8/KQ6 w - - 0 1".to_string();
    let (ok, stdout, stderr) = run_probe(dir.path(), std::slice::from_ref(&fen));
    assert!(!ok && !stdout.contains(&format!("{fen}\t")), "tbstream probe read a version-1 table:\n{stdout}");
    assert!(
        stderr.contains("tbstream compact"),
        "tbstream probe's message does not mention `tbstream compact`:\n{stderr}"
    );
}

// =======================================================================================
// Tests of tables with pawns
// =======================================================================================

/// Every file of the pawn folder validates (layout 1 without pawns, 2 with); with pawns,
/// section 4 lists exactly the document's stored configurations in slice order, there is one
/// level record per level value (highest first), the header's longest distance is the largest
/// of the levels'; for KPvK and KPvKP a scan of every legal position gives each level's
/// longest distance (either side to move, wtm distances resolved) and both halves of the
/// summary.
#[test]
fn pawn_headers_sections_and_levels_are_valid() {
    let tables = pawn_doc_tables();
    for t in tables.tables.values() {
        let has_pawns = t.white.iter().chain(&t.black).any(|&k| k == Kind::P);
        assert_eq!(t.pawns.is_some(), has_pawns, "{}", t.signature);
        assert_eq!(t.bytes[12], if has_pawns { 2 } else { 1 }, "{}: layout", t.signature);
        assert_eq!((t.bytes[161], t.bytes[162], t.flags), (18, 16, 3), "{}: W, D, flags", t.signature);
    }
    let mut with_pawns: Vec<&DocTable> = tables.tables.values().filter(|t| t.pawns.is_some()).collect();
    with_pawns.sort_by(|a, b| a.signature.cmp(&b.signature));
    let names: Vec<&str> = with_pawns.iter().map(|t| t.signature.as_str()).collect();
    for run in ["KPvK", "KPvKP", "KPPvK", "KQvKP", "KPvKQ", "KRPvK"] {
        assert!(names.contains(&run), "no {run} among {names:?}");
    }
    for t in with_pawns {
        let run = &t.signature;
        let l = t.pawns.as_ref().unwrap();
        let configs = stored_configurations(l.white_pawns, l.black_pawns);
        let keys: Vec<u32> = (0..configs.len()).map(|s| le_u32(t.section(SLICES), 4 * s)).collect();
        assert_eq!(keys, configs.iter().map(|c| c.key()).collect::<Vec<_>>(), "{run}: slice keys");
        assert_eq!(l.configs, configs, "{run}");
        assert_eq!(le_u32(&t.bytes, 164) as usize, configs.len(), "{run}: n_slices");
        let (wp, bp) = t.pieces();
        assert_eq!(l.t as usize, 6 * (wp.len() + bp.len() + 1) + 6, "{run}: T");
        assert_eq!(t.n_slots, (configs.len() as u64) << l.t, "{run}: n_slots");
        assert_eq!(t.sections[SLICES].1, 4 * configs.len() + LEVEL_RECORD * l.levels.len(), "{run}: section 4");
        let pawns = (l.white_pawns + l.black_pawns) as u32;
        assert_eq!(l.levels.len() as u32, 5 * pawns + 1, "{run}: levels");
        assert_eq!(t.bytes[171] as usize, l.levels.len(), "{run}: header's number of levels");
        for (j, rec) in l.levels.iter().enumerate() {
            assert_eq!(configs[rec.first as usize].level(), 5 * pawns - j as u32, "{run}: level {j}");
        }
        assert_eq!(t.longest, l.levels.iter().map(|r| r.longest).max().unwrap(), "{run}: header's longest");
    }
    for run in ["KPvK", "KPvKP"] {
        let t = tables.table(run).unwrap();
        let l = t.pawns.as_ref().unwrap();
        let scan = t.scan(tables);
        let stored: Vec<u32> = l.levels.iter().map(|r| r.longest as u32).collect();
        assert_eq!(stored, scan.level_longest, "{run}: the levels' longest distances");
        assert_eq!(t.summary, scan.summary, "{run}: btm summary");
        assert_eq!(t.wtm_summary.as_ref(), Some(&scan.wtm_summary), "{run}: wtm summary");
        assert_eq!((scan.classes[0][3], scan.classes[1][3]), (0, 0), "{run}: legal positions of class 3");
        assert!(scan.summary.counts.iter().sum::<u64>() > 0, "{run}: nothing lost");
        eprintln!("{run}: wins by a zeroing move whose code is not 1: {:?}", scan.resolved);
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
/// onto the slice's `2^T` slots; the library refuses exactly the positions the document calls
/// illegal and gives each legal one the document's slot (`Run::slot_of`); a legal position and
/// its mirror image read equal values when the file pattern is symmetric (both configurations
/// stored). Every slice of KPvK, KPvKP and KPPvK (so all their slots), every seventh slice of
/// KQvKP and KRPvK.
#[test]
fn pawn_slots_are_a_bijection_and_legality_is_the_documents() {
    let tables = pawn_doc_tables();
    let mut mirrors_checked = 0u64;
    for (run, slice_step) in [("KPvK", 1), ("KPvKP", 1), ("KPPvK", 1), ("KQvKP", 7), ("KRPvK", 7)] {
        let t = tables.table(run).unwrap();
        let lib = library_run(library_pawn_tables(), run);
        let l = t.pawns.as_ref().unwrap();
        let per = 1u64 << l.t;
        let visited = l.configs.len().div_ceil(slice_step) as u64;
        let mut hit = vec![false; (visited * per) as usize];
        let mut illegal = [0u64; 2];
        for_each_position(t, slice_step, |men| {
            let slot = t.slot_of(men)?;
            let s = slot / per;
            let (wp, bp) = men.pawns();
            if t.find_slice(&wp, &bp) != Some((s as u32, false)) || !s.is_multiple_of(slice_step as u64) {
                return Err(format!("slot {slot} outside the slice of {wp:?}/{bp:?}"));
            }
            if std::mem::replace(&mut hit[((s / slice_step as u64) * per + slot % per) as usize], true) {
                return Err(format!("slot {slot} reached twice"));
            }
            let symmetric = l.configs[s as usize].symmetric();
            for (side, wtm) in [true, false].into_iter().enumerate() {
                // Written only into an error: most slots never need their FEN.
                let fen = || men.fen(wtm, 0);
                let bad = if wtm { men.illegal_wtm() } else { men.illegal_btm() };
                illegal[side] += bad as u64;
                if men.broken() {
                    continue;
                }
                if let Some(pos) = library_agrees_on_legality(men, wtm, bad)? {
                    if lib.slot_of(&pos) != slot {
                        return Err(format!("{}: library slot {}, the document's {slot}", fen(), lib.slot_of(&pos)));
                    }
                }
                if bad || !symmetric {
                    continue;
                }
                // A position and its mirror image hold the same class and, resolved, the same
                // distance (in versions 6 and 7 the bytes of a win by a zeroing move may differ).
                let resolved = |m: &Men| -> Result<(u8, Option<u32>), String> {
                    let at = t.slot_of(m)?;
                    let class = t.class(wtm, at)?;
                    let distance = (wtm && class == 1).then(|| tables.wtm_distance(t, m, at)).transpose()?;
                    Ok((class, distance))
                };
                let (value, image) = (resolved(men)?, resolved(&men.mirrored())?);
                if value != image {
                    return Err(format!("{}: {value:?}, its mirror image {image:?}", fen()));
                }
                mirrors_checked += 1;
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{run}: {e}"));
        assert!(hit.iter().all(|&h| h), "{run}: some slots of the slices visited are not reached");
        assert!(illegal[0] > 0 && illegal[1] > 0, "{run}");
    }
    assert!(mirrors_checked > 100_000, "only {mirrors_checked} mirror images checked");
}

/// The reader's class (both sides to move) and wtm distance code (where the wtm class is 1)
/// equal the library's `Run::class` and `Run::dtz_code` at every legal slot of KPvK, KPvKP
/// and KPPvK.
#[test]
fn raw_pawn_values_match_the_library_at_every_legal_slot() {
    let tables = pawn_doc_tables();
    for run in ["KPvK", "KPvKP", "KPPvK"] {
        let t = tables.table(run).unwrap();
        let compared = compare_values(t, &library_run(library_pawn_tables(), run), run);
        assert!(compared[0] > t.n_slots / 2 && compared[1] > t.n_slots / 2, "{run}: {compared:?} compared");
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
    let boards: Vec<&str> = fens.iter().filter_map(|f| f.split(' ').next()).collect();
    assert!(boards.iter().any(|b| b.contains('P')) && boards.iter().any(|b| b.contains('p')));
}

/// The reader rejects damaged files with pawns: a flipped byte in section 4 (its checksum);
/// damage to section 4 with its checksum recomputed (keys, tiling, zero bytes, longest
/// distances); changed pawn header fields, with and without the header checksum recomputed;
/// a truncated or extended file.
#[test]
fn damaged_pawn_files_are_rejected() {
    let good = std::fs::read(pawn_dir().join("KPvKP.tbs")).expect("reading KPvKP.tbs");
    let t = DocTable::parse(good.clone()).unwrap_or_else(|e| panic!("KPvKP: {e}"));
    let l = t.pawns.as_ref().unwrap();
    let (o4, len4) = t.sections[SLICES];
    for at in [o4, o4 + len4 / 2, o4 + len4 - 1] {
        let mut bad = good.clone();
        bad[at] ^= 0x10;
        let err = DocTable::parse(bad).err().unwrap_or_else(|| panic!("flipped byte {at} accepted"));
        assert!(err.contains("section 4 checksum mismatch"), "flipped byte {at}: {err}");
    }
    // Section 4 with its checksum recomputed.
    let n = l.configs.len();
    let records = o4 + 4 * n;
    for (what, at, bit) in [
        ("a key", o4 + 4 * 5, 0x01),
        ("the last key", o4 + 4 * (n - 1), 0x02),
        ("a level's first slice", records + LEVEL_RECORD + 1, 0x01),
        ("a level's count", records + LEVEL_RECORD * 3 + 4, 0x01),
        ("the longest level's distance", records + 8, 0x80),
        ("a level's zero bytes", records + LEVEL_RECORD + 12, 0x01),
    ] {
        let mut bad = good.clone();
        bad[at] ^= bit;
        repair_checksums(&mut bad);
        assert!(DocTable::parse(bad).is_err(), "changed {what} (byte {at}) accepted");
    }
    // The header's longest distance is the levels' largest.
    let mut bad = good.clone();
    bad[14] += 1;
    repair_checksums(&mut bad);
    assert!(DocTable::parse(bad).is_err(), "header longest distance above the levels' accepted");
    // Header fields with pawns: n_slices, T, the pawn counts, the number of levels.
    for at in [12, 164, 165, 168, 169, 170, 171, 172] {
        for repair in [false, true] {
            let mut bad = good.clone();
            bad[at] ^= 0x01;
            if repair {
                repair_checksums(&mut bad);
            }
            assert!(DocTable::parse(bad).is_err(), "flipped header byte {at} (repaired: {repair}) accepted");
        }
    }
    for len in [HEADER_LEN, t.sections[3].0 + 10, o4, o4 + 4 * n, good.len() - 1] {
        assert!(DocTable::parse(good[..len].to_vec()).is_err(), "file truncated to {len} bytes accepted");
    }
    let mut longer = good.clone();
    longer.push(0);
    assert!(DocTable::parse(longer).is_err(), "file with a trailing byte accepted");
}

// =======================================================================================
// Tests of the stored order (version 4)
// =======================================================================================

/// For every position of `t` (of every `slice_step`-th slice with pawns), the index of its
/// slot (`index_of_slot`) holds each man's code at the index bits `code_bit_positions` gives
/// (the white king its square, the other men their diagram codes); those bits and, without
/// pawns, the black king's `k` at bits T-1, T-3, T-5, T-7 cover the T index bits once.
/// Returns the number of positions checked.
fn codes_sit_where_the_order_reads_them(t: &DocTable, slice_step: usize) -> u64 {
    let (wp, bp) = t.pieces();
    let has_pawns = t.pawns.is_some();
    let men_codes = code_bit_positions(t.index_bits, wp.len(), bp.len(), has_pawns);
    let mut bits: Vec<u32> = men_codes.iter().flat_map(|(_, p)| p.iter().copied()).collect();
    if !has_pawns {
        bits.extend((0..4).map(|i| t.index_bits - 1 - 2 * i));
    }
    bits.sort();
    assert_eq!(bits, (0..t.index_bits).collect::<Vec<_>>(), "{}: the index bits of the codes", t.signature);
    let mut checked = 0;
    for_each_position(t, slice_step, |men| {
        let slot = t.slot_of(men)?;
        let index = t.index_of_slot(slot);
        let (w, b) = men.ordered();
        for &(man, positions) in &men_codes {
            let square = match man {
                IndexMan::WhiteKing => men.wk,
                IndexMan::Piece(p) if p < w.len() => w[p],
                IndexMan::Piece(p) => b[p - w.len()],
                IndexMan::BlackKing => men.bk,
            };
            let code = (0..6).fold(0u8, |c, j| c | (((index >> positions[j]) & 1) as u8) << j);
            if code != man.code(square) {
                return Err(format!("{} (slot {slot}): {man:?} has code {code:o} in the index", men.fen(true, 0)));
            }
        }
        checked += 1;
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{}: {e}", t.signature));
    checked
}

/// Every table `gen` wrote is version 7 (identical men dropped where a run has identical
/// pieces: KPPvK's pawns drop nothing); the generator orders sections of runs without pawns
/// and with them as the document says (without pawns `U = T - 7`: white's first piece a digit
/// of radix 8, every other man with free bits one of radix 64; with pawns `U = min(T, 24)`:
/// up to two pieces a whole slice, every digit of radix 64), so the reader's order path is
/// exercised (KQvKR, KRvKN, KPvK and KQvKP have a section with `U > 0`); each ordered section's
/// `stored` maps every unit of `2^U` slots one-to-one onto the same range of stored positions;
/// and the men's codes sit in the slot's index where the orders read them.
#[test]
fn stored_orders_are_permutations_of_units() {
    let pawnless: Vec<&DocTable> = doc_tables().tables.values().collect();
    let with_pawns: Vec<&DocTable> = pawn_doc_tables().tables.values().filter(|t| t.pawns.is_some()).collect();
    let mut ordered = Vec::new();
    for t in pawnless.iter().chain(&with_pawns) {
        assert_eq!(t.version, 7, "{}: tables are published in version 7", t.signature);
        assert_eq!(t.twins_dropped, t.pawns.is_none(), "{}: twins are dropped without pawns", t.signature);
        // Identical pieces: two neighbours of one kind, pawns not counted.
        let identical = t.white.windows(2).chain(t.black.windows(2)).any(|p| p[0] == p[1] && p[0] != Kind::P);
        assert_eq!(t.identical_dropped, identical, "{}: identical pieces are dropped", t.signature);
        for (k, o) in t.orders.iter().enumerate() {
            if o.u > 0 {
                let digits: Vec<String> = o.digits.iter().map(|d| format!("{:?}/{}", d.man, d.bits)).collect();
                ordered.push(format!("{} section {k}: U = {}, digits {}", t.signature, o.u, digits.join(" ")));
            }
        }
    }
    eprintln!("sections in a stored order:\n{}", ordered.join("\n"));
    for (tables, run) in
        [(doc_tables(), "KQvKR"), (doc_tables(), "KRvKN"), (pawn_doc_tables(), "KPvK"), (pawn_doc_tables(), "KQvKP")]
    {
        let t = tables.table(run).unwrap();
        assert!(t.orders.iter().any(|o| o.u > 0), "{run}: every section in slot order");
    }
    for t in pawnless.iter().chain(&with_pawns) {
        let has_pawns = t.pawns.is_some();
        for o in t.orders.iter().filter(|o| o.u > 0) {
            let u = if has_pawns { t.index_bits.min(24) } else { t.index_bits - 7 };
            assert_eq!(o.u, u, "{}: U", t.signature);
            for d in &o.digits {
                // A whole slice leaves every man his 6 bits.
                let wide = u == t.index_bits || (d.man != IndexMan::Piece(0) && d.man != IndexMan::BlackKing);
                assert_eq!(d.bits, if wide { 6 } else { 3 }, "{}: the radix bits of {:?}", t.signature, d.man);
            }
        }
    }
    let mut units_checked = 0;
    for t in pawnless.iter().chain(&with_pawns) {
        if t.n_slots > 8 << 20 {
            continue;
        }
        for (k, o) in t.orders.iter().enumerate().filter(|(_, o)| o.u > 0) {
            let mut seen = vec![false; t.n_slots as usize];
            for s in 0..t.n_slots {
                let p = t.stored(k, s);
                assert_eq!(p >> o.u, s >> o.u, "{}: section {k}: slot {s} stored out of its unit at {p}", t.signature);
                assert!(!std::mem::replace(&mut seen[p as usize], true), "{}: section {k}: {p} twice", t.signature);
            }
            units_checked += t.n_slots >> o.u;
        }
    }
    assert!(units_checked > 0);
    for run in ["KQvK", "KRvKN", "KQvKR", "KRRvK"] {
        assert!(codes_sit_where_the_order_reads_them(doc_tables().table(run).unwrap(), 1) > 0);
    }
    for (run, slice_step) in [("KPvK", 1), ("KPvKP", 1), ("KPPvK", 1), ("KQvKP", 7), ("KRPvK", 7)] {
        assert!(codes_sit_where_the_order_reads_them(pawn_doc_tables().table(run).unwrap(), slice_step) > 0);
    }
}

/// The document's `KQvK` example: white Kc3, Qc6, black Kd1 is slot 24338, and the record
/// `09 01 00 FF..` stores it at 24466 (`r_Q = 6`, the rank of c6 among the squares of `H = 7`);
/// the formula `(s >> 9 << 9) + r_Q * 64 + square(wK)` is the reader's `stored` at every slot.
/// In the built `KQvK`, every section with that record holds the position's class (and, in
/// section 1, its distance code) at 24466, word 382 bit 18 of block 0: the library's
/// `Run::class` and `Run::dtz_code` of slot 24338.
#[test]
fn kqvk_example_of_the_document() {
    use tbstream::Color;
    let t = doc_tables().table("KQvK").unwrap();
    let men = parse_fen("8/8/2Q5/8/8/2K5/8/3k4 w - - 0 1").unwrap().men;
    let slot = t.slot_of(&men).unwrap();
    assert_eq!(slot, 24338);
    // Kd1 is off the a1-h8 diagonal: the slot is its own kept twin, read where it is stored.
    assert_eq!(t.kept(slot), slot);
    let codes = square_codes();
    let h7: Vec<u8> = (0..64).filter(|&q| codes[q as usize].0 == 7).collect();
    assert_eq!(h7, [18, 21, 27, 28, 35, 36, 42, 45], "c3 f3 d4 e4 d5 e5 c6 f6");
    let rank_in_h = |q: u8| {
        let h = codes[q as usize].0;
        (0..q).filter(|&x| codes[x as usize].0 == h).count() as u64
    };
    assert_eq!(rank_in_h(42), 6);
    let record = [9, 1, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    let example = StoredOrder::parse(record, 9, &code_bit_positions(16, 1, 0, false), 1, false).unwrap();
    assert_eq!(example.stored(slot, t.index_of_slot(slot)), 24466);
    assert_eq!((24466 / 64, 24466 % 64), (382, 18));
    // The formula, with the queen's square from its code (H in the prefix, L at bits 6..8).
    let square_of_code: HashMap<(u8, u8), u8> = (0..64).map(|q| (codes[q as usize], q)).collect();
    for s in 0..t.n_slots {
        let index = t.index_of_slot(s);
        let prefix = index >> 9;
        let h = (((prefix >> 5) & 1) << 2 | ((prefix >> 3) & 1) << 1 | ((prefix >> 1) & 1)) as u8;
        let queen = square_of_code[&(h, ((index >> 6) & 7) as u8)];
        assert_eq!(example.stored(s, index), (s >> 9 << 9) + rank_in_h(queen) * 64 + (s & 63), "slot {s}");
    }
    // The built table.
    let lib = library_run(library_tables(), "KQvK");
    let with_record: Vec<usize> = (0..3).filter(|&k| t.orders[k].record == record).collect();
    eprintln!("KQvK records: {:02x?}", t.orders.iter().map(|o| o.record).collect::<Vec<_>>());
    assert!(!with_record.is_empty(), "no section of KQvK has the document's example record");
    for k in with_record {
        assert_eq!(t.stored(k, slot), 24466, "section {k}");
        match k {
            WTM_CODES => {
                assert_eq!(lib.class(Color::White, slot).unwrap().bits(), 1, "the example is a win");
                assert_eq!(t.dtz_code_at(24466), Ok(lib.dtz_code(slot).unwrap()), "section 1");
            }
            _ => {
                let color = if k == WTM_CLASSES { Color::White } else { Color::Black };
                let ours = match t.block(k, 0).unwrap() {
                    Block::Constant(v) => *v,
                    Block::Bytes(b) => {
                        let (l, h) = (le_u64(b, 16 * 382), le_u64(b, 16 * 382 + 8));
                        (((l >> 18) & 1) + 2 * ((h >> 18) & 1)) as u8
                    }
                };
                assert_eq!(ours, lib.class(color, slot).unwrap().bits(), "section {k}");
                assert_eq!(t.class_at(k, 24466), Ok(ours), "section {k}");
            }
        }
    }
}

/// A table rewritten as version 3, and the section-1 codes it holds.
struct Version3 {
    bytes: Vec<u8>,
    /// Section 1 of the version 7 file in slot order, as stored at each slot's resolved slot
    /// (`dtz_code` of every slot).
    raw_codes: Vec<u8>,
    /// Section 1 of the rewrite: `raw_codes` but at the legal wtm positions of class 1 that
    /// the reader resolves to 1 ply ("Wins by a zeroing move (version 6)"), which hold 1.
    codes: Vec<u8>,
}

/// `t` (version 7) rewritten as a version 3 file: every block section re-encoded in slot
/// order (the value of slot `s` read at `stored(kept(s*))`, `resolve`, so that a slot of
/// identical men out of order holds the value of the slot with them sorted, and a dropped twin
/// its kept twin's, as version 3 stores every slot; every block one zstd frame), section 1
/// holding every won position's distance (code 1 at each win by a zeroing move, found by the
/// scan's search in `tables`), bytes 172..199 zeroed, section 3's first half (black's
/// distances) and section 4 copied, the section table and every checksum recomputed.
fn rewrite_as_version_3(tables: &DocTables, t: &DocTable) -> Version3 {
    assert_eq!(t.version, 7, "{}", t.signature);
    let raw_codes: Vec<u8> = (0..t.n_slots).map(|s| t.dtz_code(s).unwrap()).collect();
    let resolved = &t.scan(tables).wtm_distances;
    let codes: Vec<u8> = raw_codes.iter().zip(resolved).map(|(&c, &d)| if d == 1 { 1 } else { c }).collect();
    let mut bytes = t.bytes[..HEADER_LEN].to_vec();
    bytes[8..10].copy_from_slice(&3u16.to_le_bytes());
    bytes[ORDER_RECORDS..ORDER_RECORDS + 3 * ORDER_RECORD].fill(0);
    let mut sections = Vec::with_capacity(5);
    for section in [WTM_CLASSES, WTM_CODES, BTM_CLASSES] {
        let bits = t.block_sections[section].bits;
        let (mut index, mut data) = (Vec::new(), Vec::new());
        for block in 0..t.n_slots.div_ceil(1 << bits) {
            let first = block << bits;
            let slots = first..(first + (1 << bits)).min(t.n_slots);
            let decoded = if section == WTM_CODES {
                codes[slots.start as usize..slots.end as usize].to_vec()
            } else {
                let mut planes = vec![0u8; (slots.end - first) as usize / 64 * 16];
                for s in slots {
                    let class = t.class(section == WTM_CLASSES, s).unwrap();
                    let (w, b) = (((s - first) / 64) as usize, s % 64);
                    for (plane, on) in [(0, class & 1), (1, class >> 1)] {
                        let at = 16 * w + 8 * plane;
                        let v = le_u64(&planes, at) | (on as u64) << b;
                        planes[at..at + 8].copy_from_slice(&v.to_le_bytes());
                    }
                }
                planes
            };
            let stored = zstd::bulk::compress(&decoded, 3).expect("zstd");
            data.extend_from_slice(&stored);
            index.extend_from_slice(&(data.len() as u64).to_le_bytes());
            index.extend_from_slice(&xxh3_64(&stored).to_le_bytes());
        }
        let checksum = xxh3_64(&index);
        index.extend(data);
        sections.push((index, checksum));
    }
    for section in [SUMMARY, SLICES] {
        let s = if section == SUMMARY { &t.section(SUMMARY)[..SUMMARY_LEN] } else { t.section(SLICES) }.to_vec();
        let checksum = xxh3_64(&s);
        sections.push((s, checksum));
    }
    for (i, (s, checksum)) in sections.into_iter().enumerate() {
        bytes.resize(bytes.len().next_multiple_of(SECTION_ALIGN), 0);
        let e = 40 + 24 * i;
        let offset = bytes.len() as u64;
        bytes[e..e + 8].copy_from_slice(&offset.to_le_bytes());
        bytes[e + 8..e + 16].copy_from_slice(&(s.len() as u64).to_le_bytes());
        bytes[e + 16..e + 24].copy_from_slice(&checksum.to_le_bytes());
        bytes.extend(s);
    }
    let c = xxh3_64(&bytes[..248]);
    bytes[248..256].copy_from_slice(&c.to_le_bytes());
    Version3 { bytes, raw_codes, codes }
}

/// Version 3 files still read: every pawnless table, and KPvK and KPvKP, rewritten as version 3
/// by the reader's orders, sorted identical men (KRRvK), kept twins and resolved distances
/// (every section in slot order, every slot stored, every won position's distance stored:
/// code 1 at the wins by a zeroing move, black's half of the summary) validate, read the same
/// classes at every slot and the codes written, and decode block by block to the library's
/// slot-order bytes of the version 7 files (`CompactTable::block_into`, slots of identical
/// men out of order and dropped twins filled), but for section 1's resolved don't-cares (the
/// library's bytes there are the version 7 file's raw codes, as the reader reads them);
/// `tbstream probe` over the rewritten pawnless tables, and `Tablebase::probe` over the pawn
/// folder with the two rewritten, answer exactly as over the version 7 files on every stored
/// KQvK position, on random positions and on every KPvK and random KPvKP positions, and so
/// does the reader over the rewrites (where it reads every distance from section 1 without a
/// search), so the reader's orders, sorted identical men, kept twins and resolved distances
/// are the library's.
#[test]
fn version_3_rewrites_read_the_same() {
    use tbstream::file::compact::{CompactTable, Part};
    fn rewrite(from: &Path, runs: &[&str], tables: &DocTables) -> tempfile::TempDir {
        let dir = copy_tables(from);
        let mut resolved = 0;
        for run in runs {
            let t = tables.table(run).unwrap();
            let Version3 { bytes, raw_codes, codes } = rewrite_as_version_3(tables, t);
            let v3 = DocTable::parse(bytes.clone()).unwrap_or_else(|e| panic!("{run} as version 3: {e}"));
            assert_eq!(v3.version, 3);
            assert!(v3.orders.iter().all(|o| o.u == 0) && !v3.twins_dropped && !v3.zeroing_dont_cares);
            assert!(v3.wtm_summary.is_none() && v3.summary == t.summary, "{run}: the summary");
            resolved += raw_codes.iter().zip(&codes).filter(|(a, b)| a != b).count();
            let path = from.join(format!("{run}.tbs"));
            let lib = CompactTable::open(&path).unwrap_or_else(|e| panic!("library: {}: {e}", path.display()));
            for (section, part) in [(WTM_CLASSES, Part::WtmWdl), (WTM_CODES, Part::WtmDtz), (BTM_CLASSES, Part::BtmWdl)]
            {
                let bits = v3.block_sections[section].bits;
                for i in 0..v3.block_sections[section].blocks.len() {
                    let mut theirs = Vec::new();
                    lib.block_into(part, i, &mut theirs).unwrap_or_else(|e| panic!("library: {run}: {e}"));
                    let ours = match v3.block(section, i).unwrap_or_else(|e| panic!("{e}")) {
                        Block::Bytes(ours) => ours,
                        Block::Constant(_) => panic!("{run}: the rewrite stores a constant block"),
                    };
                    if section == WTM_CODES {
                        let slots = (i << bits)..(i << bits) + ours.len();
                        assert!(*ours == codes[slots.clone()], "{run}: section 1 block {i} as written");
                        assert!(theirs == raw_codes[slots], "{run}: section 1 block {i} in slot order");
                    } else {
                        assert!(*ours == theirs, "{run}: section {section} block {i} in slot order");
                    }
                }
            }
            let step = (t.n_slots / 300_000).max(1) as usize;
            for s in (0..t.n_slots).step_by(step) {
                for wtm in [true, false] {
                    assert_eq!(v3.class(wtm, s), t.class(wtm, s), "{run}: slot {s}");
                }
                assert_eq!(v3.dtz_code(s), Ok(codes[s as usize]), "{run}: slot {s}");
            }
            std::fs::write(dir.path().join(format!("{run}.tbs")), bytes).unwrap();
        }
        assert!(resolved > 0, "{runs:?}: no don't-care resolved");
        dir
    }
    // Pawnless, through `tbstream probe`.
    let runs: Vec<&str> = doc_tables().tables.keys().map(|k| k.as_str()).collect();
    let dir = rewrite(tables_dir(), &runs, doc_tables());
    let mut fens = Vec::new();
    for (i, sig) in ["KQvKR", "KRvKN", "KRRvK", "KQvK"].iter().enumerate() {
        fens.extend(random_legal_fens(sig, 2000, 0x7633 + i as u64));
    }
    for bk in TRIANGLE {
        for wk in 0..64u8 {
            for q in 0..64u8 {
                let men = Men { wk, bk, white: vec![(Kind::Q, q)], black: vec![] };
                if !men.illegal_wtm() {
                    fens.push(men.fen(true, 0));
                }
            }
        }
    }
    let (ok, stdout, stderr) = run_probe(dir.path(), &fens);
    assert!(ok, "tbstream probe over version 3 tables failed:\n{stderr}");
    let v7: Vec<String> = library_probe(&fens)
        .iter()
        .zip(&fens)
        .map(|(a, fen)| format!("{fen}\t{}\t{}\t{}", a.wdl, a.dtz, a.category))
        .collect();
    let v3: Vec<String> = stdout
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            format!("{}\t{}\t{}\t{}", f[0], f[1], f[2], f[4])
        })
        .collect();
    assert_eq!(v3.len(), v7.len());
    let differ: Vec<String> =
        v3.iter().zip(&v7).filter(|(a, b)| a != b).map(|(a, b)| format!("v3 {a} / v7 {b}")).collect();
    assert!(
        differ.is_empty(),
        "{} of {} answers differ, e.g.:\n{}",
        differ.len(),
        fens.len(),
        differ[..differ.len().min(20)].join("\n")
    );
    compare(&DocTables::open(dir.path()), &fens, &library_probe(&fens));
    // With pawns, through `Tablebase::probe`.
    let dir = rewrite(pawn_dir(), &["KPvK", "KPvKP"], pawn_doc_tables());
    let tb = tbstream::Tablebase::open(dir.path()).unwrap_or_else(|e| panic!("library: {e}"));
    let mut fens = random_legal_fens("KPvKP", 3000, 0x7634);
    for p in 8..56u8 {
        for wk in 0..64u8 {
            for bk in 0..64u8 {
                let men = Men { wk, bk, white: vec![(Kind::P, p)], black: vec![] };
                if !men.illegal_btm() {
                    fens.push(men.fen(false, 0));
                }
            }
        }
    }
    let theirs = tablebase_probe(&tb, &fens);
    assert_eq!(theirs, library_pawn_probe(&fens), "the library over version 3 and version 7 pawn tables");
    compare(&DocTables::open(dir.path()), &fens, &theirs);
}

// =======================================================================================
// Tests of the transposed twins (version 5)
// =======================================================================================

/// "Transposed twins (version 5)", on every position of KQvK, KRRvK (identical men, never
/// re-sorted), KQvKR and KRvKN whose black king stands on the a1-h8 diagonal (the triangle
/// codes 0, 4, 7, 9; the diagram gives every image of a square its H digit): the reader's `kept(s)` (from the men it decodes from the slot) is the
/// smaller of the slot and the slot of the position transposed (computed from the men), and is
/// its own kept twin; the two twins share the index's prefix and so lie in one unit of every
/// stored order with `U <= T - 7` (at stored positions of that unit); within a storage word
/// every position is dropped, or none, or (the other men their own images) exactly those with
/// the white king above the diagonal, and the twin of lane `wk` is lane `t(wk)` of one image
/// word; the reader's class and distance code at the slot and at its twin equal the library's
/// (`Run::class`, `Run::dtz_code`) at both; and the reader's probe of the position and of its
/// transposed image equal the library's (`Tablebase::probe`, `Tablebase::category`) and each
/// other: every one of KQvK, every 29th of the others. Off the diagonal every slot is kept.
/// Some slots are in fact dropped.
#[test]
fn transposed_twins_are_kept_at_the_smaller_slot() {
    use tbstream::Color;
    let diagonal: Vec<u64> = (0..10).filter(|&k| on_diagonal_code(k)).collect();
    assert_eq!(diagonal, [0, 4, 7, 9], "the document's codes of a1, b2, c3, d4");
    // "The diagram of Part II gives a square and its images one H digit."
    let codes = square_codes();
    for q in 0..64u8 {
        for i in 0..8 {
            assert_eq!(codes[symmetry(i, q) as usize].0, codes[q as usize].0, "square {q}, symmetry {i}");
        }
    }
    let tables = doc_tables();
    let mut fens = Vec::new();
    for (run, probe_step) in [("KQvK", 1), ("KRRvK", 29), ("KQvKR", 29), ("KRvKN", 29)] {
        let t = tables.table(run).unwrap();
        assert!(t.version == 7 && t.twins_dropped, "{run}: version {}", t.version);
        let lib = library_run(library_tables(), run);
        let prefix_bits = t.index_bits - 7;
        let words = (t.n_slots / 64) as usize;
        // Per storage word: its dropped lanes, its twin word, whether the other men are their
        // own images.
        let mut dropped_lanes = vec![0u64; words];
        let mut twin_word = vec![u64::MAX; words];
        let mut self_image = vec![false; words];
        let (mut on_diagonal, mut dropped, mut legal) = (0u64, 0u64, 0u64);
        for_each_position(t, 1, |men| {
            let slot = t.slot_of(men)?;
            let kept = t.kept(slot);
            if men.bk % 8 != men.bk / 8 {
                return if kept == slot { Ok(()) } else { Err(format!("slot {slot} off the diagonal kept at {kept}")) };
            }
            on_diagonal += 1;
            let at = || format!("{} (slot {slot})", men.fen(true, 0));
            // (a) The smaller of the two slots, its own kept twin, and the twin's too.
            let image = t.slot_of(&men.transposed())?;
            if kept != slot.min(image) || t.kept(kept) != kept || t.kept(image) != kept {
                return Err(format!("{}: image slot {image}, kept {kept}", at()));
            }
            dropped += (kept != slot) as u64;
            // (b) One prefix, so one unit of every order with U <= T - 7.
            if slot >> prefix_bits != image >> prefix_bits {
                return Err(format!("{}: the image slot {image} has another prefix", at()));
            }
            for (k, o) in t.orders.iter().enumerate().filter(|(_, o)| o.u > 0 && o.u <= prefix_bits) {
                if slot >> o.u != image >> o.u || t.stored(k, slot) >> o.u != t.stored(k, image) >> o.u {
                    return Err(format!("{}: section {k}: the image slot {image} in another unit", at()));
                }
            }
            // Storage words: the twin of lane wk is lane t(wk) of the image word.
            let (w, lane) = ((slot / 64) as usize, slot % 64);
            if lane != men.wk as u64 || image % 64 != transpose(men.wk) as u64 {
                return Err(format!("{}: the image slot {image} is not lane t(wk) of a word", at()));
            }
            let before = std::mem::replace(&mut twin_word[w], image / 64);
            if before != u64::MAX && before != image / 64 {
                return Err(format!("{}: the word's images lie in two words", at()));
            }
            dropped_lanes[w] |= ((kept != slot) as u64) << lane;
            self_image[w] = men.white.iter().chain(&men.black).all(|&(_, q)| transpose(q) == q);
            // (c) The library's values at the slot and at its twin.
            for (wtm, color) in [(true, Color::White), (false, Color::Black)] {
                if if wtm { men.illegal_wtm() } else { men.illegal_btm() } {
                    continue;
                }
                legal += 1;
                let ours = [values(t, wtm, slot)?, values(t, wtm, image)?];
                let mut theirs = Vec::with_capacity(2);
                for s in [slot, image] {
                    let class = lib.class(color, s).map(|c| c.bits()).map_err(|e| format!("{}: library: {e}", at()))?;
                    let code = if wtm && class == 1 {
                        Some(lib.dtz_code(s).map_err(|e| format!("{}: library: {e}", at()))?)
                    } else {
                        None
                    };
                    theirs.push((class, code));
                }
                if ours[..] != theirs[..] {
                    return Err(format!("{} wtm {wtm}: reader {ours:?}, library {theirs:?} (image {image})", at()));
                }
                if legal % probe_step == 0 {
                    fens.push(men.fen(wtm, 0));
                    fens.push(men.transposed().fen(wtm, 0));
                }
            }
            Ok(())
        })
        .unwrap_or_else(|e| panic!("{run}: {e}"));
        // Words: all dropped, none, or (their own image) the white king above the diagonal.
        let above: u64 = (0..64u8).filter(|&q| q / 8 > q % 8).fold(0, |m, q| m | 1 << q);
        for w in (0..words).filter(|&w| twin_word[w] != u64::MAX) {
            let ok = if self_image[w] { dropped_lanes[w] == above } else { [0, !0].contains(&dropped_lanes[w]) };
            assert!(ok, "{run}: word {w} (self image {}) drops lanes {:016x}", self_image[w], dropped_lanes[w]);
        }
        eprintln!("{run}: {on_diagonal} positions on the diagonal, {dropped} dropped, {legal} legal compared");
        assert!(dropped > 0 && dropped < on_diagonal, "{run}: {dropped} of {on_diagonal} dropped");
        assert!(self_image.iter().any(|&s| s), "{run}: no word is its own image");
    }
    let theirs = tablebase_probe(library_tables(), &fens);
    compare(tables, &fens, &theirs);
    for (pair, answers) in fens.chunks(2).zip(theirs.chunks(2)) {
        assert_eq!(answers[0], answers[1], "{} and its transposed image {}", pair[0], pair[1]);
    }
    eprintln!("{} probes", fens.len());
}

// =======================================================================================
// Tests of the identical men (version 7)
// =======================================================================================

/// "Identical men (version 7)", on every position of KRRvK (white's two rooks are pieces 0 and
/// 1, a run of identical men; the first one's H digit lies in the 7-bit prefix): the reader
/// finds the slot out of order exactly when the H digit it reads from the index for rook 0
/// exceeds rook 1's (28 of the 64 pairs of H digits, so 28/64 of the slots), and then `s*` is
/// the slot of the rooks swapped (computed from the men, not from the slot), itself in order;
/// rooks of equal H digit are in order both ways (both kept); `s*` keeps the black-king code,
/// the white-king lane and the word (every lane of a storage word goes to one kept word), and
/// lies in another unit of every stored order; the transposed twin of a slot is in order
/// exactly when the slot is. At each legal slot, both sides to move, the reader's class and,
/// where white wins, its wtm distance equal the library's at that slot (`Run::class`,
/// `Run::dtz_code`), and the library's slot of the position (`Run::slot_of`, the slot it
/// reads) is the reader's resolved slot `kept(s*)` (of one of the two orders when the H
/// digits are equal). Under a random one of the 8 symmetries, sorting the rooks by the H digit
/// of their squares as given (before the canonical orientation) and taking the kept twin
/// gives the same resolved slot, as does resolving the image's slot. Every 32nd legal
/// position out of order is probed by the reader and by `Tablebase::probe` (both sides to
/// move, the rooks in the FEN's order). Runs without identical men drop nothing.
#[test]
fn identical_men_out_of_order_are_read_sorted_by_h_digit() {
    use tbstream::Color;
    let tables = doc_tables();
    for run in ["KQvK", "KRvK", "KQvKR", "KRvKN", "KRvKQ", "KNvKR"] {
        let t = tables.table(run).unwrap();
        assert!(t.identical_runs.is_empty() && !t.identical_dropped, "{run}");
        assert!((0..t.n_slots).step_by(97).all(|s| t.sorted_slot(s) == s), "{run}");
    }
    let run = "KRRvK";
    let t = tables.table(run).unwrap();
    assert!(t.version == 7 && t.identical_dropped && t.twins_dropped, "{run}: version {}", t.version);
    assert_eq!(t.identical_runs, vec![Range { start: 0, end: 2 }], "{run}: the two rooks");
    let lib = library_run(library_tables(), run);
    let h = |q: u8| square_codes()[q as usize].0;
    let ordered: Vec<&StoredOrder> = t.orders.iter().filter(|o| o.u > 0).collect();
    let mut kept_word = vec![u64::MAX; (t.n_slots / 64) as usize];
    let mut rng = Rng(0x6964_656e);
    let (mut out_of_order, mut equal_h, mut other_unit) = (0u64, 0u64, 0u64);
    let (mut compared, mut compared_out, mut wins_out) = ([0u64; 2], [0u64; 2], 0u64);
    let mut fens = Vec::new();
    for_each_position(t, 1, |men| {
        let slot = t.slot_of(men)?;
        let at = || format!("{} (slot {slot})", men.fen(true, 0));
        let (a, b) = (men.white[0].1, men.white[1].1);
        let swapped_slot = t.slot_of(&Men { white: vec![men.white[1], men.white[0]], ..men.clone() })?;
        // (a) Out of order: H(p) > H(p + 1), read from the index; s* the rooks swapped.
        let out = h(a) > h(b);
        if t.identical_in_order(slot) == out {
            return Err(format!("{}: rooks' H digits {} {}, in order {}", at(), h(a), h(b), !out));
        }
        let star = t.sorted_slot(slot);
        if star != if out { swapped_slot } else { slot } || !t.identical_in_order(star) || t.sorted_slot(star) != star {
            return Err(format!("{}: s* = {star}, the rooks swapped {swapped_slot}", at()));
        }
        out_of_order += out as u64;
        if h(a) == h(b) && a != b {
            equal_h += 1;
            if t.sorted_slot(swapped_slot) != swapped_slot {
                return Err(format!("{}: equal H digits, the other order {swapped_slot} out of order", at()));
            }
        }
        // (b) The same black-king code and white-king lane; whole words go to one kept word.
        let code = |s: u64| prefix_king_code(t.index_of_slot(s) >> (t.index_bits - 7));
        if star % 64 != slot % 64 || code(star) != code(slot) {
            return Err(format!("{}: s* = {star} has another white-king lane or black-king code", at()));
        }
        let before = std::mem::replace(&mut kept_word[(slot / 64) as usize], star / 64);
        if before != u64::MAX && before != star / 64 {
            return Err(format!("{}: the word's lanes go to words {before} and {}", at(), star / 64));
        }
        if out && ordered.iter().all(|o| star >> o.u != slot >> o.u) {
            other_unit += 1;
        }
        // (c) A transposed twin is in order exactly when its slot is.
        if men.bk % 8 == men.bk / 8 && t.identical_in_order(t.slot_of(&men.transposed())?) == out {
            return Err(format!("{}: its transposed twin is in order {out}", at()));
        }
        // (d) The values: the library's at the slot, and the library's slot of the position.
        let resolved = t.resolve(slot);
        let resolved_both = [resolved, t.resolve(swapped_slot)];
        if h(a) != h(b) && resolved_both[0] != resolved_both[1] {
            return Err(format!("{}: the two orders resolve to {resolved_both:?}", at()));
        }
        for (side, (wtm, color)) in [(true, Color::White), (false, Color::Black)].into_iter().enumerate() {
            if if wtm { men.illegal_wtm() } else { men.illegal_btm() } {
                continue;
            }
            let fen = || men.fen(wtm, 0);
            let pos = library_position(men, wtm).map_err(|e| format!("library rejects {}: {e}", fen()))?;
            let theirs_slot = lib.slot_of(&pos);
            if !resolved_both.contains(&theirs_slot) {
                return Err(format!("{} (slot {slot}): library slot {theirs_slot}, resolved {resolved_both:?}", fen()));
            }
            let ours = t.class(wtm, slot)?;
            let theirs = lib.class(color, slot).map(|c| c.bits()).map_err(|e| format!("{}: library: {e}", fen()))?;
            if ours != theirs {
                return Err(format!("{} (slot {slot}, out of order {out}): class {ours}, library {theirs}", fen()));
            }
            if wtm && ours == 1 {
                let d = tables.wtm_distance(t, men, slot)?;
                let code = lib.dtz_code(slot).map_err(|e| format!("{}: library: {e}", fen()))?;
                if wtm_plies(code) != Some(d) {
                    return Err(format!(
                        "{} (slot {slot}, out of order {out}): wins in {d}, library code {code}",
                        fen()
                    ));
                }
                wins_out += out as u64;
            }
            compared[side] += 1;
            if out {
                compared_out[side] += 1;
                if compared_out[side] % 32 == 0 {
                    fens.push(fen());
                }
            }
        }
        // (e) Sorting commutes with the symmetries: the men under a random symmetry, sorted by
        // the H digits of their squares as given, then the kept twin.
        let i = rng.below(8) as u8;
        let image = Men {
            wk: symmetry(i, men.wk),
            bk: symmetry(i, men.bk),
            white: men.white.iter().map(|&(k, q)| (k, symmetry(i, q))).collect(),
            black: vec![],
        };
        let mut sorted_image = image.clone();
        sorted_image.white.sort_by_key(|&(_, q)| h(q));
        let (from_sorted, from_image) = (t.kept(t.slot_of(&sorted_image)?), t.resolve(t.slot_of(&image)?));
        if from_sorted != resolved || from_image != resolved {
            return Err(format!(
                "{}: symmetry {i}: sorted first {from_sorted}, the image resolved {from_image}, resolved {resolved}",
                at()
            ));
        }
        Ok(())
    })
    .unwrap_or_else(|e| panic!("{run}: {e}"));
    eprintln!(
        "{run}: {out_of_order} of {} slots out of order ({other_unit} read in another unit of the {} ordered \
         sections), {equal_h} with distinct rooks of equal H digit; legal compared {compared:?}, of which out of \
         order {compared_out:?} ({wins_out} wtm wins)",
        t.n_slots,
        ordered.len()
    );
    assert_eq!(out_of_order, t.n_slots / 64 * 28, "{run}: 28 of the 64 pairs of H digits are out of order");
    assert!(equal_h > 0 && wins_out > 0 && compared_out.iter().all(|&c| c > 0), "{run}");
    if !ordered.is_empty() {
        assert_eq!(other_unit, out_of_order, "{run}: s* in another unit (the prefix holds rook 0's H digit)");
    }
    let theirs = tablebase_probe(library_tables(), &fens);
    let counts = compare(tables, &fens, &theirs);
    eprintln!("{run}: {} probes of positions out of order, wdl counts {counts:?}", fens.len());
    assert!(counts[2] > 0, "{run}: no win probed");
}
