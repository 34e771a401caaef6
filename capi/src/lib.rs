//! The C library of tbstream (`libtbstream_c.so`, `libtbstream_c.a`, `include/tbstream.h`):
//! probes of `.tbs` tables for chess engines, in the spirit of Fathom's `tb_probe_wdl` and
//! `tb_probe_root`. See `capi/README.md` for each function.
//!
//! Every exported function runs its body through [`error::guarded`]: an error or a panic
//! becomes the function's failure value and this thread's last error, never an unwind into
//! C. A handle wraps one [`tbstream_root::Tablebase`], which is `Sync` (lock-free probes through
//! a block cache bounded in bytes), so one handle serves every thread.

mod board;
mod error;

use board::Bitboards;
pub use error::TbsError;
use error::{guarded, Failure};
use std::collections::BTreeSet;
use std::ffi::{c_char, CStr};
use std::path::Path;
use std::sync::Mutex;
use tbstream_root::{Category, Move, Position, Role, Tablebase};

/// White to move (the `turn` argument).
pub const TBS_WHITE: u32 = 1;
/// Black to move (the `turn` argument).
pub const TBS_BLACK: u32 = 0;
/// What `tbs_probe_dtz` returns when it fails.
pub const TBS_DTZ_FAILED: i32 = i32::MIN;
/// More than the legal moves of any position: a `moves` array this long is always enough.
pub const TBS_MAX_MOVES: usize = 256;
/// Bytes a UCI move needs with its terminating NUL (`e7e8q`).
pub const TBS_MOVE_TEXT_LEN: usize = 6;

/// A promotion (`tbs_move.promotion`), numbered as Fathom's `TB_PROMOTES_*`.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TbsPromotion {
    None = 0,
    Queen = 1,
    Rook = 2,
    Bishop = 3,
    Knight = 4,
}

/// The result of a position for the side to move, numbered as Fathom's `TB_LOSS` ...
/// `TB_WIN`, or the failure value.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TbsResult {
    /// Lost, within the 50-move rule.
    Loss = 0,
    /// Lost without the 50-move rule, drawn by it.
    BlessedLoss = 1,
    Draw = 2,
    /// Won without the 50-move rule, drawn by it.
    CursedWin = 3,
    /// Won, within the 50-move rule.
    Win = 4,
    /// No answer: see `tbs_last_error`.
    Failed = -1,
}

impl TbsResult {
    fn of(c: Category) -> TbsResult {
        match c {
            Category::Loss => TbsResult::Loss,
            Category::BlessedLoss => TbsResult::BlessedLoss,
            Category::Draw => TbsResult::Draw,
            Category::CursedWin => TbsResult::CursedWin,
            Category::Win => TbsResult::Win,
        }
    }

    /// The result for the other side.
    fn flip(self) -> TbsResult {
        match self {
            TbsResult::Loss => TbsResult::Win,
            TbsResult::BlessedLoss => TbsResult::CursedWin,
            TbsResult::Draw => TbsResult::Draw,
            TbsResult::CursedWin => TbsResult::BlessedLoss,
            TbsResult::Win => TbsResult::Loss,
            TbsResult::Failed => TbsResult::Failed,
        }
    }
}

/// A legal move of `tbs_probe_root`, with what it leads to.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TbsMove {
    /// The square the man leaves (a1 = 0, b1 = 1, ..., h8 = 63).
    pub from: u8,
    /// The square it goes to.
    pub to: u8,
    /// What a pawn becomes (a `tbs_promotion`).
    pub promotion: u8,
    /// The result for the side to move at the root if it plays this move (the clock after
    /// the move counted as `tbs_probe_wdl` counts it).
    pub result: TbsResult,
    /// The distance to zeroing after the move, signed for the side to move at the root
    /// (positive when it wins): minus the `tbs_probe_dtz` of the position after the move.
    pub dtz: i32,
}

/// An open folder of tables (opaque to C), shared by every thread: one `Tablebase`.
pub struct TbsTablebase {
    tb: Tablebase,
    /// The most men of a table in the folder.
    largest: u32,
}

/// The handles `tbs_init` returned and `tbs_free` has not freed, so that a second
/// `tbs_free` of the same handle is refused instead of freeing it twice.
static LIVE: Mutex<BTreeSet<usize>> = Mutex::new(BTreeSet::new());

fn live() -> std::sync::MutexGuard<'static, BTreeSet<usize>> {
    LIVE.lock().unwrap_or_else(|e| e.into_inner())
}

/// The handle behind `tb`, or a failure for NULL.
///
/// # Safety
/// `tb` is NULL or a handle of `tbs_init` not yet freed.
unsafe fn handle<'a>(tb: *const TbsTablebase) -> Result<&'a TbsTablebase, Failure> {
    // SAFETY: the caller's promise.
    unsafe { tb.as_ref() }.ok_or_else(|| Failure::argument("the tablebase handle is NULL"))
}

/// A C string, or a failure for NULL.
///
/// # Safety
/// `s` is NULL or a NUL-terminated string.
unsafe fn c_str<'a>(s: *const c_char, what: &str) -> Result<&'a CStr, Failure> {
    if s.is_null() {
        return Err(Failure::argument(format!("{what} is NULL")));
    }
    // SAFETY: the caller's promise.
    Ok(unsafe { CStr::from_ptr(s) })
}

/// The text of a C string, or a failure for NULL or non-UTF-8 text.
///
/// # Safety
/// As [`c_str`].
unsafe fn text<'a>(s: *const c_char, what: &str) -> Result<&'a str, Failure> {
    unsafe { c_str(s, what) }?.to_str().map_err(|_| Failure::argument(format!("{what} is not UTF-8")))
}

/// A path from a C string: any bytes on Unix, UTF-8 elsewhere.
///
/// # Safety
/// As [`c_str`].
unsafe fn path<'a>(s: *const c_char, what: &str) -> Result<&'a Path, Failure> {
    #[cfg(unix)]
    return Ok(Path::new(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(
        unsafe { c_str(s, what) }?.to_bytes(),
    )));
    #[cfg(not(unix))]
    return Ok(Path::new(unsafe { text(s, what) }?));
}

/// The most men of a `.tbs` table in `dir` (0 for none).
fn largest_table(dir: &Path) -> Result<u32, Failure> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Failure::new(TbsError::NoTables, format!("cannot list {}: {e}", dir.display())))?;
    let mut largest = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(stem) = name.to_str().and_then(|n| n.strip_suffix(".tbs")) else { continue };
        if let Ok(m) = tbstream_root::Material::parse(stem) {
            largest = largest.max(m.men() as u32);
        }
    }
    Ok(largest)
}

/// Opens the tables of the folder `dir` with a cache of at most `cache_bytes` bytes of
/// decoded blocks. Returns a new handle, or NULL (see `tbs_last_error`) when `dir` is NULL,
/// not a folder, or holds no table. Each call opens a new, independent handle.
///
/// # Safety
/// `dir` is NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn tbs_init(dir: *const c_char, cache_bytes: u64) -> *mut TbsTablebase {
    guarded(std::ptr::null_mut(), || {
        let dir = unsafe { path(dir, "the folder") }?;
        let tb = Tablebase::with_cache(dir, cache_bytes)?;
        let largest = largest_table(dir)?;
        if largest == 0 {
            return Err(Failure::new(TbsError::NoTables, format!("{} holds no .tbs table", dir.display())));
        }
        let ptr = Box::into_raw(Box::new(TbsTablebase { tb, largest }));
        live().insert(ptr as usize);
        Ok(ptr)
    })
}

/// Closes a handle of `tbs_init` and frees its memory. NULL is accepted (nothing to do,
/// `TBS_ERROR_NONE`); a handle already freed, or never returned by `tbs_init`, is left
/// alone (`TBS_ERROR_INVALID_ARGUMENT`). No other thread may be using the handle.
///
/// # Safety
/// `tb` is NULL or a pointer `tbs_init` returned, and no other thread is using it.
#[no_mangle]
pub unsafe extern "C" fn tbs_free(tb: *mut TbsTablebase) -> TbsError {
    guarded(TbsError::InvalidArgument, || {
        if tb.is_null() {
            return Ok(TbsError::None);
        }
        if !live().remove(&(tb as usize)) {
            return Err(Failure::argument("tbs_free: not an open handle (freed already?)"));
        }
        // SAFETY: `tb` came from `Box::into_raw` in `tbs_init` and was live until now.
        drop(unsafe { Box::from_raw(tb) });
        Ok(TbsError::None)
    })
}

/// The most men of a table in the handle's folder (0 for NULL): positions with more men
/// cannot be probed.
///
/// # Safety
/// `tb` is NULL or a handle of `tbs_init` not yet freed (any thread may use it).
#[no_mangle]
pub unsafe extern "C" fn tbs_largest(tb: *const TbsTablebase) -> u32 {
    guarded(0, || Ok(unsafe { handle(tb) }?.largest))
}

/// Bytes of decoded blocks the handle's cache holds now (at most its `cache_bytes`).
///
/// # Safety
/// `tb` is NULL or a handle of `tbs_init` not yet freed (any thread may use it).
#[no_mangle]
pub unsafe extern "C" fn tbs_cached_bytes(tb: *const TbsTablebase) -> u64 {
    guarded(0, || Ok(unsafe { handle(tb) }?.tb.cached_bytes()))
}

/// The five-valued result of a position for the side to move given its half-move clock:
/// a win or loss within the 50-move rule as the clock stands; otherwise a cursed win or a
/// blessed loss if the position is won or lost without the rule; otherwise a draw. With a
/// clock of 0 this is the result with a fresh counter ([`Tablebase::category`]).
fn result_of(tb: &Tablebase, pos: &Position) -> Result<TbsResult, Failure> {
    let category = |pos: &Position| {
        tb.category(pos)?.ok_or_else(|| {
            Failure::new(
                TbsError::UnknownCategory,
                format!(
                    "{}: a table it reads does not mark its cursed results (built by an older version; \
                     regenerate it), so the result is unknown",
                    pos.fen()
                ),
            )
        })
    };
    if pos.halfmove == 0 {
        return Ok(TbsResult::of(category(pos)?));
    }
    Ok(match tb.probe(pos)?.wdl {
        1 => TbsResult::Win,
        -1 => TbsResult::Loss,
        _ => match category(pos)? {
            Category::Win | Category::CursedWin => TbsResult::CursedWin,
            Category::Loss | Category::BlessedLoss => TbsResult::BlessedLoss,
            Category::Draw => TbsResult::Draw,
        },
    })
}

/// The WDL probe of a search: the result of the position given by bitboards (bit `s` is
/// square `s`, a1 = 0, h8 = 63) for the side to move (`turn`: `TBS_WHITE` or `TBS_BLACK`),
/// with half-move clock `rule50`, en passant square `ep` (0 for none) and `castling` rights
/// (must be 0). `TBS_RESULT_FAILED` for a malformed or illegal position or a missing or
/// damaged table (see `tbs_last_error`). Allocates nothing and takes no lock once the
/// tables it reads are open and their blocks cached (en passant positions aside).
///
/// # Safety
/// `tb` is NULL or a handle of `tbs_init` not yet freed (any thread may use it).
#[no_mangle]
#[allow(clippy::too_many_arguments)] // Fathom's signature, which engines already call.
pub unsafe extern "C" fn tbs_probe_wdl(
    tb: *const TbsTablebase,
    white: u64,
    black: u64,
    kings: u64,
    queens: u64,
    rooks: u64,
    bishops: u64,
    knights: u64,
    pawns: u64,
    rule50: u32,
    castling: u32,
    ep: u32,
    turn: u32,
) -> TbsResult {
    guarded(TbsResult::Failed, || {
        let tb = &unsafe { handle(tb) }?.tb;
        let b = Bitboards { white, black, kings, queens, rooks, bishops, knights, pawns };
        b.with_position(rule50, castling, ep, turn, |pos| result_of(tb, pos))
    })
}

/// The DTZ probe: the stored distance in plies to mate or a zeroing move (a capture or a
/// pawn move) of the position given as for `tbs_probe_wdl`, positive when the side to move
/// wins under the 50-move rule (given `rule50`), negative when it loses, 0 for a draw and
/// for a checkmated side (as `tbstream probe`'s DTZ). `TBS_DTZ_FAILED` on failure.
/// Allocates nothing once warm, as `tbs_probe_wdl`.
///
/// # Safety
/// `tb` is NULL or a handle of `tbs_init` not yet freed (any thread may use it).
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tbs_probe_dtz(
    tb: *const TbsTablebase,
    white: u64,
    black: u64,
    kings: u64,
    queens: u64,
    rooks: u64,
    bishops: u64,
    knights: u64,
    pawns: u64,
    rule50: u32,
    castling: u32,
    ep: u32,
    turn: u32,
) -> i32 {
    guarded(TBS_DTZ_FAILED, || {
        let tb = &unsafe { handle(tb) }?.tb;
        let b = Bitboards { white, black, kings, queens, rooks, bishops, knights, pawns };
        b.with_position(rule50, castling, ep, turn, |pos| Ok(tb.probe(pos)?.dtz))
    })
}

/// A move as C sees it, with the result and distance after it from the mover's side.
fn root_move(mv: Move, result: TbsResult, dtz: i32) -> TbsMove {
    let promotion = match mv.promotion {
        None => TbsPromotion::None,
        Some(Role::Queen) => TbsPromotion::Queen,
        Some(Role::Rook) => TbsPromotion::Rook,
        Some(Role::Bishop) => TbsPromotion::Bishop,
        Some(_) => TbsPromotion::Knight,
    };
    TbsMove { from: mv.from, to: mv.to, promotion: promotion as u8, result, dtz }
}

/// The root probe: every legal move of the position (given as for `tbs_probe_wdl`) with
/// its result and distance, and the best one. Writes the moves, in tbstream's order, to
/// `moves` (at most `capacity` of them; `moves` may be NULL when `capacity` is 0) and
/// returns their number (`TBS_MAX_MOVES` is always enough), or -1 on failure. `best` (may
/// be NULL) gets the move `tbstream probe` plays: the fastest win, the longest resistance,
/// or a move that keeps the draw. Without a legal move, returns 0 and `best` gets
/// `from == to == 0` with the position's own result (`LOSS` when checkmated, `DRAW` when
/// stalemated) and `dtz` 0.
///
/// # Safety
/// `tb` is NULL or a handle of `tbs_init` not yet freed (any thread may use it).
/// `best` is NULL or points to one `tbs_move`; `moves` points to `capacity` of them.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn tbs_probe_root(
    tb: *const TbsTablebase,
    white: u64,
    black: u64,
    kings: u64,
    queens: u64,
    rooks: u64,
    bishops: u64,
    knights: u64,
    pawns: u64,
    rule50: u32,
    castling: u32,
    ep: u32,
    turn: u32,
    best: *mut TbsMove,
    moves: *mut TbsMove,
    capacity: usize,
) -> i32 {
    guarded(-1, || {
        let tb = &unsafe { handle(tb) }?.tb;
        if moves.is_null() && capacity > 0 {
            return Err(Failure::argument("moves is NULL but capacity is not 0"));
        }
        let b = Bitboards { white, black, kings, queens, rooks, bishops, knights, pawns };
        let pos = b.with_position(rule50, castling, ep, turn, |pos| Ok(pos.clone()))?;
        let legal = pos.legal_moves();
        let mut answers = Vec::with_capacity(legal.len());
        for &mv in &legal {
            let after = pos.play(mv);
            answers.push(root_move(mv, result_of(tb, &after)?.flip(), -tb.probe(&after)?.dtz));
        }
        let chosen = match tb.best_move(&pos)? {
            Some((mv, _)) => match legal.iter().position(|&m| m == mv) {
                Some(i) => answers[i],
                None => return Err(Failure::new(TbsError::Internal, "the best move is not a legal move")),
            },
            None if legal.is_empty() => TbsMove { from: 0, to: 0, promotion: 0, result: result_of(tb, &pos)?, dtz: 0 },
            None => {
                return Err(Failure::new(
                    TbsError::DamagedTable,
                    format!("{}: no move keeps the result (a table is damaged)", pos.fen()),
                ))
            }
        };
        // SAFETY: the caller passes NULL or room for one move in `best`, and room for
        // `capacity` moves in `moves` (the header).
        unsafe {
            if let Some(best) = best.as_mut() {
                *best = chosen;
            }
            for (i, a) in answers.iter().take(capacity).enumerate() {
                moves.add(i).write(*a);
            }
        }
        Ok(answers.len() as i32)
    })
}

/// Probes a FEN as `tbstream probe --json` does: returns its `category` (the five-valued
/// result with a fresh 50-move counter: the clock is ignored), and writes (each pointer may
/// be NULL) `wdl` (1, 0 or -1 under the 50-move rule given the FEN's clock), `dtz` (as
/// `tbs_probe_dtz`) and the best move in UCI (`e7e8q`; an empty string when there is none)
/// into `best_move`, a buffer of `best_move_len` bytes (`TBS_MOVE_TEXT_LEN` is enough).
/// `TBS_RESULT_FAILED` on failure, including castling rights in the FEN and a buffer too
/// small; nothing is written then.
///
/// # Safety
/// `tb` is NULL or a handle of `tbs_init` not yet freed (any thread may use it).
/// `fen` is NULL or a NUL-terminated string; `wdl` and `dtz` are NULL or point to an
/// `int32_t`; `best_move` is NULL or points to `best_move_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn tbs_probe_fen(
    tb: *const TbsTablebase,
    fen: *const c_char,
    wdl: *mut i32,
    dtz: *mut i32,
    best_move: *mut c_char,
    best_move_len: usize,
) -> TbsResult {
    guarded(TbsResult::Failed, || {
        let tb = &unsafe { handle(tb) }?.tb;
        let pos = Position::from_fen(unsafe { text(fen, "the FEN") }?)?;
        // The calls of `tbstream probe`, in its order, so that the same table fails first.
        let probe = tb.probe(&pos)?;
        let best = tb.best_move(&pos)?.map(|(m, _)| m.to_string()).unwrap_or_default();
        let category = tb.category(&pos)?.ok_or_else(|| {
            Failure::new(
                TbsError::UnknownCategory,
                "a table this position reads does not mark its cursed results (built by an older version; \
                 regenerate it)",
            )
        })?;
        if !best_move.is_null() && best.len() + 1 > best_move_len {
            return Err(Failure::argument(format!(
                "best_move holds {best_move_len} bytes, the move {best} needs {}",
                best.len() + 1
            )));
        }
        // SAFETY: each pointer is NULL or points to room for its value (the header); the
        // move's bytes and NUL fit in `best_move_len`, checked above.
        unsafe {
            if let Some(w) = wdl.as_mut() {
                *w = probe.wdl as i32;
            }
            if let Some(d) = dtz.as_mut() {
                *d = probe.dtz;
            }
            if !best_move.is_null() {
                std::ptr::copy_nonoverlapping(best.as_ptr().cast::<c_char>(), best_move, best.len());
                *best_move.add(best.len()) = 0;
            }
        }
        Ok(TbsResult::of(category))
    })
}

/// The kind of this thread's last failure (`TBS_ERROR_NONE` if none yet). Successful calls
/// leave it as it was, like `errno`.
#[no_mangle]
pub extern "C" fn tbs_last_error() -> TbsError {
    error::last_kind()
}

/// The message of this thread's last failure ("" if none yet), NUL-terminated, owned by
/// the library and valid until this thread's next failing call.
#[no_mangle]
pub extern "C" fn tbs_last_error_message() -> *const c_char {
    error::last_message()
}

/// The library's version ("0.1.0"), a static string.
#[no_mangle]
pub extern "C" fn tbs_version() -> *const c_char {
    static VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "\0");
    VERSION.as_ptr().cast()
}
