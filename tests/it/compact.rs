//! Tables of the uncompressed format (versions 1 and 2, written by an earlier tbstream) are
//! refused by every command with a message naming `tbstream compact`, which converts them in
//! place into the compact tables `gen` builds now (the same classes, summaries and answers;
//! only the distances of the wins by a zeroing move, which an old file cannot tell, are
//! stored where `gen` leaves them out); a damaged old table is not converted; an interrupted
//! compact write resumes from its last whole block.

use crate::util::tbstream;
use std::path::Path;
use tbstream::file::compact::{
    pack_block, BlockData, CompactTable, CompactWriter, Part, Summary, TableMeta, WritePosition,
};
use tbstream::{Layout, Material};

/// A folder holding copies of the old-format tables of `tests/data/uncompressed`.
fn old_tables() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/uncompressed");
    for name in ["KRvK.tbs", "KPvK.tbs"] {
        std::fs::copy(data.join(name), dir.path().join(name)).unwrap();
    }
    dir
}

#[test]
fn old_tables_are_refused_then_converted_into_what_gen_builds() {
    let old = old_tables();
    let dir = old.path().to_str().unwrap();
    let hint = format!("convert the folder with `tbstream compact {dir}`");
    // Every reader refuses them, naming the file and the conversion.
    let (code, _, err) = tbstream(&["probe", "--tables", dir, "8/8/8/8/8/2k5/8/KR6 w - - 0 1"]);
    assert!(code != Some(0) && err.contains("KRvK.tbs") && err.contains("uncompressed format of version 1"), "{err}");
    assert!(err.contains(&hint), "{err}");
    let (code, _, err) = tbstream(&["stats", "--tables", dir, "KPvK"]);
    assert!(code == Some(2) && err.contains("KPvK.tbs") && err.contains("version 2") && err.contains(&hint), "{err}");
    let (code, _, err) = tbstream(&["verify", "--tables", dir, "KRvK"]);
    assert!(code == Some(2) && err.contains(&hint), "{err}");
    // `gen` does not rebuild them silently either.
    let (code, _, err) = tbstream(&["gen", "KRvK", "--out", dir]);
    assert!(code == Some(2) && err.contains(&hint), "{err}");
    let before = std::fs::read(old.path().join("KRvK.tbs")).unwrap();
    assert_eq!(
        before,
        std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/uncompressed/KRvK.tbs")).unwrap()
    );

    let (code, out, err) = tbstream(&["compact", dir, "--threads", "2"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("KRvK.tbs: converted, 83968 ->") && out.contains("KPvK.tbs: converted, 176512 ->"), "{out}");
    assert!(!old.path().join(".work").exists(), "work folder left behind");
    let (code, out, _) = tbstream(&["compact", dir]);
    assert!(code == Some(0) && out.contains("KRvK.tbs: already compact"), "{out}");

    // The tables built now: KRvK's bytes (white captures nothing); KPvK's classes and
    // summaries, and every answer (its wins by a pawn move, which `c` marks, are distance
    // don't-cares in the built table only).
    let fresh = tempfile::tempdir().unwrap();
    let fresh_dir = fresh.path().to_str().unwrap();
    let (code, _, err) = tbstream(&["gen", "KPvK", "--out", fresh_dir, "--threads", "2"]);
    assert_eq!(code, Some(0), "{err}");
    let (a, b) =
        (std::fs::read(old.path().join("KRvK.tbs")).unwrap(), std::fs::read(fresh.path().join("KRvK.tbs")).unwrap());
    assert!(a == b, "KRvK.tbs: converted {} bytes, built {} bytes", a.len(), b.len());
    let (converted, built) = (old.path().join("KPvK.tbs"), fresh.path().join("KPvK.tbs"));
    assert!(std::fs::metadata(&built).unwrap().len() < std::fs::metadata(&converted).unwrap().len());
    let (converted, built) = (CompactTable::open(&converted).unwrap(), CompactTable::open(&built).unwrap());
    assert_eq!((converted.summary(), converted.wtm_summary()), (built.summary(), built.wtm_summary()));
    for part in [Part::WtmWdl, Part::BtmWdl] {
        for i in 0..built.n_blocks(part) {
            let (mut x, mut y) = (Vec::new(), Vec::new());
            converted.block_into(part, i, &mut x).unwrap();
            built.block_into(part, i, &mut y).unwrap();
            assert!(x == y, "KPvK {part:?} block {i}");
        }
    }
    let fens: String = (8..56u8)
        .flat_map(|p| (0..64u8).map(move |k| (p, k)))
        .filter(|&(p, k)| p != k && k != 0 && p != 0)
        .map(|(p, k)| {
            let mut board = ['.'; 64];
            (board[p as usize], board[k as usize], board[0]) = ('P', 'k', 'K');
            let ranks: Vec<String> = (0..8).rev().map(|r| board[8 * r..8 * r + 8].iter().collect()).collect();
            let fen = ranks.join("/").replace("........", "8").replace(".......", "7").replace("......", "6");
            let fen =
                fen.replace(".....", "5").replace("....", "4").replace("...", "3").replace("..", "2").replace('.', "1");
            format!("{fen} w - - 0 1\n{fen} b - - 0 1\n")
        })
        .collect();
    let answers = |d: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tbstream"))
            .args(["probe", "--tables", d])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(fens.as_bytes())?;
                c.wait_with_output()
            })
            .unwrap();
        String::from_utf8(out.stdout).unwrap()
    };
    // The promotions' sub-endgames (the best moves read them), from the fresh folder.
    for name in ["KQvK.tbs", "KBvK.tbs", "KNvK.tbs"] {
        std::fs::copy(fresh.path().join(name), old.path().join(name)).unwrap();
    }
    let (ours, theirs) = (answers(dir), answers(fresh_dir));
    assert!(ours.lines().count() > 4000 && ours == theirs, "KPvK answers differ");
    let (code, out, err) = tbstream(&["probe", "--tables", dir, "8/8/8/8/8/8/1Rk5/K7 b - - 0 1"]);
    assert!(code == Some(0) && out.contains("\t-1\t-32\t"), "{out} {err}");
}

#[test]
fn a_damaged_old_table_is_not_converted() {
    let old = old_tables();
    let path = old.path().join("KRvK.tbs");
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[5000] ^= 0x10;
    std::fs::write(&path, &bytes).unwrap();
    let (code, _, err) = tbstream(&["compact", old.path().to_str().unwrap()]);
    assert!(code == Some(2) && err.contains("KRvK.tbs is damaged: regenerate it instead"), "{err}");
    assert_eq!(std::fs::read(&path).unwrap(), bytes, "the damaged file is left as it was");
}

/// Decoded bytes of block `i` of a section of a KQvKR-sized table (all blocks whole):
/// recognisable, and every fourth block constant.
fn sample_block(part: Part, i: usize) -> (Vec<u8>, Option<u8>) {
    let n = part.raw_bytes(1 << part.block_bits());
    if i % 4 == 3 {
        return (vec![0; n], Some(0));
    }
    ((0..n).map(|k| ((k / 100 + i) % 7) as u8).collect(), None)
}

/// Writes the next blocks, at most `limit` of them; returns how many.
fn write_blocks(w: &mut CompactWriter, limit: usize) -> usize {
    let mut written = 0;
    while let Some(WritePosition { part, block }) = w.position().filter(|_| written < limit) {
        let (raw, constant) = sample_block(part, block);
        w.push(&pack_block(&raw, constant, 3).unwrap()).unwrap();
        written += 1;
    }
    written
}

#[test]
fn an_interrupted_compact_write_resumes_from_its_last_whole_block() {
    let layout = Layout::new(&Material::parse("KQvKR").unwrap());
    let n: usize = Part::BLOCKED.iter().map(|&p| layout.n_slots as usize >> p.block_bits()).sum();
    let meta = TableMeta { last_step: 31, five_valued: true, edge_exact: true, longest_cursed: [0, 0] };
    let summary = Summary { by_distance: [0; 101], longest_slot: None };
    let dir = tempfile::tempdir().unwrap();
    let finish = |w: CompactWriter, name: &str| {
        let slot_order = [None, None, None];
        let path =
            w.finish(&layout, meta.clone(), slot_order, &summary, &summary, &[], &dir.path().join(name)).unwrap();
        std::fs::read(path).unwrap()
    };
    let mut w = CompactWriter::open(&dir.path().join("a.partial"), layout.n_slots, 7).unwrap();
    assert_eq!(write_blocks(&mut w, usize::MAX), n);
    let whole = finish(w, "a.tbs");

    // Stopped after 25 blocks (the 10 of the wtm classes, 15 distance blocks), the last one
    // torn: the file cut inside its bytes.
    let partial = dir.path().join("b.partial");
    let mut w = CompactWriter::open(&partial, layout.n_slots, 7).unwrap();
    assert_eq!(write_blocks(&mut w, 25), 25);
    drop(w);
    let len = std::fs::metadata(&partial).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&partial).unwrap().set_len(len - 3).unwrap();
    let mut w = CompactWriter::open(&partial, layout.n_slots, 7).unwrap();
    assert_eq!(w.position(), Some(WritePosition { part: Part::WtmDtz, block: 14 }));
    assert_eq!(write_blocks(&mut w, usize::MAX), n - 24);
    assert!(finish(w, "b.tbs") == whole, "resumed and uninterrupted writes differ");

    // A write of another source (another table, another level) starts afresh.
    let partial = dir.path().join("c.partial");
    let mut w = CompactWriter::open(&partial, layout.n_slots, 7).unwrap();
    write_blocks(&mut w, 12);
    drop(w);
    let w = CompactWriter::open(&partial, layout.n_slots, 8).unwrap();
    assert_eq!(w.position(), Some(WritePosition { part: Part::WtmWdl, block: 0 }));

    // The table reads back block by block (as stored: `block_into`, which reads in slot
    // order, would fill the dropped twins).
    std::fs::write(dir.path().join("d.tbs"), &whole).unwrap();
    let t = CompactTable::open(&dir.path().join("d.tbs")).unwrap();
    t.check_sums().unwrap();
    for part in Part::BLOCKED {
        for i in 0..t.n_blocks(part) {
            let (bytes, constant) = sample_block(part, i);
            match t.block(part, i).unwrap() {
                BlockData::Bytes(b) => assert!(constant.is_none() && b == bytes, "{part:?} block {i}"),
                BlockData::Constant(v) => assert_eq!(Some(v), constant, "{part:?} block {i}"),
            }
        }
    }
}
