//! The tables that start a level: illegal wtm positions, `c` (white's winning conversions),
//! and for black to move `t0` (checkmate) and `d` (legal, not stalemate, every conversion
//! loses).
//!
//! Conversions are the moves that reset the 50-move counter: captures, and with pawns every
//! pawn move. Their results are read from final bitbases: a sub-run's (captures and
//! promotions) or, for a pawn push, this run's level above (`PushTargets`, read word for word
//! over the chunk: the push changes only the slice). Illegal results are encoded so that
//! they never help the side that moves into them (illegal btm is 0, illegal wtm is 1). The
//! illegal positions themselves are the layout's (`index::illegal_word` finds them a word at a
//! time, from the same attack functions of `chess::attacks`).

use super::captures::{squares_after, Captures, PROMOTIONS};
use super::frame::{Config, Frame};
use crate::chess::attacks::{
    attacks, between, black_attack_set, black_attack_union, king_attacks, pawn_attack_set, white_attack_mask,
    white_attack_mask_of,
};
use crate::chess::{Color, Square, MAX_PIECES};
use crate::index::slices::MAX_PAWNS;
use crate::index::Pawns;

#[inline]
fn word(cfg: &Config) -> usize {
    (cfg.base >> 6) as usize
}

/// Whether a square is on the last rank of a side's pawns.
#[inline]
fn promotes(color: Color, sq: Square) -> bool {
    if color == Color::White {
        sq >= 56
    } else {
        sq < 8
    }
}

/// Whether a square is the double-step start rank of a side's pawns.
#[inline]
fn start_rank(color: Color, sq: Square) -> bool {
    if color == Color::White {
        (8..16).contains(&sq)
    } else {
        (48..56).contains(&sq)
    }
}

/// The final bitbase words over a chunk of the slices the mover's pawn pushes lead to (in
/// this run's higher levels), indexed by the pawn's index among the mover's pawns.
#[derive(Default)]
pub struct PushTargets<'a> {
    pub single: [Option<&'a [u64]>; MAX_PAWNS],
    pub double: [Option<&'a [u64]>; MAX_PAWNS],
}

/// The attack sets of the men `range` of a configuration on its board.
#[inline]
fn attack_sets(frame: &Frame, cfg: &Config, range: std::ops::Range<usize>) -> [u64; MAX_PIECES] {
    let mut att = [0u64; MAX_PIECES];
    for k in range {
        att[k] = attacks(frame.roles[k], cfg.sq[k], cfg.occ);
    }
    att
}

/// Squares attacked by black (the white king may not stand there with black to move).
#[inline]
fn black_attacks(frame: &Frame, cfg: &Config) -> u64 {
    let black = frame.n_white..frame.n_pieces();
    black_attack_set(
        &frame.roles[black.clone()],
        &cfg.sq[black],
        cfg.bk,
        cfg.occ,
        frame.pawns.occupied_by(Color::Black),
    )
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

/// The pawns after one of them moves (`from` to `to`, `None`: captured) and possibly one of
/// the other side is captured on `taken`.
#[inline]
fn pawns_after(pawns: &Pawns, from: Option<Square>, to: Option<Square>, taken: Option<Square>) -> Pawns {
    let rest = taken.map_or(*pawns, |x| pawns.moved(x, None));
    from.map_or(rest, |f| rest.moved(f, to))
}

/// Fills the illegal-wtm word and the `c` word of every configuration of a white chunk.
/// `illegal` must start as all ones (configurations with two men on a square stay so) and
/// `c` as zeros.
pub fn init_white(frame: &Frame, caps: &Captures, pushes: &PushTargets, illegal: &mut [u64], c: &mut [u64]) {
    let wp = frame.pawns.occupied_by(Color::White);
    frame.for_each_config(None, false, &mut |cfg| {
        let w = word(cfg);
        let att = attack_sets(frame, cfg, 0..frame.n_white);
        illegal[w] = cfg.occ | white_attack_mask_of(frame.white_roles(), &cfg.sq, &att, cfg.bk, wp);
        let mut won = 0u64;
        for j in frame.n_white..frame.n_pieces() {
            let x = cfg.sq[j];
            let sub = &caps.by_piece[j];
            for (i, &a) in att.iter().enumerate().take(frame.n_white) {
                let role = frame.roles[i];
                let from = cfg.sq[i];
                if a & (1 << x) == 0 {
                    continue;
                }
                let (sqs, n) = after_capture(frame, cfg, j, Some(i), x);
                let lost = sub.word(Color::Black, cfg.bk, &sqs[..n], &frame.pawns, 0);
                won |= lost & if role.is_slider() { !between(from, x) } else { !0 };
            }
            let (sqs, n) = after_capture(frame, cfg, j, None, x);
            if sub.word(Color::Black, cfg.bk, &sqs[..n], &frame.pawns, 0) & (1 << x) != 0 {
                won |= king_attacks(x);
            }
        }
        if frame.pawns.n > 0 {
            won |= white_pawn_conversions(frame, caps, pushes, cfg);
        }
        c[w] = won;
    });
}

/// White's conversions that involve pawns, in one configuration: captures of black pawns
/// by pieces and the king, pawn captures (promoting on the last rank), pushes, promotions
/// and double steps (with black's en-passant replies).
fn white_pawn_conversions(frame: &Frame, caps: &Captures, pushes: &PushTargets, cfg: &Config) -> u64 {
    let pawns = &frame.pawns;
    let mut won = 0u64;
    // Pieces and the king capture a black pawn.
    if let Some(sub) = &caps.by_pawn[Color::Black.index()] {
        for &x in pawns.of(Color::Black) {
            let after = pawns_after(pawns, Some(x), None, None);
            for i in 0..frame.n_white {
                let (role, from) = (frame.roles[i], cfg.sq[i]);
                if attacks(role, from, cfg.occ) & (1 << x) != 0 {
                    let (sqs, n) = squares_after(&frame.roles, frame.n_white, &cfg.sq, None, Some(i), None, x);
                    let lost = sub.word(Color::Black, cfg.bk, &sqs[..n], &after, 0);
                    won |= lost & if role.is_slider() { !between(from, x) } else { !0 };
                }
            }
            let lost = sub.word(Color::Black, cfg.bk, &cfg.sq[..frame.n_pieces()], &after, 0);
            if lost & (1 << x) != 0 {
                won |= king_attacks(x);
            }
        }
    }
    for (i, &p) in pawns.of(Color::White).iter().enumerate() {
        won |= white_pawn_captures(frame, caps, cfg, p);
        let to = p + 8;
        if cfg.occ & (1 << to) != 0 {
            continue;
        }
        if promotes(Color::White, to) {
            let promos = caps.promotion[0].as_ref().expect("white pawns promote");
            let after = pawns_after(pawns, Some(p), None, None);
            for (r, role) in PROMOTIONS.iter().enumerate() {
                let new = Some((Color::White, *role));
                let (sqs, n) = squares_after(&frame.roles, frame.n_white, &cfg.sq, None, None, new, to);
                won |= promos[r].word(Color::Black, cfg.bk, &sqs[..n], &after, 0);
            }
            continue;
        }
        // A blocked push lands on a broken target (0); the words are the target slice's.
        if let Some(t) = pushes.single[i] {
            won |= t[word(cfg)];
        }
        if start_rank(Color::White, p) && cfg.occ & (1 << (p + 16)) == 0 {
            if let Some(t) = pushes.double[i] {
                won |= white_double_step(frame, caps, cfg, p, t[word(cfg)]) & !(1u64 << (p + 8));
            }
        }
    }
    won
}

/// Captures by the white pawn on `p`, onto black pieces and pawns; onto the last rank with
/// each promotion.
fn white_pawn_captures(frame: &Frame, caps: &Captures, cfg: &Config, p: Square) -> u64 {
    let pawns = &frame.pawns;
    let mut won = 0u64;
    let targets = pawn_attack_set(Color::White, 1 << p);
    for j in frame.n_white..frame.n_pieces() {
        let x = cfg.sq[j];
        if targets & (1 << x) == 0 {
            continue;
        }
        if promotes(Color::White, x) {
            let after = pawns_after(pawns, Some(p), None, None);
            for (r, role) in PROMOTIONS.iter().enumerate() {
                let new = Some((Color::White, *role));
                let (sqs, n) = squares_after(&frame.roles, frame.n_white, &cfg.sq, Some(j), None, new, x);
                won |= caps.promotion_capture[0][j][r].word(Color::Black, cfg.bk, &sqs[..n], &after, 0);
            }
        } else {
            let after = pawns_after(pawns, Some(p), Some(x), None);
            let (sqs, n) = after_capture(frame, cfg, j, None, x);
            won |= caps.by_piece[j].word(Color::Black, cfg.bk, &sqs[..n], &after, 0);
        }
    }
    if let Some(sub) = &caps.by_pawn[Color::Black.index()] {
        for &x in pawns.of(Color::Black) {
            if targets & (1 << x) != 0 {
                let after = pawns_after(pawns, Some(p), Some(x), Some(x));
                won |= sub.word(Color::Black, cfg.bk, &cfg.sq[..frame.n_pieces()], &after, 0);
            }
        }
    }
    won
}

/// The white king squares for which white's double step `p` to `p + 16` wins, given `lost`
/// (the target's final btm word, en passant left out): black's en-passant captures are
/// valued here, since stored positions never carry an en-passant square. Black loses iff
/// (`lost` or its only moves are en-passant captures) and every en-passant capture loses.
fn white_double_step(frame: &Frame, caps: &Captures, cfg: &Config, p: Square, lost: u64) -> u64 {
    let (mid, to) = (p + 8, p + 16);
    let after = pawns_after(&frame.pawns, Some(p), Some(to), None);
    let capturers: Vec<Square> = after
        .of(Color::Black)
        .iter()
        .copied()
        .filter(|&b| b / 8 == to / 8 && (b as i8 - to as i8).abs() == 1)
        .collect();
    if capturers.is_empty() {
        return lost;
    }
    let sub = caps.by_pawn[Color::White.index()].as_ref().expect("a white pawn can be captured");
    let occ = (cfg.occ & !(1 << p)) | 1 << to;
    let (mut all_lose, mut some_legal) = (!0u64, 0u64);
    for &b in &capturers {
        let ep = pawns_after(&after, Some(b), Some(mid), Some(to));
        let occ_ep = (occ & !(1 << b) & !(1 << to)) | 1 << mid;
        all_lose &= sub.word(Color::White, cfg.bk, &cfg.sq[..frame.n_pieces()], &ep, occ_ep);
        let wp = ep.occupied_by(Color::White);
        some_legal |= !white_attack_mask(frame.white_roles(), &cfg.sq, cfg.bk, None, occ_ep, wp);
    }
    let check = white_attack_mask(frame.white_roles(), &cfg.sq, cfg.bk, None, occ, after.occupied_by(Color::White));
    let open = all_lose & some_legal & !lost & !check;
    let only_ep = if open != 0 { open & !black_has_move(frame, cfg, &after, occ) } else { 0 };
    // The step is no move where it leaves the white king attacked (a pawn's check is not
    // parried by stepping past the checker: 8/8/8/8/1p6/KQ6/2P5/k7 w, where c2-c4 would
    // leave black only bxc3 e.p.). `lost` is 0 there already; the e.p.-only case is not.
    let black = frame.n_white..frame.n_pieces();
    let attacked =
        black_attack_set(&frame.roles[black.clone()], &cfg.sq[black], cfg.bk, occ, after.occupied_by(Color::Black));
    (lost | (only_ep & some_legal)) & all_lose & !attacked
}

/// The white king squares for which black, to move in the configuration `cfg` with pawns
/// `pawns` (occupancy `occ`, the white king not included), has a legal move other than an
/// en-passant capture.
fn black_has_move(frame: &Frame, cfg: &Config, pawns: &Pawns, occ: u64) -> u64 {
    let wp = pawns.occupied_by(Color::White);
    let bp = pawns.occupied_by(Color::Black);
    let mut black_occ = bp | 1 << cfg.bk;
    for k in frame.n_white..frame.n_pieces() {
        black_occ |= 1 << cfg.sq[k];
    }
    let white_piece_at = |x: Square| (0..frame.n_white).find(|&i| cfg.sq[i] == x);
    let mut any = 0u64;
    // King steps (capturing a white man, if any, on the target).
    let mut targets = king_attacks(cfg.bk) & !black_occ;
    while targets != 0 {
        let t = targets.trailing_zeros() as Square;
        targets &= targets - 1;
        let occ_k = occ & !(1 << cfg.bk);
        let safe = !white_attack_mask(frame.white_roles(), &cfg.sq, t, white_piece_at(t), occ_k, wp & !(1 << t));
        any |= safe & !(1u64 << t);
    }
    // Other pieces (a slider's ray is blocked by the white king in that bit).
    for j in frame.n_white..frame.n_pieces() {
        let from = cfg.sq[j];
        let role = frame.roles[j];
        let mut targets = attacks(role, from, occ) & !black_occ;
        while targets != 0 {
            let t = targets.trailing_zeros() as Square;
            targets &= targets - 1;
            let occ_m = (occ & !(1 << from)) | 1 << t;
            let mut sq = cfg.sq;
            sq[j] = t;
            let safe = !white_attack_mask(frame.white_roles(), &sq, cfg.bk, white_piece_at(t), occ_m, wp & !(1 << t));
            let path = if role.is_slider() { !between(from, t) } else { !0 };
            any |= safe & path & !(1u64 << t);
        }
    }
    any | black_pawn_moves(frame, cfg, pawns, occ)
}

/// The white king squares for which some move of a black pawn (push, double step, capture,
/// promotion; not en passant) is legal.
fn black_pawn_moves(frame: &Frame, cfg: &Config, pawns: &Pawns, occ: u64) -> u64 {
    let wp = pawns.occupied_by(Color::White);
    let white_piece_at = |x: Square| (0..frame.n_white).find(|&i| cfg.sq[i] == x);
    let mut any = 0u64;
    for &p in pawns.of(Color::Black) {
        let legal_after = |to: Square, captured: u64| {
            let occ_m = (occ & !(1 << p)) | 1 << to;
            let skip = if captured != 0 { white_piece_at(to) } else { None };
            !white_attack_mask(frame.white_roles(), &cfg.sq, cfg.bk, skip, occ_m, wp & !captured)
        };
        let one = p - 8;
        if occ & (1 << one) == 0 {
            any |= legal_after(one, 0) & !(1u64 << one);
            let two = p - 16;
            if start_rank(Color::Black, p) && occ & (1 << two) == 0 {
                any |= legal_after(two, 0) & !(1u64 << one) & !(1u64 << two);
            }
        }
        let mut targets = pawn_attack_set(Color::Black, 1 << p) & occ;
        while targets != 0 {
            let t = targets.trailing_zeros() as Square;
            targets &= targets - 1;
            if white_piece_at(t).is_some() || wp & (1 << t) != 0 {
                any |= legal_after(t, 1 << t);
            }
        }
    }
    any
}

/// Fills `d` and `t0` for every configuration of a black chunk. On entry `d` holds, per
/// word, the positions where every non-capturing black piece or king move is illegal (the
/// black kernel applied to the illegal-wtm table); it is replaced in place. `t0` must start
/// as zeros.
pub fn init_black(frame: &Frame, caps: &Captures, pushes: &PushTargets, d: &mut [u64], t0: &mut [u64]) {
    let wp = frame.pawns.occupied_by(Color::White);
    // Words of configurations with two men on a square stay: they are cleared below.
    let mut seen = vec![false; d.len()];
    frame.for_each_config(None, false, &mut |cfg| {
        let w = word(cfg);
        let att = attack_sets(frame, cfg, 0..frame.n_pieces());
        let black_pieces = att[frame.n_white..frame.n_pieces()].iter().copied();
        let black_att = black_attack_union(cfg.bk, frame.pawns.occupied_by(Color::Black), black_pieces);
        let legal = !(cfg.occ | black_att);
        let in_check = white_attack_mask_of(frame.white_roles(), &cfg.sq, &att, cfg.bk, wp);
        let mut captures_lose = !0u64;
        let mut legal_capture = 0u64;
        for i in 0..frame.n_white {
            let x = cfg.sq[i];
            let sub = &caps.by_piece[i];
            // The black king captures.
            if king_attacks(cfg.bk) & (1 << x) != 0 {
                let occ = cfg.occ & !(1 << cfg.bk);
                legal_capture |= !white_attack_mask(frame.white_roles(), &cfg.sq, x, Some(i), occ, wp);
                let (sqs, n) = after_capture(frame, cfg, i, None, x);
                captures_lose &= sub.word(Color::White, x, &sqs[..n], &frame.pawns, occ);
            }
            // A black piece captures.
            for (j, &a) in att.iter().enumerate().take(frame.n_pieces()).skip(frame.n_white) {
                let from = cfg.sq[j];
                if a & (1 << x) == 0 {
                    continue;
                }
                let occ = cfg.occ & !(1 << from);
                legal_capture |= !white_attack_mask(frame.white_roles(), &cfg.sq, cfg.bk, Some(i), occ, wp);
                let (sqs, n) = after_capture(frame, cfg, i, Some(j), x);
                captures_lose &= sub.word(Color::White, cfg.bk, &sqs[..n], &frame.pawns, occ);
            }
        }
        if frame.pawns.n > 0 {
            let (lose, moves) = black_pawn_conversions(frame, caps, pushes, cfg);
            captures_lose &= lose;
            legal_capture |= moves;
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

/// Black's conversions that involve pawns, in one configuration: the AND over them of the
/// results (won for white with a fresh counter), and the white king squares where one of
/// them is legal.
fn black_pawn_conversions(frame: &Frame, caps: &Captures, pushes: &PushTargets, cfg: &Config) -> (u64, u64) {
    let pawns = &frame.pawns;
    let mut lose = !0u64;
    // The king and the pieces capture a white pawn.
    if let Some(sub) = &caps.by_pawn[Color::White.index()] {
        for &x in pawns.of(Color::White) {
            let after = pawns_after(pawns, Some(x), None, None);
            if king_attacks(cfg.bk) & (1 << x) != 0 {
                let occ = cfg.occ & !(1 << cfg.bk);
                lose &= sub.word(Color::White, x, &cfg.sq[..frame.n_pieces()], &after, occ);
            }
            for j in frame.n_white..frame.n_pieces() {
                let from = cfg.sq[j];
                if attacks(frame.roles[j], from, cfg.occ) & (1 << x) != 0 {
                    let occ = cfg.occ & !(1 << from);
                    let (sqs, n) = squares_after(&frame.roles, frame.n_white, &cfg.sq, None, Some(j), None, x);
                    lose &= sub.word(Color::White, cfg.bk, &sqs[..n], &after, occ);
                }
            }
        }
    }
    for (i, &p) in pawns.of(Color::Black).iter().enumerate() {
        lose &= black_pawn_captures(frame, caps, cfg, p);
        let to = p - 8;
        if cfg.occ & (1 << to) != 0 {
            continue;
        }
        if promotes(Color::Black, to) {
            let promos = caps.promotion[1].as_ref().expect("black pawns promote");
            let after = pawns_after(pawns, Some(p), None, None);
            let occ = (cfg.occ & !(1 << p)) | 1 << to;
            for (r, role) in PROMOTIONS.iter().enumerate() {
                let new = Some((Color::Black, *role));
                let (sqs, n) = squares_after(&frame.roles, frame.n_white, &cfg.sq, None, None, new, to);
                lose &= promos[r].word(Color::White, cfg.bk, &sqs[..n], &after, occ);
            }
            continue;
        }
        // Blocked or illegal pushes land on broken or illegal targets (1).
        if let Some(t) = pushes.single[i] {
            lose &= t[word(cfg)];
        }
        if start_rank(Color::Black, p) && cfg.occ & (1 << (p - 16)) == 0 {
            if let Some(t) = pushes.double[i] {
                lose &= black_double_step(frame, caps, cfg, p, t[word(cfg)]) | (1u64 << to);
            }
        }
    }
    let moves = black_pawn_moves(frame, cfg, pawns, cfg.occ) | black_takes_white_pawn(frame, cfg, pawns);
    (lose, moves)
}

/// The white king squares for which the black king or a black piece may legally capture a
/// white pawn.
fn black_takes_white_pawn(frame: &Frame, cfg: &Config, pawns: &Pawns) -> u64 {
    let wp = pawns.occupied_by(Color::White);
    let mut any = 0u64;
    for &x in pawns.of(Color::White) {
        let rest = wp & !(1 << x);
        if king_attacks(cfg.bk) & (1 << x) != 0 {
            let occ = cfg.occ & !(1 << cfg.bk);
            any |= !white_attack_mask(frame.white_roles(), &cfg.sq, x, None, occ, rest);
        }
        for j in frame.n_white..frame.n_pieces() {
            let from = cfg.sq[j];
            if attacks(frame.roles[j], from, cfg.occ) & (1 << x) != 0 {
                let occ = cfg.occ & !(1 << from);
                any |= !white_attack_mask(frame.white_roles(), &cfg.sq, cfg.bk, None, occ, rest);
            }
        }
    }
    any
}

/// Captures by the black pawn on `p`: the AND over them of the results (wtm, `t99`); onto
/// the first rank with each promotion (black chooses, so every promotion must lose).
fn black_pawn_captures(frame: &Frame, caps: &Captures, cfg: &Config, p: Square) -> u64 {
    let pawns = &frame.pawns;
    let mut lose = !0u64;
    let targets = pawn_attack_set(Color::Black, 1 << p);
    for i in 0..frame.n_white {
        let x = cfg.sq[i];
        if targets & (1 << x) == 0 {
            continue;
        }
        let occ = cfg.occ & !(1 << p);
        if promotes(Color::Black, x) {
            let after = pawns_after(pawns, Some(p), None, None);
            for (r, role) in PROMOTIONS.iter().enumerate() {
                let new = Some((Color::Black, *role));
                let (sqs, n) = squares_after(&frame.roles, frame.n_white, &cfg.sq, Some(i), None, new, x);
                lose &= caps.promotion_capture[1][i][r].word(Color::White, cfg.bk, &sqs[..n], &after, occ);
            }
        } else {
            let after = pawns_after(pawns, Some(p), Some(x), None);
            let (sqs, n) = after_capture(frame, cfg, i, None, x);
            lose &= caps.by_piece[i].word(Color::White, cfg.bk, &sqs[..n], &after, occ);
        }
    }
    if let Some(sub) = &caps.by_pawn[Color::White.index()] {
        for &x in pawns.of(Color::White) {
            if targets & (1 << x) != 0 {
                let after = pawns_after(pawns, Some(p), Some(x), Some(x));
                let occ = cfg.occ & !(1 << p);
                lose &= sub.word(Color::White, cfg.bk, &cfg.sq[..frame.n_pieces()], &after, occ);
            }
        }
    }
    lose
}

/// The white king squares for which black's double step `p` to `p - 16` leads to a white
/// win, given `won` (the target's final wtm word, en passant left out): white may also
/// capture en passant, which is valued here.
fn black_double_step(frame: &Frame, caps: &Captures, cfg: &Config, p: Square, won: u64) -> u64 {
    let (mid, to) = (p - 8, p - 16);
    let after = pawns_after(&frame.pawns, Some(p), Some(to), None);
    let sub = match &caps.by_pawn[Color::Black.index()] {
        Some(s) => s,
        None => return won,
    };
    let mut won = won;
    for &wpawn in after.of(Color::White) {
        if wpawn / 8 != to / 8 || (wpawn as i8 - to as i8).abs() != 1 {
            continue;
        }
        let ep = pawns_after(&after, Some(wpawn), Some(mid), Some(to));
        won |= sub.word(Color::Black, cfg.bk, &cfg.sq[..frame.n_pieces()], &ep, 0);
    }
    won
}

/// Fills the illegal-btm word of every configuration (`out` starts as all ones).
pub fn illegal_btm(frame: &Frame, out: &mut [u64]) {
    frame.for_each_config(None, false, &mut |cfg| {
        out[word(cfg)] = cfg.occ | black_attacks(frame, cfg);
    });
}
