//! The answers of `tbstream serve`, shaped like the lichess tablebase server's
//! (lila-tablebase): a position's category, distance and flags, its moves best first, and
//! the main line. `docs/SERVE.md` says how tbstream's values map onto its conventions.
//!
//! Two readings of a position meet here. tbstream's [`Probe`] is the result under the
//! 50-move rule given the position's clock, and [`Category`] the five-valued result with a
//! fresh clock. lichess's `dtz` ignores the clock (a distance to the next capture or pawn
//! move), while its `category` folds the clock in: a win the clock no longer leaves time for
//! is a `cursed-win`. So each position is probed at its own clock and at a fresh one.

use serde::Serialize;
use std::cmp::Reverse;
use tbstream::{Category, Color, Move, Position, Probe, Role, TableError, Tablebase};

/// lichess's categories, declared in its sort order (a move's category is the opponent's
/// result after it, so the best move has the least). `maybe-win`/`maybe-loss` (and
/// `syzygy-win`/`syzygy-loss`) stand for distances that Syzygy tables round; tbstream's are
/// exact, so they never occur and are left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    Loss,
    /// A table this answer needs is missing.
    Unknown,
    BlessedLoss,
    Draw,
    CursedWin,
    Win,
}

impl Verdict {
    /// Whether the side to move wins, at least without the 50-move rule.
    fn is_positive(self) -> bool {
        matches!(self, Verdict::CursedWin | Verdict::Win)
    }
}

/// What lichess says of one position (the fields every answer and every move share).
/// `dtm`, `dtw`, `dtc` and the variant flags belong to other tables and variants: always
/// null and false here, present so that lichess's clients parse the answer unchanged.
#[derive(Clone, Debug, Serialize)]
pub struct PositionInfo {
    pub checkmate: bool,
    pub stalemate: bool,
    pub variant_win: bool,
    pub variant_loss: bool,
    pub insufficient_material: bool,
    /// Plies to the next capture or pawn move (or mate) with best play, ignoring the clock,
    /// signed for the side to move (positive: it wins); -1 when checkmated, 0 for a draw;
    /// null when not known (a cursed win or blessed loss: the tables store no distance
    /// past 100 plies; or a missing table).
    pub dtz: Option<i32>,
    /// `dtz` again: lichess gives it only when Syzygy's rounding left it exact, and
    /// tbstream's distances are always exact.
    pub precise_dtz: Option<i32>,
    pub dtm: Option<i32>,
    pub dtw: Option<i32>,
    pub dtc: Option<i32>,
    pub category: Verdict,
}

/// One legal move and the position after it, from the view of the side to move *after*
/// the move.
#[derive(Clone, Debug, Serialize)]
pub struct MoveInfo {
    pub uci: String,
    pub san: String,
    /// A capture or a pawn move: the 50-move count starts again.
    pub zeroing: bool,
    /// A capture or a promotion: the material changes.
    pub conversion: bool,
    #[serde(flatten)]
    pub pos: PositionInfo,
    /// The man taken and the promotion, in lichess's order of roles (for sorting).
    #[serde(skip)]
    capture: Option<u8>,
    #[serde(skip)]
    promotion: Option<u8>,
    /// tbstream's best move (what `probe` prints for the position).
    #[serde(skip)]
    best: bool,
}

/// The answer of `GET /standard`.
#[derive(Debug, Serialize)]
pub struct Answer {
    #[serde(flatten)]
    pub pos: PositionInfo,
    /// Every legal move, best first.
    pub moves: Vec<MoveInfo>,
}

/// One move of the main line.
#[derive(Debug, Serialize)]
pub struct Step {
    pub uci: String,
    pub san: String,
    /// The `dtz` of the position after the move.
    pub dtz: i32,
    pub precise_dtz: Option<i32>,
}

/// The answer of `GET /standard/mainline`.
#[derive(Debug, Serialize)]
pub struct Mainline {
    /// The best moves of both sides to checkmate, across captures and pawn moves, until the
    /// position's clock reaches 100 plies (lichess claims the draw there); empty for a
    /// position that is not won or lost within the rule with a fresh clock.
    pub mainline: Vec<Step>,
    /// `"w"` or `"b"` when the line ends in checkmate, else null.
    pub winner: Option<char>,
    pub dtz: Option<i32>,
    pub precise_dtz: Option<i32>,
}

/// The tables' verdicts on one position.
#[derive(Clone, Copy, Debug)]
struct Facts {
    /// Under the 50-move rule at the position's clock (what `probe` prints).
    probe: Probe,
    /// The same position with a fresh clock: its distance is lichess's `dtz`.
    fresh: Probe,
    /// Five-valued, with a fresh clock (`None`: the table cannot tell).
    category: Option<Category>,
    checkmate: bool,
    stalemate: bool,
    insufficient_material: bool,
}

/// Probes a position. A dead position is a draw without reading a table (as lichess's
/// is), so that a capture into KNvK needs no KNvK table.
fn facts(tb: &Tablebase, pos: &Position) -> Result<Facts, TableError> {
    let board = board_facts(pos);
    if board.insufficient_material {
        return Ok(board);
    }
    let probe = tb.probe(pos)?;
    let fresh = if pos.halfmove == 0 { probe } else { tb.probe(&with_fresh_clock(pos))? };
    Ok(Facts { probe, fresh, category: tb.category(pos)?, ..board })
}

/// What the board alone says: mate, stalemate, a dead position (then a draw, as the
/// results say; otherwise they are placeholders the tables replace).
fn board_facts(pos: &Position) -> Facts {
    let (has_move, in_check) = (pos.has_legal_move(), pos.in_check(pos.turn));
    let draw = Probe { wdl: 0, dtz: 0 };
    Facts {
        probe: draw,
        fresh: draw,
        category: Some(Category::Draw),
        checkmate: !has_move && in_check,
        stalemate: !has_move && !in_check,
        insufficient_material: pos.insufficient_material(),
    }
}

/// The position with its half-move clock at 0.
fn with_fresh_clock(pos: &Position) -> Position {
    let mut fresh = pos.clone();
    fresh.halfmove = 0;
    fresh
}

/// lichess's `dtz` of a position (see [`PositionInfo::dtz`]).
fn lichess_dtz(f: &Facts) -> Option<i32> {
    if f.checkmate {
        return Some(-1);
    }
    match (f.fresh.wdl, f.category) {
        (0, Some(Category::Draw)) => Some(0),
        (0, _) => None,
        _ => Some(f.fresh.dtz),
    }
}

/// lichess's category of a position whose previous position had the clock
/// `halfmoves_before`: a win or loss within the rule at the position's clock, unless the
/// draw could already be claimed before the move (a clock of 100); else a cursed win or
/// blessed loss when the fresh-clock result is decisive; else a draw.
fn verdict(f: &Facts, halfmoves_before: u32) -> Verdict {
    let claimable = halfmoves_before >= 100;
    match (f.probe.wdl, f.category) {
        (1, _) if !claimable => Verdict::Win,
        (-1, _) if !claimable => Verdict::Loss,
        (1, _) | (_, Some(Category::Win | Category::CursedWin)) => Verdict::CursedWin,
        (-1, _) | (_, Some(Category::Loss | Category::BlessedLoss)) => Verdict::BlessedLoss,
        (_, Some(Category::Draw)) => Verdict::Draw,
        (_, None) => Verdict::Unknown,
    }
}

impl PositionInfo {
    /// The fields of a position with lichess's `dtz` and category; the other tables' and
    /// variants' fields null and false.
    fn new(f: &Facts, dtz: Option<i32>, category: Verdict) -> PositionInfo {
        PositionInfo {
            checkmate: f.checkmate,
            stalemate: f.stalemate,
            variant_win: false,
            variant_loss: false,
            insufficient_material: f.insufficient_material,
            dtz,
            precise_dtz: dtz,
            dtm: None,
            dtw: None,
            dtc: None,
            category,
        }
    }
}

fn info(f: &Facts, halfmoves_before: u32) -> PositionInfo {
    PositionInfo::new(f, lichess_dtz(f), verdict(f, halfmoves_before))
}

/// A move's target when its sub-endgame's table is missing: lichess answers `unknown` for it
/// rather than failing the whole request.
fn unknown(pos: &Position) -> PositionInfo {
    PositionInfo::new(&board_facts(pos), None, Verdict::Unknown)
}

/// A role's rank in lichess's (shakmaty's) order: pawn, knight, bishop, rook, queen, king.
fn role_rank(role: Role) -> u8 {
    match role {
        Role::Pawn => 1,
        Role::Knight => 2,
        Role::Bishop => 3,
        Role::Rook => 4,
        Role::Queen => 5,
        Role::King => 6,
    }
}

/// lichess's sort key of a move (lila-tablebase's `MoveInfo::sort_key`, without the DTM,
/// DTW and DTC it has no tables of here), with tbstream's best move first among the moves
/// of its category: the opponent's category after the move (least first); tbstream's best
/// move; checkmate, then stalemate and dead positions; then, when the move wins, conversions
/// and zeroing moves first, else last; the shortest win or longest loss by `dtz`; then
/// captures of the most valuable man and the strongest promotions. Moves still tied keep the
/// order of the move generator.
fn sort_key(m: &MoveInfo) -> impl Ord {
    let winning = !m.pos.category.is_positive();
    (
        (m.pos.category, Reverse(m.best)),
        Reverse(m.pos.checkmate),
        (Reverse(m.pos.stalemate), Reverse(m.pos.insufficient_material)),
        m.conversion ^ winning,
        (m.zeroing ^ winning, m.pos.dtz.map(Reverse)),
        (Reverse(m.capture), Reverse(m.promotion)),
    )
}

/// The answer of `/standard` for a position. A missing table of the position's own
/// material is an error; a missing table after a capture makes that move `unknown`.
pub fn standard(tb: &Tablebase, pos: &Position) -> Result<Answer, TableError> {
    let here = facts(tb, pos)?;
    let best = tb.best_move(pos).or_else(missing_as_none)?.map(|(mv, _)| mv);
    let legal = pos.legal_moves();
    let mut moves = Vec::with_capacity(legal.len());
    for mv in legal {
        let after = pos.play(mv);
        let info = match facts(tb, &after) {
            Ok(f) => info(&f, pos.halfmove),
            Err(TableError::Missing { .. } | TableError::MissingForSearch { .. }) => unknown(&after),
            Err(e) => return Err(e),
        };
        moves.push(move_info(pos, mv, info, best == Some(mv)));
    }
    moves.sort_by_cached_key(sort_key);
    Ok(Answer { pos: info(&here, pos.halfmove.saturating_sub(1)), moves })
}

/// `Ok(None)` for a missing table (of a sub-endgame the best move's search reads).
fn missing_as_none<T>(e: TableError) -> Result<Option<T>, TableError> {
    match e {
        TableError::Missing { .. } | TableError::MissingForSearch { .. } => Ok(None),
        e => Err(e),
    }
}

fn move_info(pos: &Position, mv: Move, info: PositionInfo, best: bool) -> MoveInfo {
    let taken = if mv.en_passant { Some(Role::Pawn) } else { pos.at(mv.to).map(|p| p.role) };
    MoveInfo {
        uci: mv.to_string(),
        san: pos.san(mv),
        zeroing: mv.is_zeroing(),
        conversion: mv.capture || mv.promotion.is_some(),
        pos: info,
        capture: taken.filter(|_| mv.capture).map(role_rank),
        promotion: mv.promotion.map(role_rank),
        best,
    }
}

/// The longest main line served: far more than any line of six men needs (each phase
/// between captures or pawn moves is at most 100 plies), a guard against a damaged table.
const MAX_MAINLINE_PLIES: usize = 1000;

/// The answer of `/standard/mainline`: tbstream's best moves from a fresh clock (as
/// lichess's line follows distances that ignore the clock), played on the real position
/// until checkmate or until its clock reaches 100 plies.
pub fn mainline(tb: &Tablebase, pos: &Position) -> Result<Mainline, TableError> {
    let root = facts(tb, pos)?;
    let mut steps = Vec::new();
    let mut real = pos.clone();
    if root.fresh.wdl != 0 {
        // The real position with the plies since the line began (or since its last
        // capture or pawn move) as its clock.
        let mut fresh = with_fresh_clock(pos);
        while real.halfmove < 100 && steps.len() < MAX_MAINLINE_PLIES {
            let Some((mv, after)) = tb.best_move(&fresh)? else { break };
            let next = real.play(mv);
            let dtz = if next.is_checkmate() { -1 } else { after.dtz };
            steps.push(Step { uci: mv.to_string(), san: real.san(mv), dtz, precise_dtz: Some(dtz) });
            fresh = fresh.play(mv);
            real = next;
        }
    }
    let winner = real.is_checkmate().then_some(if real.turn == Color::White { 'b' } else { 'w' });
    let dtz = lichess_dtz(&root);
    Ok(Mainline { mainline: steps, winner, dtz, precise_dtz: dtz })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts_of(wdl: i8, dtz: i32, category: Option<Category>) -> Facts {
        let probe = Probe { wdl, dtz };
        Facts { probe, fresh: probe, category, checkmate: false, stalemate: false, insufficient_material: false }
    }

    #[test]
    fn categories_fold_the_clock_in() {
        let win = facts_of(1, 5, Some(Category::Win));
        assert_eq!(verdict(&win, 0), Verdict::Win);
        // The draw could be claimed before the move: no longer a full win.
        assert_eq!(verdict(&win, 100), Verdict::CursedWin);
        // Won with a fresh clock, drawn at this one.
        let late = Facts { fresh: Probe { wdl: 1, dtz: 15 }, ..facts_of(0, 0, Some(Category::Win)) };
        assert_eq!(verdict(&late, 0), Verdict::CursedWin);
        assert_eq!(lichess_dtz(&late), Some(15));
        let lost = Facts { fresh: Probe { wdl: -1, dtz: -8 }, ..facts_of(0, 0, Some(Category::Loss)) };
        assert_eq!((verdict(&lost, 95), lichess_dtz(&lost)), (Verdict::BlessedLoss, Some(-8)));
        let cursed = facts_of(0, 0, Some(Category::CursedWin));
        assert_eq!((verdict(&cursed, 0), lichess_dtz(&cursed)), (Verdict::CursedWin, None));
        assert_eq!(verdict(&facts_of(0, 0, None), 0), Verdict::Unknown);
        assert_eq!(verdict(&facts_of(1, 3, None), 0), Verdict::Win);
        let mated = Facts { checkmate: true, ..facts_of(-1, 0, Some(Category::Loss)) };
        assert_eq!((verdict(&mated, 99), lichess_dtz(&mated)), (Verdict::Loss, Some(-1)));
        assert_eq!(verdict(&mated, 100), Verdict::BlessedLoss);
        assert_eq!(lichess_dtz(&facts_of(0, 0, Some(Category::Draw))), Some(0));
    }

    #[test]
    fn verdicts_sort_in_lichess_order() {
        use Verdict::*;
        let order = [Loss, Unknown, BlessedLoss, Draw, CursedWin, Win];
        assert!(order.windows(2).all(|w| w[0] < w[1]));
        assert!(order.iter().all(|v| v.is_positive() == (*v > Draw)));
        assert_eq!(serde_json::to_string(&BlessedLoss).unwrap(), "\"blessed-loss\"");
    }
}
