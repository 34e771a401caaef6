//! What the word verifier holds whole: the sub-endgames' codes of the side a capture leads
//! to, loaded block by block.

use super::derive::Sub;
use super::window::random_access_buffer;
use crate::chess::{Color, Material, Role};
use crate::index::Layout;
use crate::pipeline::{self, Order};
use crate::table::codes::CodeSource;
use crate::table::compact::{CompactTable, WDL_BLOCK_BITS};
use crate::table::error::TableError;
use crate::table::verify::open_compact;
use memmap2::MmapMut;
use std::path::Path;

/// Loads the codes of one side of a compact table, a byte per slot (`CodeSource`'s codes:
/// black's losses as 62), with `threads` workers.
fn load_codes(table: &CompactTable, layout: &Layout, stm: Color, threads: usize) -> Result<MmapMut, TableError> {
    let mut out = random_access_buffer(layout.n_slots as usize)?;
    let per = 1usize << WDL_BLOCK_BITS;
    let source = CodeSource::Compact(table, layout);
    fill_blocks(&mut out, per, threads, |i, len| {
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

/// The sub-endgames' codes a capture leads to: (run, side to move after it, codes), as
/// [`capture_sides`] lists them.
pub(super) fn load_subs(
    run: &Material,
    layout: &Layout,
    dir: &Path,
    threads: usize,
) -> Result<Vec<(Material, Color, Sub)>, TableError> {
    capture_sides(run, layout)
        .into_iter()
        .map(|(sub, stm)| {
            let verifying = |e: TableError| TableError::Verifying {
                run: run.clone(),
                needed: Some(sub.clone()),
                cause: Box::new(e),
            };
            let t = open_compact(dir, &sub).map_err(verifying)?;
            let sub_layout = Layout::new(&sub);
            let codes = load_codes(&t, &sub_layout, stm, threads).map_err(verifying)?;
            Ok((sub, stm, Sub { layout: sub_layout, codes }))
        })
        .collect()
}
