//! The passes of a white-wins run and the work tables they read and write.
//!
//! Pass `InitWhite` finds the illegal positions of both sides and `c`; `InitBlack` finds `d`
//! and `t0`; step `k` computes `t(k)` from `t(k-1)` (white ORs over its moves for odd `k`,
//! black ANDs for even `k`), combined with `t(k-2)` and `c` or `d`. The odd chain starts
//! from the illegal wtm positions, which act as `t(-1)`.

use super::captures::Captures;
use super::frame::Frame;
use super::init::PushTargets;
use super::{init, kernels};
use crate::chess::Color;
use std::fmt;

/// The last step of the chains under the 50-move rule: `t100` (btm). Later steps find the
/// positions won only without the rule (cursed wins, and the losses they make blessed).
pub const LAST_STEP: u16 = 100;

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
    /// plies.
    Chain(u16),
    /// Btm positions whose only legal moves are losing zeroing moves (captures, pawn moves):
    /// the only ones whose loss can end with black's own move, the source of even wtm
    /// distances (empty: every wtm distance is odd, see `docs/CURSED.md`).
    ForcedZeroing,
    /// A solved level's final bitbase of a side to move (its `t99` or `t100`), kept for the
    /// levels below, whose pawn pushes lead into it.
    Final(Color),
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
        }
    }

    /// The chain table written by a pass: the illegal wtm positions stand for `t(-1)`.
    fn chain(k: i32) -> WorkTable {
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

/// The tables a pass reads and writes. Workers compute a chunk from `inputs` (read whole),
/// then combine it with `combine` (the previous table of the chain, and `c` or `d`), read
/// block by block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassSpec {
    pub pass: Pass,
    pub inputs: Vec<WorkTable>,
    pub combine: Vec<WorkTable>,
    pub outputs: Vec<WorkTable>,
}

impl PassSpec {
    pub fn of(pass: Pass) -> PassSpec {
        use WorkTable::*;
        let t = WorkTable::chain;
        let (inputs, combine, outputs) = match pass {
            Pass::InitWhite => (vec![], vec![], vec![IllegalWtm, WinningCapture, IllegalBtm]),
            Pass::InitBlack => (vec![IllegalWtm], vec![], vec![CapturesLose, Chain(0), ForcedZeroing]),
            Pass::Step(1) => (vec![Chain(0)], vec![IllegalWtm, WinningCapture], vec![Chain(1)]),
            Pass::Step(k) => {
                let k = k as i32;
                let extra = if k % 2 == 1 { vec![] } else { vec![CapturesLose] };
                (vec![t(k - 1)], [vec![t(k - 2)], extra].concat(), vec![t(k)])
            }
        };
        PassSpec { pass, inputs, combine, outputs }
    }
}

/// Computes one chunk of a pass from its chunk-local inputs: the init tables, or the words
/// that the side to move reaches (white: OR over moves; black: AND over moves). The init
/// passes also read the final words of the slices the mover's pawn pushes lead to.
pub fn compute_chunk(
    pass: Pass,
    frame: &Frame,
    caps: &Captures,
    pushes: &PushTargets,
    words: usize,
    mut inputs: Vec<Vec<u64>>,
) -> Vec<Vec<u64>> {
    match pass {
        Pass::InitWhite => {
            let mut illegal = vec![!0u64; words];
            let mut c = vec![0u64; words];
            init::init_white(frame, caps, pushes, &mut illegal, &mut c);
            let mut illegal_btm = vec![!0u64; words];
            init::illegal_btm(frame, &mut illegal_btm);
            vec![illegal, c, illegal_btm]
        }
        Pass::InitBlack => {
            let illegal_wtm = inputs.pop().expect("input");
            let mut d = vec![!0u64; words];
            kernels::black_moves(frame, &illegal_wtm, &mut d);
            drop(illegal_wtm);
            let mut t0 = vec![0u64; words];
            // Before `init_black`, `d` holds the positions without a legal quiet move.
            let mut forced = d.clone();
            init::init_black(frame, caps, pushes, &mut d, &mut t0);
            for (f, &d) in forced.iter_mut().zip(&d) {
                *f &= d;
            }
            vec![d, t0, forced]
        }
        Pass::Step(k) if k % 2 == 1 => {
            let mut out = vec![0u64; words];
            kernels::white_moves(frame, &inputs[0], &mut out);
            vec![out]
        }
        Pass::Step(_) => {
            let mut out = vec![!0u64; words];
            kernels::black_moves(frame, &inputs[0], &mut out);
            vec![out]
        }
    }
}

/// Combines a kernel's word `out` of step `k` with the previous table of the chain (`old`)
/// and `c` (step 1) or `d` (even steps): returns the step's table word and its new bits.
#[inline]
pub fn combine(k: u16, out: u64, old: u64, extra: u64) -> (u64, u64) {
    let reached = match k {
        1 => out | extra,
        k if k % 2 == 1 => out,
        _ => out & extra,
    };
    (old | reached, reached & !old)
}

/// The tables that no pass after `pass` reads, deleted once it is finished: `c` after step
/// 1, `t(k-2)` after step `k` (`t(k)` contains it), except `t99` and `t100`, the final
/// bitbases under the 50-move rule, which the merge reads.
pub fn obsolete_after(pass: Pass) -> Vec<WorkTable> {
    match pass {
        Pass::Step(1) => vec![WorkTable::WinningCapture],
        Pass::Step(k) if k == LAST_STEP + 1 || k == LAST_STEP + 2 => Vec::new(),
        Pass::Step(k) => vec![WorkTable::chain(k as i32 - 2)],
        _ => Vec::new(),
    }
}

/// Whether the chains are complete, given the new positions of each finished pass in order:
/// one odd and one even step in a row added nothing (every later table is equal). The
/// chains go on past step 100 (without the 50-move rule) until then.
pub fn chains_complete(new_per_pass: &[(Pass, u64)]) -> bool {
    let steps: Vec<&(Pass, u64)> = new_per_pass.iter().filter(|(p, _)| !p.is_init()).collect();
    steps.len() >= 2 && steps[steps.len() - 2..].iter().all(|(_, new)| *new == 0)
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
        assert_eq!(PassSpec::of(Pass::Step(1)).combine, [WorkTable::IllegalWtm, WorkTable::WinningCapture]);
        assert_eq!(PassSpec::of(Pass::Step(2)).combine, [WorkTable::Chain(0), WorkTable::CapturesLose]);
        assert_eq!(PassSpec::of(Pass::Step(7)).inputs, [WorkTable::Chain(6)]);
        assert_eq!(PassSpec::of(Pass::Step(7)).combine, [WorkTable::Chain(5)]);
        assert_eq!(obsolete_after(Pass::Step(1)), [WorkTable::WinningCapture]);
        assert_eq!(obsolete_after(Pass::Step(2)), [WorkTable::Chain(0)]);
        // t99 and t100 stay for the merge when the chains go on past step 100.
        assert_eq!(obsolete_after(Pass::Step(101)), []);
        assert_eq!(obsolete_after(Pass::Step(102)), []);
        assert_eq!(obsolete_after(Pass::Step(103)), [WorkTable::Chain(101)]);
        assert_eq!(WorkTable::Chain(7).name(), "t007");
    }

    #[test]
    fn chains_end_after_two_empty_steps_even_past_step_100() {
        let run =
            |news: &[u64]| -> Vec<(Pass, u64)> { news.iter().enumerate().map(|(i, &n)| (Pass::nth(i), n)).collect() };
        assert!(!chains_complete(&run(&[0, 5, 3, 0])));
        assert!(chains_complete(&run(&[0, 5, 3, 0, 0])));
        assert_eq!(last_step_within(&run(&[0, 5, 3, 0, 0]), 99), 1);
        // Steps 1..=130 add positions (passes -1, 0, then 130 steps), then two add none.
        let mut long: Vec<u64> = vec![1; 132];
        assert!(!chains_complete(&run(&long)));
        long.extend([0, 0]);
        assert!(chains_complete(&run(&long)));
        assert_eq!(last_step_within(&run(&long), LAST_STEP), 100);
        assert_eq!(last_step_within(&run(&long), LAST_STEP - 1), 99);
    }
}
