//! Distance blocks whose don't-cares take the values zstd's matches copy into them.
//!
//! No reader looks at a don't-care byte of a distance block (a position that is not a win, a
//! dropped twin, a win by a zeroing move), so the writer may store anything there. Filled with
//! the win before them, zstd's matches stop at the first don't-care that differs from the bytes
//! they copy. Here zstd parses the filled block first; a second parse follows its choices of
//! offset but lets every match run on while the bytes it copies agree with the *known* ones,
//! so the don't-cares it crosses become the copied bytes; zstd's own entropy stage then codes
//! those sequences (`ZSTD_compressSequences`). The result is a plain zstd frame: readers are
//! unchanged. KQRvKR's and KRBvKR's distance sections 0.93x, at about twice the distance
//! blocks' compression time (docs/BENCHMARKS.md, 2026-12-06).

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
    // SAFETY: ZSTD_isError and ZSTD_getErrorName accept any code; the name is a static string.
    if unsafe { z::ZSTD_isError(code) } != 0 {
        let name = unsafe { std::ffi::CStr::from_ptr(z::ZSTD_getErrorName(code)) };
        return Err(io::Error::other(format!("zstd: {}", name.to_string_lossy())));
    }
    Ok(code)
}

thread_local! {
    /// One context per thread, reused by every block it packs.
    static CONTEXT: RefCell<Option<Context>> = const { RefCell::new(None) };
}

/// Whether byte `p` is known (a reader may read it).
#[inline]
fn is_known(known: &[u64], p: usize) -> bool {
    known[p >> 6] >> (p & 63) & 1 != 0
}

/// The bytes the frame will decode to and the sequences coding them. At each position a match
/// starts with the offset zstd's `plan` copies it with, else with one of the last three
/// offsets, if its first [`MIN_START`] bytes agree with the known ones; it then runs while
/// they do. A literal keeps the filled byte.
fn parse(filled: &[u8], known: &[u64], plan: &[u32]) -> (Vec<u8>, Vec<z::ZSTD_Sequence>) {
    let n = filled.len();
    let mut out = vec![0u8; n];
    let mut seqs = Vec::new();
    let mut recent = [1usize, 4, 8];
    let (mut literals_from, mut p) = (0usize, 0usize);
    while p < n {
        let candidates = [plan[p] as usize, recent[0], recent[1], recent[2]];
        let offset = candidates.into_iter().find(|&off| {
            if off == 0 || off > p || p + MIN_START > n {
                return false;
            }
            // Bytes from `p` on are scratch until decided: an overlapping match reads its own.
            (p..p + MIN_START).all(|q| {
                out[q] = out[q - off];
                !is_known(known, q) || filled[q] == out[q]
            })
        });
        let Some(offset) = offset else {
            out[p] = filled[p];
            p += 1;
            continue;
        };
        let start = p;
        while p < n && (!is_known(known, p) || filled[p] == out[p - offset]) {
            out[p] = out[p - offset];
            p += 1;
        }
        match recent.iter().position(|&r| r == offset) {
            Some(k) => recent[..=k].rotate_right(1),
            None => recent = [offset, recent[0], recent[1]],
        }
        seqs.push(z::ZSTD_Sequence {
            offset: offset as u32,
            litLength: (start - literals_from) as u32,
            matchLength: (p - start) as u32,
            rep: 0,
        });
        literals_from = p;
    }
    (out, seqs)
}

/// The zstd frame of a distance block: `filled` holds every known byte (bit `p` of `known`)
/// and the win before them at the don't-cares; the frame decodes to the same known bytes and
/// chosen ones elsewhere. Checked by decoding before it is returned.
pub fn pack_masked(filled: &[u8], known: &[u64], level: i32) -> io::Result<Vec<u8>> {
    if known.len() * 64 < filled.len() {
        return Err(io::Error::other("a distance block's mask is shorter than the block"));
    }
    let packed = CONTEXT.with(|c| -> io::Result<Vec<u8>> {
        let mut c = c.borrow_mut();
        if c.is_none() {
            *c = Some(Context::new()?);
        }
        let ctx = c.as_mut().expect("a context");
        let plan = ctx.plan(filled, level)?;
        let (bytes, seqs) = parse(filled, known, &plan);
        ctx.frame(&bytes, &seqs, level)
    })?;
    let back = decompress(&packed, filled.len())?;
    if back.len() != filled.len() || (0..filled.len()).any(|p| is_known(known, p) && back[p] != filled[p]) {
        return Err(io::Error::other("the masked frame does not decode to the block's known bytes"));
    }
    Ok(packed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::compact::pack_block;

    /// A block of distance codes with long repeats, a share of don't-cares filled with the
    /// value before them, and its mask.
    fn block(seed: u64, dont_care_per_mille: u64) -> (Vec<u8>, Vec<u64>) {
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
        let mut known = vec![0u64; n / 64];
        for p in 0..n {
            if next() % 1000 >= dont_care_per_mille {
                known[p / 64] |= 1 << (p % 64);
            } else {
                bytes[p] = if p > 0 { bytes[p - 1] } else { 0 };
            }
        }
        (bytes, known)
    }

    #[test]
    fn keeps_every_known_byte_and_gains_from_dont_cares() {
        for (seed, share) in [(1, 0), (2, 300), (3, 700), (4, 1000)] {
            let (bytes, known) = block(seed, share);
            let masked = pack_masked(&bytes, &known, 8).unwrap();
            // A frame like any other: its content size in its header (docs/FORMAT.md).
            assert_eq!(zstd::zstd_safe::get_frame_content_size(&masked).ok(), Some(Some(bytes.len() as u64)));
            let back = decompress(&masked, bytes.len()).unwrap();
            assert_eq!(back.len(), bytes.len());
            for p in 0..bytes.len() {
                if is_known(&known, p) {
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

    #[test]
    fn every_byte_known_stays_the_same_bytes() {
        let (bytes, _) = block(5, 0);
        let all = vec![!0u64; bytes.len() / 64];
        let masked = pack_masked(&bytes, &all, 8).unwrap();
        assert_eq!(decompress(&masked, bytes.len()).unwrap(), bytes);
    }

    #[test]
    fn a_short_mask_is_an_error() {
        let (bytes, known) = block(6, 100);
        assert!(pack_masked(&bytes, &known[..10], 8).is_err());
    }
}
