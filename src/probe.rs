//! Probing finished tables: win/draw/loss, distance and a best move for any position.

use crate::format::{code_to_distance, table_path, TableFile};
use crate::index::Layout;
use crate::material::{Color, Material};
use crate::position::{Move, Position};
use crate::square::Square;
use anyhow::Context;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

/// The result of a probe, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// 1 win, 0 draw, -1 loss under the 50-move rule (given the position's clock).
    pub wdl: i8,
    /// Stored distance in plies (odd for the winner to move, even for the loser, 0 when
    /// checkmated), signed like `wdl`; 0 for a draw.
    pub dtz: i32,
}

/// One run's table with its layout.
pub struct Run {
    pub file: TableFile,
    pub layout: Layout,
}

impl Run {
    /// Stored distance of a position of this run (white's men are the run's white), or
    /// `None` when the position is not won for white.
    pub fn distance(&self, pos: &Position) -> Option<u8> {
        let (bk, pieces, wk) = men_in_layout_order(&self.layout, pos);
        let (idx, _) = self.layout.canonical_index(bk, &pieces, wk);
        let slot = self.layout.slot(idx).expect("canonical index is not a hole");
        code_to_distance(pos.turn, self.file.value_code(pos.turn, slot))
    }
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

/// A folder of tables, opened once and shared between threads.
pub struct Tablebase {
    dir: PathBuf,
    runs: RwLock<HashMap<Material, Arc<Run>>>,
}

impl Tablebase {
    /// Opens a folder of tables (files are mapped on first use).
    pub fn open(dir: &Path) -> anyhow::Result<Tablebase> {
        anyhow::ensure!(dir.is_dir(), "table folder {} does not exist", dir.display());
        Ok(Tablebase { dir: dir.to_path_buf(), runs: RwLock::new(HashMap::new()) })
    }

    /// The run of a material, mapped on first use.
    pub fn run(&self, m: &Material) -> anyhow::Result<Arc<Run>> {
        if let Some(r) = self.runs.read().unwrap().get(m) {
            return Ok(r.clone());
        }
        let path = table_path(&self.dir, m);
        anyhow::ensure!(path.exists(), "missing table {} (generate it with `tbstream gen {}`)", path.display(), m);
        // Checked once per process: damage is reported with the section and offset.
        let file = TableFile::open_run(&path, m).with_context(|| format!("opening table for {m}"))?;
        let run = Arc::new(Run { layout: Layout::new(m), file });
        self.runs.write().unwrap().insert(m.clone(), run.clone());
        Ok(run)
    }

    /// Win/draw/loss and distance of a position for the side to move.
    pub fn probe(&self, pos: &Position) -> anyhow::Result<Probe> {
        let p = if pos.turn == Color::Black { pos.flipped() } else { pos.clone() };
        if p.legal_moves().is_empty() {
            let mated = p.in_check(Color::White);
            return Ok(Probe { wdl: if mated { -1 } else { 0 }, dtz: 0 });
        }
        let m = p.material();
        let g50 = 100 - p.halfmove.min(101) as i32;
        if !m.white_bare() {
            if let Some(v) = self.run(&m)?.distance(&p) {
                if v as i32 <= g50 {
                    return Ok(Probe { wdl: 1, dtz: v as i32 });
                }
            }
        }
        if !m.black.is_empty() {
            if let Some(v) = self.run(&m.swapped())?.distance(&p.flipped()) {
                if v as i32 <= g50 {
                    return Ok(Probe { wdl: -1, dtz: -(v as i32) });
                }
            }
        }
        Ok(Probe { wdl: 0, dtz: 0 })
    }

    /// A move that keeps the result: for a win the fastest (captures and mates first), for a
    /// loss the longest resistance, for a draw one that keeps the draw. `None` without moves.
    pub fn best_move(&self, pos: &Position) -> anyhow::Result<Option<(Move, Probe)>> {
        let here = self.probe(pos)?;
        let mut best: Option<(i64, Move, Probe)> = None;
        for mv in pos.legal_moves() {
            let child = self.probe(&pos.play(mv))?;
            let score: i64 = match here.wdl {
                // Mates first, then winning captures, then the shortest distance.
                1 if child.wdl == -1 => {
                    if mv.capture {
                        -2
                    } else {
                        -2 * child.dtz.abs() as i64 - 1
                    }
                }
                1 => continue,
                -1 => {
                    if mv.capture {
                        -1000
                    } else {
                        child.dtz.abs() as i64
                    }
                }
                _ if child.wdl == 0 => 0,
                _ if child.wdl == -1 => 1, // cannot happen in a correct draw, kept for safety
                _ => continue,
            };
            if best.as_ref().is_none_or(|(s, ..)| score > *s) {
                best = Some((score, mv, child));
            }
        }
        Ok(best.map(|(_, m, c)| (m, c)))
    }
}
