//! The bit-parallel move kernels: for every configuration of the other men, one man's moves
//! for all 64 white-king squares at once (one word), swept along the board's lines.
//!
//! White's kernel ORs (a wtm position is won if *some* move reaches a won btm position);
//! black's kernel ANDs (a btm position is lost if *every* move reaches a won wtm position).
//! Moves onto occupied squares are captures or illegal and are left to the init tables.

use super::frame::{Config, Frame, INVALID};
use crate::chess::attacks::{king_attacks, king_dilate, knight_attacks, tables};
use crate::chess::square::{triangle_code, TRIANGLE};
use crate::chess::{Role, Square, Symmetry};
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
                if any_word(input, cfg, contrib) {
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

/// Whether some word of `words` is non-zero among a configuration's words where the man of
/// `contrib` (per square) stands on a free square.
#[inline]
fn any_word(words: &[u64], cfg: &Config, contrib: &[u64]) -> bool {
    let mut free = !cfg.occ;
    while free != 0 {
        let s = free.trailing_zeros() as usize;
        free &= free - 1;
        if contrib[s] != INVALID && words[word(cfg.base, contrib[s])] != 0 {
            return true;
        }
    }
    false
}

fn sweep_white(role: Role, contrib: &[u64; 64], cfg: &Config, input: &[u64], out: &mut [u64]) {
    let occ = cfg.occ;
    if role == Role::Knight {
        for s in 0..64u8 {
            if occ & (1 << s) != 0 {
                continue;
            }
            let mut acc = 0;
            let mut targets = knight_attacks(s) & !occ;
            while targets != 0 {
                let t = targets.trailing_zeros() as usize;
                acc |= input[word(cfg.base, contrib[t])];
                targets &= targets - 1;
            }
            out[word(cfg.base, contrib[s as usize])] |= acc;
        }
        return;
    }
    let t = tables();
    for &d in role.directions() {
        for line in &t.lines[d] {
            let mut acc = 0u64;
            for i in (0..line.len() - 1).rev() {
                let to = line[i + 1];
                let bit = 1u64 << to;
                acc = if occ & bit != 0 {
                    0
                } else {
                    // The white king standing on `to` blocks the ray in that bit only.
                    input[word(cfg.base, contrib[to as usize])] | (acc & !bit)
                };
                let from = line[i];
                if occ & (1 << from) == 0 {
                    out[word(cfg.base, contrib[from as usize])] |= acc;
                }
            }
        }
    }
}

/// `out[w] &= succ` for every btm word: AND over black's non-capturing moves of `input`.
/// `out` must start as all ones; words of hole configurations are left untouched.
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
        match at {
            None => frame.for_each_config(Some(k), false, &mut |cfg| sweep_black(role, contrib, cfg, input, out)),
            Some(at) => frame.for_each_config(Some(k), false, &mut |cfg| {
                if any_word(at, cfg, contrib) {
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
            if here == INVALID {
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
            if any_word(at, cfg, &frame.bk) {
                steps(cfg);
            }
        }),
    }
}

fn sweep_black(role: Role, contrib: &[u64; 64], cfg: &Config, input: &[u64], out: &mut [u64]) {
    let occ = cfg.occ;
    if role == Role::Knight {
        for s in 0..64u8 {
            if occ & (1 << s) != 0 {
                continue;
            }
            let mut acc = !0u64;
            let mut targets = knight_attacks(s) & !occ;
            while targets != 0 {
                let t = targets.trailing_zeros() as usize;
                acc &= input[word(cfg.base, contrib[t])];
                targets &= targets - 1;
            }
            out[word(cfg.base, contrib[s as usize])] &= acc;
        }
        return;
    }
    let t = tables();
    for &d in role.directions() {
        for line in &t.lines[d] {
            let mut acc = !0u64;
            for i in (0..line.len() - 1).rev() {
                let to = line[i + 1];
                // A white king on the ray would be in check: that btm bit is illegal anyway.
                acc = if occ & (1 << to) != 0 { !0 } else { input[word(cfg.base, contrib[to as usize])] & acc };
                let from = line[i];
                if occ & (1 << from) == 0 {
                    out[word(cfg.base, contrib[from as usize])] &= acc;
                }
            }
        }
    }
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
    let mut sym_base = [0u64; 8];
    let mut moves = |cfg: &Config| {
        for &sym in used {
            sym_base[sym.code() as usize] = (0..np).map(|k| frame.piece[k][sym.apply(cfg.sq[k]) as usize]).sum();
        }
        for (code, from_steps) in steps.iter().enumerate() {
            let here = frame.bk[code];
            if here == INVALID || cfg.occ & (1 << TRIANGLE[code]) != 0 {
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
