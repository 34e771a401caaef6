//! The edge sets `E_k` (positions that step `k` finds one ply later than their true
//! distance, `docs/CURSED.md` part 2) against the reference's ply-accurate distances: a won
//! position whose exact distance has the other parity than its step is in `E_k`, and only
//! then. The build computes them only when step 101 is reached; hooks that want the edge
//! sets (`JobHooks::wants_edge_sets`) make it follow every level's edge and hand them over.

use crate::hooks::{gen_hooked, EdgeSets};
use crate::util::read_reference;
use std::collections::HashMap;
use std::sync::Arc;
use tbstream::{Color, Layout, Material, Position, Tablebase};

#[test]
fn edge_sets_are_the_positions_one_ply_shorter_than_their_step() {
    // 4-men tables where only white can win and black's king may be left nothing but a
    // losing capture: many of their exact distances have the "wrong" parity.
    let tables = ["KQRvK", "KRBvK", "KQBvK", "KQNvK", "KRNvK"];
    let dir = tempfile::tempdir().unwrap();
    let sets = Arc::new(EdgeSets::default());
    let (built, _) = gen_hooked(dir.path(), &tables, sets.clone());
    built.unwrap();
    let sets = sets.0.lock().unwrap();
    let tb = Tablebase::open(dir.path()).unwrap();
    let (mut in_edge, mut outside) = (0, 0);
    for table in tables {
        // Slot -> step, per side to move (odd steps wtm, even steps btm).
        let mut edge: [HashMap<u64, u16>; 2] = Default::default();
        let run = Material::parse(table).unwrap();
        for (_, k, slots) in sets.iter().filter(|(m, _, _)| *m == run) {
            let side = if k % 2 == 1 { 0 } else { 1 };
            for &slot in slots {
                assert!(edge[side].insert(slot, *k).is_none(), "{table}: slot {slot} in two edge sets");
            }
        }
        let layout = Layout::new(&run);
        for r in read_reference(table) {
            let Some(exact) = r.dtz_plyacc else { continue };
            let pos = Position::from_fen(&r.fen).unwrap();
            let ours = tb.probe(&pos).unwrap().dtz;
            // White's wins only (white to move and winning, black to move and losing), not
            // checkmates (distance 0 here, -1 in the reference).
            let white_wins = (pos.turn == Color::White && r.wdl == 2) || (pos.turn == Color::Black && r.wdl == -2);
            if !white_wins || ours == 0 {
                continue;
            }
            let (bk, pieces, wk) = tbstream::men_in_layout_order(&layout, &pos);
            let (index, _) = layout.canonical_index(bk, &pieces, wk);
            let slot = layout.slot(index).expect("a stored slot");
            let step = ours.unsigned_abs() as u16;
            let side = if pos.turn == Color::White { 0 } else { 1 };
            let shorter = exact.unsigned_abs() as u16 == step - 1;
            assert!(shorter || exact.unsigned_abs() as u16 == step, "{}: step {step}, exact {exact}", r.fen);
            assert_eq!(
                edge[side].get(&slot),
                shorter.then_some(&step),
                "{table} {}: step {step}, exact distance {exact}",
                r.fen
            );
            if shorter {
                in_edge += 1;
            } else {
                outside += 1;
            }
        }
    }
    println!("{in_edge} reference positions in an edge set, {outside} outside");
    assert!(in_edge > 1000 && outside > 1000, "{in_edge} / {outside}");
}
