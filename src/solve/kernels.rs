//! The bit-parallel move kernels: for every configuration of the other men, one man's moves
//! for all 64 white-king squares at once (one word), swept along the board's lines.
//!
//! White's kernel ORs (a wtm position is won if *some* move reaches a won btm position);
//! black's kernel ANDs (a btm position is lost if *every* move reaches a won wtm position).
//! Moves onto occupied squares are captures or illegal and are left to the init tables.

use super::frame::{Config, Frame, INVALID};
use crate::chess::attacks::{king_attacks, king_dilate, knight_attacks, tables};
use crate::chess::square::{triangle_code, TRIANGLE};
use crate::chess::{Color, Material, Role, Square, Symmetry};
use crate::index::{ChunkKey, ChunkScheme, Layout};
use std::sync::OnceLock;

#[inline]
fn word(base: u64, contrib: u64) -> usize {
    ((base + contrib) >> 6) as usize
}

/// `out[w] |= preds` for every wtm word whose white man can move into a set btm bit of `input`.
pub fn white_moves(frame: &Frame, input: &[u64], out: &mut [u64]) {
    white_moves_where(frame, input, out, false)
}

/// [`white_moves`] for a sparse `input`: configurations whose input words are all zero are
/// skipped (a check that costs a dense input time).
pub fn white_moves_sparse(frame: &Frame, input: &[u64], out: &mut [u64]) {
    white_moves_where(frame, input, out, true)
}

fn white_moves_where(frame: &Frame, input: &[u64], out: &mut [u64], sparse: bool) {
    for k in 0..frame.n_white {
        let contrib = &frame.piece[k];
        let role = frame.roles[k];
        // Two loops, so that the dense one is the plain sweep.
        if sparse {
            frame.for_each_config(Some(k), false, &mut |cfg| {
                if any_word(input, cfg, contrib, |_| 0) {
                    sweep_white(role, contrib, cfg, input, out);
                }
            });
        } else {
            frame.for_each_config(Some(k), false, &mut |cfg| sweep_white(role, contrib, cfg, input, out));
        }
    }
    for (o, &i) in out.iter_mut().zip(input) {
        *o |= king_dilate(i);
    }
}

/// Whether some word of `words` has a bit outside `ignored(square)` among a configuration's
/// words where the man of `contrib` (per square) stands on a free square.
#[inline]
fn any_word(words: &[u64], cfg: &Config, contrib: &[u64], ignored: impl Fn(usize) -> u64) -> bool {
    let mut free = !cfg.occ;
    while free != 0 {
        let s = free.trailing_zeros() as usize;
        free &= free - 1;
        if contrib[s] != INVALID && words[word(cfg.base, contrib[s])] & !ignored(s) != 0 {
            return true;
        }
    }
    false
}

/// The white-king squares (the bits of a word) where a btm position is illegal whatever the
/// other moves do: on a man (`occ`) or next to the black king on `bk`. Black's kernels may
/// leave any value there (the chains hold those positions as decided, and every reader of a
/// kernel's output masks them), so a word is settled when its other bits are 0.
#[inline]
pub(super) fn illegal_white_kings(occ: u64, bk: Square) -> u64 {
    occ | king_attacks(bk) | 1 << bk
}

/// Whether some word of a configuration where the man of `contrib` stands on a free square
/// still has a legal position without an escape: a 1 outside [`illegal_white_kings`] and
/// the man's own square.
#[inline]
fn any_unsettled(out: &[u64], cfg: &Config, contrib: &[u64]) -> bool {
    let kings = illegal_white_kings(cfg.occ, cfg.bk);
    any_word(out, cfg, contrib, |s| kings | 1 << s)
}

/// The input word of each free square for the man of `contrib` (each read once: a slider's
/// directions then sweep these, not the chunk), `fill` on occupied squares.
#[inline]
fn words_by_square(contrib: &[u64; 64], cfg: &Config, input: &[u64], fill: u64) -> [u64; 64] {
    let mut words = [fill; 64];
    let mut free = !cfg.occ;
    while free != 0 {
        let s = free.trailing_zeros() as usize;
        free &= free - 1;
        words[s] = input[word(cfg.base, contrib[s])];
    }
    words
}

/// Combines each free square's result into its output word: `out = op(out, res)`.
#[inline]
fn store_by_square(contrib: &[u64; 64], cfg: &Config, res: &[u64; 64], out: &mut [u64], op: impl Fn(u64, u64) -> u64) {
    let mut free = !cfg.occ;
    while free != 0 {
        let s = free.trailing_zeros() as usize;
        free &= free - 1;
        let o = &mut out[word(cfg.base, contrib[s])];
        *o = op(*o, res[s]);
    }
}

fn sweep_white(role: Role, contrib: &[u64; 64], cfg: &Config, input: &[u64], out: &mut [u64]) {
    let occ = cfg.occ;
    let at = words_by_square(contrib, cfg, input, 0);
    let mut res = [0u64; 64];
    if role == Role::Knight {
        let mut free = !occ;
        while free != 0 {
            let s = free.trailing_zeros() as usize;
            free &= free - 1;
            let mut targets = knight_attacks(s as Square) & !occ;
            while targets != 0 {
                res[s] |= at[targets.trailing_zeros() as usize];
                targets &= targets - 1;
            }
        }
    } else {
        let t = tables();
        for &d in role.directions() {
            for line in &t.lines[d] {
                let mut acc = 0u64;
                for i in (0..line.len() - 1).rev() {
                    let to = line[i + 1];
                    let bit = 1u64 << to;
                    // The white king standing on `to` blocks the ray in that bit only.
                    acc = if occ & bit != 0 { 0 } else { at[to as usize] | (acc & !bit) };
                    res[line[i] as usize] |= acc;
                }
            }
        }
    }
    store_by_square(contrib, cfg, &res, out, |o, r| o | r);
}

/// `out[w] &= succ` for every btm word: AND over black's non-capturing moves of `input`.
/// `out` starts as all ones, or as the positions whose value is wanted (the others' bits
/// come out as they are or lower); words of hole configurations are left untouched. A
/// position with the white king on a man or next to the black king is illegal: its bit may
/// come out anything.
pub fn black_moves(frame: &Frame, input: &[u64], out: &mut [u64]) {
    black_moves_where(frame, input, out, None)
}

/// [`black_moves`] where only the positions of a sparse `at` matter: configurations whose
/// `at` words are all zero are skipped (their `out` words are left as they are).
pub fn black_moves_at(frame: &Frame, input: &[u64], out: &mut [u64], at: &[u64]) {
    black_moves_where(frame, input, out, Some(at))
}

fn black_moves_where(frame: &Frame, input: &[u64], out: &mut [u64], at: Option<&[u64]>) {
    for k in frame.n_white..frame.n_pieces() {
        let contrib = &frame.piece[k];
        let role = frame.roles[k];
        // A configuration where every legal position of the piece's words has an escape
        // already, or was decided before (`out` may start as the undecided positions only),
        // gains nothing from this piece's moves.
        match at {
            None => frame.for_each_config(Some(k), false, &mut |cfg| {
                if any_unsettled(out, cfg, contrib) {
                    sweep_black(role, contrib, cfg, input, out);
                }
            }),
            Some(at) => frame.for_each_config(Some(k), false, &mut |cfg| {
                if any_word(at, cfg, contrib, |_| 0) && any_unsettled(out, cfg, contrib) {
                    sweep_black(role, contrib, cfg, input, out);
                }
            }),
        }
    }
    if frame.bk.len() == 64 {
        black_king_steps(frame, input, out, at);
    } else {
        black_king_moves(frame, input, out, at);
    }
}

/// Black-king moves of a layout with pawns: the king is an ordinary man, indexed by its
/// square; a step AND-s the word of the target square.
fn black_king_steps(frame: &Frame, input: &[u64], out: &mut [u64], at: Option<&[u64]>) {
    let mut steps = |cfg: &Config| {
        let mut free = !cfg.occ;
        while free != 0 {
            let from = free.trailing_zeros() as usize;
            free &= free - 1;
            let here = frame.bk[from];
            // A word whose every legal position has an escape already gains nothing.
            if here == INVALID || out[word(cfg.base, here)] & !illegal_white_kings(cfg.occ, from as Square) == 0 {
                continue;
            }
            let mut acc = !0u64;
            let mut targets = king_attacks(from as Square) & !cfg.occ;
            while targets != 0 {
                let to = targets.trailing_zeros() as usize;
                targets &= targets - 1;
                if frame.bk[to] != INVALID {
                    acc &= input[word(cfg.base, frame.bk[to])];
                }
            }
            out[word(cfg.base, here)] &= acc;
        }
    };
    match at {
        None => frame.for_each_config(None, true, &mut steps),
        Some(at) => frame.for_each_config(None, true, &mut |cfg| {
            if any_word(at, cfg, &frame.bk, |_| 0) {
                steps(cfg);
            }
        }),
    }
}

fn sweep_black(role: Role, contrib: &[u64; 64], cfg: &Config, input: &[u64], out: &mut [u64]) {
    let occ = cfg.occ;
    let at = words_by_square(contrib, cfg, input, !0);
    let mut res = [!0u64; 64];
    if role == Role::Knight {
        let mut free = !occ;
        while free != 0 {
            let s = free.trailing_zeros() as usize;
            free &= free - 1;
            let mut targets = knight_attacks(s as Square) & !occ;
            while targets != 0 {
                res[s] &= at[targets.trailing_zeros() as usize];
                targets &= targets - 1;
            }
        }
    } else {
        let t = tables();
        for &d in role.directions() {
            for line in &t.lines[d] {
                let mut acc = !0u64;
                for i in (0..line.len() - 1).rev() {
                    let to = line[i + 1];
                    // A white king on the ray would be in check: that btm bit is illegal anyway.
                    acc = if occ & (1 << to) != 0 { !0 } else { at[to as usize] & acc };
                    res[line[i] as usize] &= acc;
                }
            }
        }
    }
    store_by_square(contrib, cfg, &res, out, |o, r| o & r);
}

/// One black-king step from a triangle square: the target, the symmetry that brings it back
/// into the triangle, its code there, and the inverse symmetry (to map the word back).
#[derive(Clone, Copy)]
pub(super) struct KingStep {
    pub to: Square,
    pub sym: Symmetry,
    pub to_code: u8,
    pub back: Symmetry,
}

/// The king steps from each triangle square, and the symmetries any of them uses.
pub(super) fn king_steps() -> &'static ([Vec<KingStep>; 10], Vec<Symmetry>) {
    static STEPS: OnceLock<([Vec<KingStep>; 10], Vec<Symmetry>)> = OnceLock::new();
    STEPS.get_or_init(|| {
        let steps: [Vec<KingStep>; 10] = std::array::from_fn(|code| {
            let mut targets = king_attacks(TRIANGLE[code]);
            let mut v = Vec::new();
            while targets != 0 {
                let to = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let sym = Symmetry::to_triangle(to);
                let to_code = triangle_code(sym.apply(to)).expect("mapped into the triangle");
                v.push(KingStep { to, sym, to_code, back: sym.inverse() });
            }
            v
        });
        let used = Symmetry::all().filter(|s| steps.iter().flatten().any(|k| k.sym == *s)).collect();
        (steps, used)
    })
}

/// Black-king moves: a king leaving the triangle is mapped back by a symmetry, which also
/// moves every other man (L digits only) and permutes the white-king word.
/// (Without pawns.)
fn black_king_moves(frame: &Frame, input: &[u64], out: &mut [u64], at: Option<&[u64]>) {
    let np = frame.n_pieces();
    let (steps, used) = king_steps();
    // Per symmetry used, per piece and square: the contribution of the square's image.
    let image_contrib: Vec<Vec<[u64; 64]>> = used
        .iter()
        .map(|sym| {
            (0..np).map(|k| std::array::from_fn(|sq| frame.piece[k][sym.apply(sq as Square) as usize])).collect()
        })
        .collect();
    let mut sym_base = [0u64; 8];
    let mut moves = |cfg: &Config| {
        for (sym, contribs) in used.iter().zip(&image_contrib) {
            sym_base[sym.code() as usize] = contribs.iter().zip(&cfg.sq[..np]).map(|(c, &sq)| c[sq as usize]).sum();
        }
        for (code, from_steps) in steps.iter().enumerate() {
            let here = frame.bk[code];
            // A word whose every legal position has an escape already (by the pieces' moves)
            // gains nothing from the king's.
            if here == INVALID
                || cfg.occ & (1 << TRIANGLE[code]) != 0
                || out[word(cfg.base, here)] & !illegal_white_kings(cfg.occ, TRIANGLE[code]) == 0
            {
                continue;
            }
            let mut acc = !0u64;
            for step in from_steps {
                if cfg.occ & (1 << step.to) != 0 {
                    continue;
                }
                let w = input[word(sym_base[step.sym.code() as usize], frame.bk[step.to_code as usize])];
                acc &= step.back.apply_bb(w);
            }
            out[word(cfg.base, here)] &= acc;
        }
    };
    match at {
        None => frame.for_each_config(None, true, &mut moves),
        Some(at) => frame.for_each_config(None, true, &mut |cfg| {
            let any = (0..steps.len()).any(|c| frame.bk[c] != INVALID && at[word(cfg.base, frame.bk[c])] != 0);
            if any {
                moves(cfg);
            }
        }),
    }
}

/// One chunk of a run filled with random words, its kernel run over and over: what the
/// criterion benchmarks time (`bench/benches/kernels.rs`). Not a stable API.
pub struct KernelBench {
    frame: Frame,
    mover: Color,
    input: Vec<u64>,
    out: Vec<u64>,
}

impl KernelBench {
    /// Chunk `nth` of `material`'s chunks for `mover`'s passes, on storage blocks of
    /// `2^block_bits` positions (as a budget would cut it), its input words drawn from `word`.
    pub fn new(
        material: &Material,
        mover: Color,
        block_bits: u32,
        nth: usize,
        word: impl FnMut() -> u64,
    ) -> KernelBench {
        let layout = Layout::new(material);
        let scheme = ChunkScheme::new(&layout, mover, block_bits);
        let key = scheme.keys().nth(nth % scheme.n_keys()).expect("a chunk key");
        let slice = layout.slices.as_ref().map(|s| nth as u32 % s.len() as u32);
        let frame = Frame::new(&layout, &scheme, ChunkKey(key.0), slice);
        let input = std::iter::repeat_with(word).take(scheme.local_words()).collect();
        KernelBench { frame, mover, input, out: vec![0; scheme.local_words()] }
    }

    /// Words of the chunk.
    pub fn words(&self) -> usize {
        self.input.len()
    }

    /// Runs the mover's kernel over the chunk; the number of bits it set (for a check).
    pub fn run(&mut self) -> u64 {
        match self.mover {
            Color::White => {
                self.out.fill(0);
                white_moves(&self.frame, &self.input, &mut self.out)
            }
            Color::Black => {
                self.out.fill(!0);
                black_moves(&self.frame, &self.input, &mut self.out)
            }
        }
        self.out.iter().map(|w| w.count_ones() as u64).sum()
    }
}
