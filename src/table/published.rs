//! The statistics the leading generator publishes with its tables (its `--stats` output, one
//! block per table, concatenated), and their comparison with a signature's [`SignatureStats`].
//!
//! A block: `########## NAME ##########`, then for "White to move:" and "Black to move:" the
//! lines `N positions win in K ply.` and `N positions lose in K ply.` (K above 100: cursed),
//! the totals `N positions are wins.` (`cursed wins`, `draws`, `cursed losses`, `losses`; a
//! zero cursed line may be left out) from the side to move's point of view, and last
//! `Longest win for white: K ply; FEN` (for black, and `Longest cursed win for ...`).
//!
//! The published distances count the plies to the zeroing move; ours round them up to the
//! parity of the side to move ([`parity_folded`]).
//!
//! The published counts take one position per class up to the board's symmetries, as
//! [`SignatureStats`] does, but count every order of identical men (two white bishops: both
//! orders). Wins, cursed results and the histogram are then exactly that many times ours
//! ([`order_factor`]); the draws differ by the positions the two indexes class differently,
//! a fraction of a percent.

use crate::chess::{Color, Material, Role};
use crate::table::stats::{SignatureStats, ToMove};
use std::collections::BTreeMap;
use std::fmt;

/// One side to move of a published block, from the side to move's point of view.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PublishedSide {
    pub wins: u64,
    pub cursed_wins: u64,
    pub draws: u64,
    pub cursed_losses: u64,
    pub losses: u64,
    /// Positions the side to move wins in K plies (K > 100: cursed wins).
    pub win_in: BTreeMap<u32, u64>,
    /// Positions the side to move loses in K plies (0: checkmated; K > 100: blessed losses).
    pub lose_in: BTreeMap<u32, u64>,
}

/// One table's published block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PublishedTable {
    /// The name as published (`KRRvKQ`: the side with more men first).
    pub name: String,
    pub white_to_move: PublishedSide,
    pub black_to_move: PublishedSide,
    /// Longest wins and cursed wins for white and black, in plies (0: none published).
    pub longest_white: u32,
    pub longest_black: u32,
    pub longest_cursed_white: u32,
    pub longest_cursed_black: u32,
}

/// A line of a statistics file that is not in the published format.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {message}: {text:?}")]
pub struct PublishedError {
    pub line: usize,
    pub text: String,
    pub message: &'static str,
}

/// Parses a statistics file (any number of blocks, in file order).
pub fn parse_published(text: &str) -> Result<Vec<PublishedTable>, PublishedError> {
    let mut tables: Vec<PublishedTable> = Vec::new();
    let mut side: Option<Color> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let error = |message| PublishedError { line: i + 1, text: raw.to_string(), message };
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix("##########").and_then(|l| l.strip_suffix("##########")) {
            tables.push(PublishedTable { name: name.trim().to_string(), ..Default::default() });
            side = None;
            continue;
        }
        let table = tables.last_mut().ok_or_else(|| error("a line before the first table"))?;
        match line {
            "White to move:" => side = Some(Color::White),
            "Black to move:" => side = Some(Color::Black),
            _ if line.starts_with("Longest ") => {
                let (what, plies) = parse_longest(line).ok_or_else(|| error("not a longest win"))?;
                match what {
                    "win for white" => table.longest_white = plies,
                    "win for black" => table.longest_black = plies,
                    "cursed win for white" => table.longest_cursed_white = plies,
                    "cursed win for black" => table.longest_cursed_black = plies,
                    _ => return Err(error("not a longest win")),
                }
            }
            _ => {
                let side = match side.ok_or_else(|| error("a count before a side to move"))? {
                    Color::White => &mut table.white_to_move,
                    Color::Black => &mut table.black_to_move,
                };
                parse_count(line, side).ok_or_else(|| error("not a count"))?;
            }
        }
    }
    Ok(tables)
}

/// `Longest cursed win for white: 102 ply; FEN` -> ("cursed win for white", 102).
fn parse_longest(line: &str) -> Option<(&str, u32)> {
    let (what, rest) = line.strip_prefix("Longest ")?.split_once(": ")?;
    let plies = rest.split_once(" ply")?.0.trim().parse().ok()?;
    Some((what, plies))
}

/// Adds one count line to `side`; `None` when the line is no count.
fn parse_count(line: &str, side: &mut PublishedSide) -> Option<()> {
    let (n, rest) = line.split_once(" positions ")?;
    let n: u64 = n.trim().parse().ok()?;
    let rest = rest.strip_suffix('.')?;
    if let Some(k) = rest.strip_prefix("win in ").and_then(|r| r.strip_suffix(" ply")) {
        *side.win_in.entry(k.parse().ok()?).or_default() += n;
    } else if let Some(k) = rest.strip_prefix("lose in ").and_then(|r| r.strip_suffix(" ply")) {
        *side.lose_in.entry(k.parse().ok()?).or_default() += n;
    } else {
        let total = match rest {
            "are wins" => &mut side.wins,
            "are cursed wins" => &mut side.cursed_wins,
            "are draws" => &mut side.draws,
            "are cursed losses" => &mut side.cursed_losses,
            "are losses" => &mut side.losses,
            _ => return None,
        };
        *total = n;
    }
    Some(())
}

/// How many times the published counts take each of our positions: every order of
/// identical men (the product of their counts' factorials: 2 for KBBvKN, 24 for KBBBBvK).
pub fn order_factor(material: &Material) -> u64 {
    let mut factor = 1;
    for color in [Color::White, Color::Black] {
        for role in [Role::Pawn, Role::Knight, Role::Bishop, Role::Rook, Role::Queen] {
            let count = material.side(color).iter().filter(|&&r| r == role).count() as u64;
            factor *= (1..=count).product::<u64>();
        }
    }
    factor
}

/// With identical men, a published count may differ from `factor` times ours by at most this
/// fraction of the side to move's positions: the positions that one order of the identical
/// men maps onto itself (a symmetric placement, kings on the diagonal) are counted once
/// there, and the two indexes class a few positions differently.
pub const ORDER_TOLERANCE: f64 = 0.001;

/// The comparison of one table with its published block.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub name: String,
    /// Published counts per position of ours ([`order_factor`]).
    pub factor: u64,
    /// What differs beyond the counting rules, one line each (empty: the table matches).
    pub differences: Vec<String>,
    /// With identical men: the largest difference between a published count and `factor`
    /// times ours, as a fraction of the side to move's positions.
    pub largest_offset: f64,
}

impl Comparison {
    pub fn matches(&self) -> bool {
        self.differences.is_empty()
    }
}

impl fmt::Display for Comparison {
    /// One verdict line: `KQvKR: equal`, `KBBvKN: equal (x2 orders of identical men, counts
    /// within 0.0021%)` or `KQPvKP: DIFFERS: ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.matches() {
            return write!(f, "{}: DIFFERS: {}", self.name, self.differences.join("; "));
        }
        write!(f, "{}: equal", self.name)?;
        if self.factor > 1 {
            write!(
                f,
                " (x{} orders of identical men, counts within {:.4}%)",
                self.factor,
                100.0 * self.largest_offset
            )?;
        }
        Ok(())
    }
}

/// Compares our statistics of a signature (in the published name's colours) with its block:
/// every count and the histogram (in our parity) exactly, or with identical men within
/// [`ORDER_TOLERANCE`] of `factor` times ours; the longest wins to the ply (theirs may be
/// one ply shorter, [`parity_folded`]).
pub fn compare(published: &PublishedTable, ours: &SignatureStats) -> Comparison {
    let factor = order_factor(&ours.material);
    let mut differences = Vec::new();
    let mut largest_offset: f64 = 0.0;
    for (label, theirs, mine) in [
        ("white to move", &published.white_to_move, &ours.white_to_move),
        ("black to move", &published.black_to_move, &ours.black_to_move),
    ] {
        let expected = side_to_move_view(mine);
        let positions = (theirs.wins + theirs.cursed_wins + theirs.draws + theirs.cursed_losses + theirs.losses).max(1);
        let mut check = |what: String, t: u64, m: u64| {
            let offset = t.abs_diff(factor * m) as f64 / positions as f64;
            if factor > 1 && offset <= ORDER_TOLERANCE {
                largest_offset = largest_offset.max(offset);
            } else if t != factor * m {
                differences.push(format!("{label} {what}: published {t}, ours {}", factor * m));
            }
        };
        let totals = [
            ("wins", theirs.wins, expected.wins),
            ("cursed wins", theirs.cursed_wins, expected.cursed_wins),
            ("draws", theirs.draws, expected.draws),
            ("cursed losses", theirs.cursed_losses, expected.cursed_losses),
            ("losses", theirs.losses, expected.losses),
        ];
        for (what, t, m) in totals {
            check(what.to_string(), t, m);
        }
        let (win_in, lose_in) = (parity_folded(&theirs.win_in, 1), parity_folded(&theirs.lose_in, 0));
        for (what, t, m) in [("win", &win_in, &expected.win_in), ("lose", &lose_in, &expected.lose_in)] {
            let plies: std::collections::BTreeSet<u32> =
                t.keys().chain(m.keys()).copied().filter(|&k| k <= 100).collect();
            for k in plies {
                check(format!("{what} in {k} ply"), t.get(&k).copied().unwrap_or(0), m.get(&k).copied().unwrap_or(0));
            }
        }
    }
    let longest = [
        ("longest win for white", published.longest_white, ours.longest(Color::White) as u32),
        ("longest win for black", published.longest_black, ours.longest(Color::Black) as u32),
    ];
    for (what, t, m) in longest {
        if t != m && t + 1 != m {
            differences.push(format!("{what}: published {t} plies, ours {m}"));
        }
    }
    Comparison { name: published.name.clone(), factor, differences, largest_offset }
}

/// A published histogram in the parity of ours: a step of this scheme alternates the sides
/// to move, so a win is counted at an odd ply count when the winner is to move and at an
/// even one when the loser is; the published distance counts the plies to the zeroing move,
/// which the loser may make (a forced capture), one ply sooner. Its `K` then counts at `K +
/// 1` here (`parity`: 1 for wins, 0 for losses). Cursed distances (above 100) are left out.
fn parity_folded(histogram: &BTreeMap<u32, u64>, parity: u32) -> BTreeMap<u32, u64> {
    let mut folded = BTreeMap::new();
    for (&k, &n) in histogram.iter().filter(|(&k, _)| k <= 100) {
        *folded.entry(if k % 2 == parity || k == 0 { k } else { k + 1 }).or_default() += n;
    }
    folded
}

/// One side to move of ours, seen from the side to move like a published block.
fn side_to_move_view(t: &ToMove) -> PublishedSide {
    let histogram = |by_distance: &[u64]| -> BTreeMap<u32, u64> {
        by_distance.iter().enumerate().filter(|(_, &n)| n > 0).map(|(k, &n)| (k as u32, n)).collect()
    };
    let (wins, cursed_wins, cursed_losses, losses, win_in, lose_in) = if t.side == Color::White {
        (t.white_wins, t.white_cursed, t.black_cursed, t.black_wins, &t.white_by_distance, &t.black_by_distance)
    } else {
        (t.black_wins, t.black_cursed, t.white_cursed, t.white_wins, &t.black_by_distance, &t.white_by_distance)
    };
    PublishedSide {
        wins,
        cursed_wins,
        draws: t.draws(),
        cursed_losses,
        losses,
        win_in: histogram(win_in),
        lose_in: histogram(lose_in),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOCK: &str = "########## KQPvKP ##########

White to move:

139736449 positions win in 1 ply.
17 positions win in 101 ply.

149246301 positions are wins.
19 positions are cursed wins.
7104 positions are draws.
1083 positions are losses.

59 positions lose in 0 ply.

Black to move:

7365760 positions win in 1 ply.

7365760 positions are wins.
16266193 positions are draws.
3266 positions are cursed losses.
199447421 positions are losses.

3266 positions lose in 101 ply.

Longest win for white: 10 ply; 1Q6/8/8/8/4K3/1P6/1p5k/8 b - -
Longest cursed win for white: 102 ply; 8/8/3Q4/1P6/8/8/4kp2/6K1 w - -
Longest win for black: 2 ply; 8/P7/8/8/Q7/8/1p6/K1k5 w - -
";

    #[test]
    fn a_published_block_parses() {
        let tables = parse_published(BLOCK).unwrap();
        assert_eq!(tables.len(), 1);
        let t = &tables[0];
        assert_eq!(t.name, "KQPvKP");
        assert_eq!(t.white_to_move.wins, 149246301);
        assert_eq!(t.white_to_move.cursed_wins, 19);
        assert_eq!(t.white_to_move.win_in[&101], 17);
        assert_eq!(t.white_to_move.lose_in[&0], 59);
        assert_eq!(t.black_to_move.cursed_losses, 3266);
        assert_eq!(t.black_to_move.cursed_wins, 0);
        assert_eq!((t.longest_white, t.longest_cursed_white, t.longest_black), (10, 102, 2));
    }

    #[test]
    fn malformed_lines_are_refused_with_their_number() {
        let e = parse_published("########## KQvK ##########\nWhite to move:\n12 positions are winning.\n").unwrap_err();
        assert_eq!(e.line, 3);
        assert!(parse_published("3 positions are wins.\n").is_err());
        assert!(parse_published("########## KQvK ##########\n3 positions are wins.\n").is_err());
    }

    #[test]
    fn identical_men_multiply_the_published_counts() {
        let factor = |s: &str| order_factor(&Material::parse(s).unwrap());
        assert_eq!(factor("KQRvKR"), 1);
        assert_eq!(factor("KBBvKN"), 2);
        assert_eq!(factor("KPPvKP"), 2);
        assert_eq!(factor("KBBBBvK"), 24);
        assert_eq!(factor("KRRvKRR"), 4);
    }
}
