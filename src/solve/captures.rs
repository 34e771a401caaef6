//! Capture lookups: the final bitbases of the runs that a capture leads to.

use crate::chess::square::triangle_code;
use crate::chess::{Color, Material, Square, Symmetry};
use crate::index::Layout;
use std::sync::Arc;

/// The final bitbases of one white-wins run, in storage-word order.
pub struct Bitbase {
    pub layout: Layout,
    /// `t99`: wtm positions won for white with a fresh counter (illegal positions are 1).
    pub wtm: Vec<u64>,
    /// `t100`: btm positions lost for black with a fresh counter (illegal positions are 0).
    pub btm: Vec<u64>,
}

impl Bitbase {
    /// The word (bit `s` = white king on `s`) for a position given by plain squares: the
    /// black king anywhere, the pieces in the layout's order.
    #[inline]
    pub fn word(&self, stm: Color, bk: Square, pieces: &[Square]) -> u64 {
        let sym = Symmetry::to_triangle(bk);
        let code = triangle_code(sym.apply(bk)).expect("triangle");
        let mut idx = self.layout.bk_contrib(code);
        for (k, &sq) in pieces.iter().enumerate() {
            idx |= self.layout.piece_contrib(k, sym.apply(sq));
        }
        let slot = self.layout.slot(idx).expect("triangle code is never a hole");
        let table = if stm == Color::White { &self.wtm } else { &self.btm };
        let w = table[(slot >> 6) as usize];
        if sym == Symmetry::IDENTITY {
            w
        } else {
            sym.inverse().apply_bb(w)
        }
    }
}

/// The run a capture leads to.
#[derive(Clone)]
pub enum SubRun {
    /// A real table.
    Table(Arc<Bitbase>),
    /// White is left with a bare king: no wins; only illegal wtm positions are 1.
    BareWhite,
}

/// For each piece of a run, the run that its capture leads to.
pub struct Captures {
    pub by_piece: Vec<SubRun>,
}

impl Captures {
    /// Resolves every capture of `material` through `lookup` (material -> loaded bitbases).
    pub fn new<E>(
        material: &Material,
        mut lookup: impl FnMut(&Material) -> Result<Arc<Bitbase>, E>,
    ) -> Result<Captures, E> {
        let mut by_piece = Vec::new();
        for &r in &material.white {
            let sub = material.without_white(r);
            by_piece.push(if sub.white_bare() { SubRun::BareWhite } else { SubRun::Table(lookup(&sub)?) });
        }
        for &r in &material.black {
            by_piece.push(SubRun::Table(lookup(&material.without_black(r))?));
        }
        Ok(Captures { by_piece })
    }
}
