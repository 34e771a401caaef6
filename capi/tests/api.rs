//! The exported functions called from Rust as C calls them: handles opened and freed twice,
//! NULL and bad arguments, the failure values with their kinds and messages, the last error
//! per thread, and the cache's bound. (`c_library.rs` checks the answers from C.)

#[path = "../../tests/it/cleanup.rs"]
mod cleanup;

use std::ffi::{c_char, CStr};
use std::path::Path;
use std::ptr::{null, null_mut};
use std::sync::OnceLock;
use tbstream_c::*;
use tbstream_root::{generate, GenOptions, Material, SilentProgress};
use tempfile::TempDir;

/// KQvKR and its sub-endgames, built once.
fn tables() -> &'static Path {
    static DIR: OnceLock<TempDir> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        cleanup::remove_at_exit(dir.path());
        generate(&[Material::parse("KQvKR").unwrap()], &GenOptions::new(dir.path(), 2), &SilentProgress).unwrap();
        dir
    })
    .path()
}

/// A new handle on [`tables`] with a cache of `cache` bytes.
fn open(cache: u64) -> *mut TbsTablebase {
    let dir = std::ffi::CString::new(tables().to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated string.
    let tb = unsafe { tbs_init(dir.as_ptr(), cache) };
    assert!(!tb.is_null(), "{}", message());
    tb
}

/// This thread's last error message.
fn message() -> String {
    // SAFETY: the library returns a NUL-terminated string.
    unsafe { CStr::from_ptr(tbs_last_error_message()) }.to_str().unwrap().to_string()
}

/// Asserts that the last failure of this thread is of `kind` and its message says `says`.
fn assert_failure(kind: TbsError, says: &str) {
    assert_eq!(tbs_last_error(), kind, "{}", message());
    assert!(message().contains(says), "{:?} does not say {says:?}", message());
}

/// Bitboards of a position as `tbs_probe_wdl` takes them, from men `(square, letter)`.
#[derive(Clone, Copy, Default)]
struct Board {
    bb: [u64; 8], // white, black, kings, queens, rooks, bishops, knights, pawns
}

impl Board {
    fn of(men: &[(u8, char)]) -> Board {
        let mut b = Board::default();
        for &(s, c) in men {
            b.bb[if c.is_ascii_uppercase() { 0 } else { 1 }] |= 1 << s;
            b.bb[2 + "kqrbnp".find(c.to_ascii_lowercase()).unwrap()] |= 1 << s;
        }
        b
    }

    fn wdl(&self, tb: *const TbsTablebase, rule50: u32, castling: u32, ep: u32, turn: u32) -> TbsResult {
        let b = self.bb;
        // SAFETY: `tb` is NULL or a live handle.
        unsafe { tbs_probe_wdl(tb, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], rule50, castling, ep, turn) }
    }

    fn dtz(&self, tb: *const TbsTablebase, turn: u32) -> i32 {
        let b = self.bb;
        // SAFETY: `tb` is NULL or a live handle.
        unsafe { tbs_probe_dtz(tb, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], 0, 0, 0, turn) }
    }

    fn root(&self, tb: *const TbsTablebase, best: *mut TbsMove, moves: *mut TbsMove, capacity: usize) -> i32 {
        let b = self.bb;
        // SAFETY: `tb` is NULL or a live handle, `best` NULL or room for a move, `moves` room
        // for `capacity` moves.
        unsafe {
            tbs_probe_root(
                tb, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], 0, 0, 0, TBS_WHITE, best, moves, capacity,
            )
        }
    }
}

/// White Ka1 Qb1 against black Kc3 (KQvK): white to move wins.
fn kqk() -> Board {
    Board::of(&[(0, 'K'), (1, 'Q'), (18, 'k')])
}

/// `tbs_init` twice gives two handles that both answer; `tbs_free` of each frees it, a second
/// `tbs_free` of the same handle is refused instead of freeing it again, NULL is accepted.
#[test]
fn init_twice_and_free_twice_are_safe() {
    // SAFETY: every pointer passed is NULL, a live handle, or room for what is written.
    unsafe {
        let (a, b) = (open(1 << 20), open(1 << 20));
        assert_ne!(a, b);
        assert_eq!(tbs_largest(a), 4);
        assert_eq!(kqk().wdl(a, 0, 0, 0, TBS_WHITE), TbsResult::Win);
        assert_eq!(kqk().wdl(b, 0, 0, 0, TBS_WHITE), TbsResult::Win);
        assert_eq!(tbs_free(a), TbsError::None);
        assert_eq!(tbs_free(a), TbsError::InvalidArgument);
        assert_failure(TbsError::InvalidArgument, "not an open handle");
        assert_eq!(kqk().wdl(b, 0, 0, 0, TBS_WHITE), TbsResult::Win, "the other handle still answers");
        assert_eq!(tbs_free(b), TbsError::None);
        assert_eq!(tbs_free(b), TbsError::InvalidArgument);
        assert_eq!(tbs_free(null_mut()), TbsError::None);
    }
}

/// NULL handles, folders and strings, a turn other than 0 or 1, castling rights, bitboards
/// that do not describe a board, too many men and an impossible en passant square are
/// failure values with their kind and a message saying what is wrong.
#[test]
fn bad_arguments_and_positions_are_failures() {
    // SAFETY: every pointer passed is NULL, a live handle, or room for what is written.
    unsafe {
        assert_eq!(kqk().wdl(null(), 0, 0, 0, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::InvalidArgument, "handle is NULL");
        assert_eq!(tbs_largest(null()), 0);
        assert_eq!(tbs_cached_bytes(null()), 0);
        assert!(tbs_init(null(), 1 << 20).is_null());
        assert_failure(TbsError::InvalidArgument, "folder is NULL");
        assert!(tbs_init(c"/no/such/folder".as_ptr(), 1 << 20).is_null());
        assert_failure(TbsError::NoTables, "/no/such/folder");

        let tb = open(1 << 20);
        assert_eq!(kqk().wdl(tb, 0, 0, 0, 2), TbsResult::Failed);
        assert_failure(TbsError::InvalidArgument, "turn 2");
        assert_eq!(kqk().wdl(tb, 0, 1, 0, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::BadPosition, "castling");
        let mut both = kqk();
        both.bb[1] |= 1 << 1; // the white queen's square black too
        assert_eq!(both.wdl(tb, 0, 0, 0, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::BadPosition, "b1 is both white and black");
        let mut two_roles = kqk();
        two_roles.bb[4] |= 1 << 1; // the queen a rook too
        assert_eq!(two_roles.wdl(tb, 0, 0, 0, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::BadPosition, "b1 is in two role bitboards");
        let mut no_role = kqk();
        no_role.bb[0] |= 1 << 63;
        assert_eq!(no_role.wdl(tb, 0, 0, 0, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::BadPosition, "h8 has a side but no role");
        let mut no_colour = kqk();
        no_colour.bb[6] |= 1 << 62;
        assert_eq!(no_colour.wdl(tb, 0, 0, 0, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::BadPosition, "g8 has a role but neither side");
        let crowd = Board::of(&[(0, 'K'), (63, 'k'), (8, 'P'), (9, 'P'), (10, 'P'), (11, 'P'), (12, 'P')]);
        assert_eq!(crowd.wdl(tb, 0, 0, 0, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::BadPosition, "7 men");
        assert_eq!(Board::of(&[(0, 'K'), (1, 'Q')]).wdl(tb, 0, 0, 0, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::BadPosition, "one king");
        // Black to move with its king attacked by the queen is fine; white to move, illegal.
        let check = Board::of(&[(0, 'K'), (1, 'Q'), (57, 'k')]);
        assert_ne!(check.wdl(tb, 0, 0, 0, TBS_BLACK), TbsResult::Failed, "{}", message());
        assert_eq!(check.wdl(tb, 0, 0, 0, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::BadPosition, "not to move is in check");
        // e6 is no en passant square without a black pawn on e5 that just passed it.
        assert_eq!(kqk().wdl(tb, 0, 0, 44, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::BadPosition, "en passant square 'e6'");
        assert_eq!(kqk().wdl(tb, 0, 0, 99, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::BadPosition, "en passant");
        assert_eq!(kqk().dtz(tb, 2), TBS_DTZ_FAILED);
        assert_failure(TbsError::InvalidArgument, "turn 2");
        // A table that is not in the folder.
        let kqqk = Board::of(&[(0, 'K'), (1, 'Q'), (2, 'Q'), (40, 'k')]);
        assert_eq!(kqqk.wdl(tb, 0, 0, 0, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::MissingTable, "KQQvK");
        tbs_free(tb);
    }
}

/// The root probe writes at most `capacity` moves and returns how many there are; a NULL
/// array with room claimed is refused; the best move keeps the win.
#[test]
fn root_probe_respects_the_callers_array() {
    // SAFETY: every pointer passed is NULL, a live handle, or room for what is written.
    unsafe {
        let tb = open(1 << 20);
        let none = TbsMove { from: 99, to: 99, promotion: 9, result: TbsResult::Failed, dtz: -7 };
        let mut moves = [none; 4];
        let mut best = none;
        let n = kqk().root(tb, &mut best, moves.as_mut_ptr(), 3);
        assert!(n > 3, "{n} moves");
        assert!(moves[..3].iter().all(|m| m.from != 99) && moves[3] == none, "{moves:?}");
        assert_eq!(best.result, TbsResult::Win);
        assert_eq!(best.dtz, kqk().dtz(tb, TBS_WHITE) - 1, "the winner's quiet move: one ply nearer");
        assert_eq!(kqk().root(tb, null_mut(), null_mut(), 0), n);
        assert_eq!(kqk().root(tb, null_mut(), null_mut(), 3), -1);
        assert_failure(TbsError::InvalidArgument, "moves is NULL");
        // Checkmated: no move, the best is the null move with the loss.
        let mated = Board::of(&[(56, 'k'), (49, 'Q'), (41, 'K')]);
        let b = mated.bb;
        let n = tbs_probe_root(
            tb,
            b[0],
            b[1],
            b[2],
            b[3],
            b[4],
            b[5],
            b[6],
            b[7],
            0,
            0,
            0,
            TBS_BLACK,
            &mut best,
            null_mut(),
            0,
        );
        assert_eq!(n, 0, "{}", message());
        assert_eq!(best, TbsMove { from: 0, to: 0, promotion: 0, result: TbsResult::Loss, dtz: 0 });
        tbs_free(tb);
    }
}

/// The FEN probe answers like `tbstream probe --json`, takes NULL for the values it need
/// not write, and refuses a move buffer too small without writing into it.
#[test]
fn fen_probe_writes_only_what_fits() {
    // SAFETY: every pointer passed is NULL, a live handle, or room for what is written.
    unsafe {
        let tb = open(1 << 20);
        let fen = c"8/8/8/8/8/2k5/8/KQ6 w - - 0 1";
        let (mut wdl, mut dtz, mut mv) = (9, 9, [b'x' as c_char; TBS_MOVE_TEXT_LEN]);
        let category = tbs_probe_fen(tb, fen.as_ptr(), &mut wdl, &mut dtz, mv.as_mut_ptr(), mv.len());
        assert_eq!(category, TbsResult::Win, "{}", message());
        let text = CStr::from_ptr(mv.as_ptr()).to_str().unwrap().to_string();
        assert_eq!((wdl, dtz, text.len()), (1, kqk().dtz(tb, TBS_WHITE), 4), "{text}");
        assert_eq!(tbs_probe_fen(tb, fen.as_ptr(), null_mut(), null_mut(), null_mut(), 0), TbsResult::Win);
        let mut small = [b'x' as c_char; 3];
        assert_eq!(tbs_probe_fen(tb, fen.as_ptr(), null_mut(), null_mut(), small.as_mut_ptr(), 3), TbsResult::Failed);
        assert_failure(TbsError::InvalidArgument, "best_move holds 3 bytes");
        assert_eq!(small, [b'x' as c_char; 3], "nothing written");
        // Checkmated: a loss at distance 0, no move.
        assert_eq!(
            tbs_probe_fen(tb, c"k7/1Q6/1K6/8/8/8/8/8 b - - 0 1".as_ptr(), &mut wdl, &mut dtz, null_mut(), 0),
            TbsResult::Loss
        );
        assert_eq!((wdl, dtz), (-1, 0));
        assert_eq!(
            tbs_probe_fen(tb, c"8/8/8/8/8/2k5/8/KQ6 w KQ - 0 1".as_ptr(), null_mut(), null_mut(), null_mut(), 0),
            TbsResult::Failed
        );
        assert_failure(TbsError::BadPosition, "castling");
        assert_eq!(tbs_probe_fen(tb, null(), null_mut(), null_mut(), null_mut(), 0), TbsResult::Failed);
        assert_failure(TbsError::InvalidArgument, "FEN is NULL");
        let latin1 = [b'K' as c_char, 0xe9u8 as c_char, 0];
        assert_eq!(tbs_probe_fen(tb, latin1.as_ptr(), null_mut(), null_mut(), null_mut(), 0), TbsResult::Failed);
        assert_failure(TbsError::InvalidArgument, "not UTF-8");
        tbs_free(tb);
    }
}

/// A probe's clock: KQvK won in 9 plies is a win with 91 half-moves gone, and only a cursed
/// win with 92 (drawn by the rule, won without it); the distance probe follows the rule too.
#[test]
fn the_clock_turns_a_win_into_a_cursed_win() {
    // SAFETY: every pointer passed is NULL, a live handle, or room for what is written.
    unsafe {
        let tb = open(1 << 20);
        let d = kqk().dtz(tb, TBS_WHITE);
        assert!(d > 1 && d % 2 == 1, "{d}");
        let limit = 100 - d as u32;
        assert_eq!(kqk().wdl(tb, limit, 0, 0, TBS_WHITE), TbsResult::Win);
        assert_eq!(kqk().wdl(tb, limit + 1, 0, 0, TBS_WHITE), TbsResult::CursedWin);
        let b = kqk().bb;
        let dtz_at =
            |rule50| tbs_probe_dtz(tb, b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], rule50, 0, 0, TBS_WHITE);
        assert_eq!((dtz_at(limit), dtz_at(limit + 1)), (d, 0));
        tbs_free(tb);
    }
}

/// The last error belongs to the thread that failed; successful calls leave it.
#[test]
fn last_error_is_per_thread() {
    // SAFETY: every pointer passed is NULL, a live handle, or room for what is written.
    unsafe {
        let tb = open(1 << 20) as usize;
        assert_eq!(kqk().wdl(tb as *const _, 0, 1, 0, TBS_WHITE), TbsResult::Failed);
        assert_failure(TbsError::BadPosition, "castling");
        std::thread::spawn(move || {
            assert_eq!(tbs_last_error(), TbsError::None);
            assert_eq!(message(), "");
            assert_eq!(kqk().wdl(tb as *const _, 0, 0, 0, 7), TbsResult::Failed);
            assert_failure(TbsError::InvalidArgument, "turn 7");
        })
        .join()
        .unwrap();
        assert_eq!(kqk().wdl(tb as *const _, 0, 0, 0, TBS_WHITE), TbsResult::Win);
        assert_failure(TbsError::BadPosition, "castling");
        tbs_free(tb as *mut _);
    }
}

/// The decoded blocks a handle keeps stay within the cache size it was opened with, while
/// a larger cache keeps more of the same probes' blocks.
#[test]
fn cache_stays_within_its_budget() {
    // SAFETY: every pointer passed is NULL, a live handle, or room for what is written.
    unsafe {
        let (small, large) = (open(256 << 10), open(64 << 20));
        let mut probed = 0;
        for wk in (0..64).step_by(3) {
            for q in 0..64 {
                let b = Board::of(&[(wk, 'K'), (q, 'Q'), ((wk + 37) % 64, 'k'), ((q + 19) % 64, 'r')]);
                for tb in [small, large] {
                    if b.wdl(tb, 0, 0, 0, TBS_WHITE) != TbsResult::Failed {
                        probed += 1;
                    }
                }
            }
        }
        assert!(probed > 1000, "{probed}");
        let (held_small, held_large) = (tbs_cached_bytes(small), tbs_cached_bytes(large));
        assert!(held_small > 0 && held_small <= 256 << 10, "{held_small}");
        assert!(held_large > 256 << 10, "{held_large}");
        tbs_free(small);
        tbs_free(large);
    }
}

#[test]
fn version_is_the_crates() {
    // SAFETY: a static NUL-terminated string.
    assert_eq!(unsafe { CStr::from_ptr(tbs_version()) }.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
}
