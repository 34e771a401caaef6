//! Probing finished tables: win/draw/loss, distance, a best move and the line for any position.
//!
//! A [`Tablebase`] opens a folder of tables once and is shared between threads (it is
//! `Send + Sync`; wrap it in an `Arc` or borrow it from scoped threads). Tables are memory-mapped
//! on first use and checked against their section checksums once per process. After that,
//! [`Tablebase::probe_wdl`] and [`Tablebase::probe`] do no heap allocation and take no lock:
//! the position's men are gathered into a fixed array, its material into a small number that
//! selects an already-open run from a fixed table, and the index is computed in place.
//!
//! ```
//! use tbstream::{generate, GenOptions, SilentProgress};
//! use tbstream::{Material, Position, Tablebase, Wdl};
//!
//! // Build KRvK (a fraction of a second) into a scratch folder and open it.
//! let dir = tempfile::tempdir()?;
//! generate(&[Material::parse("KRvK")?], &GenOptions::new(dir.path(), 1), &SilentProgress)?;
//! let tb = Tablebase::open(dir.path())?;
//!
//! let pos = Position::from_fen("8/8/8/8/8/2k5/8/KR6 w - - 0 1")?;
//! assert_eq!(tb.probe_wdl(&pos)?, Wdl::Win);
//! let probe = tb.probe(&pos)?;
//! assert_eq!((probe.wdl, probe.dtz), (1, 27));
//! let (mv, after) = tb.best_move(&pos)?.expect("a winning move");
//! assert_eq!((mv.to_string(), after.dtz), ("b1d1".to_string(), -26));
//! let line = tb.line(&pos, 100)?;
//! assert_eq!(line.len(), 27); // to checkmate
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use super::cache::{BlockCache, DEFAULT_CACHE_BYTES};
use super::compact::CompactTable;
use super::error::TableError;
use super::values::{code_to_distance, Class};
use super::version::table_path;
use crate::chess::attacks::attacks;
use crate::chess::{Color, Material, Move, Position, Role, Square, MAX_PIECES};
use crate::index::slices::MAX_PAWNS;
use crate::index::{Layout, Pawns};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

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

    fn from_sign(v: i8) -> Wdl {
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

/// One run's table with its layout, read through its tablebase's block cache.
pub struct Run {
    pub file: CompactTable,
    pub layout: Layout,
    cache: Arc<BlockCache>,
}

impl Run {
    /// The class of a slot (`compact::class`): for white to move, whether white wins (1),
    /// wins only without the 50-move rule (2); for black to move, whether black loses (1),
    /// loses only without the rule (2); 0 otherwise. Meaningless for illegal positions.
    #[inline]
    pub fn class(&self, stm: Color, slot: u64) -> Result<Class, TableError> {
        Ok(self.file.class(stm, slot, &self.cache)?)
    }

    /// The white-to-move distance code of a slot (`docs/FORMAT.md`), meaningful where white
    /// wins (class 1).
    #[inline]
    pub fn dtz_code(&self, slot: u64) -> Result<u8, TableError> {
        Ok(self.file.dtz_code(slot, &self.cache)?)
    }

    /// The storage slot of a legal position of this run (white's men are the run's white).
    pub fn slot_of(&self, pos: &Position) -> u64 {
        self.slot(&Men::gather(pos, false), false)
    }

    /// Storage slot of `men`; with `swap`, of their colour swap flipped top to bottom (black's
    /// men become this run's white).
    #[inline]
    fn slot(&self, men: &Men, swap: bool) -> u64 {
        let (w, b, flip) = if swap { (1, 0, 56) } else { (0, 1, 0) };
        let mut squares = [0 as Square; MAX_PIECES];
        let mut k = 0;
        for side in [w, b] {
            for &sq in &men.sq[men.range(side)] {
                squares[k] = sq ^ flip;
                k += 1;
            }
        }
        if men.pawns.n == 0 {
            let (idx, _) = self.layout.canonical_index(men.kings[b] ^ flip, &squares[..k], men.kings[w] ^ flip);
            return self.layout.slot(idx).expect("canonical index is not a hole");
        }
        let pawns = if swap { men.pawns.swapped() } else { men.pawns };
        let (slot, _) = self
            .layout
            .canonical_slot(men.kings[b] ^ flip, &squares[..k], men.kings[w] ^ flip, &pawns)
            .expect("the pawns of a legal position form a stored configuration");
        slot
    }
}

/// The stored distance of a slot white wins in `run` (class 1): its distance code read.
#[inline]
fn win_distance(run: &Run, slot: u64) -> Result<u8, TableError> {
    let code = run.dtz_code(slot)?;
    code_to_distance(Color::White, code).filter(|&d| d > 0).ok_or_else(|| {
        TableError::Wrong(format!(
            "{}: slot {slot} is won but holds distance code {code} (table damaged)",
            run.file.path.display()
        ))
    })
}

/// Squares of the black king, the pieces in the layout's order, and the white king.
pub fn men_in_layout_order(layout: &Layout, pos: &Position) -> (Square, Vec<Square>, Square) {
    let mut used = 0u64;
    let pieces = layout
        .pieces
        .iter()
        .map(|slot| {
            let (s, _) = pos
                .pieces()
                .find(|&(s, p)| p.color == slot.color && p.role == slot.role && used & (1 << s) == 0)
                .expect("position has the layout's material");
            used |= 1 << s;
            s
        })
        .collect();
    (pos.king(Color::Black), pieces, pos.king(Color::White))
}

// ---------------------------------------------------------------------------------------------
// Material keys: a number per side, a fixed table of runs
// ---------------------------------------------------------------------------------------------

/// Number of multisets of one side's men besides the king (at most 4 of Q, R, B, N, P):
/// C(9, 4).
const PIECE_SETS: usize = 126;

/// Index of a side's counts `q + 5r + 25b + 125n + 625p` among the multisets of at most 4
/// men (0 = bare king); `u8::MAX` for more than 4.
const PIECE_SET_INDEX: [u8; 3125] = {
    let mut t = [u8::MAX; 3125];
    let mut i = 0;
    let mut next = 0;
    while i < 3125 {
        if i % 5 + i / 5 % 5 + i / 25 % 5 + i / 125 % 5 + i / 625 <= 4 {
            t[i] = next;
            next += 1;
        }
        i += 1;
    }
    t
};

/// Weight of a role in a side's count code `q + 5r + 25b + 125n`.
#[inline]
fn role_weight(role: Role) -> usize {
    match role {
        Role::Queen => 1,
        Role::Rook => 5,
        Role::Bishop => 25,
        Role::Knight => 125,
        Role::Pawn => 625,
        Role::King => 0,
    }
}

/// The side index of a list of roles, or `None` with more than 4 pieces.
fn piece_set_index(roles: &[Role]) -> Option<usize> {
    if roles.len() > MAX_PIECES || roles.contains(&Role::King) {
        return None;
    }
    Some(PIECE_SET_INDEX[roles.iter().map(|&r| role_weight(r)).sum::<usize>()] as usize)
}

/// The roles of a side index (inverse of [`piece_set_index`]).
fn piece_set_roles(index: usize) -> Vec<Role> {
    let code = PIECE_SET_INDEX.iter().position(|&i| i as usize == index).expect("side index in range");
    let mut roles = Vec::new();
    for (role, w) in [(Role::Queen, 1), (Role::Rook, 5), (Role::Bishop, 25), (Role::Knight, 125), (Role::Pawn, 625)] {
        roles.extend(std::iter::repeat_n(role, code / w % 5));
    }
    roles
}

/// Slot of a run (white's side index, black's) in the table of open runs.
fn run_key(m: &Material) -> Option<usize> {
    Some(piece_set_index(&m.white)? * PIECE_SETS + piece_set_index(&m.black)?)
}

// ---------------------------------------------------------------------------------------------
// The men of a position in a fixed array
// ---------------------------------------------------------------------------------------------

/// The men of a position, gathered once per probe without allocating: kings apart, the
/// pawns apart, the other pieces sorted white first, each side in the order Q R B N (the
/// layout's order).
#[derive(Clone, Copy, Debug)]
struct Men {
    /// King squares, white's then black's.
    kings: [Square; 2],
    sq: [Square; MAX_PIECES],
    role: [Role; MAX_PIECES],
    /// Number of non-king pieces and how many of them are white's.
    n: usize,
    n_white: usize,
    /// Occupied squares, and those of each side.
    occ: u64,
    by_color: [u64; 2],
    /// Piece-set index of each side's pieces.
    piece_set: [usize; 2],
    /// The pawns, white's then black's.
    pawns: Pawns,
}

impl Men {
    /// Gathers a position's men; with `flip`, the colour swap flipped top to bottom (so that
    /// black's men become white's).
    #[inline]
    fn gather(pos: &Position, flip: bool) -> Men {
        let (xf, swap) = if flip { (56, true) } else { (0, false) };
        let mut men = Men {
            kings: [0; 2],
            sq: [0; MAX_PIECES],
            role: [Role::King; MAX_PIECES],
            n: 0,
            n_white: 0,
            occ: 0,
            by_color: [0; 2],
            piece_set: [0; 2],
            pawns: Pawns::none(),
        };
        let (mut wp, mut bp) = ([0 as Square; MAX_PAWNS], [0 as Square; MAX_PAWNS]);
        let (mut nwp, mut nbp) = (0, 0);
        let mut code = [0usize; 2];
        // (colour, role order) of each piece, for the insertion sort.
        let mut rank = [0u8; MAX_PIECES];
        for (s, p) in pos.pieces() {
            let s = s ^ xf;
            let c = (p.color == Color::Black) != swap;
            let c = c as usize;
            men.occ |= 1 << s;
            men.by_color[c] |= 1 << s;
            if p.role == Role::King {
                men.kings[c] = s;
                continue;
            }
            code[c] += role_weight(p.role);
            if p.role == Role::Pawn {
                assert!(nwp + nbp < MAX_PAWNS, "a position holds at most {MAX_PAWNS} pawns");
                if c == 0 {
                    wp[nwp] = s;
                    nwp += 1;
                } else {
                    bp[nbp] = s;
                    nbp += 1;
                }
                continue;
            }
            if c == 0 {
                men.n_white += 1;
            }
            let key = (c as u8) << 4 | p.role as u8;
            let mut i = men.n;
            assert!(i < MAX_PIECES, "a position holds at most {MAX_PIECES} pieces besides the kings");
            while i > 0 && rank[i - 1] > key {
                rank[i] = rank[i - 1];
                men.sq[i] = men.sq[i - 1];
                men.role[i] = men.role[i - 1];
                i -= 1;
            }
            rank[i] = key;
            men.sq[i] = s;
            men.role[i] = p.role;
            men.n += 1;
        }
        men.piece_set = [PIECE_SET_INDEX[code[0]] as usize, PIECE_SET_INDEX[code[1]] as usize];
        men.pawns = Pawns::new(&wp[..nwp], &bp[..nbp]);
        men
    }

    /// Indices of side `c`'s non-king pieces (0 white, 1 black).
    #[inline]
    fn range(&self, c: usize) -> std::ops::Range<usize> {
        if c == 0 {
            0..self.n_white
        } else {
            self.n_white..self.n
        }
    }

    /// Whether side `by` attacks `target` with the board occupied by `occ`, ignoring a man
    /// on `skip` (a piece just captured).
    #[inline]
    fn attacks(&self, by: usize, target: Square, occ: u64, skip: u64) -> bool {
        let bit = 1u64 << target;
        if attacks(Role::King, self.kings[by], occ) & bit != 0 {
            return true;
        }
        self.range(by).any(|i| (1u64 << self.sq[i]) & skip == 0 && attacks(self.role[i], self.sq[i], occ) & bit != 0)
    }

    /// Whether side `c`'s king is attacked.
    #[inline]
    fn in_check(&self, c: usize) -> bool {
        self.attacks(1 - c, self.kings[c], self.occ, 0)
    }

    /// Squares side `us`'s king may not step to: those the other side attacks through it. A
    /// man the king would capture does not attack its own square, and rays to that square
    /// stop there, so capturing it is safe exactly when nothing else guards it.
    #[inline]
    fn king_danger(&self, us: usize) -> u64 {
        let them = 1 - us;
        let occ = self.occ & !(1u64 << self.kings[us]);
        let mut danger = attacks(Role::King, self.kings[them], occ);
        for i in self.range(them) {
            danger |= attacks(self.role[i], self.sq[i], occ);
        }
        danger
    }

    /// Whether side `us` has a legal move (stops at the first one found).
    #[inline]
    fn has_legal_move(&self, us: usize) -> bool {
        let them = 1 - us;
        let barred = self.by_color[us] | (1u64 << self.kings[them]);
        if attacks(Role::King, self.kings[us], self.occ) & !barred & !self.king_danger(us) != 0 {
            return true;
        }
        // The king cannot move: another man must, keeping the king out of check.
        for i in self.range(us) {
            let from = self.sq[i];
            let mut targets = attacks(self.role[i], from, self.occ) & !barred;
            while targets != 0 {
                let to = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let occ = (self.occ & !(1u64 << from)) | (1u64 << to);
                if !self.attacks(them, self.kings[us], occ, 1u64 << to) {
                    return true;
                }
            }
        }
        false
    }

    /// Calls `f` with the men after each legal move of side `us` that captures nothing, until
    /// it returns true (which this returns then). Pawnless positions only: pawn moves are
    /// not generated.
    #[inline]
    fn find_quiet_move(&self, us: usize, mut f: impl FnMut(&Men) -> bool) -> bool {
        let them = 1 - us;
        let empty = !self.occ;
        let mut targets = attacks(Role::King, self.kings[us], self.occ) & empty & !self.king_danger(us);
        while targets != 0 {
            let to = targets.trailing_zeros() as Square;
            targets &= targets - 1;
            let mut child = *self;
            child.kings[us] = to;
            if f(&child) {
                return true;
            }
        }
        for i in self.range(us) {
            let from = self.sq[i];
            let mut targets = attacks(self.role[i], from, self.occ) & empty;
            while targets != 0 {
                let to = targets.trailing_zeros() as Square;
                targets &= targets - 1;
                let occ = (self.occ & !(1u64 << from)) | (1u64 << to);
                if self.attacks(them, self.kings[us], occ, 0) {
                    continue;
                }
                let mut child = *self;
                child.sq[i] = to;
                child.occ = occ;
                if f(&child) {
                    return true;
                }
            }
        }
        false
    }
}

/// The result of a position where the side to move has no legal move: checkmate (a loss)
/// or stalemate (a draw); `None` when it has one.
#[inline]
fn game_over(men: &Men, pos: &Position) -> Option<Wdl> {
    let (has_move, in_check) = if men.pawns.n == 0 {
        (men.has_legal_move(0), men.in_check(0))
    } else {
        // Pawn moves (pushes, promotions, en passant): the plain board decides.
        (pos.has_legal_move(), pos.in_check(pos.turn))
    };
    (!has_move).then_some(if in_check { Wdl::Loss } else { Wdl::Draw })
}

// ---------------------------------------------------------------------------------------------
// The tablebase
// ---------------------------------------------------------------------------------------------

/// A folder of tables, opened once and shared between threads.
///
/// Runs are mapped and verified on first use; each is then reached through a fixed table
/// indexed by the material, without locking. See the [module documentation](self) for an
/// example.
pub struct Tablebase {
    dir: PathBuf,
    /// Open runs, indexed by [`run_key`].
    runs: Box<[OnceLock<Arc<Run>>]>,
    /// Held while a run is being opened, so that each is mapped and checked once.
    opening: Mutex<()>,
    /// Decoded blocks of every open run.
    cache: Arc<BlockCache>,
}

impl Tablebase {
    /// Opens a folder of tables (files are mapped on first use) with a block cache of
    /// [`DEFAULT_CACHE_BYTES`].
    pub fn open(dir: &Path) -> Result<Tablebase, TableError> {
        Tablebase::with_cache(dir, DEFAULT_CACHE_BYTES)
    }

    /// Opens a folder of tables with a cache of at most `cache_bytes` of decoded blocks
    /// (a probe decodes a block of 64 KiB the first time it reads it).
    pub fn with_cache(dir: &Path, cache_bytes: u64) -> Result<Tablebase, TableError> {
        if !dir.is_dir() {
            return Err(TableError::NoFolder(dir.to_path_buf()));
        }
        Ok(Tablebase {
            dir: dir.to_path_buf(),
            runs: (0..PIECE_SETS * PIECE_SETS).map(|_| OnceLock::new()).collect(),
            opening: Mutex::new(()),
            cache: Arc::new(BlockCache::new(cache_bytes)),
        })
    }

    /// Bytes of decoded blocks held in the cache now.
    pub fn cached_bytes(&self) -> u64 {
        self.cache.weight()
    }

    /// The folder of the tables.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The run of a material, mapped (and its checksums verified) on first use.
    pub fn run(&self, m: &Material) -> Result<Arc<Run>, TableError> {
        let key = run_key(m).ok_or_else(|| TableError::TooManyPieces(m.clone()))?;
        self.open_run(key, m).cloned()
    }

    /// The open run at `key`, or opens it.
    #[inline]
    fn run_at(&self, key: usize) -> Result<&Run, TableError> {
        match self.runs[key].get() {
            Some(r) => Ok(r),
            None => {
                let m = Material::new(piece_set_roles(key / PIECE_SETS), piece_set_roles(key % PIECE_SETS));
                self.open_run(key, &m).map(|r| &**r)
            }
        }
    }

    #[cold]
    fn open_run(&self, key: usize, m: &Material) -> Result<&Arc<Run>, TableError> {
        if let Some(r) = self.runs[key].get() {
            return Ok(r);
        }
        let _guard = self.opening.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = self.runs[key].get() {
            return Ok(r);
        }
        let path = table_path(&self.dir, m);
        if !path.exists() {
            return Err(TableError::Missing { path, signature: m.clone() });
        }
        // The header and block indexes are checked here; each block when first decoded.
        let file = CompactTable::open_run(&path, m)
            .map_err(|cause| TableError::Opening { material: m.clone(), cause: Box::new(cause) })?;
        let run = Arc::new(Run { layout: Layout::new(m), file, cache: self.cache.clone() });
        Ok(self.runs[key].get_or_init(|| run))
    }

    /// Win/draw/loss and distance of a position for the side to move.
    ///
    /// `wdl` is 1, 0 or -1 under the 50-move rule given the position's half-move clock;
    /// `dtz` is the stored distance in plies to mate or a zeroing move (odd when the winner
    /// moves, even when the loser moves, 0 when checkmated), signed like `wdl`, 0 for a draw.
    /// Once the position's tables are open this allocates nothing.
    ///
    /// ```
    /// # use tbstream::{generate, GenOptions, SilentProgress, Material, Position, Tablebase};
    /// # let dir = tempfile::tempdir()?;
    /// # generate(&[Material::parse("KRvK")?], &GenOptions::new(dir.path(), 1), &SilentProgress)?;
    /// let tb = Tablebase::open(dir.path())?;
    /// // Black to move loses in 32 plies ...
    /// let p = tb.probe(&Position::from_fen("8/8/8/8/8/8/1Rk5/K7 b - - 0 1")?)?;
    /// assert_eq!((p.wdl, p.dtz), (-1, -32));
    /// // ... unless 69 half-moves have gone by without a capture: then it is a draw.
    /// let p = tb.probe(&Position::from_fen("8/8/8/8/8/8/1Rk5/K7 b - - 69 1")?)?;
    /// assert_eq!((p.wdl, p.dtz), (0, 0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn probe(&self, pos: &Position) -> Result<Probe, TableError> {
        let men = Men::gather(pos, pos.turn == Color::Black);
        if let Some(end) = game_over(&men, pos) {
            return Ok(Probe { wdl: end.as_i8(), dtz: 0 });
        }
        let stored = self.probe_stored(pos, &men)?;
        if pos.ep.is_some() {
            return self.with_en_passant(pos, stored);
        }
        Ok(stored)
    }

    /// The five-valued result of a position with a fresh 50-move counter (its half-move
    /// clock is ignored); `None` when a table it reads does not mark all its cursed
    /// positions, or cannot tell a win of exactly 100 plies from a cursed win of 101 there
    /// (header flags, `docs/FORMAT.md`).
    pub fn category(&self, pos: &Position) -> Result<Option<Category>, TableError> {
        let men = Men::gather(pos, pos.turn == Color::Black);
        if let Some(end) = game_over(&men, pos) {
            return Ok(Some(if end == Wdl::Loss { Category::Loss } else { Category::Draw }));
        }
        let (white, black) = self.read_runs(
            &men,
            |run, stm, slot| {
                let meta = &run.file.header.meta;
                Ok((run.class(stm, slot)?, meta.five_valued, meta.edge_exact))
            },
            |(class, ..)| class != Class::NotWon,
        )?;
        let complete = white.is_none_or(|w| w.1) && black.is_none_or(|b| b.1);
        if white.is_some_and(|w| w.0 == Class::Edge && !w.2) {
            // A win of exactly 100 plies or a cursed win of 101: not told apart in this table.
            return Ok(None);
        }
        let stored = match (white.map(|w| w.0), black.map(|b| b.0)) {
            (Some(Class::Win), _) => Category::Win,
            (Some(Class::Cursed | Class::Edge), _) => Category::CursedWin,
            (_, Some(Class::Win)) => Category::Loss,
            (_, Some(Class::Cursed)) => Category::BlessedLoss,
            _ => Category::Draw,
        };
        if !complete && stored == Category::Draw {
            return Ok(None);
        }
        if pos.ep.is_none() {
            return Ok(Some(stored));
        }
        // En passant (no stored position has it): a capture is a zeroing move.
        let moves = pos.legal_moves();
        let mut best: Option<Category> = None;
        for &mv in moves.iter().filter(|m| m.en_passant) {
            match self.category(&pos.play(mv))? {
                Some(child) => best = best.max(Some(child.flip())),
                None => return Ok(None),
            }
        }
        Ok(Some(match best {
            Some(b) if moves.iter().all(|m| m.en_passant) => b,
            Some(b) => b.max(stored),
            None => stored,
        }))
    }

    /// The probe of a position as stored (no en-passant capture available), the side to move
    /// having a legal move: the side to move's wins are stored with their distances; its
    /// losses with their class only, the distance searched one ply deep
    /// ([`Tablebase::loser_distance`]).
    #[inline]
    fn probe_stored(&self, pos: &Position, men: &Men) -> Result<Probe, TableError> {
        let g50 = 100 - pos.halfmove.min(101) as i32;
        let (white, black) =
            self.read_runs(men, |run, stm, slot| Ok((run.class(stm, slot)?, slot)), |(c, _)| c == Class::Win)?;
        if let Some((Class::Win, slot)) = white {
            let run = self.run_at(men.piece_set[0] * PIECE_SETS + men.piece_set[1])?;
            let d = win_distance(run, slot)?;
            return Ok(if d as i32 <= g50 { Probe { wdl: 1, dtz: d as i32 } } else { Probe { wdl: 0, dtz: 0 } });
        }
        if let Some((Class::Win, _)) = black {
            let run = self.run_at(men.piece_set[1] * PIECE_SETS + men.piece_set[0])?;
            let d = self.loser_distance(pos, men, run, None)?.expect("no bound");
            if d as i32 <= g50 {
                return Ok(Probe { wdl: -1, dtz: -(d as i32) });
            }
        }
        Ok(Probe { wdl: 0, dtz: 0 })
    }

    /// The distance of a position lost for the side to move (which has a legal move), in
    /// `run`, the winner's run: black's distances are not stored, but a loser's distance is
    /// two plies more than the longest of the winner's distances after its moves other than
    /// zeroing ones (captures and pawn moves, which count as distance 0), and at least 2.
    /// `men` are the position's, the side to move as white (`Men::gather`). With `bound`,
    /// returns `None` as soon as the distance is found to exceed it.
    fn loser_distance(
        &self,
        pos: &Position,
        men: &Men,
        run: &Run,
        bound: Option<u8>,
    ) -> Result<Option<u8>, TableError> {
        let mut worst = 1u8;
        let mut failed = None;
        let mut after = |child: &Men, mv: &dyn Fn() -> String| {
            // The winner (black of `child`) is the run's white, to move.
            let slot = run.slot(child, true);
            match run.dtz_code(slot) {
                Ok(c @ 1..=50) => worst = worst.max(c),
                Ok(c) => {
                    failed = Some(TableError::Wrong(format!(
                        "{}: {} is lost, but after {} the winner's distance code is {c} (table damaged)",
                        run.file.path.display(),
                        pos.fen(),
                        mv()
                    )))
                }
                Err(e) => failed = Some(e),
            }
            failed.is_some() || bound.is_some_and(|b| 2 * worst > b)
        };
        let stopped = if men.pawns.n == 0 {
            men.find_quiet_move(0, |child| after(child, &|| "a quiet move".to_string()))
        } else {
            pos.find_legal_move(|mv| {
                if mv.is_zeroing() {
                    return false;
                }
                let child = pos.play(mv);
                // Gathered as the loser's (to move in `pos`): white of the men.
                after(&Men::gather(&child, pos.turn == Color::Black), &|| mv.to_string())
            })
            .is_some()
        };
        if let Some(e) = failed {
            return Err(e);
        }
        Ok((!stopped).then_some(2 * worst))
    }

    /// The probe of a position with an en-passant capture available (which no stored
    /// position has): the better of the stored value and the captures; a capture that wins is
    /// a zeroing move (distance 1), and when only en-passant captures are legal, they decide.
    #[cold]
    fn with_en_passant(&self, pos: &Position, stored: Probe) -> Result<Probe, TableError> {
        let moves = pos.legal_moves();
        let mut best: Option<i8> = None;
        for &mv in moves.iter().filter(|m| m.en_passant) {
            let child = self.probe(&pos.play(mv))?;
            best = best.max(Some(-child.wdl));
        }
        let Some(best) = best else { return Ok(stored) };
        if best == 1 {
            return Ok(Probe { wdl: 1, dtz: 1 });
        }
        if moves.iter().all(|m| m.en_passant) {
            return Ok(Probe { wdl: best, dtz: if best < 0 { -2 } else { 0 } });
        }
        Ok(match stored.wdl {
            -1 if best == 0 => Probe { wdl: 0, dtz: 0 },
            -1 => Probe { wdl: -1, dtz: stored.dtz.min(-2) },
            _ => stored,
        })
    }

    /// Reads the two runs a position (white to move) needs: white's run with the men as they
    /// are (`W v B`, white to move), then, unless white's answer `decides`, black's run with
    /// the colour swap flipped (`B v W`, black to move). A run of a bare side is skipped
    /// (`None`). Runs are opened as the plain algorithm would: white's first, black's only
    /// when needed. When both are already open both reads are issued before either is
    /// looked at, so that their cache misses overlap.
    #[inline(always)]
    fn read_runs<T: Copy>(
        &self,
        men: &Men,
        read: impl Fn(&Run, Color, u64) -> Result<T, TableError>,
        decides: impl Fn(T) -> bool,
    ) -> Result<(Option<T>, Option<T>), TableError> {
        let [w, b] = men.piece_set;
        let white_run = if w != 0 { Some(self.run_at(w * PIECE_SETS + b)?) } else { None };
        let black_key = b * PIECE_SETS + w;
        let early = if b != 0 { self.runs[black_key].get() } else { None };
        let early = early.map(|run| read(run, Color::Black, run.slot(men, true))).transpose()?;
        let white = white_run.map(|run| read(run, Color::White, run.slot(men, false))).transpose()?;
        if b == 0 || white.is_some_and(&decides) {
            return Ok((white, None));
        }
        let black = match early {
            Some(v) => v,
            None => {
                let run = self.run_at(black_key)?;
                read(run, Color::Black, run.slot(men, true))?
            }
        };
        Ok((white, Some(black)))
    }

    /// Win, draw or loss of a position for the side to move under the 50-move rule (the
    /// `wdl` of [`Tablebase::probe`], cheaper): with a half-move clock of 0 it reads one bit of
    /// the final bitbases (`t99`, `t100`) per run instead of a 6-bit value. Once the
    /// position's tables are open this allocates nothing.
    ///
    /// ```
    /// # use tbstream::{generate, GenOptions, SilentProgress, Material, Position, Tablebase, Wdl};
    /// # let dir = tempfile::tempdir()?;
    /// # generate(&[Material::parse("KRvK")?], &GenOptions::new(dir.path(), 1), &SilentProgress)?;
    /// let tb = Tablebase::open(dir.path())?;
    /// let win = Position::from_fen("8/8/8/8/8/2k5/8/KR6 w - - 0 1")?;
    /// assert_eq!(tb.probe_wdl(&win)?, Wdl::Win);
    /// // The rook hangs with black to move: black takes it and draws.
    /// let hanging = Position::from_fen("8/8/8/8/8/1Rk5/8/K7 b - - 0 1")?;
    /// assert_eq!(tb.probe_wdl(&hanging)?, Wdl::Draw);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn probe_wdl(&self, pos: &Position) -> Result<Wdl, TableError> {
        if pos.halfmove != 0 || pos.ep.is_some() {
            return self.probe(pos).map(|p| Wdl::from_sign(p.wdl));
        }
        let men = Men::gather(pos, pos.turn == Color::Black);
        if let Some(end) = game_over(&men, pos) {
            return Ok(end);
        }
        // A fresh clock: a win (at most 100 plies) is class 1 of the winner's run, with either
        // side to move.
        let (white, black) =
            self.read_runs(&men, |run, stm, slot| Ok(run.class(stm, slot)? == Class::Win), |won| won)?;
        Ok(if white == Some(true) {
            Wdl::Win
        } else if black == Some(true) {
            Wdl::Loss
        } else {
            Wdl::Draw
        })
    }

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
            } else if !after.has_legal_move() && after.in_check(after.turn) {
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
        let run = self.run_at(them.piece_set[1] * PIECE_SETS + them.piece_set[0])?;
        for mv in pos.legal_moves() {
            if mv.is_zeroing() {
                continue;
            }
            let child = pos.play(mv);
            let men = Men::gather(&child, child.turn == Color::Black);
            if run.class(Color::Black, run.slot(&men, true))? != Class::Win {
                continue;
            }
            if self.loser_distance(&child, &men, run, Some(target))? == Some(target) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_indices_are_dense_and_invert() {
        let mut seen = [false; PIECE_SETS];
        for &i in &PIECE_SET_INDEX {
            if i != u8::MAX {
                assert!(!seen[i as usize]);
                seen[i as usize] = true;
                let roles = piece_set_roles(i as usize);
                assert_eq!(piece_set_index(&roles), Some(i as usize));
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert_eq!(piece_set_index(&[]), Some(0));
        let m = Material::parse("KQRvKNN").unwrap();
        let key = run_key(&m).unwrap();
        assert_eq!(Material::new(piece_set_roles(key / PIECE_SETS), piece_set_roles(key % PIECE_SETS)), m);
    }

    #[test]
    fn men_agree_with_the_plain_board() {
        for fen in [
            "8/8/8/8/8/2k5/8/KQ6 w - - 0 1",
            "k7/8/1QK5/8/8/8/8/8 b - - 0 1",
            "k7/1Q6/1K6/8/8/8/8/8 b - - 0 1",
            "8/8/8/8/8/1Qk5/8/K7 b - - 0 1",
            "8/8/8/8/8/1Rk5/K7/8 b - - 0 1",
            "4k3/8/8/8/8/2n5/8/RN2K3 w - - 0 1",
            "1n2k3/3r4/8/8/8/8/8/RQ2K3 b - - 0 1",
            "k7/8/1QK5/8/8/8/8/7r b - - 0 1",
        ] {
            check_men(&Position::from_fen(fen).unwrap());
        }
    }

    /// Random positions of up to 6 men, many of them with few moves (crowded corners).
    #[test]
    fn men_agree_with_the_plain_board_on_random_positions() {
        use crate::chess::Piece;
        let mut state = 0x1234_5678_9abc_def1u64;
        let mut next = move |n: u64| {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
        };
        let roles = [Role::Queen, Role::Rook, Role::Bishop, Role::Knight];
        let (mut tested, mut stuck) = (0, 0);
        while tested < 20_000 {
            let n_pieces = next(5) as usize;
            let mut men = vec![
                (0u8, Piece { color: Color::White, role: Role::King }),
                (0u8, Piece { color: Color::Black, role: Role::King }),
            ];
            for _ in 0..n_pieces {
                let color = if next(2) == 0 { Color::White } else { Color::Black };
                men.push((0, Piece { color, role: roles[next(4) as usize] }));
            }
            // Half of the time crowd the men into a 3x3 corner area and its surroundings.
            let span = if next(2) == 0 { 4 } else { 8 };
            for m in men.iter_mut() {
                m.0 = (next(span) * 8 + next(span)) as u8;
            }
            let turn = if next(2) == 0 { Color::White } else { Color::Black };
            if let Ok(pos) = Position::from_men(&men, turn) {
                stuck += !pos.has_legal_move() as usize;
                check_men(&pos);
                tested += 1;
            }
        }
        assert!(stuck > 50, "the sample should hold mates and stalemates ({stuck})");
    }

    fn check_men(pos: &Position) {
        let fen = pos.fen();
        for flip in [false, true] {
            let p = if flip { pos.flipped() } else { pos.clone() };
            let men = Men::gather(pos, flip);
            let us = (p.turn == Color::Black) as usize;
            assert_eq!(men.has_legal_move(us), !p.legal_moves().is_empty(), "{fen} {flip}");
            assert_eq!(men.has_legal_move(us), p.has_legal_move(), "{fen} {flip}");
            assert_eq!(men.in_check(us), p.in_check(p.turn), "{fen} {flip}");
            assert_eq!(men.kings, [p.king(Color::White), p.king(Color::Black)]);
            let m = p.material();
            assert_eq!(men.piece_set, [piece_set_index(&m.white).unwrap(), piece_set_index(&m.black).unwrap()]);
            if !m.white_bare() {
                let layout = Layout::new(&m);
                let (bk, pieces, wk) = men_in_layout_order(&layout, &p);
                let mut sq = men.sq[..men.n].to_vec();
                sq.sort_unstable();
                let mut expect = pieces.clone();
                expect.sort_unstable();
                assert_eq!((bk, sq, wk), (men.kings[1], expect, men.kings[0]));
                for (k, slot) in layout.pieces.iter().enumerate() {
                    assert_eq!((men.role[k], k < men.n_white), (slot.role, slot.color == Color::White));
                }
            }
        }
    }
}
