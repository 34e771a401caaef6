//! The tables that start a run: illegal wtm positions, `c` (winning white captures), and for
//! black to move `t0` (checkmate) and `d` (legal, not stalemate, every capture loses).

use super::captures::{Captures, SubRun};
use super::frame::{Config, Frame};
use crate::chess::attacks::{attacks, between, king_attacks};
use crate::chess::{Color, Square, MAX_PIECES};

#[inline]
fn word(cfg: &Config) -> usize {
    (cfg.base >> 6) as usize
}

/// White-king squares for which `target` is attacked by white: by the king itself when
/// adjacent, or by a white piece (other than `skip`) whose ray the king does not block.
#[inline]
pub fn white_attack_mask(frame: &Frame, sq: &[Square], target: Square, skip: Option<usize>, occ: u64) -> u64 {
    let mut m = king_attacks(target);
    for (k, (&role, &from)) in frame.roles[..frame.n_white].iter().zip(sq).enumerate() {
        if skip != Some(k) && attacks(role, from, occ) & (1 << target) != 0 {
            m |= if role.is_slider() { !between(from, target) } else { !0 };
        }
    }
    m
}

/// Squares attacked by black (the white king may not stand there with black to move).
#[inline]
fn black_attacks(frame: &Frame, cfg: &Config) -> u64 {
    let mut a = king_attacks(cfg.bk);
    for k in frame.n_white..frame.n_pieces() {
        a |= attacks(frame.roles[k], cfg.sq[k], cfg.occ);
    }
    a
}

/// Squares of the pieces after piece `gone` is captured and the capturer `mover` (if a
/// piece) lands on `to`: the sub-run's piece order is ours without `gone`.
#[inline]
fn after_capture(
    frame: &Frame,
    cfg: &Config,
    gone: usize,
    mover: Option<usize>,
    to: Square,
) -> ([Square; MAX_PIECES], usize) {
    let mut out = [0u8; MAX_PIECES];
    let mut n = 0;
    for k in 0..frame.n_pieces() {
        if k != gone {
            out[n] = if Some(k) == mover { to } else { cfg.sq[k] };
            n += 1;
        }
    }
    (out, n)
}

/// Fills the illegal-wtm word and the `c` word of every configuration of a white chunk.
/// `illegal` must start as all ones (configurations with two men on a square stay so) and
/// `c` as zeros.
pub fn init_white(frame: &Frame, caps: &Captures, illegal: &mut [u64], c: &mut [u64]) {
    frame.for_each_config(None, false, &mut |cfg| {
        let w = word(cfg);
        illegal[w] = cfg.occ | white_attack_mask(frame, &cfg.sq, cfg.bk, None, cfg.occ);
        let mut won = 0u64;
        for j in frame.n_white..frame.n_pieces() {
            let x = cfg.sq[j];
            let SubRun::Table(sub) = &caps.by_piece[j] else { unreachable!("black pieces lead to tables") };
            for i in 0..frame.n_white {
                let role = frame.roles[i];
                let from = cfg.sq[i];
                if attacks(role, from, cfg.occ) & (1 << x) == 0 {
                    continue;
                }
                let (sqs, n) = after_capture(frame, cfg, j, Some(i), x);
                let lost = sub.word(Color::Black, cfg.bk, &sqs[..n]);
                won |= lost & if role.is_slider() { !between(from, x) } else { !0 };
            }
            let (sqs, n) = after_capture(frame, cfg, j, None, x);
            if sub.word(Color::Black, cfg.bk, &sqs[..n]) & (1 << x) != 0 {
                won |= king_attacks(x);
            }
        }
        c[w] = won;
    });
}

/// Fills `d` and `t0` for every configuration of a black chunk. On entry `d` holds, per
/// word, the positions where every non-capturing black move is illegal (the black kernel
/// applied to the illegal-wtm table); it is replaced in place. `t0` must start as zeros.
pub fn init_black(frame: &Frame, caps: &Captures, d: &mut [u64], t0: &mut [u64]) {
    // Words of configurations with two men on a square stay: they are cleared below.
    let mut seen = vec![false; d.len()];
    frame.for_each_config(None, false, &mut |cfg| {
        let w = word(cfg);
        let legal = !(cfg.occ | black_attacks(frame, cfg));
        let in_check = white_attack_mask(frame, &cfg.sq, cfg.bk, None, cfg.occ);
        let mut captures_lose = !0u64;
        let mut legal_capture = 0u64;
        for i in 0..frame.n_white {
            let x = cfg.sq[i];
            let sub = &caps.by_piece[i];
            // The black king captures.
            if king_attacks(cfg.bk) & (1 << x) != 0 {
                let occ = cfg.occ & !(1 << cfg.bk);
                legal_capture |= !white_attack_mask(frame, &cfg.sq, x, Some(i), occ);
                let (sqs, n) = after_capture(frame, cfg, i, None, x);
                captures_lose &= match sub {
                    SubRun::Table(t) => t.word(Color::White, x, &sqs[..n]),
                    SubRun::BareWhite => occ | king_attacks(x),
                };
            }
            // A black piece captures.
            for j in frame.n_white..frame.n_pieces() {
                let from = cfg.sq[j];
                if attacks(frame.roles[j], from, cfg.occ) & (1 << x) == 0 {
                    continue;
                }
                let occ = cfg.occ & !(1 << from);
                legal_capture |= !white_attack_mask(frame, &cfg.sq, cfg.bk, Some(i), occ);
                let (sqs, n) = after_capture(frame, cfg, i, Some(j), x);
                captures_lose &= match sub {
                    SubRun::Table(t) => t.word(Color::White, cfg.bk, &sqs[..n]),
                    SubRun::BareWhite => occ | king_attacks(cfg.bk),
                };
            }
        }
        let has_move = !d[w] | legal_capture;
        seen[w] = true;
        t0[w] = legal & in_check & !has_move;
        d[w] = legal & has_move & captures_lose;
    });
    for (w, s) in d.iter_mut().zip(seen) {
        if !s {
            *w = 0;
        }
    }
}

/// Fills the illegal-btm word of every configuration (`out` starts as all ones).
pub fn illegal_btm(frame: &Frame, out: &mut [u64]) {
    frame.for_each_config(None, false, &mut |cfg| {
        out[word(cfg)] = cfg.occ | black_attacks(frame, cfg);
    });
}
