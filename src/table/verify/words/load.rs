//! What the word verifier holds whole: the sub-endgames' values of the side a conversion
//! leads to, loaded block by block: a byte of code per position for pawnless runs, the two
//! class bits for runs with pawns (whose promotions reach 6-men tables of 10^10 positions);
//! and, with pawns, the classes of the slices a pawn move reaches.

use super::lanes::{code_of_class, lanes_of_classes, Lanes};
use crate::chess::{Color, Material, Role};
use crate::index::{illegal_word, Layout};
use crate::pipeline::{self, Order};
use crate::table::cache::random_access_buffer;
use crate::table::codes::CodeSource;
use crate::table::compact::{planes_at, CompactTable, Part, WDL_BLOCK_BITS, WDL_WORD_BYTES};
use crate::table::error::TableError;
use crate::table::values::{Class, CODE_ILLEGAL};
use crate::table::verify::open_compact;
use memmap2::MmapMut;
use std::ops::Range;
use std::path::Path;

/// A successor run's values of the side to move a conversion leads to.
pub(super) struct Sub {
    pub(super) layout: Layout,
    values: SubValues,
}

enum SubValues {
    /// A byte of code per slot.
    Codes(MmapMut),
    /// The class planes of every word ([`WDL_WORD_BYTES`] a word), and the side to move.
    Classes(MmapMut, Color),
}

impl Sub {
    /// The 64 codes of storage word `w` (classes read as [`lanes_of_classes`] gives them).
    #[inline]
    pub(super) fn word(&self, w: usize) -> Lanes {
        match &self.values {
            SubValues::Codes(codes) => codes[64 * w..64 * w + 64].try_into().expect("a word"),
            SubValues::Classes(planes, stm) => lanes_of_classes(planes_at(planes, w), *stm),
        }
    }

    /// The code of one slot.
    #[inline]
    pub(super) fn code(&self, slot: u64) -> u8 {
        match &self.values {
            SubValues::Codes(codes) => codes[slot as usize],
            SubValues::Classes(planes, stm) => {
                let [lo, hi] = planes_at(planes, (slot >> 6) as usize);
                code_of_class(Class::of_planes(lo, hi, slot & 63), *stm)
            }
        }
    }
}

/// Loads the class planes of words `words` of one side of a compact table ([`WDL_WORD_BYTES`]
/// a word), with `threads` workers.
pub(super) fn load_classes(
    table: &CompactTable,
    stm: Color,
    words: Range<usize>,
    threads: usize,
) -> Result<MmapMut, TableError> {
    let per = 1usize << (WDL_BLOCK_BITS - 6);
    let mut out = random_access_buffer(WDL_WORD_BYTES * words.len(), "a run's classes")?;
    let blocks = words.start / per..words.end.div_ceil(per);
    let decode = |i: usize, _| {
        let mut planes = Vec::new();
        table.block_into(Part::wdl(stm), blocks.start + i, &mut planes)?;
        Ok::<_, TableError>(planes)
    };
    pipeline::run(blocks.len(), threads, Order::Completion, Ok, decode, |i, planes: Vec<u8>| {
        let b = blocks.start + i;
        let (first, end) = ((b * per).max(words.start), ((b + 1) * per).min(words.end));
        let bytes = WDL_WORD_BYTES * (end - b * per);
        if planes.len() < bytes {
            return Err(TableError::Wrong(format!("class block {b} decodes to {} bytes, not {bytes}", planes.len())));
        }
        let src = &planes[WDL_WORD_BYTES * (first - b * per)..bytes];
        out[WDL_WORD_BYTES * (first - words.start)..][..src.len()].copy_from_slice(src);
        Ok(())
    })?;
    Ok(out)
}

/// Loads the codes of one side of a compact table, a byte per slot (`CodeSource`'s codes:
/// black's losses as 62), with `threads` workers. White's of a version 6 table, whose
/// distance section leaves the wins by a zeroing move out (don't-cares), are read from the
/// classes instead ([`lanes_of_classes`]: a win as code 1), illegal positions 63: a
/// conversion into a sub-endgame reads only whether the position is won.
fn load_codes(table: &CompactTable, layout: &Layout, stm: Color, threads: usize) -> Result<MmapMut, TableError> {
    let mut out = random_access_buffer(layout.n_slots as usize, "a run's codes")?;
    let per = 1usize << WDL_BLOCK_BITS;
    let source = CodeSource::Compact(table, layout);
    let by_class = stm == Color::White && table.header.zeroing_dont_cares;
    fill_blocks(&mut out, per, threads, |i, len| {
        if by_class {
            let mut planes = Vec::new();
            table.block_into(Part::wdl(stm), i, &mut planes)?;
            if planes.len() < WDL_WORD_BYTES * len / 64 {
                return Err(TableError::Wrong(format!("class block {i} decodes to {} bytes", planes.len())));
            }
            let mut codes = Vec::with_capacity(len);
            for w in 0..len / 64 {
                let illegal = illegal_word(layout, (i * per / 64 + w) as u64, stm);
                let classes = lanes_of_classes(planes_at(&planes, w), stm);
                codes.extend(classes.iter().enumerate().map(|(l, &c)| match illegal >> l & 1 {
                    0 => c,
                    _ => CODE_ILLEGAL,
                }));
            }
            return Ok(codes);
        }
        let mut codes = Vec::new();
        source.read(stm, i * per / 64, len / 64, &mut codes)?;
        Ok(codes.as_flattened().to_vec())
    })?;
    Ok(out)
}

/// Fills `out` block by block (`per` bytes, the last one shorter) with what `decode(i, len)`
/// gives for block `i`, on `threads` workers; a block of the wrong length is an error.
fn fill_blocks(
    out: &mut [u8],
    per: usize,
    threads: usize,
    decode: impl Fn(usize, usize) -> Result<Vec<u8>, TableError> + Sync,
) -> Result<(), TableError> {
    let len = |i: usize| per.min(out.len() - i * per);
    let lens: Vec<usize> = (0..out.len().div_ceil(per)).map(len).collect();
    pipeline::run(
        lens.len(),
        threads,
        Order::Completion,
        Ok,
        |i, _| decode(i, lens[i]),
        |i, bytes| {
            if bytes.len() != lens[i] {
                return Err(TableError::Wrong(format!("block {i} decodes to {} bytes, not {}", bytes.len(), lens[i])));
            }
            out[i * per..i * per + bytes.len()].copy_from_slice(&bytes);
            Ok(())
        },
    )
}

/// The run a capture of the `color` piece `role` leads to.
pub(super) fn capture_of(run: &Material, color: Color, role: Role) -> Material {
    match color {
        Color::White => run.without_white(role),
        Color::Black => run.without_black(role),
    }
}

/// The sub-endgames a capture leads to, each with the side to move after it (the captured
/// piece's), once each; white left with a bare king has none.
pub(super) fn capture_sides(run: &Material, layout: &Layout) -> Vec<(Material, Color)> {
    let mut sides: Vec<(Material, Color)> = Vec::new();
    for p in &layout.pieces {
        let side = (capture_of(run, p.color, p.role), p.color);
        if !side.0.white_bare() && !sides.contains(&side) {
            sides.push(side);
        }
    }
    sides
}

/// Every successor run a move of `run` leads to, each with the side to move after it, once
/// each: [`capture_sides`], and with pawns the captures of pawns and the promotions (each
/// promotion also capturing each piece of the other side); white left bare has none.
pub(super) fn conversion_sides(run: &Material, layout: &Layout) -> Vec<(Material, Color)> {
    let mut sides = capture_sides(run, layout);
    let mut add = |m: Material, stm: Color| {
        if !m.white_bare() && !sides.contains(&(m.clone(), stm)) {
            sides.push((m, stm));
        }
    };
    for color in [Color::White, Color::Black] {
        if run.pawns(color) == 0 {
            continue;
        }
        add(capture_of(run, color, Role::Pawn), color);
        for to in Role::PROMOTIONS {
            let promoted = run.promoted(color, to);
            for p in layout.pieces.iter().filter(|p| p.color != color) {
                add(capture_of(&promoted, p.color, p.role), color.other());
            }
            add(promoted, color.other());
        }
    }
    sides
}

/// The successor runs' values a conversion leads to: (run, side to move after it, values),
/// as [`capture_sides`] lists them (pawnless, codes) or [`conversion_sides`] (with pawns,
/// classes).
pub(super) fn load_subs(
    run: &Material,
    layout: &Layout,
    dir: &Path,
    threads: usize,
) -> Result<Vec<(Material, Color, Sub)>, TableError> {
    let sides = if layout.has_pawns() { conversion_sides(run, layout) } else { capture_sides(run, layout) };
    sides
        .into_iter()
        .map(|(sub, stm)| {
            let verifying = |e: TableError| TableError::Verifying {
                run: run.clone(),
                needed: Some(sub.clone()),
                cause: Box::new(e),
            };
            let t = open_compact(dir, &sub).map_err(verifying)?;
            let sub_layout = Layout::new(&sub);
            let values = if layout.has_pawns() {
                SubValues::Classes(load_classes(&t, stm, 0..sub_layout.n_words(), threads).map_err(verifying)?, stm)
            } else {
                SubValues::Codes(load_codes(&t, &sub_layout, stm, threads).map_err(verifying)?)
            };
            Ok((sub, stm, Sub { layout: sub_layout, values }))
        })
        .collect()
}
