//! What a probe answers, from the side to move's point of view: win, draw or loss under the
//! 50-move rule ([`Wdl`]) with the stored distance ([`Probe`]), and the five-valued result
//! with a fresh counter ([`Category`]).

/// The result of a probe, from the side to move's point of view.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Probe {
    /// 1 win, 0 draw, -1 loss under the 50-move rule (given the position's clock).
    pub wdl: i8,
    /// Stored distance in plies (odd for the winner to move, even for the loser, 0 when
    /// checkmated), signed like `wdl`; 0 for a draw.
    pub dtz: i32,
}

/// Win, draw or loss for the side to move under the 50-move rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i8)]
pub enum Wdl {
    Loss = -1,
    Draw = 0,
    Win = 1,
}

impl Wdl {
    /// -1, 0 or 1, like [`Probe::wdl`].
    pub fn as_i8(self) -> i8 {
        self as i8
    }

    /// The result for the other side.
    pub fn flip(self) -> Wdl {
        match self {
            Wdl::Loss => Wdl::Win,
            Wdl::Draw => Wdl::Draw,
            Wdl::Win => Wdl::Loss,
        }
    }

    pub(super) fn from_sign(v: i8) -> Wdl {
        match v.signum() {
            1 => Wdl::Win,
            -1 => Wdl::Loss,
            _ => Wdl::Draw,
        }
    }
}

/// The five-valued result for the side to move with a fresh 50-move counter: a cursed
/// win is won only without the 50-move rule (a draw under it), a blessed loss is the
/// defender's side of one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(i8)]
pub enum Category {
    Loss = -2,
    BlessedLoss = -1,
    Draw = 0,
    CursedWin = 1,
    Win = 2,
}

impl Category {
    /// `"win"`, `"cursed-win"`, `"draw"`, `"blessed-loss"` or `"loss"`.
    pub fn name(self) -> &'static str {
        match self {
            Category::Loss => "loss",
            Category::BlessedLoss => "blessed-loss",
            Category::Draw => "draw",
            Category::CursedWin => "cursed-win",
            Category::Win => "win",
        }
    }

    /// The result for the other side.
    pub fn flip(self) -> Category {
        match self {
            Category::Loss => Category::Win,
            Category::BlessedLoss => Category::CursedWin,
            Category::Draw => Category::Draw,
            Category::CursedWin => Category::BlessedLoss,
            Category::Win => Category::Loss,
        }
    }
}

impl From<Wdl> for i8 {
    fn from(w: Wdl) -> i8 {
        w as i8
    }
}

impl Probe {
    /// The result as a [`Wdl`].
    pub fn outcome(&self) -> Wdl {
        Wdl::from_sign(self.wdl)
    }
}
