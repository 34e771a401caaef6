//! The WDL and distance probes allocate nothing once a position's tables are open and the
//! blocks they read are in the block cache (a miss decodes a block into a new buffer).
//!
//! A counting global allocator wraps the system allocator; after a warm-up that opens the
//! runs and decodes the blocks the positions read (a loser's distance reads the winner's
//! distances after each of its moves), 10,000 `probe_wdl` and 10,000 `probe` calls over those
//! random legal positions must not allocate.
//!
//! The allocator serves the whole test binary, whose other tests run in parallel on other
//! threads: each thread counts its own allocations (a thread-local counter), and the test
//! reads only its own thread's, so it sees the probes' allocations and no other test's. The
//! probes run on the test's thread, through a `Tablebase` (and block cache) of its own.

use crate::counting_alloc::allocations;
use crate::fixtures;
use crate::util::Rng;
use tbstream::{Color, Position, Tablebase};

/// Random legal positions of KQvKR and its sub-endgames, either side to move, with a mix of
/// half-move clocks (0 reads the bitbases, others the values).
fn random_positions(n: usize) -> Vec<Position> {
    use tbstream::Piece;
    use tbstream::Role;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15u64);
    let mut next = move || rng.next();
    let sets: [&[(Color, Role)]; 4] = [
        &[(Color::White, Role::Queen), (Color::Black, Role::Rook)],
        &[(Color::Black, Role::Queen), (Color::White, Role::Rook)],
        &[(Color::White, Role::Queen)],
        &[(Color::Black, Role::Rook)],
    ];
    let mut out = Vec::new();
    while out.len() < n {
        let set = sets[(next() % 4) as usize];
        let mut men = vec![
            (0u8, Piece { color: Color::White, role: Role::King }),
            (0u8, Piece { color: Color::Black, role: Role::King }),
        ];
        men.extend(set.iter().map(|&(color, role)| (0u8, Piece { color, role })));
        for m in men.iter_mut() {
            m.0 = (next() % 64) as u8;
        }
        let turn = if next() % 2 == 0 { Color::White } else { Color::Black };
        if let Ok(mut pos) = Position::from_men(&men, turn) {
            pos.halfmove = [0, 0, 0, 1, 40, 99][(next() % 6) as usize];
            out.push(pos);
        }
    }
    out
}

#[test]
fn wdl_and_distance_probes_do_not_allocate() {
    let tb = Tablebase::open(fixtures::kqvkr()).unwrap();
    let positions = random_positions(2000);
    // Warm-up: opens every run the positions need and fills the block cache.
    let mut expected = Vec::with_capacity(positions.len());
    for pos in &positions {
        expected.push((tb.probe_wdl(pos).unwrap(), tb.probe(pos).unwrap()));
    }
    let decisive = expected.iter().filter(|(w, _)| w.as_i8() != 0).count();
    assert!(decisive > 500, "the sample should hold wins and losses ({decisive})");

    let before = allocations();
    let (mut wins, mut dtz_sum) = (0i64, 0i64);
    for i in 0..10_000 {
        let pos = &positions[i % positions.len()];
        wins += tb.probe_wdl(pos).unwrap().as_i8() as i64;
    }
    for i in 0..10_000 {
        let pos = &positions[i % positions.len()];
        dtz_sum += tb.probe(pos).unwrap().dtz as i64;
    }
    let during = allocations() - before;
    assert_eq!(during, 0, "20,000 probes made {during} heap allocations");

    // The counted probes gave the warm-up's answers (and the counter does count).
    let expect_wins: i64 = (0..10_000).map(|i| expected[i % positions.len()].0.as_i8() as i64).sum();
    let expect_dtz: i64 = (0..10_000).map(|i| expected[i % positions.len()].1.dtz as i64).sum();
    assert_eq!((wins, dtz_sum), (expect_wins, expect_dtz));
    let before = allocations();
    let v = std::hint::black_box(vec![1u8; 16]);
    drop(v);
    assert!(allocations() > before, "the counting allocator must see this test's allocations");
}
