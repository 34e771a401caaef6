//! Blocks whose don't-cares take the values zstd's matches copy into them.
//!
//! No reader looks at a don't-care of a block (in a distance block a position that is not a
//! win, a dropped twin, a win by a zeroing move: whole bytes; in a class block an illegal or
//! dropped position: single bits of the planes), so the writer may store anything there. A
//! mask per byte says which bits are known. Filled with the value before them, zstd's matches
//! stop at the first don't-care that differs from the bytes they copy. Here zstd parses the
//! filled block first, which offers offsets; a second parse weighs, at each position, zstd's
//! offsets there and a little ahead, the repeat offsets and the offsets used lately, each
//! match running on while the bits it copies agree with the *known* ones (the don't-cares it
//! crosses become the copied bits), and looks one byte ahead before it takes a match (lazy
//! matching). zstd's own entropy stage then codes those sequences (`ZSTD_compressSequences`).
//! The result is a plain zstd frame: readers are unchanged. KQRvKR's and KRBvKR's distance
//! sections 0.81x the fill's, the four pawnless runs' class sections 0.72x
//! (docs/BENCHMARKS.md, 2026-12-06).

use super::codec::{decompress, MIN_MATCH};
use std::cell::RefCell;
use std::io;
use std::ptr::NonNull;
use zstd_sys as z;

/// The bytes a match must agree on before it starts (4 measured best of 3 to 6).
const MIN_START: usize = 4;

/// A zstd compression context, freed when dropped.
struct Context(NonNull<z::ZSTD_CCtx>);

impl Context {
    fn new() -> io::Result<Self> {
        // SAFETY: ZSTD_createCCtx has no preconditions; a null result is an allocation failure.
        NonNull::new(unsafe { z::ZSTD_createCCtx() })
            .map(Context)
            .ok_or_else(|| io::Error::other("no memory for a zstd context"))
    }

    /// Resets every parameter, then sets the level and the minimum match.
    fn reset(&mut self, level: i32, min_match: usize) -> io::Result<()> {
        let cctx = self.0.as_ptr();
        // SAFETY: `cctx` is a live context owned by `self`.
        unsafe {
            check(z::ZSTD_CCtx_reset(cctx, z::ZSTD_ResetDirective::ZSTD_reset_session_and_parameters))?;
            check(z::ZSTD_CCtx_setParameter(cctx, z::ZSTD_cParameter::ZSTD_c_compressionLevel, level))?;
            check(z::ZSTD_CCtx_setParameter(cctx, z::ZSTD_cParameter::ZSTD_c_minMatch, min_match as i32))?;
        }
        Ok(())
    }

    /// zstd's own parse of `bytes` (the writer's level and minimum match): for each position
    /// the offset its match copies it with, 0 for a literal.
    fn plan(&mut self, bytes: &[u8], level: i32) -> io::Result<Vec<u32>> {
        self.reset(level, MIN_MATCH as usize)?;
        let empty = z::ZSTD_Sequence { offset: 0, litLength: 0, matchLength: 0, rep: 0 };
        // SAFETY: ZSTD_sequenceBound is a pure function of the size.
        let mut seqs = vec![empty; unsafe { z::ZSTD_sequenceBound(bytes.len()) }];
        // SAFETY: `seqs` has room for the bound zstd asks for, `bytes` is the source.
        let n = check(unsafe {
            z::ZSTD_generateSequences(
                self.0.as_ptr(),
                seqs.as_mut_ptr(),
                seqs.len(),
                bytes.as_ptr().cast(),
                bytes.len(),
            )
        })?;
        // SAFETY: the first `n` sequences were written above.
        let n = unsafe { z::ZSTD_mergeBlockDelimiters(seqs.as_mut_ptr(), n) };
        let mut plan = vec![0u32; bytes.len()];
        let mut at = 0usize;
        for s in &seqs[..n] {
            at += s.litLength as usize;
            let end = at + s.matchLength as usize;
            plan.get_mut(at..end).ok_or_else(|| io::Error::other("zstd's sequences overrun the block"))?.fill(s.offset);
            at = end;
        }
        Ok(plan)
    }

    /// One zstd frame of `bytes` coded with `seqs` (the bytes after the last match literals).
    fn frame(&mut self, bytes: &[u8], seqs: &[z::ZSTD_Sequence], level: i32) -> io::Result<Vec<u8>> {
        self.reset(level, MIN_START)?;
        // SAFETY: a pure function of the size.
        let mut out = vec![0u8; unsafe { z::ZSTD_compressBound(bytes.len()) }];
        // SAFETY: `out` has compressBound bytes; `seqs` cover at most `bytes` (built by `parse`).
        let n = check(unsafe {
            z::ZSTD_compressSequences(
                self.0.as_ptr(),
                out.as_mut_ptr().cast(),
                out.len(),
                seqs.as_ptr(),
                seqs.len(),
                bytes.as_ptr().cast(),
                bytes.len(),
            )
        })?;
        out.truncate(n);
        Ok(out)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: the context was created by ZSTD_createCCtx and is freed once.
        unsafe { z::ZSTD_freeCCtx(self.0.as_ptr()) };
    }
}

/// A zstd result as a size or an error with zstd's message.
fn check(code: usize) -> io::Result<usize> {
    // SAFETY: ZSTD_isError accepts any code.
    if unsafe { z::ZSTD_isError(code) } != 0 {
        return Err(io::Error::other(format!("zstd: {}", zstd::zstd_safe::get_error_name(code))));
    }
    Ok(code)
}

thread_local! {
    /// One context per thread, reused by every block it packs.
    static CONTEXT: RefCell<Option<(Context, Scratch)>> = const { RefCell::new(None) };
}

/// Bytes `at..at + 8` read little-endian (block bytes, copied bytes and masks alike).
#[inline]
fn le64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
}

/// Bytes `at..at + 4` read little-endian.
#[inline]
fn le32(bytes: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(bytes[at..at + 4].try_into().expect("4 bytes"))
}

/// Costs in bits, roughly zstd's: what a literal costs, a match with each of the last three
/// offsets, and a new offset beyond its bit length.
struct Costs {
    literal: f64,
    rep: [f64; 3],
    new_offset: f64,
}

/// The costs the parse weighs (measured on KQRvKR's and KRBvKR's distances: a literal at 3
/// bits 0.4% smaller than at 4, new offsets at 3 or 9 bits 0.3-0.9% larger than at 6).
const COSTS: Costs = Costs { literal: 3.0, rep: [1.0, 2.5, 3.0], new_offset: 6.0 };

/// The level whose entropy stage codes the sequences (they are chosen already, so it costs
/// little): 19 codes KQRvKR's and KRBvKR's distances 0.6% smaller than 8.
const ENTROPY_LEVEL: i32 = 19;

/// How far a trial follows a match: the one chosen is then followed to its end (4096 bytes
/// cost 0.04% in size on KQRvKR's and KRBvKR's sections and spare 8% of the parse's work).
const TRIAL_CAP: usize = 4096;

/// How many of the plan's next offsets are tried, and how many recent new offsets (8 and 8
/// made class blocks 3% larger for a fifth less parse time; KRPvKR's build time stayed
/// within its rounds' spread).
const WINDOW: usize = 16;
const RECENT_NEW: usize = 24;

/// One offset tried at a position and how far its match runs from there.
#[derive(Clone, Copy)]
struct Trial {
    offset: usize,
    len: usize,
}

/// The state of the second parse.
struct Parser<'a> {
    filled: &'a [u8],
    mask: &'a [u8],
    plan: &'a [u32],
    /// The bytes decided so far; beyond the position being parsed, scratch.
    out: Vec<u8>,
    /// zstd's repeat offsets, the last used first.
    recent: [usize; 3],
    /// New offsets used lately (a ring), tried again wherever the plan does not offer them.
    used: [usize; RECENT_NEW],
    /// Per offset, the call of `best_at` that last tried it and how far it ran then.
    tried: &'a mut [u32],
    lens: &'a mut [u32],
    /// Calls of `best_at` so far (kept across blocks, so `tried` needs no clearing).
    call: &'a mut u32,
}

impl Parser<'_> {
    /// How far a match with `off` runs from `p`, at most `cap` bytes, its copied bytes
    /// written into `out[p..]`.
    fn extend(&mut self, p: usize, off: usize, cap: usize) -> usize {
        let (filled, mask, out) = (self.filled, self.mask, &mut self.out);
        let n = self.filled.len().min(p.saturating_add(cap));
        let mut q = p;
        if off >= 8 {
            while q + 8 <= n {
                let src = le64(out, q - off);
                let diff = (src ^ le64(filled, q)) & le64(mask, q);
                if diff != 0 {
                    let k = diff.trailing_zeros() as usize / 8;
                    out[q..q + k].copy_from_slice(&src.to_le_bytes()[..k]);
                    return q + k - p;
                }
                out[q..q + 8].copy_from_slice(&src.to_le_bytes());
                q += 8;
            }
        }
        while q < n {
            let b = out[q - off];
            if (filled[q] ^ b) & mask[q] != 0 {
                break;
            }
            out[q] = b;
            q += 1;
        }
        q - p
    }

    /// Whether the bytes up to `p + len` that a match with `off` copies (all decided: `off >
    /// len`) agree with the known ones over its last 8 (or fewer): a quick test that the match
    /// does not stop short of `len`.
    fn reaches(&self, p: usize, off: usize, len: usize) -> bool {
        let end = p + len;
        (end.saturating_sub(8).max(p)..end).all(|q| (self.out[q - off] ^ self.filled[q]) & self.mask[q] == 0)
    }

    /// The cost of coding offset `off` now.
    fn offset_cost(&self, off: usize) -> f64 {
        match self.recent.iter().position(|&r| r == off) {
            Some(k) => COSTS.rep[k],
            None => COSTS.new_offset + (usize::BITS - off.leading_zeros()) as f64,
        }
    }

    /// The best match from `p` as (trial, score). With `after_literal` (a literal was put at
    /// `p - 1` after the last call looked from there), a match that ran `len >= 1` from
    /// `p - 1` with an offset beyond `len` runs `len - 1` from `p`: it never reached the
    /// changed byte.
    fn best_at(&mut self, p: usize, after_literal: bool) -> Option<(Trial, f64)> {
        let n = self.filled.len();
        let before = *self.call;
        *self.call += 1;
        let call = *self.call;
        if p + MIN_START > n {
            return None;
        }
        let mut best: Option<(Trial, f64)> = None;
        let mut try_offset = |parser: &mut Self, off: usize| {
            if parser.tried[off] == call {
                return;
            }
            let cost = parser.offset_cost(off);
            // A candidate no cheaper than the best so far wins only by running further: skip
            // it when the best runs as far as a trial may, or when it disagrees before then.
            if let Some((b, s)) = best {
                if cost >= b.len as f64 * COSTS.literal - s
                    && (b.len >= TRIAL_CAP.min(n - p) || (off > b.len + 1 && !parser.reaches(p, off, b.len + 1)))
                {
                    return;
                }
            }
            let known_len = parser.lens[off] as usize;
            let len = if after_literal && parser.tried[off] == before && known_len >= 1 && off > known_len {
                known_len - 1
            } else {
                parser.extend(p, off, TRIAL_CAP)
            };
            parser.tried[off] = call;
            parser.lens[off] = len as u32;
            if len >= MIN_START {
                let score = len as f64 * COSTS.literal - cost;
                if best.is_none_or(|(_, s)| score > s) {
                    best = Some((Trial { offset: off, len }, score));
                }
            }
        };
        // The candidates in the order they are weighed. Most fail within a match's first
        // bytes (a stretch of literals tries every one), which a word compare settles first.
        let mut candidates = [0u32; 3 + WINDOW + RECENT_NEW];
        let mut m = 0;
        {
            let (out, here, mask) = (&self.out[..p], le32(self.filled, p), le32(self.mask, p));
            let mut keep = |off: u32| {
                let o = off as usize;
                if o != 0 && o <= p && (o < MIN_START || (le32(out, p - o) ^ here) & mask == 0) {
                    candidates[m] = off;
                    m += 1;
                }
            };
            for &off in &self.recent {
                keep(off as u32);
            }
            let mut last = 0;
            for &off in &self.plan[p..(p + WINDOW).min(n)] {
                if off != last {
                    keep(off);
                    last = off;
                }
            }
            for &off in &self.used {
                keep(off as u32);
            }
        }
        for &off in &candidates[..m] {
            try_offset(self, off as usize);
        }
        best
    }

    /// Notes that a match with `off` was coded.
    fn used_offset(&mut self, off: usize) {
        match self.recent.iter().position(|&r| r == off) {
            Some(k) => self.recent[..=k].rotate_right(1),
            None => self.recent = [off, self.recent[0], self.recent[1]],
        }
        if !self.used.contains(&off) {
            self.used.rotate_right(1);
            self.used[0] = off;
        }
    }
}

/// A thread's memory for parsing, reused by every block it packs.
#[derive(Default)]
struct Scratch {
    tried: Vec<u32>,
    lens: Vec<u32>,
    call: u32,
}

impl Scratch {
    /// Room for a block of `n` bytes, and calls enough left for it (at most two per byte).
    fn make_room(&mut self, n: usize) {
        if self.tried.len() <= n {
            self.tried.resize(n + 1, 0);
            self.lens.resize(n + 1, 0);
        }
        if self.call as u64 + 2 * n as u64 + 2 >= u32::MAX as u64 {
            self.tried.fill(0);
            self.call = 0;
        }
    }
}

/// Whether `back` holds `filled`'s known bits.
fn agrees(back: &[u8], filled: &[u8], mask: &[u8]) -> bool {
    if back.len() != filled.len() {
        return false;
    }
    let whole = filled.len() / 8 * 8;
    let head = (0..whole).step_by(8).all(|q| (le64(back, q) ^ le64(filled, q)) & le64(mask, q) == 0);
    head && (whole..filled.len()).all(|p| (back[p] ^ filled[p]) & mask[p] == 0)
}

/// The bytes the frame will decode to and the sequences coding them. At each position the
/// match that saves most (its length in literals' bits less its offset's cost) among zstd's
/// offsets at the next positions, the repeat offsets and the offsets used lately, running
/// while the bits it copies agree with the known ones; taken unless the best match one
/// byte later saves more than a literal costs (lazy matching). A literal keeps the filled
/// byte.
fn parse(filled: &[u8], mask: &[u8], plan: &[u32], scratch: &mut Scratch) -> (Vec<u8>, Vec<z::ZSTD_Sequence>) {
    let n = filled.len();
    scratch.make_room(n);
    let mut parser = Parser {
        filled,
        mask,
        plan,
        out: vec![0u8; n],
        recent: [1, 4, 8],
        used: [0; RECENT_NEW],
        tried: &mut scratch.tried,
        lens: &mut scratch.lens,
        call: &mut scratch.call,
    };
    let mut seqs = Vec::new();
    // The best match at `p` when it was found as the lazy look one byte ahead.
    let mut ahead: Option<Option<(Trial, f64)>> = None;
    let mut after_literal = false;
    let (mut literals_from, mut p) = (0usize, 0usize);
    while p < n {
        let here = match ahead.take() {
            Some(found) => found,
            None => parser.best_at(p, after_literal),
        };
        let Some((chosen, score)) = here else {
            parser.out[p] = filled[p];
            after_literal = true;
            p += 1;
            continue;
        };
        if p + 1 < n {
            parser.out[p] = filled[p];
            let next = parser.best_at(p + 1, true);
            if next.is_some_and(|(_, s)| s - COSTS.literal > score) {
                ahead = Some(next);
                after_literal = true;
                p += 1;
                continue;
            }
        }
        after_literal = false;
        // The trials left scratch behind: copy the chosen match's bytes again.
        let len = parser.extend(p, chosen.offset, usize::MAX);
        debug_assert!(len >= chosen.len);
        seqs.push(z::ZSTD_Sequence {
            offset: chosen.offset as u32,
            litLength: (p - literals_from) as u32,
            matchLength: len as u32,
            rep: 0,
        });
        parser.used_offset(chosen.offset);
        p += len;
        literals_from = p;
    }
    (parser.out, seqs)
}

/// The zstd frame of a block: `filled` holds every known bit (those set in `mask`, a byte per
/// byte) and the value before them at the don't-cares; the frame decodes to the same known
/// bits and chosen ones elsewhere. Checked by decoding before it is returned.
pub fn pack_masked(filled: &[u8], mask: &[u8], level: i32) -> io::Result<Vec<u8>> {
    if mask.len() != filled.len() {
        return Err(io::Error::other("a block's mask is not as long as the block"));
    }
    let packed = CONTEXT.with(|c| -> io::Result<Vec<u8>> {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = Some((Context::new()?, Scratch::default()));
        }
        let (ctx, scratch) = c.as_mut().expect("a context");
        let plan = ctx.plan(filled, level)?;
        let (bytes, seqs) = parse(filled, mask, &plan, scratch);
        ctx.frame(&bytes, &seqs, ENTROPY_LEVEL)
    })?;
    if !agrees(&decompress(&packed, filled.len())?, filled, mask) {
        return Err(io::Error::other("the masked frame does not decode to the block's known bits"));
    }
    Ok(packed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::compact::pack_block;

    /// A block of distance codes with long repeats, a share of don't-cares filled with the
    /// value before them, and its mask.
    fn block(seed: u64, dont_care_per_mille: u64) -> (Vec<u8>, Vec<u8>) {
        let mut state = seed;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            state >> 33
        };
        let words: Vec<[u8; 64]> = (0..8).map(|_| std::array::from_fn(|_| (next() % 12) as u8 + 1)).collect();
        let n = 1 << 16;
        let mut bytes = Vec::with_capacity(n);
        while bytes.len() < n {
            let w = &words[(next() % 8) as usize];
            bytes.extend_from_slice(&w[..(next() % 64 + 1) as usize]);
        }
        bytes.truncate(n);
        let mut mask = vec![0u8; n];
        for p in 0..n {
            if next() % 1000 >= dont_care_per_mille {
                mask[p] = 0xff;
            } else {
                bytes[p] = if p > 0 { bytes[p - 1] } else { 0 };
            }
        }
        (bytes, mask)
    }

    #[test]
    fn keeps_every_known_byte_and_gains_from_dont_cares() {
        for (seed, share) in [(1, 0), (2, 300), (3, 700), (4, 1000)] {
            let (bytes, mask) = block(seed, share);
            let masked = pack_masked(&bytes, &mask, 8).unwrap();
            // A frame like any other: its content size in its header (docs/FORMAT.md).
            assert_eq!(zstd::zstd_safe::get_frame_content_size(&masked).ok(), Some(Some(bytes.len() as u64)));
            let back = decompress(&masked, bytes.len()).unwrap();
            assert_eq!(back.len(), bytes.len());
            for p in 0..bytes.len() {
                if mask[p] != 0 {
                    assert_eq!(back[p], bytes[p], "seed {seed}, byte {p}");
                }
            }
            let plain = pack_block(&bytes, None, 8).unwrap();
            // (Not at every share: with most bytes don't-cares the fill's runs already code well.)
            if share == 300 {
                assert!(masked.len() < plain.len(), "seed {seed}: {} against {}", masked.len(), plain.len());
            }
        }
    }

    /// Bytes whose don't-cares are single bits (class blocks' bit planes), holding noise: every
    /// known bit comes back, and the frame is smaller than the noisy block's own.
    #[test]
    fn keeps_every_known_bit() {
        let (clean, _) = block(7, 0);
        let mut state = 99u64;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 40) as u8
        };
        let mask: Vec<u8> = (0..clean.len()).map(|_| next() | next()).collect();
        let bytes: Vec<u8> = clean.iter().zip(&mask).map(|(&b, &m)| b ^ (next() & !m)).collect();
        let masked = pack_masked(&bytes, &mask, 8).unwrap();
        let back = decompress(&masked, bytes.len()).unwrap();
        for p in 0..bytes.len() {
            assert_eq!((back[p] ^ bytes[p]) & mask[p], 0, "byte {p}");
        }
        let plain = pack_block(&bytes, None, 8).unwrap();
        assert!(masked.len() < plain.len(), "{} against {}", masked.len(), plain.len());
    }

    #[test]
    fn every_byte_known_stays_the_same_bytes() {
        let (bytes, _) = block(5, 0);
        let all = vec![0xff; bytes.len()];
        let masked = pack_masked(&bytes, &all, 8).unwrap();
        assert_eq!(decompress(&masked, bytes.len()).unwrap(), bytes);
    }

    #[test]
    fn a_short_mask_is_an_error() {
        let (bytes, mask) = block(6, 100);
        assert!(pack_masked(&bytes, &mask[..10], 8).is_err());
    }
}
