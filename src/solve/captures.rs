//! Conversion lookups: the final bitbases of the runs that captures and promotions lead to.

use crate::chess::{Color, Material, Role, Square, Symmetry, MAX_PIECES};
use crate::index::{Layout, Pawns};
use std::sync::Arc;

/// The promotion pieces, in the order of the promotion tables.
pub const PROMOTIONS: [Role; 4] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];

/// The words of one bitbase: held in RAM, or read from a mapped file (its little-endian
/// words at a byte offset) when the sub-endgames do not fit the RAM budget.
pub enum BitWords {
    Owned(Vec<u64>),
    Mapped { map: Arc<memmap2::Mmap>, offset: usize, words: usize },
}

impl BitWords {
    /// Word `i`.
    #[inline]
    pub fn get(&self, i: usize) -> u64 {
        match self {
            BitWords::Owned(v) => v[i],
            BitWords::Mapped { map, offset, words } => {
                assert!(i < *words, "bitbase word out of range");
                let at = offset + 8 * i;
                u64::from_le_bytes(map[at..at + 8].try_into().expect("eight bytes"))
            }
        }
    }

    /// Number of words.
    pub fn len(&self) -> usize {
        match self {
            BitWords::Owned(v) => v.len(),
            BitWords::Mapped { words, .. } => *words,
        }
    }

    /// Whether there are no words.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes held in RAM (0 when mapped).
    pub fn owned_bytes(&self) -> u64 {
        match self {
            BitWords::Owned(v) => v.len() as u64 * 8,
            BitWords::Mapped { .. } => 0,
        }
    }
}

/// The final bitbases of one white-wins run, in storage-word order.
pub struct Bitbase {
    pub layout: Layout,
    /// `t99`: wtm positions won for white with a fresh counter (illegal positions are 1).
    pub wtm: BitWords,
    /// `t100`: btm positions lost for black with a fresh counter (illegal positions are 0).
    pub btm: BitWords,
}

impl Bitbase {
    /// The word (bit `s` = white king on `s`) for a position given by plain squares: the
    /// black king anywhere, the pieces (not pawns) in the layout's order, and the pawns.
    #[inline]
    pub fn word(&self, stm: Color, bk: Square, pieces: &[Square], pawns: &Pawns) -> u64 {
        let (slot, sym) =
            self.layout.canonical_slot(bk, pieces, 0, pawns).expect("conversions lead to stored pawn configurations");
        let table = if stm == Color::White { &self.wtm } else { &self.btm };
        let w = table.get((slot >> 6) as usize);
        if sym == Symmetry::IDENTITY {
            w
        } else {
            sym.inverse().apply_bb(w)
        }
    }
}

/// The run a conversion leads to.
#[derive(Clone)]
pub enum SubRun {
    /// A real table.
    Table(Arc<Bitbase>),
    /// White is left with a bare king: no wins; only illegal wtm positions are 1.
    BareWhite,
    /// A conversion that cannot happen (a promotion capturing one of the promoting side's
    /// own pieces): a slot of the table, never read.
    Impossible,
}

impl SubRun {
    /// The word of a wtm (`t99`) or btm (`t100`) position of the sub-run; for a bare white
    /// king, the illegal wtm positions (two men on a square: `occ`, or the black king next to
    /// the white one) and no btm position.
    #[inline]
    pub fn word(&self, stm: Color, bk: Square, pieces: &[Square], pawns: &Pawns, occ: u64) -> u64 {
        match self {
            SubRun::Table(t) => t.word(stm, bk, pieces, pawns),
            SubRun::BareWhite if stm == Color::White => occ | crate::chess::attacks::king_attacks(bk),
            SubRun::BareWhite => 0,
            SubRun::Impossible => unreachable!("a promotion cannot capture its own side's piece"),
        }
    }
}

/// For each conversion of a run, the run it leads to.
#[derive(Clone)]
pub struct Captures {
    /// After the capture of piece `k` (layout order: white's pieces, then black's).
    pub by_piece: Vec<SubRun>,
    /// After the capture of a pawn of each colour (white, black), if the run has one.
    pub by_pawn: [Option<SubRun>; 2],
    /// After a pawn of each colour promotes to each of [`PROMOTIONS`] (without capturing):
    /// runs of as many men as this one, the largest sub-endgames. `None` when the run has
    /// no pawn of that colour, or when they are not loaded ([`Promotions::Skip`]: the levels
    /// being solved have no pawn that can promote).
    pub promotion: [Option<[SubRun; 4]>; 2],
    /// After a pawn of each colour promotes to each of [`PROMOTIONS`] capturing piece `k`.
    pub promotion_capture: [Vec<[SubRun; 4]>; 2],
}

/// Whether [`Captures::new`] resolves the promotions without capture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Promotions {
    Load,
    Skip,
}

impl Captures {
    /// Resolves every conversion of `material` through `lookup` (material -> loaded
    /// bitbases), the promotions without capture only with [`Promotions::Load`].
    pub fn new<E>(
        material: &Material,
        promotions: Promotions,
        mut lookup: impl FnMut(&Material) -> Result<Arc<Bitbase>, E>,
    ) -> Result<Captures, E> {
        let mut sub = |m: Material| -> Result<SubRun, E> {
            Ok(if m.white_bare() { SubRun::BareWhite } else { SubRun::Table(lookup(&m)?) })
        };
        let pieces: Vec<(Color, Role)> = [Color::White, Color::Black]
            .iter()
            .flat_map(|&c| material.side(c).iter().filter(|&&r| r != Role::Pawn).map(move |&r| (c, r)))
            .collect();
        let without = |m: &Material, c: Color, r: Role| match c {
            Color::White => m.without_white(r),
            Color::Black => m.without_black(r),
        };
        let mut caps = Captures {
            by_piece: Vec::new(),
            by_pawn: [None, None],
            promotion: [None, None],
            promotion_capture: [Vec::new(), Vec::new()],
        };
        for &(c, r) in &pieces {
            caps.by_piece.push(sub(without(material, c, r))?);
        }
        for c in [Color::White, Color::Black] {
            if material.pawns(c) == 0 {
                continue;
            }
            caps.by_pawn[c.index()] = Some(sub(without(material, c, Role::Pawn))?);
            let promoted = |to: Role| material.promoted(c, to);
            if promotions == Promotions::Load {
                let mut promotion = Vec::new();
                for to in PROMOTIONS {
                    promotion.push(sub(promoted(to))?);
                }
                caps.promotion[c.index()] =
                    Some(promotion.try_into().unwrap_or_else(|_| unreachable!("four promotions")));
            }
            for &(pc, pr) in &pieces {
                let mut row = Vec::new();
                for to in PROMOTIONS {
                    // Only the other side's pieces can be captured.
                    row.push(if pc == c { SubRun::Impossible } else { sub(without(&promoted(to), pc, pr))? });
                }
                caps.promotion_capture[c.index()].push(row.try_into().unwrap_or_else(|_| unreachable!("four")));
            }
        }
        Ok(caps)
    }
}

impl Captures {
    /// Every sub-run table (with repeats).
    pub fn tables(&self) -> impl Iterator<Item = &Arc<Bitbase>> {
        let flat = self.promotion.iter().flatten().flatten();
        let caps = self.promotion_capture.iter().flatten().flatten();
        self.by_piece.iter().chain(self.by_pawn.iter().flatten()).chain(flat).chain(caps).filter_map(|s| match s {
            SubRun::Table(t) => Some(t),
            SubRun::BareWhite | SubRun::Impossible => None,
        })
    }
}

/// The squares of a sub-run's pieces (not pawns), in its layout's order, after a piece of
/// `(color, role)` appears on `to` (a promotion), the piece `gone` (our index) is captured,
/// and our piece `mover` (if any) moves to `to`. Our pieces are `roles`/`n_white` in our
/// layout's order (white's Q R B N, then black's).
#[inline]
pub fn squares_after(
    roles: &[Role],
    n_white: usize,
    sq: &[Square],
    gone: Option<usize>,
    mover: Option<usize>,
    new: Option<(Color, Role)>,
    to: Square,
) -> ([Square; MAX_PIECES], usize) {
    let rank = |c: Color, r: Role| (c.index() as u8) << 4 | r as u8;
    let mut out = [0u8; MAX_PIECES];
    let mut n = 0;
    let mut placed = new.is_none();
    for k in 0..roles.len() {
        let c = if k < n_white { Color::White } else { Color::Black };
        if let Some((nc, nr)) = new {
            if !placed && rank(nc, nr) < rank(c, roles[k]) {
                out[n] = to;
                n += 1;
                placed = true;
            }
        }
        if Some(k) == gone {
            continue;
        }
        out[n] = if Some(k) == mover { to } else { sq[k] };
        n += 1;
    }
    if !placed {
        out[n] = to;
        n += 1;
    }
    (out, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promoted_pieces_take_their_place_in_the_order() {
        use Role::*;
        // Our pieces: white R, black Q N (squares 1, 2, 3); a white queen appears on 9.
        let roles = [Rook, Queen, Knight];
        let (sq, n) = squares_after(&roles, 1, &[1, 2, 3], None, None, Some((Color::White, Queen)), 9);
        assert_eq!(&sq[..n], &[9, 1, 2, 3]);
        // A white knight appears on 9 capturing black's queen.
        let (sq, n) = squares_after(&roles, 1, &[1, 2, 3], Some(1), None, Some((Color::White, Knight)), 9);
        assert_eq!(&sq[..n], &[1, 9, 3]);
        // A black bishop appears: after black's queen, before its knight.
        let (sq, n) = squares_after(&roles, 1, &[1, 2, 3], None, None, Some((Color::Black, Bishop)), 9);
        assert_eq!(&sq[..n], &[1, 2, 9, 3]);
        // A plain capture: our order without the captured piece, the capturer moved.
        let (sq, n) = squares_after(&roles, 1, &[1, 2, 3], Some(2), Some(0), None, 3);
        assert_eq!(&sq[..n], &[3, 2]);
    }
}
