//! Endgame signatures (`KQRvKR`), their colour swap and the sub-endgames captures lead to.

use super::piece::Role;
use std::collections::BTreeSet;
use std::fmt;

/// Largest number of men a signature may hold.
pub const MAX_MEN: usize = 6;
/// Largest number of men besides the two kings.
pub const MAX_PIECES: usize = MAX_MEN - 2;

/// Why a signature was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MaterialError {
    #[error("empty endgame signature")]
    Empty,
    #[error("endgame '{0}': unknown piece letter '{1}' (expected K Q R B N)")]
    UnknownLetter(String, char),
    #[error("endgame '{0}': pawns are not supported yet")]
    Pawns(String),
    #[error("endgame '{0}': each side needs exactly one king, written first (e.g. KQvKR or KQKR)")]
    Kings(String),
    #[error("endgame '{0}': {1} men, but only 3 to {MAX_MEN} are supported")]
    Count(String, usize),
}

/// The material of an endgame: the non-king pieces of each side, strongest first.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Material {
    /// White's non-king pieces, ordered Q R B N.
    pub white: Vec<Role>,
    /// Black's non-king pieces, ordered Q R B N.
    pub black: Vec<Role>,
}

fn side_name(pieces: &[Role]) -> String {
    std::iter::once('K').chain(pieces.iter().map(|r| r.letter())).collect()
}

impl Material {
    /// Parses `KQRvKR` or the Edwards form `KQRKR` (split at the second king).
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
                    'P' | 'p' => return Err(MaterialError::Pawns(text.to_string())),
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

    /// The same material with colours exchanged (`KQvKR` -> `KRvKQ`).
    pub fn swapped(&self) -> Material {
        Material { white: self.black.clone(), black: self.white.clone() }
    }

    /// Whether swapping colours gives the same material (`KRvKR`).
    pub fn is_symmetric(&self) -> bool {
        self.white == self.black
    }

    /// Whether white has only its king (such a white-wins run holds no wins).
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

    /// The white-wins runs whose final bitbases this run's captures read.
    pub fn capture_runs(&self) -> BTreeSet<Material> {
        let mut out = BTreeSet::new();
        for &r in &self.black {
            out.insert(self.without_black(r));
        }
        for &r in &self.white {
            out.insert(self.without_white(r));
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

    /// Every non-trivial white-wins run needed to build `self`'s signature, smallest first:
    /// its own runs and, recursively, every run a capture leads to.
    pub fn closure(&self) -> Vec<Material> {
        let mut seen = BTreeSet::new();
        let mut todo = self.runs_of_signature();
        while let Some(m) = todo.pop() {
            if m.white_bare() || !seen.insert(m.clone()) {
                continue;
            }
            todo.extend(m.capture_runs());
        }
        let mut v: Vec<Material> = seen.into_iter().collect();
        v.sort_by_key(|m| (m.men(), m.to_string()));
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
    fn rejects_bad_signatures() {
        assert!(matches!(Material::parse("KPvK"), Err(MaterialError::Pawns(_))));
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
}
