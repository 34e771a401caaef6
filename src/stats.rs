//! Statistics of a finished run: positions per value, longest wins.

use crate::format::{code_to_distance, TableFile, CODE_ILLEGAL, CODE_NONE};
use crate::material::Color;

/// Counts of one side to move of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SideStats {
    /// Stored slots, illegal ones included.
    pub slots: u64,
    pub illegal: u64,
    /// Legal positions not won for white.
    pub not_won: u64,
    /// Legal positions per stored distance (index = plies).
    pub by_distance: Vec<u64>,
}

impl SideStats {
    /// The longest stored distance, if any position is won.
    pub fn longest(&self) -> Option<u8> {
        self.by_distance.iter().rposition(|&n| n > 0).map(|d| d as u8)
    }

    /// Won (wtm) or lost (btm) positions for white's opponent.
    pub fn decided(&self) -> u64 {
        self.by_distance.iter().sum()
    }
}

/// Counts the value codes of one side of a run.
pub fn side_stats(file: &TableFile, stm: Color) -> SideStats {
    let mut s = SideStats { by_distance: vec![0; 101], ..Default::default() };
    for slot in 0..file.header.n_slots {
        s.slots += 1;
        match file.value_code(stm, slot) {
            CODE_ILLEGAL => s.illegal += 1,
            CODE_NONE => s.not_won += 1,
            c => s.by_distance[code_to_distance(stm, c).expect("distance") as usize] += 1,
        }
    }
    s
}

/// Longest win of a run over both sides to move (plies, chain parity), 0 if none.
pub fn longest_win(file: &TableFile) -> u8 {
    [Color::White, Color::Black].iter().filter_map(|&c| side_stats(file, c).longest()).max().unwrap_or(0)
}
