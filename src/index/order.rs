//! The order a compact table stores a section's positions in (format 4, issue 28), apart
//! from the generator's.
//!
//! Koistinen's layout interleaves the men's bits and codes squares so that symmetric images
//! share an H digit: right for the passes, poor for compression, since neighbouring squares
//! lie far apart. Measured on KQRvKR (`examples/order_study.rs`, docs/COMPACT.md): its wtm
//! distances take 7.52 MB in the layout's order and 4.65 MB when each man's square counts in
//! board order (a1, b1, ..., h8) and the men are nested in a chosen order; its btm classes
//! 1.65 MB against 0.74 MB.
//!
//! A [`StoredOrder`] keeps the layout's top bits (the *unit*: without pawns the black king's
//! code and the first piece's H digit, with pawns the slice; a unit is one contiguous range in
//! both orders, so a writer or reader permutes one unit at a time) and orders the positions
//! inside a unit by mixed-radix digits, one per man, slowest first: a man's digit is the rank
//! of its square, in board order, among the squares its fixed bits allow.

use super::{square_code, square_of_code, Layout};
use crate::chess::Square;

/// Where one man's 6-bit square code lies in the index.
#[derive(Clone, Debug)]
struct ManBits {
    /// Index bit of code bit `j` (bit 0 the least significant).
    at: [u32; 6],
    /// The white king's code is its square; the others use the layout's diagram code.
    plain: bool,
}

impl ManBits {
    /// The code bits a unit of `2^unit_bits` positions fixes (index bits at or above it).
    fn fixed(&self, unit_bits: u32) -> u8 {
        self.at.iter().enumerate().filter(|&(_, &b)| b >= unit_bits).fold(0u8, |m, (j, _)| m | 1 << j)
    }

    #[inline]
    fn code(&self, index: u64) -> u8 {
        self.at.iter().enumerate().fold(0u8, |c, (j, &b)| c | (((index >> b) & 1) as u8) << j)
    }

    #[inline]
    fn contrib(&self, code: u8, mask: u8) -> u64 {
        self.at
            .iter()
            .enumerate()
            .filter(|&(j, _)| mask >> j & 1 != 0)
            .fold(0, |i, (j, &b)| i | ((code >> j) as u64 & 1) << b)
    }

    fn code_of(&self, sq: Square) -> u8 {
        if self.plain {
            sq
        } else {
            square_code(sq)
        }
    }

    fn square_of(&self, code: u8) -> Square {
        if self.plain {
            code
        } else {
            square_of_code(code)
        }
    }
}

/// One digit of the order inside a unit: a man with free bits.
#[derive(Clone, Debug)]
struct Digit {
    /// Which man: his square is read from the probe's men by [`StoredOrder::stored_of_men`].
    who: Man,
    /// Shift of the digit's rank in the stored offset.
    shift: u32,
    man: ManBits,
    /// The code bits the unit fixes (index bits at or above the unit's).
    fixed: u8,
    /// Bits of the digit: `6 - fixed.count_ones()`.
    bits: u32,
    /// Per square: its rank in board order among the squares of the same fixed bits.
    rank: [u8; 64],
    /// Per fixed-bit value of the code (the code masked by `fixed`), per rank: the square.
    square: Vec<[u8; 64]>,
}

impl Digit {
    fn new(who: Man, man: ManBits, unit_bits: u32) -> Digit {
        let fixed = man.fixed(unit_bits);
        let mut rank = [0u8; 64];
        let mut square = vec![[u8::MAX; 64]; 64];
        let mut count = [0u8; 64];
        for sq in 0..64u8 {
            let key = (man.code_of(sq) & fixed) as usize;
            rank[sq as usize] = count[key];
            square[key][count[key] as usize] = sq;
            count[key] += 1;
        }
        Digit { who, shift: 0, bits: 6 - fixed.count_ones(), man, fixed, rank, square }
    }
}

/// A stored order of a run's slots (see the module's comment).
#[derive(Clone, Debug)]
pub struct StoredOrder {
    /// Positions per unit: `2^unit_bits`.
    pub unit_bits: u32,
    /// The men with free bits inside a unit, slowest first.
    digits: Vec<Digit>,
    layout: Layout,
}

/// Two orders are equal when their records are: the same run, unit and digits.
impl PartialEq for StoredOrder {
    fn eq(&self, other: &StoredOrder) -> bool {
        self.layout.material == other.layout.material && Self::record(Some(self)) == Self::record(Some(other))
    }
}

impl Eq for StoredOrder {}

/// A man of a layout, as [`StoredOrder::new`] names them: the white king, the layout's
/// pieces in order, and (with pawns) the black king.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Man {
    WhiteKing,
    Piece(usize),
    BlackKing,
}

/// The largest unit [`StoredOrder::default_unit_bits`] gives a layout with pawns.
const MAX_PAWN_UNIT_BITS: u32 = 24;

/// Bytes of a stored order's record in a compact table's header ([`StoredOrder::record`]).
pub const ORDER_RECORD_BYTES: usize = 9;

impl Man {
    /// The man's byte in a header record: 0 the white king, `1 + k` piece `k`, 0x80 the
    /// black king.
    fn code(self) -> u8 {
        match self {
            Man::WhiteKing => 0,
            Man::Piece(k) => 1 + k as u8,
            Man::BlackKing => 0x80,
        }
    }

    /// The man of a record's byte, if the layout has him.
    fn of_code(b: u8, layout: &Layout) -> Option<Man> {
        match b {
            0 => Some(Man::WhiteKing),
            0x80 if layout.slices.is_some() => Some(Man::BlackKing),
            b if b >= 1 && ((b - 1) as usize) < layout.pieces.len() => Some(Man::Piece(b as usize - 1)),
            _ => None,
        }
    }
}

impl StoredOrder {
    /// The unit of a layout's orders: without pawns, the bits below the black king's code
    /// and the first piece's H digit (the index's top 7 bits); with pawns, a whole slice
    /// (KRPvKR: 42.3 MB for both runs against 53.8 MB with the slice's top 6 bits fixed),
    /// but at most 2^24 positions, so that a reader's span stays 16 MiB of distances.
    pub fn default_unit_bits(layout: &Layout) -> u32 {
        match layout.slices {
            None => layout.total_bits - 7,
            Some(_) => layout.total_bits.min(MAX_PAWN_UNIT_BITS),
        }
    }

    /// The largest unit of a layout: without pawns the bits below the 7-bit prefix (the
    /// slots skip the prefixes of black-king codes 10..15), with pawns a whole slice.
    pub fn max_unit_bits(layout: &Layout) -> u32 {
        match layout.slices {
            None => layout.total_bits - 7,
            Some(_) => layout.total_bits,
        }
    }

    /// The men of a layout that have free bits in a unit of `2^unit_bits` positions.
    pub fn free_men(layout: &Layout, unit_bits: u32) -> Vec<Man> {
        Self::all_men(layout).into_iter().filter(|(_, bits)| bits.fixed(unit_bits) != 63).map(|(m, _)| m).collect()
    }

    fn all_men(layout: &Layout) -> Vec<(Man, ManBits)> {
        let mut men = vec![(Man::WhiteKing, ManBits { at: [0, 1, 2, 3, 4, 5], plain: true })];
        let coded = |h: &[u32], l_shift: u32| ManBits {
            at: [l_shift, l_shift + 1, l_shift + 2, h[2], h[1], h[0]],
            plain: false,
        };
        for (k, p) in layout.pieces.iter().enumerate() {
            men.push((Man::Piece(k), coded(&p.h_bits, p.l_shift)));
        }
        if layout.slices.is_some() {
            let l_shift = 6 + 3 * layout.pieces.len() as u32;
            men.push((Man::BlackKing, coded(&layout.bk_bits, l_shift)));
        }
        men
    }

    /// The order of `layout`'s slots in units of `2^unit_bits` positions (at most
    /// [`StoredOrder::default_unit_bits`]), the men `order` slowest first: every man that
    /// has free bits in a unit ([`StoredOrder::free_men`]), once.
    pub fn new(layout: &Layout, unit_bits: u32, order: &[Man]) -> StoredOrder {
        assert!(unit_bits <= Self::max_unit_bits(layout), "a unit within the layout's fixed top bits");
        let men = Self::all_men(layout);
        let mut digits: Vec<Digit> = order
            .iter()
            .map(|m| {
                let bits = men.iter().find(|(n, _)| n == m).expect("a man of the layout").1.clone();
                Digit::new(*m, bits, unit_bits)
            })
            .collect();
        let mut shift = 0;
        for d in digits.iter_mut().rev() {
            d.shift = shift;
            shift += d.bits;
        }
        let free = Self::free_men(layout, unit_bits);
        assert!(
            free.len() == order.len() && free.iter().all(|m| order.contains(m)),
            "every free man once: {free:?} against {order:?}"
        );
        debug_assert_eq!(digits.iter().map(|d| d.bits).sum::<u32>(), unit_bits);
        StoredOrder { unit_bits, digits, layout: layout.clone() }
    }

    /// The stored position of a slot whose men stand on `pieces` (the layout's order), `wk`
    /// and `bk` (a probe has them: no decoding of the slot).
    #[inline]
    pub fn stored_of_men(&self, slot: u64, pieces: &[Square], wk: Square, bk: Square) -> u64 {
        let mut inner = 0u64;
        for d in &self.digits {
            let sq = match d.who {
                Man::WhiteKing => wk,
                Man::Piece(k) => pieces[k],
                Man::BlackKing => bk,
            };
            inner |= (d.rank[sq as usize] as u64) << d.shift;
        }
        (slot >> self.unit_bits) << self.unit_bits | inner
    }

    /// Whether the white king is the fastest digit and counts all 64 squares: then a stored
    /// word (64 positions) is a word of the layout, and [`StoredOrder::word_permutation`]
    /// moves whole words.
    pub fn king_fastest(&self) -> bool {
        self.digits.last().is_some_and(|d| d.who == Man::WhiteKing && d.bits == 6)
    }

    /// The permutation of the words of the unit that holds `slot`, for an order whose white
    /// king is fastest ([`StoredOrder::king_fastest`]): `perm[w]` is the stored word (inside
    /// the unit) of the unit's word `w`.
    pub fn word_permutation(&self, slot: u64, perm: &mut Vec<u32>) {
        assert!(self.king_fastest(), "words move whole only when the white king is fastest");
        let unit_slot = slot >> self.unit_bits << self.unit_bits;
        let top = self.layout.index_of_slot(unit_slot);
        let pieces = &self.digits[..self.digits.len() - 1];
        // Per digit, per rank: (the word offset bits, the stored word offset bits).
        let choices: Vec<Vec<(u32, u32)>> = pieces
            .iter()
            .map(|d| {
                let key = (d.man.code(top) & d.fixed) as usize;
                (0..1u32 << d.bits)
                    .map(|r| {
                        let code = d.man.code_of(d.square[key][r as usize]);
                        ((d.man.contrib(code, !d.fixed & 63) >> 6) as u32, r << (d.shift - 6))
                    })
                    .collect()
            })
            .collect();
        perm.clear();
        perm.resize(1 << (self.unit_bits - 6), 0);
        fill_permutation(&choices, 0, 0, perm);
    }

    /// The men of the digits, slowest first.
    pub fn men(&self) -> Vec<Man> {
        self.digits.iter().map(|d| d.who).collect()
    }

    /// The header record of a section's order (`docs/FORMAT.md`, "Stored order"): the unit's
    /// bits (0: slot order, for `None`), then a byte per digit slowest first, padded with
    /// 0xFF.
    pub fn record(order: Option<&StoredOrder>) -> [u8; ORDER_RECORD_BYTES] {
        let mut r = [0xFF; ORDER_RECORD_BYTES];
        r[0] = 0;
        if let Some(o) = order {
            r[0] = o.unit_bits as u8;
            for (b, d) in r[1..].iter_mut().zip(&o.digits) {
                *b = d.who.code();
            }
        }
        r
    }

    /// The order a header record describes (`None`: slot order), checked against the layout:
    /// a unit within the layout's fixed top bits that divides the slots, every man with free
    /// bits once. This crate's readers move whole words, so they also want the white king as
    /// the fastest digit (the only orders it writes).
    pub fn from_record(layout: &Layout, record: &[u8; ORDER_RECORD_BYTES]) -> Result<Option<StoredOrder>, String> {
        let unit_bits = record[0] as u32;
        let used = record[1..].iter().take_while(|&&b| b != 0xFF).count();
        if record[1 + used..].iter().any(|&b| b != 0xFF) {
            return Err("digits after the padding".into());
        }
        if unit_bits == 0 {
            return if used == 0 { Ok(None) } else { Err("digits in a record of slot order".into()) };
        }
        if unit_bits > Self::max_unit_bits(layout) || !layout.n_slots.is_multiple_of(1 << unit_bits) {
            return Err(format!("a unit of 2^{unit_bits} positions does not fit the layout"));
        }
        let men: Vec<Man> = record[1..1 + used]
            .iter()
            .map(|&b| Man::of_code(b, layout).ok_or_else(|| format!("digit byte {b:#x} names no man")))
            .collect::<Result<_, _>>()?;
        let free = Self::free_men(layout, unit_bits);
        let once = |m: &Man| men.iter().filter(|n| *n == m).count() == 1;
        if men.len() != free.len() || !free.iter().all(once) {
            return Err(format!("digits {men:?} are not the men with free bits ({free:?}) once each"));
        }
        let order = StoredOrder::new(layout, unit_bits, &men);
        if !order.king_fastest() {
            return Err("the white king is not the fastest digit (this reader moves whole words)".into());
        }
        Ok(Some(order))
    }

    /// For the `n_words` words from `first_slot` (whole units): per stored word, the word
    /// (counted from `first_slot`) of slot order it holds. Writers gather through it,
    /// readers scatter.
    pub fn slot_words(&self, first_slot: u64, n_words: usize) -> Vec<u32> {
        let unit_words = 1usize << (self.unit_bits - 6);
        let mut from = vec![0u32; n_words];
        let mut perm = Vec::new();
        for at in (0..n_words).step_by(unit_words) {
            self.word_permutation(first_slot + 64 * at as u64, &mut perm);
            for (w, &s) in perm.iter().enumerate() {
                from[at + s as usize] = (at + w) as u32;
            }
        }
        from
    }

    /// The stored position of a slot.
    #[inline]
    pub fn stored(&self, slot: u64) -> u64 {
        let index = self.layout.index_of_slot(slot);
        let mut inner = 0u64;
        for d in &self.digits {
            let sq = d.man.square_of(d.man.code(index));
            inner = inner << d.bits | d.rank[sq as usize] as u64;
        }
        (slot >> self.unit_bits) << self.unit_bits | inner
    }

    /// The slot of a stored position (inverse of [`StoredOrder::stored`]).
    #[inline]
    pub fn slot(&self, stored: u64) -> u64 {
        let unit_mask = (1u64 << self.unit_bits) - 1;
        let unit_slot = stored & !unit_mask;
        let top = self.layout.index_of_slot(unit_slot);
        let mut index = top;
        let mut rest = stored & unit_mask;
        for d in self.digits.iter().rev() {
            let rank = (rest & ((1 << d.bits) - 1)) as usize;
            rest >>= d.bits;
            let key = (d.man.code(top) & d.fixed) as usize;
            let code = d.man.code_of(d.square[key][rank]);
            index |= d.man.contrib(code, !d.fixed & 63);
        }
        unit_slot | (index & unit_mask)
    }
}

/// `perm[a] = s` for every choice of one (offset bits, stored bits) pair per digit, `a` and
/// `s` the ORs of the chosen pairs (and of `at`, `stored`).
fn fill_permutation(choices: &[Vec<(u32, u32)>], at: u32, stored: u32, perm: &mut [u32]) {
    match choices.split_first() {
        None => perm[at as usize] = stored,
        Some((first, rest)) => {
            for &(a, s) in first {
                fill_permutation(rest, at | a, stored | s, perm);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::Material;

    fn every_order(layout: &Layout) -> Vec<StoredOrder> {
        let unit = StoredOrder::default_unit_bits(layout);
        let men = StoredOrder::free_men(layout, unit);
        // The men in their order, reversed, and rotated: enough to cover each as slowest.
        let mut orders = vec![men.clone(), men.iter().rev().copied().collect()];
        for r in 1..men.len() {
            let mut m = men.clone();
            m.rotate_left(r);
            orders.push(m);
        }
        let mut out: Vec<StoredOrder> = orders.iter().map(|o| StoredOrder::new(layout, unit, o)).collect();
        if unit > 3 {
            // A smaller unit fixes more bits (partly fixed digits).
            let small = unit - 3;
            out.push(StoredOrder::new(layout, small, &StoredOrder::free_men(layout, small)));
        }
        out
    }

    #[test]
    fn stored_order_is_a_bijection_within_each_unit() {
        for name in ["KQvK", "KRvKB", "KBBvK", "KPvK", "KRPvK", "KPvKP"] {
            let layout = Layout::new(&Material::parse(name).expect("material"));
            for order in every_order(&layout) {
                let n = layout.n_slots.min(1 << 20);
                let mut seen = vec![false; n as usize];
                for slot in 0..n {
                    let s = order.stored(slot);
                    assert_eq!(s >> order.unit_bits, slot >> order.unit_bits, "{name}: same unit");
                    assert!(!seen[s as usize], "{name}: stored position {s} twice");
                    seen[s as usize] = true;
                    assert_eq!(order.slot(s), slot, "{name}: round trip of slot {slot}");
                }
                // From the men, as a probe asks.
                for slot in (0..n).step_by(97) {
                    let index = layout.index_of_slot(slot);
                    let mut pieces = vec![0; layout.pieces.len()];
                    let (bk, wk) = layout.decode_into(index, &mut pieces);
                    let bk = if layout.has_pawns() { bk } else { layout.bk_square(bk) };
                    assert_eq!(order.stored_of_men(slot, &pieces, wk, bk), order.stored(slot), "{name}: slot {slot}");
                }
                // The word permutation moves the words `stored` moves.
                if order.king_fastest() {
                    let mut perm = Vec::new();
                    let unit = 1u64 << order.unit_bits;
                    for first in (0..n).step_by(unit as usize).take(64) {
                        order.word_permutation(first, &mut perm);
                        let slot_word = order.slot_words(first, (unit / 64) as usize);
                        for w in 0..unit / 64 {
                            assert_eq!(slot_word[perm[w as usize] as usize] as u64, w, "{name}: the inverse");
                            let s = order.stored(first + 64 * w);
                            assert_eq!(first + 64 * perm[w as usize] as u64, s, "{name}: word {w} of unit {first}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn header_records_round_trip_and_bad_ones_are_refused() {
        for name in ["KQvK", "KRvKB", "KBBvKN", "KPvK", "KRPvKR", "KPvKP"] {
            let layout = Layout::new(&Material::parse(name).expect("material"));
            assert!(StoredOrder::from_record(&layout, &StoredOrder::record(None)).expect("slot order").is_none());
            for order in every_order(&layout).into_iter().filter(StoredOrder::king_fastest) {
                let record = StoredOrder::record(Some(&order));
                let back = StoredOrder::from_record(&layout, &record).expect(name).expect("an order");
                assert_eq!((back.unit_bits, back.men()), (order.unit_bits, order.men()), "{name}");
                let used = 1 + order.men().len();
                let mut twice = record;
                twice[1] = twice[2];
                let mut unknown = record;
                unknown[1] = 0x40;
                let mut junk = record;
                if used < ORDER_RECORD_BYTES {
                    junk[ORDER_RECORD_BYTES - 1] = 0;
                }
                let mut too_big = record;
                too_big[0] = StoredOrder::max_unit_bits(&layout) as u8 + 1;
                let mut king_slowest = record;
                king_slowest[1..used].rotate_right(1);
                for (what, bad) in
                    [("twice", twice), ("unknown", unknown), ("too big", too_big), ("king slowest", king_slowest)]
                {
                    if what == "king slowest" && used == 2 {
                        continue; // the white king alone
                    }
                    assert!(StoredOrder::from_record(&layout, &bad).is_err(), "{name}: {what} {bad:?}");
                }
                if used < ORDER_RECORD_BYTES {
                    assert!(StoredOrder::from_record(&layout, &junk).is_err(), "{name}: junk after the padding");
                }
            }
        }
    }

    #[test]
    fn digits_count_squares_in_board_order() {
        // KQvK: unit = black king's code and the queen's H digit; inside it the queen's
        // free L digit (8 squares of one H digit, board order) above the white king (64).
        let layout = Layout::new(&Material::parse("KQvK").expect("material"));
        let unit = StoredOrder::default_unit_bits(&layout);
        let order = StoredOrder::new(&layout, unit, &[Man::Piece(0), Man::WhiteKing]);
        let (bk, queen) = (0u8, 9u8); // black king a1, queen b2
        for wk in [2u8, 3] {
            let slot = layout.slot(layout.index(bk, &[queen], wk)).expect("a slot");
            assert_eq!(order.stored(slot) & 63, wk as u64, "the white king fastest, in board order");
        }
        let first_of_h = (0..64u8).filter(|&s| square_code(s) >> 3 == square_code(queen) >> 3).position(|s| s == queen);
        let slot = layout.slot(layout.index(bk, &[queen], 0)).expect("a slot");
        assert_eq!(Some(((order.stored(slot) >> 6) & 7) as usize), first_of_h);
    }
}
