//! The passes of a white-wins run and the work tables they read and write.
//!
//! Pass `InitWhite` finds the illegal positions of both sides and `c`; `InitBlack` finds `d`
//! and `t0`; step `k` computes `t(k)` from `t(k-1)` (white ORs over its moves for odd `k`,
//! black ANDs for even `k`), combined with `t(k-2)` and `c` or `d`. The odd chain starts
//! from the illegal wtm positions, which act as `t(-1)`.
//!
//! The even chain's files hold more than the seed's `t(k)`: from step 2 on, `t(k) | !d`
//! (with `d∞` past step 100 in an eventual level), the btm positions already *decided*,
//! lost or saved by a capture. A black step then needs `d` no more (`new = reached &
//! !t(k-2)`: one table fewer to read per step), and white's steps, which need the lost
//! positions only, take black's new positions from the previous step's delta streams.

use crate::chess::{Color, RULE_PLIES};
use std::fmt;

/// The last step of the chains under the 50-move rule: `t100` (btm). Later steps find the
/// positions won only without the rule (cursed wins, and the losses they make blessed).
pub const LAST_STEP: u16 = RULE_PLIES;

/// The last step a run may take: the longest cursed win any endgame up to 7 men is known to
/// need is far below it; a run that would go further stops with an error.
pub const MAX_STEP: u16 = 4000;

/// A pass of a run, in the order they run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
#[serde(into = "i32", try_from = "i32")]
pub enum Pass {
    /// White chunks: illegal positions of both sides, and `c`.
    InitWhite,
    /// Black chunks: `d` and `t0` (checkmates).
    InitBlack,
    /// Step `k` (1..=MAX_STEP): `t(k)`, white to move for odd `k`, black for even `k`.
    Step(u16),
}

impl Pass {
    /// The pass's number in manifests, logs and file names: -1, 0, then `k`.
    pub fn number(self) -> i32 {
        match self {
            Pass::InitWhite => -1,
            Pass::InitBlack => 0,
            Pass::Step(k) => k as i32,
        }
    }

    /// The pass of a number written by [`Pass::number`].
    pub fn from_number(n: i32) -> Option<Pass> {
        match n {
            -1 => Some(Pass::InitWhite),
            0 => Some(Pass::InitBlack),
            k if (1..=MAX_STEP as i32).contains(&k) => Some(Pass::Step(k as u16)),
            _ => None,
        }
    }

    /// The pass that follows this one.
    pub fn next(self) -> Pass {
        match self {
            Pass::InitWhite => Pass::InitBlack,
            Pass::InitBlack => Pass::Step(1),
            Pass::Step(k) => Pass::Step(k + 1),
        }
    }

    /// The `n`-th pass of a run (0 = `InitWhite`).
    pub fn nth(n: usize) -> Pass {
        Pass::from_number(n as i32 - 1).expect("pass in range")
    }

    /// The side whose chunks the pass runs over (the side that moves in it).
    pub fn mover(self) -> Color {
        match self {
            Pass::InitWhite => Color::White,
            Pass::InitBlack => Color::Black,
            Pass::Step(k) if k % 2 == 1 => Color::White,
            Pass::Step(_) => Color::Black,
        }
    }

    /// The step whose new positions the pass records (`t0` for `InitBlack`), if any.
    pub fn step(self) -> Option<u16> {
        match self {
            Pass::InitWhite => None,
            Pass::InitBlack => Some(0),
            Pass::Step(k) => Some(k),
        }
    }

    /// Whether this is one of the two init passes.
    pub fn is_init(self) -> bool {
        matches!(self, Pass::InitWhite | Pass::InitBlack)
    }
}

impl fmt::Display for Pass {
    /// `init white`, `init black`, `step   7 white`: the pass in progress lines and logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pass::InitWhite => write!(f, "init white"),
            Pass::InitBlack => write!(f, "init black"),
            Pass::Step(k) => write!(f, "step {k:>3} {}", if k % 2 == 1 { "white" } else { "black" }),
        }
    }
}

impl From<Pass> for i32 {
    fn from(p: Pass) -> i32 {
        p.number()
    }
}

impl TryFrom<i32> for Pass {
    type Error = String;
    fn try_from(n: i32) -> Result<Pass, String> {
        Pass::from_number(n).ok_or_else(|| format!("no pass has number {n}"))
    }
}

/// A one-bit work table of a run (one bit per stored position).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkTable {
    /// Illegal wtm positions (two men on a square, or black in check); the odd chain's start.
    IllegalWtm,
    /// Illegal btm positions (two men on a square, or white in check).
    IllegalBtm,
    /// The seed's `c`: wtm positions where some capture wins for white.
    WinningCapture,
    /// The seed's `d`: legal btm positions, not stalemate, where every capture loses.
    CapturesLose,
    /// `t(k)`: positions won for white with `k` plies left on the 50-move counter (wtm for
    /// odd `k`, btm for even `k`); beyond 100, won for white without the rule within `k`
    /// plies. Even `k` from 2 on: `t(k) | !d` (`!d∞` past step 100 of an eventual level),
    /// see the module's doc.
    Chain(u16),
    /// Btm positions whose only legal moves are losing zeroing moves (captures, pawn moves):
    /// the only ones whose loss can end with black's own move, the source of even wtm
    /// distances (empty: every wtm distance is odd, see `docs/CURSED.md`).
    ForcedZeroing,
    /// A solved level's final bitbase of a side to move (its `t99` or `t100`), kept for the
    /// levels below, whose pawn pushes lead into it.
    Final(Color),
    /// `c∞`: wtm positions where some capture, promotion or pawn push wins for white with or
    /// without the 50-move rule (written only when conversions reach cursed positions).
    WinningCaptureEventual,
    /// `d∞`: `d` with the conversions that lose for black with or without the rule.
    CapturesLoseEventual,
    /// A solved level's positions won for white with or without the rule (its final bitbase
    /// and its cursed positions), for the levels below when the level has cursed positions.
    FinalEventual(Color),
}

impl WorkTable {
    /// The file name stem: `illegal-wtm`, `illegal-btm`, `c`, `d`, `t007`.
    pub fn name(self) -> String {
        match self {
            WorkTable::IllegalWtm => "illegal-wtm".to_string(),
            WorkTable::IllegalBtm => "illegal-btm".to_string(),
            WorkTable::WinningCapture => "c".to_string(),
            WorkTable::CapturesLose => "d".to_string(),
            WorkTable::ForcedZeroing => "forced-zeroing".to_string(),
            WorkTable::Chain(k) => format!("t{k:03}"),
            WorkTable::Final(Color::White) => "final-wtm".to_string(),
            WorkTable::Final(Color::Black) => "final-btm".to_string(),
            WorkTable::WinningCaptureEventual => "c-inf".to_string(),
            WorkTable::CapturesLoseEventual => "d-inf".to_string(),
            WorkTable::FinalEventual(Color::White) => "final-wtm-inf".to_string(),
            WorkTable::FinalEventual(Color::Black) => "final-btm-inf".to_string(),
        }
    }

    /// The chain table written by a pass: the illegal wtm positions stand for `t(-1)`.
    pub fn chain(k: i32) -> WorkTable {
        if k < 0 {
            WorkTable::IllegalWtm
        } else {
            WorkTable::Chain(k as u16)
        }
    }

    /// The table with the positions where the side to move is illegal.
    pub fn illegal(stm: Color) -> WorkTable {
        match stm {
            Color::White => WorkTable::IllegalWtm,
            Color::Black => WorkTable::IllegalBtm,
        }
    }
}

impl fmt::Display for WorkTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// The tables a pass reads and writes. Workers compute a chunk from `inputs` (read whole)
/// or, for white's steps from 3 on, from the new positions of the step before
/// (`new_of`, read from its delta streams: `t(k-2)` already holds what white reaches from
/// `t(k-3)`), then combine it with `combine` (the previous table of the chain, and `c`, or
/// `d` where it enters the even chain), read block by block.
///
/// A level whose conversions (captures, promotions, pawn pushes) reach cursed positions is
/// *eventual*: its init passes also write `c∞` and `d∞`, step 103 adds `c∞` (after step 101,
/// whose new positions are the candidates for wins of exactly 100 plies), and the even steps
/// past 100 use `d∞` in place of `d`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassSpec {
    pub pass: Pass,
    pub inputs: Vec<WorkTable>,
    /// The step whose new positions the kernel moves from (read from its streams, under the
    /// name of its table), in place of an input table.
    pub new_of: Option<Pass>,
    pub combine: Vec<WorkTable>,
    pub outputs: Vec<WorkTable>,
}

/// The table whose complement the even chain's `t(k)` (`k >= 2`) holds besides the lost
/// positions: `d`, or `d∞` past step 100 of an eventual level.
pub fn captures_lose(k: u16, eventual: bool) -> WorkTable {
    match eventual && k > LAST_STEP {
        true => WorkTable::CapturesLoseEventual,
        false => WorkTable::CapturesLose,
    }
}

/// Step 103, where an eventual level adds `c∞`.
pub const EVENTUAL_CAPTURE_STEP: u16 = LAST_STEP + 3;

impl PassSpec {
    pub fn of(pass: Pass, eventual: bool) -> PassSpec {
        use WorkTable::*;
        let t = WorkTable::chain;
        let with = |v: Vec<WorkTable>, t: WorkTable| if eventual { [v, vec![t]].concat() } else { v };
        let (inputs, combine, outputs) = match pass {
            Pass::InitWhite => {
                (vec![], vec![], with(vec![IllegalWtm, WinningCapture, IllegalBtm], WinningCaptureEventual))
            }
            Pass::InitBlack => {
                (vec![IllegalWtm], vec![], with(vec![CapturesLose, Chain(0), ForcedZeroing], CapturesLoseEventual))
            }
            Pass::Step(1) => (vec![Chain(0)], vec![IllegalWtm, WinningCapture], vec![Chain(1)]),
            Pass::Step(k) => {
                let extra = match k % 2 {
                    1 if eventual && k == EVENTUAL_CAPTURE_STEP => vec![WinningCaptureEventual],
                    1 => vec![],
                    // `d` enters the even chain at step 2, `d∞` in place of it at step 102.
                    _ if k == 2 => vec![captures_lose(k, eventual)],
                    _ if eventual && k == LAST_STEP + 2 => {
                        vec![captures_lose(k - 2, eventual), captures_lose(k, eventual)]
                    }
                    _ => vec![],
                };
                let (k, white) = (k as i32, k % 2 == 1);
                let inputs = if white { vec![] } else { vec![t(k - 1)] };
                (inputs, [vec![t(k - 2)], extra].concat(), vec![t(k)])
            }
        };
        let new_of = match pass {
            Pass::Step(k) if k >= 3 && k % 2 == 1 => Some(Pass::Step(k - 1)),
            _ => None,
        };
        PassSpec { pass, inputs, new_of, combine, outputs }
    }
}

/// The tables that no pass after `pass` reads, deleted once it is finished: `t(k-2)` after
/// step `k` (`t(k)` contains it), except `t99` and `t100`, the final bitbases under the
/// 50-move rule, when the level's merge reads them (`merged`: levels with pawns; a pawnless
/// run's edge and compaction read streams). `c` stays for the compaction, which leaves the
/// wins by a zeroing move out of the distance section.
pub fn obsolete_after(pass: Pass, eventual: bool, merged: bool) -> Vec<WorkTable> {
    match pass {
        Pass::Step(1) => Vec::new(),
        Pass::Step(k) if merged && (k == LAST_STEP + 1 || k == LAST_STEP + 2) => Vec::new(),
        Pass::Step(k) if eventual && k == EVENTUAL_CAPTURE_STEP => {
            vec![WorkTable::chain(k as i32 - 2), WorkTable::WinningCaptureEventual]
        }
        Pass::Step(k) => vec![WorkTable::chain(k as i32 - 2)],
        _ => Vec::new(),
    }
}

/// Whether the chains are complete, given the new positions of each finished pass in order:
/// one odd and one even step in a row added nothing (every later table is equal). The
/// chains go on past step 100 (without the 50-move rule) until then, and an eventual level's
/// at least until step 104 (one step after `c∞` came in).
pub fn chains_complete(new_per_pass: &[(Pass, u64)], eventual: bool) -> bool {
    let steps: Vec<&(Pass, u64)> = new_per_pass.iter().filter(|(p, _)| !p.is_init()).collect();
    let far_enough = !eventual || steps.len() > EVENTUAL_CAPTURE_STEP as usize;
    far_enough && steps.len() >= 2 && steps[steps.len() - 2..].iter().all(|(_, new)| *new == 0)
}

/// The steps an eventual level records without running them: once two steps in a row have
/// added nothing before step 100, every step up to 100 adds nothing (no conversion enters
/// the chains between step 2 and step 102, so each table equals the one two steps before),
/// while the level must still go on past 100 for its cursed positions. The steps from the
/// next one to 100, if any; `None` for a level that is not eventual (its chains are
/// complete then) or whose chains still move.
pub fn still_steps(new_per_pass: &[(Pass, u64)], eventual: bool) -> Option<std::ops::RangeInclusive<u16>> {
    let [.., (Pass::Step(a), 0), (Pass::Step(b), 0)] = new_per_pass else { return None };
    (eventual && *b == a + 1 && *b < LAST_STEP).then(|| b + 1..=LAST_STEP)
}

/// The last step among those `which` takes that added positions, 0 if none.
pub fn last_step_where(new_per_pass: &[(Pass, u64)], which: impl Fn(u16) -> bool) -> u16 {
    new_per_pass
        .iter()
        .filter(|(_, new)| *new > 0)
        .filter_map(|(p, _)| p.step())
        .filter(|&k| which(k))
        .max()
        .unwrap_or(0)
}

/// The last step up to `limit` (of `limit`'s parity) that added positions: with `LAST_STEP`
/// and `LAST_STEP - 1`, the longest wins under the 50-move rule.
pub fn last_step_within(new_per_pass: &[(Pass, u64)], limit: u16) -> u16 {
    last_step_where(new_per_pass, |k| k <= limit && k % 2 == limit % 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_numbers_round_trip_and_order() {
        let mut p = Pass::InitWhite;
        for n in -1..=LAST_STEP as i32 {
            assert_eq!(p.number(), n);
            assert_eq!(Pass::from_number(n), Some(p));
            assert_eq!(Pass::nth((n + 1) as usize), p);
            if n < LAST_STEP as i32 {
                assert!(p.next() > p);
                p = p.next();
            }
        }
        assert_eq!(Pass::from_number(-2), None);
        assert_eq!(Pass::from_number(101), Some(Pass::Step(101)));
        assert_eq!(Pass::from_number(MAX_STEP as i32 + 1), None);
    }

    #[test]
    fn specs_match_the_chains() {
        // The seed's recurrences: t1 = W(t0) | c | t(-1); t2 = B(t1) & d | t0; t(k) from t(k-1), t(k-2).
        assert_eq!(PassSpec::of(Pass::Step(1), false).combine, [WorkTable::IllegalWtm, WorkTable::WinningCapture]);
        assert_eq!(PassSpec::of(Pass::Step(2), false).combine, [WorkTable::Chain(0), WorkTable::CapturesLose]);
        assert_eq!(PassSpec::of(Pass::Step(7), false).inputs, []);
        assert_eq!(PassSpec::of(Pass::Step(7), false).new_of, Some(Pass::Step(6)));
        assert_eq!(PassSpec::of(Pass::Step(7), false).combine, [WorkTable::Chain(5)]);
        assert_eq!(PassSpec::of(Pass::Step(1), false).inputs, [WorkTable::Chain(0)]);
        assert_eq!(PassSpec::of(Pass::Step(1), false).new_of, None);
        // The even chain holds `d`'s complement from step 2 on: later black steps need no `d`.
        assert_eq!(PassSpec::of(Pass::Step(8), false).inputs, [WorkTable::Chain(7)]);
        assert_eq!(PassSpec::of(Pass::Step(8), false).combine, [WorkTable::Chain(6)]);
        assert_eq!(obsolete_after(Pass::Step(1), false, true), []);
        assert_eq!(obsolete_after(Pass::Step(2), false, true), [WorkTable::Chain(0)]);
        // t99 and t100 stay for the merge when the chains go on past step 100.
        assert_eq!(obsolete_after(Pass::Step(101), false, true), []);
        assert_eq!(obsolete_after(Pass::Step(102), false, true), []);
        assert_eq!(obsolete_after(Pass::Step(103), false, true), [WorkTable::Chain(101)]);
        // Without a merge (no pawns) they go like the others.
        assert_eq!(obsolete_after(Pass::Step(101), false, false), [WorkTable::Chain(99)]);
        assert_eq!(obsolete_after(Pass::Step(102), true, false), [WorkTable::Chain(100)]);
        assert_eq!(WorkTable::Chain(7).name(), "t007");
    }

    #[test]
    fn eventual_levels_add_c_inf_at_step_103_and_d_inf_at_102() {
        use WorkTable::*;
        assert_eq!(PassSpec::of(Pass::InitWhite, true).outputs.last(), Some(&WinningCaptureEventual));
        assert_eq!(PassSpec::of(Pass::InitBlack, true).outputs.last(), Some(&CapturesLoseEventual));
        assert_eq!(PassSpec::of(Pass::Step(100), true).combine, [Chain(98)]);
        assert_eq!(PassSpec::of(Pass::Step(101), true).combine, [Chain(99)]);
        assert_eq!(PassSpec::of(Pass::Step(102), true).combine, [Chain(100), CapturesLose, CapturesLoseEventual]);
        assert_eq!(PassSpec::of(Pass::Step(102), false).combine, [Chain(100)]);
        assert_eq!(PassSpec::of(Pass::Step(103), true).combine, [Chain(101), WinningCaptureEventual]);
        assert_eq!(PassSpec::of(Pass::Step(103), true).new_of, Some(Pass::Step(102)));
        assert_eq!(PassSpec::of(Pass::Step(105), true).combine, [Chain(103)]);
        assert_eq!(PassSpec::of(Pass::Step(106), true).combine, [Chain(104)]);
        assert_eq!(obsolete_after(Pass::Step(103), true, true), [Chain(101), WinningCaptureEventual]);
    }

    #[test]
    fn an_eventual_level_skips_the_steps_after_two_empty_ones_up_to_100() {
        let run =
            |news: &[u64]| -> Vec<(Pass, u64)> { news.iter().enumerate().map(|(i, &n)| (Pass::nth(i), n)).collect() };
        // Init passes, steps 1..=3 add positions, steps 4 and 5 none: steps 6..=100 go.
        assert_eq!(still_steps(&run(&[0, 5, 3, 2, 1, 0, 0]), true), Some(6..=100));
        assert_eq!(still_steps(&run(&[0, 5, 3, 2, 1, 0, 0]), false), None);
        // One empty step is not enough, and an init pass does not count as a step.
        assert_eq!(still_steps(&run(&[0, 5, 3, 2, 1, 0]), true), None);
        assert_eq!(still_steps(&run(&[0, 0, 0]), true), None);
        // Steps 1 and 2 empty: everything from step 3 on.
        assert_eq!(still_steps(&run(&[0, 5, 0, 0]), true), Some(3..=100));
        // Steps 98 and 99 empty: step 100 alone; 99 and 100: none (101 onwards run).
        let mut long: Vec<u64> = vec![1; 2 + 97];
        long.extend([0, 0]);
        assert_eq!(still_steps(&run(&long), true), Some(100..=100));
        long.push(0);
        assert_eq!(still_steps(&run(&long), true), None);
        // Past 100 the steps run (cursed positions come in at steps 102 and 103).
        let mut past: Vec<u64> = vec![1; 2 + 101];
        past.extend([0, 0]);
        assert_eq!(still_steps(&run(&past), true), None);
    }

    #[test]
    fn chains_end_after_two_empty_steps_even_past_step_100() {
        let run =
            |news: &[u64]| -> Vec<(Pass, u64)> { news.iter().enumerate().map(|(i, &n)| (Pass::nth(i), n)).collect() };
        assert!(!chains_complete(&run(&[0, 5, 3, 0]), false));
        assert!(chains_complete(&run(&[0, 5, 3, 0, 0]), false));
        assert_eq!(last_step_within(&run(&[0, 5, 3, 0, 0]), 99), 1);
        // Steps 1..=130 add positions (passes -1, 0, then 130 steps), then two add none.
        let mut long: Vec<u64> = vec![1; 132];
        assert!(!chains_complete(&run(&long), false));
        long.extend([0, 0]);
        assert!(chains_complete(&run(&long), false));
        // An eventual level goes on to step 104 even when its chains stop early.
        let short = run(&[0, 5, 3, 0, 0]);
        assert!(!chains_complete(&short, true));
        let mut to_104: Vec<u64> = vec![0, 5, 3];
        to_104.resize(2 + 104, 0);
        assert!(!chains_complete(&run(&to_104[..2 + 103]), true));
        assert!(chains_complete(&run(&to_104), true));
        assert_eq!(last_step_within(&run(&long), LAST_STEP), 100);
        assert_eq!(last_step_within(&run(&long), LAST_STEP - 1), 99);
    }
}
