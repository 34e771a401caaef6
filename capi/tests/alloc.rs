//! The bitboard probes of a search allocate nothing once the tables a position reads are
//! open and its blocks cached: a counting global allocator wraps the system's, per thread
//! (as the crate's `tests/it/probe_alloc.rs` does), around 20,000 calls of `tbs_probe_wdl`
//! (clocks of 0 and not) and `tbs_probe_dtz`.

#[path = "../../tests/it/cleanup.rs"]
mod cleanup;
#[path = "../../tests/it/counting_alloc.rs"]
mod counting_alloc;

use counting_alloc::allocations;

use tbstream_c::{tbs_free, tbs_init, tbs_probe_dtz, tbs_probe_wdl, TbsResult, TBS_DTZ_FAILED};
use tbstream_root::{generate, GenOptions, Material, SilentProgress};

#[test]
fn bitboard_probes_do_not_allocate() {
    let dir = tempfile::tempdir().unwrap();
    cleanup::remove_at_exit(dir.path());
    generate(&[Material::parse("KQvKR").unwrap()], &GenOptions::new(dir.path(), 2), &SilentProgress).unwrap();
    let path = std::ffi::CString::new(dir.path().to_str().unwrap()).unwrap();
    // SAFETY: a NUL-terminated string.
    let tb = unsafe { tbs_init(path.as_ptr(), 64 << 20) };
    assert!(!tb.is_null());

    // KQvKR placements (white Q, black R), either side to move, clocks 0, 0, 30; the legal
    // ones, probed once to open the tables and fill the cache.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut boards = Vec::new();
    while boards.len() < 2000 {
        let sq: Vec<u64> = (0..4).map(|_| 1u64 << (next() % 64)).collect();
        let (white, black) = (sq[0] | sq[1], sq[2] | sq[3]);
        let [kings, queens, rooks] = [sq[0] | sq[2], sq[1], sq[3]];
        let (turn, rule50) = ((next() % 2) as u32, [0, 0, 30][(next() % 3) as usize]);
        let b = [white, black, kings, queens, rooks, rule50 as u64, turn as u64];
        // SAFETY: a live handle.
        if unsafe { tbs_probe_wdl(tb, white, black, kings, queens, rooks, 0, 0, 0, rule50, 0, 0, turn) }
            != TbsResult::Failed
        {
            // SAFETY: a live handle.
            unsafe { tbs_probe_dtz(tb, white, black, kings, queens, rooks, 0, 0, 0, rule50, 0, 0, turn) };
            boards.push(b);
        }
    }

    let before = allocations();
    let (mut results, mut dtz_sum) = (0i64, 0i64);
    for i in 0..10_000 {
        let [w, b, k, q, r, rule50, turn] = boards[i % boards.len()];
        // SAFETY: a live handle.
        results += unsafe { tbs_probe_wdl(tb, w, b, k, q, r, 0, 0, 0, rule50 as u32, 0, 0, turn as u32) } as i64;
        // SAFETY: a live handle.
        let dtz = unsafe { tbs_probe_dtz(tb, w, b, k, q, r, 0, 0, 0, rule50 as u32, 0, 0, turn as u32) };
        assert_ne!(dtz, TBS_DTZ_FAILED);
        dtz_sum += dtz as i64;
    }
    let during = allocations() - before;
    assert_eq!(during, 0, "20,000 probes made {during} heap allocations");
    assert!(results > 0 && dtz_sum != 0, "the probes answered ({results}, {dtz_sum})");
    let before = allocations();
    drop(std::hint::black_box(vec![1u8; 16]));
    assert!(allocations() > before, "the counting allocator must see this test's allocations");
    // SAFETY: the handle is live and no other thread uses it.
    unsafe { tbs_free(tb) };
}
