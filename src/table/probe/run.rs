//! One run's table as probes read it, and where a position lies in it: the storage slot of
//! a position's men, in the run's own colours or in the colour swap.

use crate::chess::{Color, Position, Square, MAX_PIECES};
use crate::index::{Layout, StoredMen};
use crate::table::cache::BlockCache;
use crate::table::compact::CompactTable;
use crate::table::men::Men;
use crate::table::values::{code_to_distance, Class};
use crate::table::TableError;
use std::sync::Arc;

/// One run's table with its layout, read through its tablebase's block cache.
pub struct Run {
    pub file: CompactTable,
    pub layout: Layout,
    pub(super) cache: Arc<BlockCache>,
}

impl Run {
    /// The class of a slot: for white to move, whether white wins ([`Class::Win`]), wins
    /// only without the 50-move rule ([`Class::Cursed`]); for black to move, whether black
    /// loses, loses only without the rule; [`Class::NotWon`] otherwise. Meaningless for
    /// illegal positions.
    #[inline]
    pub fn class(&self, stm: Color, slot: u64) -> Result<Class, TableError> {
        Ok(self.file.class(stm, slot, &self.cache)?)
    }

    /// The white-to-move distance code of a slot as stored (`docs/FORMAT.md`), meaningful
    /// where white wins ([`Class::Win`]) other than by a zeroing move in a table of version 6
    /// (a don't-care there: [`Tablebase::probe`](super::Tablebase::probe) searches those
    /// moves).
    #[inline]
    pub fn dtz_code(&self, slot: u64) -> Result<u8, TableError> {
        Ok(self.file.dtz_code(slot, &self.cache)?)
    }

    /// [`Run::class`] of a position found by [`Run::slot`] (a kept twin: read as it is).
    #[inline]
    pub(super) fn kept_class(&self, stm: Color, at: Located) -> Result<Class, TableError> {
        Ok(self.file.class_of_kept(stm, at.slot, at.men.as_ref(), &self.cache)?)
    }

    /// [`Run::dtz_code`] of a position found by [`Run::slot`].
    #[inline]
    pub(super) fn kept_dtz_code(&self, at: Located) -> Result<u8, TableError> {
        Ok(self.file.dtz_code_of_kept(at.slot, at.men.as_ref(), &self.cache)?)
    }

    /// Where [`Run::kept_dtz_code`] reads `at`'s distance code, fetched into the processor's
    /// caches: for [`Run::dtz_code_at`], a read that comes later.
    #[inline]
    pub(super) fn fetch_dtz_code(&self, at: Located) -> u64 {
        let stored = self.file.dtz_stored(at.slot, at.men.as_ref());
        self.file.prefetch_dtz(stored, &self.cache);
        stored
    }

    /// The distance code [`Run::fetch_dtz_code`] located.
    #[inline]
    pub(super) fn dtz_code_at(&self, stored: u64) -> Result<u8, TableError> {
        Ok(self.file.dtz_code_at(stored, &self.cache)?)
    }

    /// The storage slot of a legal position of this run (white's men are the run's white).
    pub fn slot_of(&self, pos: &Position) -> u64 {
        self.slot(&Men::gather(pos, false), false).slot
    }

    /// Where `men` lie in this run; with `swap`, their colour swap flipped top to bottom
    /// (black's men become this run's white). Of a position stored twice (transposed twins),
    /// the kept slot, which [`Run::kept_class`] and [`Run::kept_dtz_code`] read as it is.
    #[inline]
    pub(super) fn slot(&self, men: &Men, swap: bool) -> Located {
        let (w, b, flip) = if swap { (Color::Black, Color::White, 56) } else { (Color::White, Color::Black, 0) };
        let mut squares = [0 as Square; MAX_PIECES];
        let mut k = 0;
        for side in [w, b] {
            for &sq in &men.sq[men.range(side)] {
                squares[k] = sq ^ flip;
                k += 1;
            }
        }
        let (bk, wk) = (men.king(b) ^ flip, men.king(w) ^ flip);
        if self.file.header.identical_dropped {
            // Format 7 keeps the order of identical men by H digit (symmetries keep it).
            self.layout.sort_identical_by_h(&mut squares[..k]);
        }
        if men.pawns.n == 0 {
            let (idx, stored) = self.layout.kept_canonical_men(bk, &squares[..k], wk);
            let slot = self.layout.slot(idx).expect("canonical index is not a hole");
            return Located { slot, men: Some(stored) };
        }
        let pawns = if swap { men.pawns.swapped() } else { men.pawns };
        let (slot, _) = self
            .layout
            .canonical_slot(bk, &squares[..k], wk, &pawns)
            .expect("the pawns of a legal position form a stored configuration");
        Located { slot, men: None }
    }
}

/// Where a position lies in a run: its kept slot and, without pawns, its men as that slot
/// holds them (the stored orders read them instead of decoding the slot).
#[derive(Clone, Copy, Debug)]
pub(super) struct Located {
    pub slot: u64,
    men: Option<StoredMen>,
}

/// The distance in plies of a stored wtm distance `code` of `slot` of `run`, where white
/// wins ([`Class::Win`]); an error names the table when the code is no win's.
#[inline]
pub(super) fn code_distance(run: &Run, slot: u64, code: u8) -> Result<u8, TableError> {
    code_to_distance(Color::White, code).filter(|&d| d > 0).ok_or_else(|| {
        TableError::Wrong(format!(
            "{}: slot {slot} is won but holds distance code {code} (table damaged)",
            run.file.path.display()
        ))
    })
}

/// Squares of the black king, the pieces in the layout's order, and the white king.
pub fn men_in_layout_order(layout: &Layout, pos: &Position) -> (Square, Vec<Square>, Square) {
    let mut used = 0u64;
    let pieces = layout
        .pieces
        .iter()
        .map(|slot| {
            let (s, _) = pos
                .pieces()
                .find(|&(s, p)| p.color == slot.color && p.role == slot.role && used & (1 << s) == 0)
                .expect("position has the layout's material");
            used |= 1 << s;
            s
        })
        .collect();
    (pos.king(Color::Black), pieces, pos.king(Color::White))
}
