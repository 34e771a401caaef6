//! Moves from the tables: the best move of a position (the fastest win, the longest
//! resistance, a move that keeps the draw) and the principal line of a decisive position.

use super::result::Probe;
use super::tablebase::Tablebase;
use crate::chess::{Color, Move, Position};
use crate::table::keys::PIECE_SETS;
use crate::table::men::Men;
use crate::table::values::Class;
use crate::table::TableError;

impl Tablebase {
    /// A move that keeps the result: for a win the fastest (captures and mates first), for a
    /// loss the longest resistance, for a draw one that keeps the draw. `None` without moves.
    /// The probe of the position after the move comes with it.
    ///
    /// ```
    /// # use tbstream::{generate, GenOptions, SilentProgress, Material, Position, Tablebase};
    /// # let dir = tempfile::tempdir()?;
    /// # generate(&[Material::parse("KRvK")?], &GenOptions::new(dir.path(), 1), &SilentProgress)?;
    /// let tb = Tablebase::open(dir.path())?;
    /// let pos = Position::from_fen("8/8/8/8/8/1Rk5/8/K7 b - - 0 1")?;
    /// let (mv, after) = tb.best_move(&pos)?.unwrap();
    /// assert_eq!(mv.to_string(), "c3b3"); // takes the rook
    /// assert!(mv.capture);
    /// assert_eq!((after.wdl, after.dtz), (0, 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn best_move(&self, pos: &Position) -> Result<Option<(Move, Probe)>, TableError> {
        let here = self.probe(pos)?;
        self.best_move_from(pos, here)
    }

    /// [`Tablebase::best_move`] given the probe of `pos`.
    fn best_move_from(&self, pos: &Position, here: Probe) -> Result<Option<(Move, Probe)>, TableError> {
        match here.wdl {
            1 if here.dtz > 1 => {
                if let Some(best) = self.fastest_quiet_win(pos, here)? {
                    return Ok(Some(best));
                }
            }
            1 => return self.best_conversion(pos),
            _ => {}
        }
        let mut best: Option<(i64, Move, Probe)> = None;
        for mv in pos.legal_moves() {
            let child = self.probe(&pos.play(mv))?;
            let d = child.dtz.abs() as i64;
            let score: i64 = match here.wdl {
                // Mates first, then winning zeroing moves (captures, pawn moves), then the
                // shortest distance; among zeroing moves too, the shortest distance after it
                // (so that the choice does not depend on the order of the moves).
                1 if child.wdl == -1 && d == 0 => 3000,
                1 if child.wdl == -1 && mv.is_zeroing() => 2000 - d,
                1 if child.wdl == -1 => 1000 - d,
                1 => continue,
                // The longest resistance; zeroing moves last.
                -1 if mv.is_zeroing() => -1000 + d,
                -1 => d,
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

    /// The best move of a win in one ply (`dtz` 1): the first checkmate, else the winning
    /// zeroing move with the shortest distance after it (the first of equals). Quiet moves
    /// are only looked at for mate: they cannot win faster.
    fn best_conversion(&self, pos: &Position) -> Result<Option<(Move, Probe)>, TableError> {
        let mut best: Option<(i64, Move, Probe)> = None;
        for mv in pos.legal_moves() {
            let after = pos.play(mv);
            let child = if mv.is_zeroing() {
                self.probe(&after)?
            } else if after.is_checkmate() {
                Probe { wdl: -1, dtz: 0 }
            } else {
                continue;
            };
            if child.wdl != -1 {
                continue;
            }
            if child.dtz == 0 {
                return Ok(Some((mv, child)));
            }
            let score = -(child.dtz.abs() as i64);
            if best.as_ref().is_none_or(|(s, ..)| score > *s) {
                best = Some((score, mv, child));
            }
        }
        Ok(best.map(|(_, m, c)| (m, c)))
    }

    /// The best move of a win in more than one ply: the first quiet move (in the order of
    /// [`Position::legal_moves`]) after which the loser is lost in exactly `dtz - 1` plies,
    /// the least possible (a mate or a winning zeroing move would make `dtz` 1). A loser's
    /// distance is searched one ply deep, stopping at the first reply that lasts longer.
    /// `None` if no move qualifies (a damaged table).
    fn fastest_quiet_win(&self, pos: &Position, here: Probe) -> Result<Option<(Move, Probe)>, TableError> {
        let target = (here.dtz - 1) as u8;
        let child_probe = Probe { wdl: -1, dtz: -(target as i32) };
        let us = pos.turn;
        let them = Men::gather(pos, us == Color::White);
        // The winner's run, where the loser after the move is black.
        let [w, b] = them.piece_sets();
        let run = self.run_at(b * PIECE_SETS + w)?;
        for mv in pos.legal_moves() {
            if mv.is_zeroing() {
                continue;
            }
            let child = pos.play(mv);
            let men = Men::gather(&child, child.turn == Color::Black);
            if run.kept_class(Color::Black, run.slot(&men, true))? != Class::Win {
                continue;
            }
            if self.loser_distance::<1>(&child, &men, run, Some(target))? == Some(target) {
                // The child's own probe (it reads the loser's run too, so that a damaged
                // table there is an error here as it is for `probe`).
                let probed = self.probe(&child)?;
                debug_assert_eq!(probed, child_probe, "{}", child.fen());
                return Ok(Some((mv, probed)));
            }
        }
        Ok(None)
    }

    /// The principal line of a decisive position: the moves of [`Tablebase::best_move`] for
    /// both sides, until checkmate, a zeroing move (a capture or a pawn move, promotions and
    /// en passant included, which ends the line), or
    /// `max_plies` moves. A drawn position (or one without moves) has an empty line; the line
    /// also stops early should a position along it be a draw (which a correct table never
    /// gives). Its length is `|dtz|` when it ends in mate or the winner's zeroing move, and
    /// `|dtz| - 1` when it ends with a zeroing move the loser is forced to make (distances are
    /// rounded up to the parity of the side to move).
    ///
    /// ```
    /// # use tbstream::{generate, GenOptions, SilentProgress, Material, Position, Tablebase};
    /// # let dir = tempfile::tempdir()?;
    /// # generate(&[Material::parse("KRvK")?], &GenOptions::new(dir.path(), 1), &SilentProgress)?;
    /// let tb = Tablebase::open(dir.path())?;
    /// let mut pos = Position::from_fen("8/8/8/8/8/8/1Rk5/K7 b - - 0 1")?;
    /// let line = tb.line(&pos, 200)?;
    /// assert_eq!(line.len(), 32);
    /// for &mv in &line {
    ///     pos = pos.play(mv);
    /// }
    /// assert!(pos.legal_moves().is_empty() && pos.in_check(pos.turn)); // checkmate
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn line(&self, pos: &Position, max_plies: usize) -> Result<Vec<Move>, TableError> {
        let mut line = Vec::new();
        let mut here = self.probe(pos)?;
        if here.wdl == 0 {
            return Ok(line);
        }
        let mut p = pos.clone();
        while line.len() < max_plies {
            let Some((mv, child)) = self.best_move_from(&p, here)? else { break };
            line.push(mv);
            if mv.is_zeroing() || child.wdl == 0 {
                break;
            }
            p = p.play(mv);
            here = child;
        }
        Ok(line)
    }
}
