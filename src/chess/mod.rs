//! The chess vocabulary: squares and the board's symmetries, the men, attack sets, material
//! signatures, and a plain one-position board with FEN, legal moves, their SAN and dead
//! positions.
//!
//! Owns: the rules of chess and its vocabulary. May import nothing of the crate.
//!
//! Nothing here knows about indexing or tables; every other layer builds on it.

pub mod attacks;
pub mod dead;
pub mod material;
pub mod piece;
pub mod position;
pub mod san;
pub mod square;

pub use material::{Material, MaterialError, MAX_MEN, MAX_PIECES};
pub use piece::{Color, Piece, Role};
pub use position::{FenError, Move, Position, RULE_PLIES};
pub use square::{Square, Symmetry};
