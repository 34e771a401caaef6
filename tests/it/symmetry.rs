//! The index and the stored values respect the board's symmetries, exhaustively for the
//! 3- and 4-men tables; the longest wins match the reference landmarks.

use crate::fixtures::{small_tables, SMALL};
use crate::util::all_codes;
use tbstream::file::compact::CompactTable;
use tbstream::file::table_path;
use tbstream::longest_win;
use tbstream::Color;
use tbstream::Layout;
use tbstream::Material;
use tbstream::{Symmetry, TRIANGLE};

/// Every placement of the men (any squares, overlaps included) encodes to an index that
/// decodes to one of its symmetric images.
#[test]
fn every_placement_decodes_to_a_symmetric_image() {
    for sig in ["KQvK", "KRRvK", "KQvKR", "KBNvK"] {
        let layout = Layout::new(&Material::parse(sig).unwrap());
        let np = layout.pieces.len();
        let total = 64u64.pow(np as u32 + 2);
        let mut checked = 0u64;
        for n in 0..total {
            let sq = |i: u32| ((n >> (6 * i)) & 63) as u8;
            let (bk, wk) = (sq(0), sq(1));
            let pieces: Vec<u8> = (0..np as u32).map(|i| sq(i + 2)).collect();
            let (idx, sym) = layout.canonical_index(bk, &pieces, wk);
            let (code, dpieces, dwk) = layout.decode(idx);
            assert_eq!(TRIANGLE[code as usize], sym.apply(bk));
            assert_eq!(dwk, sym.apply(wk));
            let mapped: Vec<u8> = pieces.iter().map(|&s| sym.apply(s)).collect();
            assert_eq!(dpieces, mapped, "{sig} placement {n}");
            assert!(layout.slot(idx).is_some());
            checked += 1;
        }
        assert_eq!(checked, total);
    }
}

/// For every stored slot of every 3- and 4-men run, the 8 symmetric images of the position
/// hold the same value (this covers both stored images of diagonal black-king positions).
#[test]
fn symmetric_images_hold_the_same_value() {
    let dir = small_tables();
    let mut runs: Vec<Material> = SMALL.iter().flat_map(|s| Material::parse(s).unwrap().runs_of_signature()).collect();
    runs.sort();
    runs.dedup();
    for m in runs {
        let layout = Layout::new(&m);
        // Both sides to move at once: the images of a slot are the same for both.
        let codes = [Color::White, Color::Black].map(|stm| all_codes(&table_path(dir, &m), stm));
        let mut mapped = Vec::with_capacity(4);
        for slot in 0..layout.n_slots {
            let (code, pieces, wk) = layout.decode(layout.index_of_slot(slot));
            let bk = TRIANGLE[code as usize];
            for sym in Symmetry::all() {
                mapped.clear();
                mapped.extend(pieces.iter().map(|&s| sym.apply(s)));
                let (idx, _) = layout.canonical_index(sym.apply(bk), &mapped, sym.apply(wk));
                let image = layout.slot(idx).unwrap() as usize;
                for (stm, codes) in [Color::White, Color::Black].into_iter().zip(&codes) {
                    assert_eq!(codes[slot as usize], codes[image], "{m} {stm:?} slot {slot} under {sym:?}");
                }
            }
        }
    }
}

/// Longest wins (our units) of every 3- and 4-men endgame equal the reference README's table
/// (KQvK, KRvK, KBNvK, KQvKR and KRvKN are the landmarks).
#[test]
fn landmark_longest_wins() {
    let dir = small_tables();
    let landmarks = [
        ("KQvK", 20, 0),
        ("KRvK", 32, 0),
        ("KBvK", 0, 0),
        ("KNvK", 0, 0),
        ("KQQvK", 8, 0),
        ("KQRvK", 10, 0),
        ("KQBvK", 14, 0),
        ("KQNvK", 16, 0),
        ("KRRvK", 12, 0),
        ("KRBvK", 24, 0),
        ("KRNvK", 24, 0),
        ("KBBvK", 38, 0),
        ("KBNvK", 66, 0),
        ("KNNvK", 1, 0),
        ("KQvKQ", 19, 19),
        ("KQvKR", 62, 5),
        ("KQvKB", 24, 0),
        ("KQvKN", 38, 0),
        ("KRvKR", 7, 7),
        ("KRvKB", 36, 0),
        ("KRvKN", 54, 1),
        ("KBvKB", 1, 1),
        ("KBvKN", 1, 1),
        ("KNvKN", 1, 1),
    ];
    for (sig, white, black) in landmarks {
        let m = Material::parse(sig).unwrap();
        let longest = |m: &Material| longest_win(&CompactTable::open(&table_path(dir, m)).unwrap()).unwrap();
        let w = longest(&m);
        let b = if m.black.is_empty() { 0 } else { longest(&m.swapped()) };
        println!("{sig}: longest win for white {w} (reference {white}), for black {b} (reference {black})");
        assert_eq!((w as i32, b as i32), (white, black), "{sig}");
    }
}
