//! An independent verifier of finished tables.
//!
//! Every stored value of a run's table file is re-derived from the stored values of its
//! successors with a plain one-position-at-a-time move generator (below, on the attack tables
//! of [`crate::chess::attacks`]; [`Position`] names the positions in messages): it shares
//! no code with the bit-parallel passes of `solve`. Captures probe the final bitbases of the
//! sub-endgames' files in the same folder. The rules (values for "white wins" in the run of
//! `W v B`, distances in plies):
//!
//! - legal wtm: the least odd `k` in 1..=99 such that some capture leads to a sub-position lost
//!   for black with a fresh counter (the sub-run's `t100`), giving `k = 1`, or some non-capture
//!   leads to a btm position of the run with value `k - 1`; otherwise not won (code 0);
//! - legal btm: 0 if checkmated; otherwise the least even `k` in 2..=100 such that every capture
//!   leads to a sub-position won for white with a fresh counter (the sub-run's `t99`; a bare
//!   white king wins nothing) and every non-capture to a wtm position of the run with a value
//!   of at most `k - 1`; not won (code 0) if there is no such `k` or black is stalemated;
//! - illegal positions (two men on a square, or the side not to move in check) have code 63,
//!   `t99 = 1` (wtm) and `t100 = 0` (btm);
//! - a legal position's bitbase bit is set iff its value code is not 0;
//! - all 8 symmetric images of a position hold the same value.
//!
//! A slot whose position is the image of a smaller slot (the black king on the a1-h8 diagonal
//! stores both a position and its transpose) is checked against that slot instead of being
//! derived again; since every value is then locally consistent with its successors, it is the
//! exact fixpoint of the definitions above (every win bottoms out in a capture or a mate).
//!
//! Runs with pawns go through [`pawns`]: every pawn move is a conversion too (pushes and
//! double steps read this run's own final bitbases, promotions and captures a sub-run's),
//! en passant is valued at the double step, and only the left-right mirror is a symmetry.

use super::compact::CompactTable;
use super::error::TableError;
use super::uncompressed::TableFile;
use super::values::{
    code_to_distance, describe_code, is_beyond_rule, is_rule_win, lost_only_without_rule_after, BTM_MAX_CODE,
    CODE_CURSED, CODE_EDGE, CODE_EXACT_100, CODE_ILLEGAL, CODE_NONE, WTM_MAX_CODE,
};
use super::version::table_path;
use crate::chess::attacks::{attacks, king_attacks};
use crate::chess::position::board_field;
use crate::chess::square::{square_name, triangle_code, TRIANGLE};
use crate::chess::{Color, Material, Move, Piece, Position, Role, Square, Symmetry, MAX_PIECES};
use crate::index::Layout;
use crate::pipeline::{self, Order};
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Slots a worker takes at a time.
const BATCH: u64 = 1 << 12;

/// What was checked on one side to move of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SideReport {
    /// Illegal or broken positions (code 63).
    pub illegal: u64,
    /// Legal positions won for white (wtm) or lost for black (btm).
    pub won: u64,
    /// Legal positions not won for white.
    pub not_won: u64,
    /// Legal slots whose value was re-derived from the successors.
    pub derived: u64,
    /// Legal slots holding a symmetric image of a smaller slot, checked against it.
    pub by_symmetry: u64,
    /// Black checkmated (btm, distance 0).
    pub mates: u64,
    /// Black stalemated (btm).
    pub stalemates: u64,
    /// Legal positions won for white only without the 50-move rule.
    pub cursed: u64,
    /// Longest stored distance in plies, if any position is won.
    pub longest: Option<u8>,
}

impl SideReport {
    fn add(&mut self, o: &SideReport) {
        self.illegal += o.illegal;
        self.won += o.won;
        self.not_won += o.not_won;
        self.cursed += o.cursed;
        self.derived += o.derived;
        self.by_symmetry += o.by_symmetry;
        self.mates += o.mates;
        self.stalemates += o.stalemates;
        self.longest = self.longest.max(o.longest);
    }

    /// Slots checked (every stored slot of the side).
    pub fn slots(&self) -> u64 {
        self.illegal + self.won + self.not_won + self.cursed
    }
}

/// The result of verifying one run's table.
#[derive(Clone, Debug)]
pub struct VerifyReport {
    pub material: Material,
    pub path: PathBuf,
    /// Stored positions per side to move.
    pub n_slots: u64,
    /// The header's last step.
    pub last_step: u8,
    pub wtm: SideReport,
    pub btm: SideReport,
    /// Sub-endgame runs probed by captures (bare white kings excluded).
    pub sub_runs: Vec<Material>,
    pub secs: f64,
}

/// A sub-endgame's (expanded) table, or `None` when white is left with a bare king (no wins).
type SubTable<'a> = Option<&'a TableFile>;

/// What the checks of one run read: its compact table, the table expanded, and its
/// sub-endgames' tables expanded.
struct Sources<'a> {
    table: &'a CompactTable,
    own: &'a Expanded,
    subs: &'a BTreeMap<Material, SubTable<'a>>,
}

/// Opens a run's compact table (its header and block indexes checked; its blocks are
/// checked as they are decoded).
fn open_compact(tables_dir: &Path, run: &Material) -> Result<CompactTable, TableError> {
    let path = table_path(tables_dir, run);
    if !path.exists() {
        return Err(TableError::Missing { path, signature: run.clone() });
    }
    Ok(CompactTable::open_run(&path, run)?)
}

/// One side's men in layout order, plus the kings.
#[derive(Clone, Copy, Debug)]
struct Men {
    wk: Square,
    bk: Square,
    n: usize,
    sq: [Square; MAX_PIECES],
}

impl Men {
    fn pieces(&self) -> &[Square] {
        &self.sq[..self.n]
    }

    /// The men after a non-capture move `from -> to`.
    fn moved(&self, from: Square, to: Square) -> Men {
        let mut m = *self;
        if m.wk == from {
            m.wk = to;
        } else if m.bk == from {
            m.bk = to;
        } else {
            let i = m.pieces().iter().position(|&s| s == from).expect("moving man");
            m.sq[i] = to;
        }
        m
    }

    /// The men after a capture `from -> to`, with the captured piece (layout index `j`) removed.
    fn captured(&self, from: Square, to: Square, j: usize) -> Men {
        let mut m = *self;
        m.sq.copy_within(j + 1..m.n, j);
        m.n -= 1;
        m.moved(from, to)
    }
}

/// Returns a [`TableError::Wrong`] with a formatted message naming the position.
macro_rules! wrong {
    ($($arg:tt)*) => {
        return Err(TableError::Wrong(format!($($arg)*)))
    };
}

mod expand;
pub(super) mod pawns;
pub mod sample;
mod words;

use expand::{derive_btm, expand, Expanded};

/// Storage slot of the canonical image of a position (black king anywhere).
fn canonical_slot(layout: &Layout, men: &Men) -> u64 {
    let sym = Symmetry::to_triangle(men.bk);
    image_slot(layout, men, sym)
}

/// Storage slot of `sym`'s image of a position whose image has the black king in the triangle.
fn image_slot(layout: &Layout, men: &Men, sym: Symmetry) -> u64 {
    let code = triangle_code(sym.apply(men.bk)).expect("black king mapped into the triangle");
    let mut mapped = [0; MAX_PIECES];
    for (m, &s) in mapped.iter_mut().zip(men.pieces()) {
        *m = sym.apply(s);
    }
    let idx = layout.index(code, &mapped[..men.n], sym.apply(men.wk));
    layout.slot(idx).expect("triangle code is stored")
}

fn bit(file: &TableFile, stm: Color, slot: u64) -> bool {
    (file.bitbase_word(stm, (slot >> 6) as usize) >> (slot & 63)) & 1 != 0
}

/// What the checks read of a table: each slot's 6-bit value code (`format`'s codes) and
/// its bitbase bit. An expanded table holds both; [`sample::Sampled`] reads a compact one
/// where it stands.
pub(super) trait Values: Sync {
    fn value_code(&self, stm: Color, slot: u64) -> u8;
    fn bit(&self, stm: Color, slot: u64) -> bool;
}

impl Values for TableFile {
    #[inline]
    fn value_code(&self, stm: Color, slot: u64) -> u8 {
        TableFile::value_code(self, stm, slot)
    }
    #[inline]
    fn bit(&self, stm: Color, slot: u64) -> bool {
        bit(self, stm, slot)
    }
}

/// A FEN of men (possibly overlapping: the later man is shown, the overlap named).
fn describe_men(layout: &Layout, men: &Men, stm: Color) -> String {
    let mut board: [Option<char>; 64] = [None; 64];
    let mut overlaps = Vec::new();
    let mut put = |sq: Square, color: Color, role: Role| {
        if board[sq as usize].is_some() {
            overlaps.push(square_name(sq));
        }
        board[sq as usize] = Some(Piece { color, role }.letter());
    };
    put(men.wk, Color::White, Role::King);
    put(men.bk, Color::Black, Role::King);
    for (p, &sq) in layout.pieces.iter().zip(men.pieces()) {
        put(sq, p.color, p.role);
    }
    let mut s = board_field(&board);
    s.push_str(if stm == Color::White { " w - - 0 1" } else { " b - - 0 1" });
    if !overlaps.is_empty() {
        s.push_str(&format!(" (two men on {})", overlaps.join(", ")));
    }
    s
}

/// An illegal position must hold code 63, bitbase bit 1 (wtm) or 0 (btm); `here` names it.
fn check_illegal(
    stm: Color,
    stored: u8,
    stored_bit: bool,
    here: impl Fn() -> String,
    rep: &mut SideReport,
) -> Result<(), TableError> {
    if stored != CODE_ILLEGAL {
        wrong!("{}: illegal position stored as {}, expected code 63", here(), describe_code(stm, stored));
    }
    let want_bit = stm == Color::White;
    if stored_bit != want_bit {
        wrong!("{}: illegal position has bitbase bit {}, expected {}", here(), stored_bit as u8, want_bit as u8);
    }
    rep.illegal += 1;
    Ok(())
}

/// A derived code must be the stored one; a mismatch names the position, both codes, and
/// the move that decides it with the position it leads to (`child`).
fn check_derived(
    stm: Color,
    stored: u8,
    (expected, via): (u8, Option<Move>),
    fen: &dyn Fn() -> String,
    child: &dyn Fn(Move) -> String,
) -> Result<(), TableError> {
    // One ply cannot tell a win of exactly 100 plies (53) from a cursed win of 101 (52): both
    // follow from a quiet move into a loss stored at 100 plies, whose own exactness is a step
    // deeper (tables from before the edge was followed store 51 for both).
    let edge = stm == Color::White && expected == CODE_EDGE && matches!(stored, CODE_CURSED | CODE_EXACT_100);
    if expected != stored && !edge {
        let why = via.map_or(String::new(), |mv| format!(" (decided by {mv}, leading to {})", child(mv)));
        wrong!("{}: stored {}, expected {}{why}", fen(), describe_code(stm, stored), describe_code(stm, expected));
    }
    Ok(())
}

/// A legal position's bitbase bit must be set iff its (checked) value is a win; counts it.
fn check_bit_and_count(
    stm: Color,
    stored: u8,
    stored_bit: bool,
    fen: &dyn Fn() -> String,
    rep: &mut SideReport,
) -> Result<(), TableError> {
    let rule_win = is_rule_win(stm, stored);
    if stored_bit != rule_win {
        wrong!(
            "{}: value {} but bitbase ({}) bit {}",
            fen(),
            describe_code(stm, stored),
            if stm == Color::White { "t99" } else { "t100" },
            stored_bit as u8
        );
    }
    if stored == CODE_NONE {
        rep.not_won += 1;
    } else if !rule_win {
        rep.cursed += 1;
    } else {
        rep.won += 1;
        rep.longest = rep.longest.max(code_to_distance(stm, stored));
    }
    Ok(())
}

fn side_name(stm: Color) -> &'static str {
    if stm == Color::White {
        "wtm"
    } else {
        "btm"
    }
}

/// Most legal moves of one side: a king and four queens.
const MAX_MOVES: usize = 8 + 27 * MAX_PIECES;

/// A legal move of the verifier's generator; `captured` is the layout index of the piece taken.
#[derive(Clone, Copy, Debug, Default)]
struct PlainMove {
    from: Square,
    to: Square,
    captured: Option<usize>,
}

impl PlainMove {
    fn as_move(&self) -> Move {
        Move {
            from: self.from,
            to: self.to,
            capture: self.captured.is_some(),
            promotion: None,
            pawn: false,
            en_passant: false,
        }
    }
}

/// The legal moves of a position, without allocating.
struct MoveList {
    len: usize,
    moves: [PlainMove; MAX_MOVES],
}

impl MoveList {
    fn iter(&self) -> impl Iterator<Item = &PlainMove> {
        self.moves[..self.len].iter()
    }
}

/// Occupied squares of the men.
fn occupancy(men: &Men) -> u64 {
    men.pieces().iter().fold((1u64 << men.wk) | (1u64 << men.bk), |o, &s| o | (1 << s))
}

/// What the workers of one run check, slot by slot (the pawnless and the pawn paths).
trait CheckSlot: Sync {
    /// Checks one slot; `Err` names the wrong position.
    fn check_slot(&self, stm: Color, slot: u64, rep: &mut SideReport) -> Result<(), TableError>;
}

/// Everything the workers of one pawnless run read.
struct Ctx<'a, V: Values> {
    material: &'a Material,
    layout: Layout,
    file: &'a V,
    /// Sub-table after the capture of the piece of layout index `j` (indexed by `j`); `None`
    /// when white is left with a bare king.
    subs: Vec<Option<(Layout, &'a V)>>,
    /// Whether the run's black-to-move codes are derived from white's where they are read
    /// (a compact table stores only their classes).
    derive_black: bool,
}

impl<V: Values> Ctx<'_, V> {
    /// The run's own value code of a slot (black's derived with `derive_black`).
    fn own_code(&self, stm: Color, slot: u64) -> u8 {
        if stm == Color::White || !self.derive_black {
            return self.file.value_code(stm, slot);
        }
        let men = self.men_of_slot(slot);
        if !self.legal(&men, Color::Black) {
            return CODE_ILLEGAL;
        }
        self.derive_btm(&men, &mut SideReport::default()).0
    }

    fn men_of_slot(&self, slot: u64) -> Men {
        let mut sq = [0; MAX_PIECES];
        let n = self.layout.pieces.len();
        let (code, wk) = self.layout.decode_into(self.layout.index_of_slot(slot), &mut sq[..n]);
        Men { wk, bk: TRIANGLE[code as usize], n, sq }
    }

    fn position(&self, men: &Men, stm: Color) -> Option<Position> {
        let king = |color| Piece { color, role: Role::King };
        let mut list = [(men.wk, king(Color::White)); MAX_PIECES + 2];
        list[1] = (men.bk, king(Color::Black));
        for (i, (p, &sq)) in self.layout.pieces.iter().zip(men.pieces()).enumerate() {
            list[2 + i] = (sq, Piece { color: p.color, role: p.role });
        }
        Position::from_men(&list[..2 + men.n], stm).ok()
    }

    /// Checks one slot; `Err` names the wrong position.
    fn check(&self, stm: Color, slot: u64, rep: &mut SideReport) -> Result<(), TableError> {
        let men = self.men_of_slot(slot);
        let stored = self.own_code(stm, slot);
        let stored_bit = self.file.bit(stm, slot);
        if !self.legal(&men, stm) {
            let here = || {
                format!("{} {} slot {slot}: {}", self.material, side_name(stm), describe_men(&self.layout, &men, stm))
            };
            return check_illegal(stm, stored, stored_bit, here, rep);
        }
        let pos = || self.position(&men, stm).expect("legal position");
        let fen = || format!("{} {} slot {slot}: {}", self.material, side_name(stm), pos().fen());
        if self.smallest_image(stm, slot, &men, stored, &fen)? == slot {
            let (expected, via) = match stm {
                Color::White => self.derive_wtm(&men),
                Color::Black => self.derive_btm(&men, rep),
            };
            check_derived(stm, stored, (expected, via), &fen, &|mv| pos().play(mv).fen())?;
            rep.derived += 1;
        } else {
            rep.by_symmetry += 1;
        }
        check_bit_and_count(stm, stored, stored_bit, &fen, rep)
    }

    /// Checks that every symmetric image of a legal position holds its value; returns the
    /// smallest slot among the images (the one whose value is derived).
    fn smallest_image(
        &self,
        stm: Color,
        slot: u64,
        men: &Men,
        stored: u8,
        fen: &dyn Fn() -> String,
    ) -> Result<u64, TableError> {
        let mut representative = slot;
        for sym in Symmetry::all() {
            let img = Men {
                wk: sym.apply(men.wk),
                bk: sym.apply(men.bk),
                n: men.n,
                sq: std::array::from_fn(|i| sym.apply(men.sq[i])),
            };
            let other = canonical_slot(&self.layout, &img);
            representative = representative.min(other);
            if other != slot {
                let code = self.own_code(stm, other);
                if code != stored {
                    wrong!(
                        "{}: stored {}, but its symmetric image (under {sym:?}) at slot {other}, {}, holds {}",
                        fen(),
                        describe_code(stm, stored),
                        describe_men(&self.layout, &self.men_of_slot(other), stm),
                        describe_code(stm, code)
                    );
                }
            }
        }
        Ok(representative)
    }

    /// Whether `target` is attacked by `by`'s men with occupancy `occ`, the piece of layout
    /// index `skip` (just captured) left out.
    fn attacked(&self, men: &Men, target: Square, by: Color, occ: u64, skip: Option<usize>) -> bool {
        let king = if by == Color::White { men.wk } else { men.bk };
        let t = 1u64 << target;
        king_attacks(king) & t != 0
            || self
                .layout
                .pieces
                .iter()
                .zip(men.pieces())
                .enumerate()
                .any(|(k, (p, &sq))| p.color == by && Some(k) != skip && attacks(p.role, sq, occ) & t != 0)
    }

    /// Whether the men form a legal position with `stm` to move: no two on a square, the
    /// side not to move not in check.
    fn legal(&self, men: &Men, stm: Color) -> bool {
        let occ = occupancy(men);
        let other_king = if stm == Color::White { men.bk } else { men.wk };
        occ.count_ones() as usize == men.n + 2 && !self.attacked(men, other_king, stm, occ, None)
    }

    /// The legal moves of `stm` in a legal position (captures of the king cannot occur).
    fn moves(&self, men: &Men, stm: Color) -> MoveList {
        let occ = occupancy(men);
        let (king, enemy) = if stm == Color::White { (men.wk, Color::Black) } else { (men.bk, Color::White) };
        let mut own = 1u64 << king;
        let mut movers = [(king, Role::King); MAX_PIECES + 1];
        let mut n = 1;
        for (p, &sq) in self.layout.pieces.iter().zip(men.pieces()) {
            if p.color == stm {
                own |= 1 << sq;
                movers[n] = (sq, p.role);
                n += 1;
            }
        }
        let mut list = MoveList { len: 0, moves: [PlainMove::default(); MAX_MOVES] };
        for &(from, role) in &movers[..n] {
            let mut targets = attacks(role, from, occ) & !own;
            while targets != 0 {
                let to = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let captured = if occ & (1 << to) != 0 { men.pieces().iter().position(|&s| s == to) } else { None };
                let after = (occ & !(1u64 << from)) | (1 << to);
                let my_king = if from == king { to } else { king };
                if !self.attacked(&men.moved(from, to), my_king, enemy, after, captured) {
                    list.moves[list.len] = PlainMove { from, to, captured };
                    list.len += 1;
                }
            }
        }
        list
    }

    /// The expected wtm code of a legal position, and the move that decides it.
    fn derive_wtm(&self, men: &Men) -> (u8, Option<Move>) {
        let mut best = (CODE_NONE, None);
        let mut cursed = None;
        for mv in self.moves(men, Color::White).iter() {
            if let Some(j) = mv.captured {
                let mv = mv.as_move();
                let child = men.captured(mv.from, mv.to, j);
                let (sub_layout, sub) = self.subs[j].as_ref().expect("white keeps its pieces when it captures");
                let slot = canonical_slot(sub_layout, &child);
                if sub.bit(Color::Black, slot) {
                    return (1, Some(mv));
                }
                // Into a loss only without the rule (a blessed loss): a cursed win.
                if is_beyond_rule(Color::Black, sub.value_code(Color::Black, slot)) && cursed.is_none() {
                    cursed = Some((CODE_CURSED, mv));
                }
            } else {
                let mv = mv.as_move();
                let child = men.moved(mv.from, mv.to);
                let c = self.own_code(Color::Black, canonical_slot(&self.layout, &child));
                // btm code c = distance 2(c-1), so the move wins in 2c-1 plies: wtm code c.
                if (1..=WTM_MAX_CODE).contains(&c) && (best.0 == CODE_NONE || c < best.0) {
                    best = (c, Some(mv));
                }
                // Into a loss of 100 plies or one only without the rule: a cursed win.
                // (Its step is 101 after a loss of 100 plies, later after a cursed one.)
                let code = if c == BTM_MAX_CODE { CODE_EDGE } else { CODE_CURSED };
                if (c == BTM_MAX_CODE || c == CODE_CURSED) && cursed.is_none_or(|(best, _)| code < best) {
                    cursed = Some((code, mv));
                }
            }
        }
        match cursed {
            Some((code, mv)) if best.0 == CODE_NONE => (code, Some(mv)),
            _ => best,
        }
    }

    /// The expected btm code of a legal position, and the move that decides it.
    fn derive_btm(&self, men: &Men, rep: &mut SideReport) -> (u8, Option<Move>) {
        let moves = self.moves(men, Color::Black);
        if moves.iter().next().is_none() {
            return if self.attacked(men, men.bk, Color::White, occupancy(men), None) {
                rep.mates += 1;
                (1, None)
            } else {
                rep.stalemates += 1;
                (CODE_NONE, None)
            };
        }
        let mut worst = (1u8, None);
        let mut cursed = None;
        for mv in moves.iter() {
            let (captured, mv) = (mv.captured, mv.as_move());
            if let Some(j) = captured {
                let child = men.captured(mv.from, mv.to, j);
                let Some((sub_layout, sub)) = &self.subs[j] else { return (CODE_NONE, Some(mv)) };
                let slot = canonical_slot(sub_layout, &child);
                if sub.bit(Color::White, slot) {
                    continue;
                }
                // Into a win only without the rule: no escape, and the position's loss is so.
                if !is_beyond_rule(Color::White, sub.value_code(Color::White, slot)) {
                    return (CODE_NONE, Some(mv));
                }
                cursed = cursed.or(Some(mv));
            } else {
                let child = men.moved(mv.from, mv.to);
                let c = self.own_code(Color::White, canonical_slot(&self.layout, &child));
                if lost_only_without_rule_after(c) {
                    cursed = cursed.or(Some(mv));
                    continue;
                }
                if !(1..=WTM_MAX_CODE).contains(&c) {
                    return (CODE_NONE, Some(mv));
                }
                if c > worst.0 || worst.1.is_none() {
                    worst = (worst.0.max(c), Some(mv));
                }
            }
        }
        if cursed.is_some() {
            // Every move loses, some only without the rule.
            return (CODE_CURSED, cursed);
        }
        // Every move wins for white within 2*worst - 1 plies: black loses in 2*worst, code worst + 1.
        (worst.0 + 1, worst.1)
    }
}

impl<V: Values> CheckSlot for Ctx<'_, V> {
    fn check_slot(&self, stm: Color, slot: u64, rep: &mut SideReport) -> Result<(), TableError> {
        self.check(stm, slot, rep)
    }
}

/// Checks the slots `range` of one side with `threads` workers; returns the merged counts or
/// the error of the smallest wrong slot. Progress counts `done_before` plus the slots of
/// `range` checked so far, out of `total`.
fn verify_side(
    ctx: &impl CheckSlot,
    stm: Color,
    range: Range<u64>,
    threads: usize,
    done_before: u64,
    total: u64,
    progress: &mut impl FnMut(u64, u64),
) -> Result<SideReport, TableError> {
    let (first, n) = (range.start, range.end - range.start);
    let batches = n.div_ceil(BATCH) as usize;
    let mut merged = SideReport::default();
    pipeline::run(
        batches,
        threads,
        // In slot order: the first error written is the one of the smallest wrong slot.
        Order::Sequence { window: 4 * threads.max(1) },
        |b| Ok::<_, TableError>(b as u64 * BATCH),
        |_, start| {
            let mut rep = SideReport::default();
            for slot in first + start..first + (start + BATCH).min(n) {
                ctx.check_slot(stm, slot, &mut rep)?;
            }
            Ok(rep)
        },
        |b, rep| {
            merged.add(&rep);
            progress(done_before + ((b as u64 + 1) * BATCH).min(n), total);
            Ok(())
        },
    )?;
    Ok(merged)
}

/// Verifies the table of one white-wins run in `tables_dir` against its successors (the run
/// itself and the sub-endgames' tables, which must be in the same folder). `threads` workers
/// (0 = the number of cores); `progress(done, total)` is called now and then with slots
/// checked so far (both sides to move). Returns the counts, or an error naming the first wrong
/// position (as a FEN, with its stored and expected values), a damaged or missing file.
pub fn verify_run(
    tables_dir: &Path,
    run: &Material,
    threads: usize,
    progress: impl FnMut(u64, u64),
) -> Result<VerifyReport, TableError> {
    verify_run_with(tables_dir, run, threads, Method::Words, progress)
}

/// How pawnless runs are checked: a word of 64 positions at a time ([`words`], the
/// default), or position by position on expanded tables (slower, kept as a second
/// independent derivation that tests compare with the first). Runs with pawns are always
/// checked position by position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Words,
    Positions,
}

/// Bytes of RAM a full check of `run` takes (pawnless runs, checked a word at a time: about
/// 1.45 bytes per position, KQRvKR 0.24 GB, KQRvKQR 15 GB); `None` for runs with pawns,
/// whose expanded tables are mapped from temporary files.
pub fn memory_needed(run: &Material) -> Option<u64> {
    (!run.has_pawns() && !run.white_bare()).then(|| words::memory_needed(run))
}

/// [`verify_run`] with the method of pawnless runs chosen.
pub fn verify_run_with(
    tables_dir: &Path,
    run: &Material,
    threads: usize,
    method: Method,
    mut progress: impl FnMut(u64, u64),
) -> Result<VerifyReport, TableError> {
    let t = Instant::now();
    if run.white_bare() {
        return Err(TableError::BareWhite(run.clone()));
    }
    let threads = if threads == 0 { std::thread::available_parallelism().map_or(1, |n| n.get()) } else { threads };
    let path = table_path(tables_dir, run);
    let verifying = |needed: Option<&Material>, e: TableError| TableError::Verifying {
        run: run.clone(),
        needed: needed.cloned(),
        cause: Box::new(e),
    };
    let table = open_compact(tables_dir, run).map_err(|e| verifying(None, e))?;
    let (checked, summary) = if !run.has_pawns() && method == Method::Words {
        words::verify_words(run, &table, tables_dir, threads, &mut progress).map_err(|e| match e {
            e @ TableError::Verifying { .. } | e @ TableError::Wrong(_) => e,
            e => verifying(None, e),
        })?
    } else {
        verify_expanded(run, &table, tables_dir, threads, &mut progress)?
    };
    if summary != table.summary() {
        wrong!(
            "{run}: the table's summary of black-to-move distances ({:?}, longest at slot {:?}) is not the one its values give ({:?}, {:?})",
            table.summary().by_distance,
            table.summary().longest_slot,
            summary.by_distance,
            summary.longest_slot
        );
    }
    let meta = &table.header.meta;
    let longest = checked.wtm.longest.max(checked.btm.longest).unwrap_or(0);
    if meta.last_step != longest {
        wrong!("{run}: header's last step is {}, but the longest stored distance is {longest}", meta.last_step);
    }
    for (side, rep) in [(Color::White, &checked.wtm), (Color::Black, &checked.btm)] {
        let beyond = meta.longest_cursed[side.index()];
        if (rep.cursed > 0) != (beyond > 100) {
            wrong!(
                "{run}: {} has {} cursed positions, but the header's longest cursed step is {beyond}",
                side_name(side),
                rep.cursed
            );
        }
    }
    Ok(VerifyReport {
        material: run.clone(),
        path,
        n_slots: table.header.n_slots,
        last_step: meta.last_step,
        wtm: checked.wtm,
        btm: checked.btm,
        sub_runs: checked.sub_runs,
        secs: t.elapsed().as_secs_f64(),
    })
}

/// The position-by-position check of a run ([`Method::Positions`], and every run with pawns):
/// its table and its sub-endgames' are expanded into uncompressed temporary files first.
fn verify_expanded(
    run: &Material,
    table: &CompactTable,
    tables_dir: &Path,
    threads: usize,
    progress: &mut impl FnMut(u64, u64),
) -> Result<(Checked, super::compact::Summary), TableError> {
    let verifying = |needed: Option<&Material>, e: TableError| TableError::Verifying {
        run: run.clone(),
        needed: needed.cloned(),
        cause: Box::new(e),
    };
    let own = expand(table, tables_dir, threads).map_err(|e| verifying(None, e))?;
    let mut subs: BTreeMap<Material, Option<Expanded>> = BTreeMap::new();
    for sub in run.successor_runs() {
        let expanded = if sub.white_bare() {
            None
        } else {
            let sub_table = open_compact(tables_dir, &sub).map_err(|e| verifying(Some(&sub), e))?;
            Some(expand(&sub_table, tables_dir, threads).map_err(|e| verifying(Some(&sub), e))?)
        };
        subs.insert(sub, expanded);
    }
    let subs: BTreeMap<Material, SubTable> =
        subs.iter().map(|(m, e)| (m.clone(), e.as_ref().map(|e| &e.file))).collect();
    let sources = Sources { table, own: &own, subs: &subs };
    let checked = if run.has_pawns() {
        pawns::verify_sides(run, &sources, threads, progress)?
    } else {
        verify_pawnless(run, &sources, threads, progress)?
    };
    Ok((checked, super::stats::btm_summary(&own.file, threads)?))
}

/// What the slot checks of one run found.
struct Checked {
    wtm: SideReport,
    btm: SideReport,
    /// Sub-endgame runs read (bare white kings excluded).
    sub_runs: Vec<Material>,
}

/// Checks every slot of a pawnless run, both sides to move: black's distances are first
/// derived into the expanded table (their classes checked against the stored ones).
fn verify_pawnless(
    run: &Material,
    sources: &Sources,
    threads: usize,
    progress: &mut impl FnMut(u64, u64),
) -> Result<Checked, TableError> {
    let layout = Layout::new(run);
    // Sub-tables by captured piece (layout order): white captures black pieces, black captures white ones.
    let subs = layout
        .pieces
        .iter()
        .map(|p| {
            let sub = if p.color == Color::Black { run.without_black(p.role) } else { run.without_white(p.role) };
            sources.subs[&sub].map(|f| (Layout::new(&sub), f))
        })
        .collect();
    let ctx = Ctx { material: run, layout, file: &sources.own.file, subs, derive_black: false };
    let n = ctx.layout.n_slots;
    progress(0, 3 * n);
    let derive = |slot: u64| {
        let men = ctx.men_of_slot(slot);
        ctx.legal(&men, Color::Black).then(|| ctx.derive_btm(&men, &mut SideReport::default()).0)
    };
    let describe = |slot: u64| {
        format!("{run} btm slot {slot}: {}", describe_men(&ctx.layout, &ctx.men_of_slot(slot), Color::Black))
    };
    derive_btm(sources.table, sources.own, 0..n, threads, &derive, &describe, &mut |d| progress(d, 3 * n))?;
    let wtm = verify_side(&ctx, Color::White, 0..n, threads, n, 3 * n, progress)?;
    let btm = verify_side(&ctx, Color::Black, 0..n, threads, 2 * n, 3 * n, progress)?;
    Ok(Checked {
        wtm,
        btm,
        sub_runs: sources.subs.iter().filter(|(_, t)| t.is_some()).map(|(m, _)| m.clone()).collect(),
    })
}

/// Verifies both runs of a signature (`Material::runs_of_signature`: one for a symmetric
/// signature, none for a bare white king). `progress(run, done, total)` as in [`verify_run`].
pub fn verify_signature(
    tables_dir: &Path,
    signature: &Material,
    threads: usize,
    mut progress: impl FnMut(&Material, u64, u64),
) -> Result<Vec<VerifyReport>, TableError> {
    signature
        .runs_of_signature()
        .iter()
        .map(|run| verify_run(tables_dir, run, threads, |d, t| progress(run, d, t)))
        .collect()
}
