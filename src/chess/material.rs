//! Endgame signatures (`KQRvKR`, `KRPvKR`), their colour swap and the sub-endgames that
//! captures and promotions lead to.

use super::piece::{Color, Role};
use std::collections::BTreeSet;
use std::fmt;

/// Largest number of men a signature may hold.
pub const MAX_MEN: usize = 6;
/// Largest number of men besides the two kings.
pub const MAX_PIECES: usize = MAX_MEN - 2;
/// Most pawns a side can have.
pub const MAX_PAWNS_PER_SIDE: usize = 8;

/// Why a signature was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MaterialError {
    #[error("empty endgame signature")]
    Empty,
    #[error("endgame '{0}': unknown piece letter '{1}' (expected K Q R B N P)")]
    UnknownLetter(String, char),
    #[error("endgame '{0}': each side needs exactly one king, written first (e.g. KQvKR or KQKR)")]
    Kings(String),
    #[error("endgame '{0}': {1} pawns on one side, but a side has at most {MAX_PAWNS_PER_SIDE}")]
    TooManyPawns(String, usize),
    #[error("endgame '{0}': {1} men, but only 3 to {MAX_MEN} are supported")]
    Count(String, usize),
}

/// The material of an endgame: the men of each side besides its king, strongest first.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Material {
    /// White's men besides the king, ordered Q R B N P.
    pub white: Vec<Role>,
    /// Black's men besides the king, ordered Q R B N P.
    pub black: Vec<Role>,
}

fn side_name(men: &[Role]) -> String {
    std::iter::once('K').chain(men.iter().map(|r| r.letter())).collect()
}

impl Material {
    /// Parses `KQRvKR`, `KRPvKR` or the Edwards form `KQRKR` (split at the second king).
    pub fn parse(text: &str) -> Result<Material, MaterialError> {
        let s = text.trim();
        if s.is_empty() {
            return Err(MaterialError::Empty);
        }
        let (w, b) = match s.split_once(['v', 'V']) {
            Some((w, b)) => (w, b),
            // Edwards form: split at the second king ('K' is one byte, so slicing is safe).
            None => match s.strip_prefix('K').and_then(|rest| rest.find('K')).map(|i| i + 1) {
                Some(i) => (&s[..i], &s[i..]),
                None => return Err(MaterialError::Kings(text.to_string())),
            },
        };
        let side = |part: &str| -> Result<Vec<Role>, MaterialError> {
            let mut chars = part.chars();
            if chars.next() != Some('K') {
                return Err(MaterialError::Kings(text.to_string()));
            }
            let mut roles = Vec::new();
            for c in chars {
                match c {
                    'K' => return Err(MaterialError::Kings(text.to_string())),
                    c => match Role::from_letter(c) {
                        Some(r) if c.is_ascii_uppercase() => roles.push(r),
                        _ => return Err(MaterialError::UnknownLetter(text.to_string(), c)),
                    },
                }
            }
            roles.sort();
            Ok(roles)
        };
        let m = Material { white: side(w)?, black: side(b)? };
        // Before the size check, so that nine pawns are named as such.
        for color in [Color::White, Color::Black] {
            if m.pawns(color) > MAX_PAWNS_PER_SIDE {
                return Err(MaterialError::TooManyPawns(text.to_string(), m.pawns(color)));
            }
        }
        if !(3..=MAX_MEN).contains(&m.men()) {
            return Err(MaterialError::Count(text.to_string(), m.men()));
        }
        Ok(m)
    }

    /// Builds a material from role lists (kings implied), sorting them. No size check.
    pub fn new(mut white: Vec<Role>, mut black: Vec<Role>) -> Material {
        white.sort();
        black.sort();
        Material { white, black }
    }

    /// Number of men including both kings.
    pub fn men(&self) -> usize {
        2 + self.white.len() + self.black.len()
    }

    /// The men of one side besides its king.
    pub fn side(&self, color: Color) -> &[Role] {
        match color {
            Color::White => &self.white,
            Color::Black => &self.black,
        }
    }

    /// Number of pawns of one side.
    pub fn pawns(&self, color: Color) -> usize {
        self.side(color).iter().filter(|&&r| r == Role::Pawn).count()
    }

    /// Pawns of both sides.
    pub fn pawn_count(&self) -> usize {
        self.pawns(Color::White) + self.pawns(Color::Black)
    }

    /// Whether either side has a pawn.
    pub fn has_pawns(&self) -> bool {
        self.pawn_count() > 0
    }

    /// The same material with colours exchanged (`KQvKR` -> `KRvKQ`).
    pub fn swapped(&self) -> Material {
        Material { white: self.black.clone(), black: self.white.clone() }
    }

    /// Whether swapping colours gives the same material (`KRvKR`).
    pub fn is_symmetric(&self) -> bool {
        self.white == self.black
    }

    /// Whether white has only its king, no piece and no pawn (such a white-wins run holds no
    /// wins).
    pub fn white_bare(&self) -> bool {
        self.white.is_empty()
    }

    /// Material after white captures a black `role`.
    pub fn without_black(&self, role: Role) -> Material {
        let mut black = self.black.clone();
        let i = black.iter().position(|&r| r == role).expect("captured role present");
        black.remove(i);
        Material { white: self.white.clone(), black }
    }

    /// Material after black captures a white `role`.
    pub fn without_white(&self, role: Role) -> Material {
        let mut white = self.white.clone();
        let i = white.iter().position(|&r| r == role).expect("captured role present");
        white.remove(i);
        Material { white, black: self.black.clone() }
    }

    /// Material after a pawn of `color` promotes to `to`.
    pub fn promoted(&self, color: Color, to: Role) -> Material {
        assert!(Role::PROMOTIONS.contains(&to), "a pawn cannot promote to {to:?}");
        let mut m = self.clone();
        let side = if color == Color::White { &mut m.white } else { &mut m.black };
        let i = side.iter().position(|&r| r == Role::Pawn).expect("promoting pawn present");
        side[i] = to;
        side.sort();
        m
    }

    /// Every material one conversion away, for either side to move: each capture of a man
    /// (pawns included), each promotion to Q, R, B or N, and each promotion that captures a
    /// piece (never a pawn: none stands on the last rank). These are the runs whose final
    /// bitbases this run's conversions read (the bare-white ones hold no table).
    pub fn successor_runs(&self) -> BTreeSet<Material> {
        let mut out = BTreeSet::new();
        for &r in &self.black {
            out.insert(self.without_black(r));
        }
        for &r in &self.white {
            out.insert(self.without_white(r));
        }
        for color in [Color::White, Color::Black] {
            if self.pawns(color) == 0 {
                continue;
            }
            for to in Role::PROMOTIONS {
                let promoted = self.promoted(color, to);
                for &victim in self.side(color.other()).iter().filter(|&&r| r != Role::Pawn) {
                    out.insert(match color {
                        Color::White => promoted.without_black(victim),
                        Color::Black => promoted.without_white(victim),
                    });
                }
                out.insert(promoted);
            }
        }
        out
    }

    /// The white-wins runs a signature needs: itself and its colour swap (once if symmetric),
    /// without runs where white is bare.
    pub fn runs_of_signature(&self) -> Vec<Material> {
        let mut runs = vec![self.clone()];
        if !self.is_symmetric() {
            runs.push(self.swapped());
        }
        runs.retain(|m| !m.white_bare());
        runs
    }

    /// Whether this is the published orientation of its signature: the side with more men
    /// first, else the stronger men (`KRRvKQ`, `KQvKR`; not `KRvKQ`).
    pub fn is_published_orientation(&self) -> bool {
        (self.white.len(), std::cmp::Reverse(&self.white)) >= (self.black.len(), std::cmp::Reverse(&self.black))
    }

    /// Every signature of `men` men (3 to [`MAX_MEN`]), each once in its published orientation
    /// ([`Material::is_published_orientation`]), in build order: the set a table collection of
    /// that size holds (5 of 3 men, 30 of 4, 110 of 5, 365 of 6).
    pub fn every_signature(men: usize) -> Vec<Material> {
        const ROLES: [Role; 5] = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight, Role::Pawn];
        /// Every sorted list of `n` roles from `ROLES[from..]`.
        fn lists(n: usize, from: usize) -> Vec<Vec<Role>> {
            if n == 0 {
                return vec![Vec::new()];
            }
            (from..ROLES.len())
                .flat_map(|i| lists(n - 1, i).into_iter().map(move |rest| [vec![ROLES[i]], rest].concat()))
                .collect()
        }
        let pieces = men.saturating_sub(2);
        let mut set: Vec<Material> = (pieces.div_ceil(2)..=pieces)
            .flat_map(|w| {
                let blacks = lists(pieces - w, 0);
                lists(w, 0).into_iter().flat_map(move |white| {
                    blacks.clone().into_iter().map(move |black| Material::new(white.clone(), black))
                })
            })
            .filter(|m| m.is_published_orientation() && (3..=MAX_MEN).contains(&m.men()))
            .collect();
        set.sort_by_key(Material::order_key);
        set
    }

    /// Sort key of the build order: men, then pawns of both sides, then the name. A run's
    /// successors have fewer men, or as many men and fewer pawns (a promotion), so they sort
    /// first.
    pub fn order_key(&self) -> (usize, usize, String) {
        (self.men(), self.pawn_count(), self.to_string())
    }

    /// Every non-trivial white-wins run needed to build `self`'s signature, in build order
    /// ([`Material::order_key`]): its own runs and, recursively, the runs of both colours of
    /// every successor.
    pub fn closure(&self) -> Vec<Material> {
        let mut seen = BTreeSet::new();
        let mut todo = self.runs_of_signature();
        while let Some(m) = todo.pop() {
            if !seen.insert(m.clone()) {
                continue;
            }
            todo.extend(m.successor_runs().iter().flat_map(Material::runs_of_signature));
        }
        let mut v: Vec<Material> = seen.into_iter().collect();
        v.sort_by_key(Material::order_key);
        v
    }
}

impl fmt::Display for Material {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", side_name(&self.white), side_name(&self.black))
    }
}

impl std::str::FromStr for Material {
    type Err = MaterialError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Material::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_forms_and_normalises_order() {
        assert_eq!(Material::parse("KQRvKR").unwrap().to_string(), "KQRvKR");
        assert_eq!(Material::parse("KQRKR").unwrap().to_string(), "KQRvKR");
        assert_eq!(Material::parse("KNQvK").unwrap().to_string(), "KQNvK");
        assert_eq!(Material::parse("KvKQ").unwrap().to_string(), "KvKQ");
    }

    #[test]
    fn parses_pawns_after_the_pieces() {
        for (text, shown) in [
            ("KRPvKR", "KRPvKR"),
            ("KPRvKR", "KRPvKR"),
            ("KRPKR", "KRPvKR"),
            ("KPvKP", "KPvKP"),
            ("KPPvK", "KPPvK"),
            ("KvKP", "KvKP"),
            ("KPNvKPQ", "KNPvKQP"),
        ] {
            assert_eq!(Material::parse(text).unwrap().to_string(), shown, "{text}");
        }
        let m = Material::parse("KRPPvKP").unwrap();
        assert_eq!((m.pawns(Color::White), m.pawns(Color::Black), m.has_pawns()), (2, 1, true));
        assert!(!Material::parse("KQvKR").unwrap().has_pawns());
        assert!(!Material::parse("KPvKR").unwrap().white_bare());
        assert!(Material::parse("KvKP").unwrap().white_bare());
        assert_eq!(m.promoted(Color::White, Role::Knight).to_string(), "KRNPvKP");
        assert_eq!(m.promoted(Color::Black, Role::Queen).to_string(), "KRPPvKQ");
        assert_eq!(m.without_white(Role::Pawn).to_string(), "KRPvKP");
        assert_eq!(m.without_black(Role::Pawn).to_string(), "KRPPvK");
    }

    #[test]
    fn rejects_bad_signatures() {
        assert_eq!(Material::parse("KPPPPPPPPPvK"), Err(MaterialError::TooManyPawns("KPPPPPPPPPvK".into(), 9)));
        assert_eq!(Material::parse("KvKPPPPPPPPP"), Err(MaterialError::TooManyPawns("KvKPPPPPPPPP".into(), 9)));
        assert_eq!(Material::parse("KPPPPPvK"), Err(MaterialError::Count("KPPPPPvK".into(), 7)));
        assert_eq!(Material::parse("KRPPvKRP"), Err(MaterialError::Count("KRPPvKRP".into(), 7)));
        assert_eq!(Material::parse("KpvK"), Err(MaterialError::UnknownLetter("KpvK".into(), 'p')));
        assert_eq!(Material::parse("PKvK"), Err(MaterialError::Kings("PKvK".into())));
        assert!(matches!(Material::parse("KXvK"), Err(MaterialError::UnknownLetter(..))));
        assert!(matches!(Material::parse("QvK"), Err(MaterialError::Kings(_))));
        assert!(matches!(Material::parse("KvK"), Err(MaterialError::Count(..))));
        assert!(matches!(Material::parse("KQQQQvKR"), Err(MaterialError::Count(..))));
        assert!(matches!(Material::parse("KQvKKR"), Err(MaterialError::Kings(_))));
        assert!(matches!(Material::parse(""), Err(MaterialError::Empty)));
        assert!(matches!(Material::parse("KqvK"), Err(MaterialError::UnknownLetter(..))));
        assert!(Material::parse("ÄKQK").is_err());
        assert!(Material::parse("KQÄK").is_err());
    }

    #[test]
    fn closure_is_ordered_and_complete() {
        let c = Material::parse("KQvKR").unwrap().closure();
        let names: Vec<String> = c.iter().map(|m| m.to_string()).collect();
        assert_eq!(names, ["KQvK", "KRvK", "KQvKR", "KRvKQ"]);
    }

    fn names(runs: &[Material]) -> Vec<String> {
        runs.iter().map(|m| m.to_string()).collect()
    }

    #[test]
    fn successors_hold_captures_and_promotions() {
        let m = Material::parse("KRPvKR").unwrap();
        let successors: Vec<Material> = m.successor_runs().into_iter().collect();
        let mut got = names(&successors);
        got.sort();
        let mut expected = [
            "KPvKR", "KRvKR", "KRPvK", // captures
            "KQRvKR", "KRRvKR", "KRBvKR", "KRNvKR", // promotions
            "KQRvK", "KRRvK", "KRBvK", "KRNvK", // promotions taking the rook
        ];
        expected.sort();
        assert_eq!(got, expected);
        // A promoting pawn never takes a pawn: KPvKP's promotions keep the other side's pawn.
        let expected: BTreeSet<Material> =
            ["KPvK", "KvKP", "KQvKP", "KRvKP", "KBvKP", "KNvKP", "KPvKQ", "KPvKR", "KPvKB", "KPvKN"]
                .iter()
                .map(|s| Material::parse(s).unwrap())
                .collect();
        assert_eq!(Material::parse("KPvKP").unwrap().successor_runs(), expected);
    }

    #[test]
    fn closures_with_pawns_match_the_design() {
        // docs: ../shared/docs/pawns.md section 4, in build order.
        let krpvkr = "KBvK KNvK KQvK KRvK KPvK KBvKR KNvKR KQRvK KQvKR KRBvK KRNvK KRRvK KRvKB KRvKN KRvKQ KRvKR \
                      KPvKR KRPvK KRvKP KQRvKR KRBvKR KRNvKR KRRvKR KRvKQR KRvKRB KRvKRN KRvKRR KRPvKR KRvKRP";
        let kpvkp = "KBvK KNvK KQvK KRvK KPvK KBvKB KBvKN KBvKQ KBvKR KNvKB KNvKN KNvKQ KNvKR KQvKB KQvKN KQvKQ \
                     KQvKR KRvKB KRvKN KRvKQ KRvKR KBvKP KNvKP KPvKB KPvKN KPvKQ KPvKR KQvKP KRvKP KPvKP";
        for (sig, expected, n) in [("KRPvKR", krpvkr, 29), ("KPvKP", kpvkp, 30)] {
            let closure = Material::parse(sig).unwrap().closure();
            let expected: Vec<&str> = expected.split_whitespace().collect();
            assert_eq!(expected.len(), n);
            assert_eq!(names(&closure), expected, "{sig}");
        }
    }

    #[test]
    fn every_run_of_a_closure_comes_after_its_successors() {
        for sig in ["KRPvKR", "KPvKP", "KPPvKP", "KQPvKR", "KRPPvKR", "KBNPvK"] {
            let closure = Material::parse(sig).unwrap().closure();
            for (i, run) in closure.iter().enumerate() {
                for sub in run.successor_runs().iter().flat_map(Material::runs_of_signature) {
                    let at = closure.iter().position(|m| *m == sub);
                    assert!(at.is_some_and(|j| j < i), "{sig}: {run} needs {sub}, which is not built before it");
                }
            }
        }
    }

    #[test]
    fn every_signature_of_a_size_once_in_the_published_orientation() {
        let counts: Vec<usize> = (3..=6).map(|n| Material::every_signature(n).len()).collect();
        assert_eq!(counts, [5, 30, 110, 365]);
        let five = Material::every_signature(5);
        for name in ["KQQvKR", "KQQQvK", "KRRvKQ", "KQvKRR", "KBPvKN", "KPvKPP"] {
            let m = Material::parse(name).unwrap();
            let found = five.iter().filter(|s| s.runs_of_signature().contains(&m) || **s == m.swapped()).count();
            assert_eq!(found, 1, "{name}");
        }
        assert!(five.contains(&Material::parse("KRRvKQ").unwrap()));
        assert!(Material::every_signature(4).contains(&Material::parse("KQvKR").unwrap()));
        assert!(!Material::every_signature(4).contains(&Material::parse("KRvKQ").unwrap()));
        let pawnless = Material::every_signature(6).iter().filter(|m| !m.has_pawns()).count();
        assert_eq!(pawnless, 365 - 195);
        assert!(Material::every_signature(2).is_empty() && Material::every_signature(7).is_empty());
    }
}
