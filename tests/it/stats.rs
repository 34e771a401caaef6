//! `tbstream stats`: the longest wins of every endgame in the reference folder equal the
//! reference README's table, the counts are consistent, and the histogram is drawn.

use crate::fixtures::{cursed_tables, krpvkr, pawn_tables, small_tables, CURSED};
use crate::util::{bin, copy_tables, reference_dir, Rng};
use std::path::Path;
use std::process::Command;
use tbstream::Material;
use tbstream::SilentProgress;
use tbstream::{generate, GenOptions};

/// The README's "Longest wins" table: (table, white, black).
fn readme_longest_wins() -> Vec<(String, u64, u64)> {
    let text = std::fs::read_to_string(reference_dir().join("README.md")).unwrap();
    let rows: Vec<(String, u64, u64)> = text
        .lines()
        .skip_while(|l| !l.starts_with("## Longest wins"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim().trim_matches('|').split('|').map(str::trim).collect();
            match cells.as_slice() {
                [t, w, b] => Some((t.to_string(), w.parse().ok()?, b.parse().ok()?)),
                _ => None,
            }
        })
        .collect();
    assert!(rows.len() >= 24, "README table not found: {rows:?}");
    rows
}

fn stats_json(dir: &Path, sig: &str) -> serde_json::Value {
    let out = Command::new(bin()).args(["stats", "--tables", dir.to_str().unwrap(), sig, "--json"]).output().unwrap();
    assert!(out.status.success(), "stats {sig}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn longest_wins_match_the_reference_and_counts_add_up() {
    let rows = readme_longest_wins();
    // The 3- and 4-men tables, and the larger ones (KQRvKR), are shared.
    for (table, white, black) in &rows {
        let dir = if Material::parse(table).unwrap().men() > 4 {
            assert!(CURSED.contains(&table.as_str()), "{table}: no shared folder builds it");
            cursed_tables()
        } else {
            small_tables()
        };
        let s = stats_json(dir, table);
        let got = (s["longest_white_win"].as_u64().unwrap(), s["longest_black_win"].as_u64().unwrap());
        println!("{table}: longest wins white {} black {} (reference {white} {black})", got.0, got.1);
        assert_eq!(got, (*white, *black), "{table}");
        for side in ["white_to_move", "black_to_move"] {
            let t = &s[side];
            let n = |k: &str| t[k].as_u64().unwrap();
            assert_eq!(n("white_wins") + n("draws") + n("black_wins"), n("legal"), "{table} {side}");
            let hist = |k: &str| t[k].as_array().unwrap().iter().map(|v| v.as_u64().unwrap()).sum::<u64>();
            assert_eq!(hist("white_wins_by_distance"), n("white_wins"), "{table} {side}");
            assert_eq!(hist("black_wins_by_distance"), n("black_wins"), "{table} {side}");
            assert!(n("stalemates") <= n("draws"), "{table} {side}");
        }
        // Both runs count the same positions (once up to symmetry), with the colours swapped.
        let runs = s["runs"].as_array().unwrap();
        if let [a, b] = runs.as_slice() {
            assert_eq!(a["legal"]["wtm"], b["legal"]["btm"], "{table}");
            assert_eq!(a["legal"]["btm"], b["legal"]["wtm"], "{table}");
        }
    }
}

#[test]
fn known_counts_of_small_endgames() {
    let dir = small_tables();
    // KRRvK: with black to move every draw is a stalemate (a capture leaves KRvK, won).
    let s = stats_json(dir, "KRRvK");
    let b = &s["black_to_move"];
    assert!(b["stalemates"].as_u64().unwrap() > 0);
    assert_eq!(b["stalemates"], b["draws"]);
    assert_eq!(s["white_to_move"]["draws"], 0);
    // A symmetric endgame: white to move mirrors black to move.
    let s = stats_json(dir, "KRvKR");
    let (w, b) = (&s["white_to_move"], &s["black_to_move"]);
    assert_eq!(w["white_wins"], b["black_wins"]);
    assert_eq!(w["white_wins_by_distance"], b["black_wins_by_distance"]);
    assert_eq!(w["checkmates"], b["checkmates"]);
    // KQvK: 3 men with the black king in the triangle; every legal wtm position is won.
    let s = stats_json(dir, "KQvK");
    assert_eq!(s["white_to_move"]["draws"], 0);
    assert_eq!(s["longest_white_win"], 20);
    let fen = s["black_to_move"]["longest_white_win"]["fen"].as_str().unwrap();
    let probe = Command::new(bin()).args(["probe", "--tables", dir.to_str().unwrap(), fen]).output().unwrap();
    let line = String::from_utf8(probe.stdout).unwrap();
    assert_eq!(line.split('\t').nth(2), Some("-20"), "{line}");
}

#[test]
fn histogram_is_drawn_as_svg_and_png() {
    let dir = small_tables();
    let out = tempfile::tempdir().unwrap();
    for name in ["h.svg", "h.png"] {
        let path = out.path().join(name);
        let o = Command::new(bin())
            .args(["stats", "--tables", dir.to_str().unwrap(), "KQvKR", "--plot", path.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let bytes = std::fs::read(&path).unwrap();
        assert!(bytes.len() > 5000, "{name}: {} bytes", bytes.len());
        if name.ends_with("svg") {
            let text = String::from_utf8(bytes).unwrap();
            assert!(text.starts_with("<svg") && text.contains("KQvKR") && text.contains("<rect"), "{name}");
        } else {
            assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
        }
    }
    let o = Command::new(bin())
        .args(["stats", "--tables", dir.to_str().unwrap(), "KQvKR", "--plot", "x.gif"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    for bad in [vec!["KQvKQQQQ"], vec!["KBvKB", "--tables", "/nonexistent"]] {
        let mut args = vec!["stats"];
        args.extend(bad);
        let o = Command::new(bin()).args(&args).output().unwrap();
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stderr).starts_with("error:"));
    }
}

/// The README's "Tables with pawns" table: (table, six counts, longest white, longest
/// black); counts of tables marked † are halved (the reference counts each mirror pair
/// twice there, we count it once).
fn readme_pawn_rows() -> Vec<(String, [u64; 6], u64, u64)> {
    let text = std::fs::read_to_string(reference_dir().join("README.md")).unwrap();
    let num = |c: &str| c.replace(',', "").parse::<u64>().ok();
    let rows: Vec<_> = text
        .lines()
        .skip_while(|l| !l.starts_with("## Tables with pawns"))
        .take_while(|l| !l.starts_with("## Cursed"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim().trim_matches('|').split('|').map(str::trim).collect();
            if cells.len() != 9 {
                return None;
            }
            let halved = cells[0].ends_with('†');
            let name = cells[0].trim_end_matches('†').trim().to_string();
            let mut counts = [0u64; 6];
            for (c, cell) in counts.iter_mut().zip(&cells[1..7]) {
                *c = num(cell)? / if halved { 2 } else { 1 };
            }
            Some((name, counts, num(cells[7])?, num(cells[8])?))
        })
        .collect();
    assert_eq!(rows.len(), 12, "README pawn table not found: {rows:?}");
    rows
}

#[test]
fn pawn_tables_match_the_reference_counts_and_longest_wins() {
    let mut seen = 0;
    for (table, counts, white, black) in readme_pawn_rows() {
        if table == "KRPvKR" {
            continue; // 5 men with its 29-run closure: measured in docs/BENCHMARKS.md
        }
        let s = stats_json(pawn_tables(), &table);
        let n = |side: &str, k: &str| s[side][k].as_u64().unwrap();
        let got = [
            n("white_to_move", "white_wins"),
            n("white_to_move", "draws"),
            n("white_to_move", "black_wins"),
            n("black_to_move", "black_wins"),
            n("black_to_move", "draws"),
            n("black_to_move", "white_wins"),
        ];
        let longest = (s["longest_white_win"].as_u64().unwrap(), s["longest_black_win"].as_u64().unwrap());
        println!("{table}: {got:?}, longest {longest:?} (reference {counts:?}, {white} {black})");
        assert_eq!(got, counts, "{table}: wtm wins/draws/losses, btm wins/draws/losses");
        assert_eq!(longest, (white, black), "{table}: longest wins");
        seen += 1;
    }
    assert_eq!(seen, 11);
}

/// The README's "Cursed wins and blessed losses" table: table -> (wtm wins, cursed wins,
/// draws, blessed losses, losses, btm the same five, longest cursed win for white).
fn readme_cursed_rows() -> Vec<(String, [u64; 10], Option<u64>)> {
    let text = std::fs::read_to_string(reference_dir().join("README.md")).unwrap();
    let num = |c: &str| c.replace(',', "").parse::<u64>().ok();
    text.lines()
        .skip_while(|l| !l.starts_with("## Cursed wins"))
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim().trim_matches('|').split('|').map(str::trim).collect();
            if cells.len() != 12 {
                return None;
            }
            let mut counts = [0u64; 10];
            for (c, cell) in counts.iter_mut().zip(&cells[1..11]) {
                *c = num(cell)?;
            }
            let white = cells[11].split('/').next().map(str::trim).and_then(num);
            Some((cells[0].to_string(), counts, white))
        })
        .collect()
}

#[test]
fn cursed_wins_and_blessed_losses_match_the_reference() {
    // KBBvKN, KBNvKN, KRBvKR and KQRvKR with their sub-endgames: about a minute on 2 cores.
    let rows = readme_cursed_rows();
    let dir = cursed_tables();
    for table in CURSED {
        let (_, reference, longest) = rows.iter().find(|r| r.0 == table).expect("the table in the README").clone();
        let s = stats_json(dir, table);
        let side = |stm: &str| {
            let n = |k: &str| s[stm][k].as_u64().unwrap();
            // The side to move's view: win, cursed win, draw, blessed loss, loss.
            if stm == "white_to_move" {
                [n("white_wins"), n("white_cursed_wins"), n("draws"), n("black_cursed_wins"), n("black_wins")]
            } else {
                [n("black_wins"), n("black_cursed_wins"), n("draws"), n("white_cursed_wins"), n("white_wins")]
            }
        };
        let ours: Vec<u64> = [side("white_to_move"), side("black_to_move")].concat();
        println!("{table}: ours {ours:?}, reference {reference:?}");
        // The reference counts both orders of two like men (KBBvKN), as for KPPvK: there
        // every category but the draws (where positions symmetric in themselves count
        // differently) is exactly twice ours; otherwise every count is equal.
        let like_men = table == "KBBvKN";
        for (i, (&o, &r)) in ours.iter().zip(&reference).enumerate() {
            match (like_men, i % 5) {
                (true, 2) => assert!((2 * o).abs_diff(r) * 1000 < r, "{table} draws {i}: {ours:?} / {reference:?}"),
                (true, _) => assert_eq!(2 * o, r, "{table} category {i}: {ours:?} / {reference:?}"),
                (false, _) => assert_eq!(o, r, "{table} category {i}: {ours:?} / {reference:?}"),
            }
        }
        let longest_white = [&s["white_to_move"], &s["black_to_move"]]
            .iter()
            .map(|t| t["longest_white_cursed_win"].as_u64().unwrap())
            .max()
            .filter(|&l| l > 0);
        assert_eq!(longest_white, longest, "{table}: longest cursed win for white");
        for t in [&s["white_to_move"], &s["black_to_move"]] {
            assert_eq!(t["longest_black_cursed_win"], 0, "{table}");
        }
        // Every cursed position is marked, and wins of exactly 100 plies are told apart
        // from cursed wins (KRBvKR has btm positions with only losing captures, so its
        // chains are followed to step 101 for them: none is).
        let run = &s["runs"][0];
        assert_eq!(run["cursed_marked"], true, "{table}");
        assert_eq!(run["edge_exact"], true, "{table}");
        if table == "KBBvKN" {
            check_edge_and_cursed_positions(dir, &s);
        }
        // The verifier re-derives every cursed position from its successors and finds them
        // where the statistics do.
        let signature = Material::parse(table).unwrap();
        for run in signature.runs_of_signature() {
            let r = tbstream::verify_run(dir, &run, 2, |_, _| {}).unwrap_or_else(|e| panic!("{run}: {e:#}"));
            if run == signature {
                let cursed = |stm: &str| s[stm]["white_cursed_wins"].as_u64().unwrap() > 0;
                assert_eq!(r.wtm.cursed > 0, cursed("white_to_move"), "{run}: {:?}", r.wtm);
                assert_eq!(r.btm.cursed > 0, cursed("black_to_move"), "{run}: {:?}", r.btm);
            }
        }
    }
}

/// KBBvKN: the loser to move at exactly 100 plies is lost (its best move reaches a win of
/// 99), and cursed wins and blessed losses found among random positions agree one ply
/// deep with the library's own answers.
fn check_edge_and_cursed_positions(dir: &Path, s: &serde_json::Value) {
    use tbstream::{Category, Position, Tablebase};
    let tb = Tablebase::open(dir).unwrap();
    let longest = &s["black_to_move"]["longest_white_win"];
    assert_eq!(longest["plies"], 100);
    let pos = Position::from_fen(longest["fen"].as_str().unwrap()).unwrap();
    let p = tb.probe(&pos).unwrap();
    assert_eq!((p.wdl, p.dtz, tb.category(&pos).unwrap()), (-1, -100, Some(Category::Loss)));
    let (_, after) = tb.best_move(&pos).unwrap().unwrap();
    assert_eq!((after.wdl, after.dtz), (1, 99));
    let seen = check_categories_one_ply(&tb, "KBBkn", 20_000);
    assert!(seen.cursed > 50 && seen.blessed > 50, "{seen:?}");
    // The examples `stats` gives are cursed.
    let example = |side: &str| Position::from_fen(s[side]["white_cursed_example"].as_str().unwrap()).unwrap();
    assert_eq!(tb.category(&example("white_to_move")).unwrap(), Some(Category::CursedWin));
    assert_eq!(tb.category(&example("black_to_move")).unwrap(), Some(Category::BlessedLoss));
}

/// What [`check_categories_one_ply`] met.
#[derive(Debug, Default)]
struct OnePly {
    cursed: u32,
    blessed: u32,
}

/// A child of a position: its category (from its side to move's view), whether a zeroing
/// move (capture, promotion, pawn move) led to it, and after a quiet move its distance with
/// the parent's (fresh) counter.
struct Child {
    pos: tbstream::Position,
    category: Option<tbstream::Category>,
    zeroing: bool,
    dtz: Option<i32>,
}

/// Checks a position's category one ply deep against the library's answers for its
/// children, and returns them with the category:
/// - a cursed win has no move into a loss (a quiet one within 98 plies), and some move into
///   a blessed loss or a quiet move into a loss of 100 plies;
/// - a blessed loss has no move into a draw or better, and some move into a cursed win;
/// - a draw has no move into a loss or a blessed loss.
fn one_ply(tb: &tbstream::Tablebase, pos: &tbstream::Position) -> (tbstream::Category, Vec<Child>) {
    use tbstream::Category;
    let Some(cat) = tb.category(pos).unwrap() else { panic!("{}: unknown", pos.fen()) };
    let children: Vec<Child> = pos
        .legal_moves()
        .into_iter()
        .map(|m| {
            let mut child = pos.play(m);
            // The distance with the counter the parent had (fresh), not one ply later.
            child.halfmove = 0;
            let zeroing = m.is_zeroing();
            let category = tb.category(&child).unwrap();
            let dtz = (!zeroing).then(|| tb.probe(&child).unwrap().dtz);
            Child { pos: child, category, zeroing, dtz }
        })
        .collect();
    let (loss, blessed, cursed) = (Some(Category::Loss), Some(Category::BlessedLoss), Some(Category::CursedWin));
    let fen = pos.fen();
    match cat {
        Category::CursedWin => {
            for c in &children {
                assert!(!(c.category == loss && c.dtz.is_none_or(|d| d > -100)), "{fen}");
            }
            assert!(children.iter().any(|c| c.category == blessed || c.dtz == Some(-100)), "{fen}");
        }
        Category::BlessedLoss => {
            assert!(children.iter().all(|c| c.category >= cursed), "{fen}");
            assert!(children.iter().any(|c| c.category == cursed), "{fen}");
        }
        Category::Draw => assert!(children.iter().all(|c| c.category != loss && c.category != blessed), "{fen}"),
        _ => {}
    }
    (cat, children)
}

/// [`one_ply`] on `n` random positions of `men` (see [`random_position`]).
fn check_categories_one_ply(tb: &tbstream::Tablebase, men: &str, n: usize) -> OnePly {
    use tbstream::Category;
    let mut rng = Rng(0x5eed);
    let mut seen = OnePly::default();
    for _ in 0..n {
        let Some(pos) = random_position(&mut rng, men) else { continue };
        match one_ply(tb, &pos).0 {
            Category::CursedWin => seen.cursed += 1,
            Category::BlessedLoss => seen.blessed += 1,
            _ => {}
        }
    }
    seen
}

/// From a cursed position, follows cursed positions (cursed win, blessed loss, cursed win...)
/// checking each one ply deep, until a zeroing move leads into a cursed position of the
/// other side to move; returns the plies walked. Panics if none is reached in 200 plies.
fn walk_to_cursed_conversion(tb: &tbstream::Tablebase, fen: &str) -> usize {
    use tbstream::Category;
    let mut pos = tbstream::Position::from_fen(fen).unwrap();
    for ply in 0..200 {
        let (cat, children) = one_ply(tb, &pos);
        let next = match cat {
            Category::CursedWin => Category::BlessedLoss,
            Category::BlessedLoss => Category::CursedWin,
            other => panic!("{}: {other:?} on a cursed line", pos.fen()),
        };
        if children.iter().any(|c| c.zeroing && c.category == Some(next)) {
            return ply;
        }
        pos = children.into_iter().find(|c| c.category == Some(next)).expect("a cursed child").pos;
    }
    panic!("no conversion into a cursed position within 200 plies of {fen}");
}

/// Builds the 5-men KBPvKN (a minute and a half of CPU on top of the cursed tables), so in the
/// slow tier: `scripts/slow-tests.sh`.
#[test]
#[ignore = "slow tier: scripts/slow-tests.sh"]
fn slow_captures_and_promotions_into_cursed_positions_are_followed() {
    // KBPvKN promotes into KBBvKN and KBNvKN, which have cursed wins: its own cursed wins
    // and blessed losses are those that promotions and captures lead to (without them it
    // would have none), and its table says every one is marked. Its cursed and pawn
    // sub-endgames come from the shared folder (built once for the tests that read them).
    let dir = copy_tables(krpvkr(), |_| true);
    let sig = Material::parse("KBPvKN").unwrap();
    generate(&[sig], &GenOptions::new(dir.path(), 2), &SilentProgress).unwrap();
    let s = stats_json(dir.path(), "KBPvKN");
    for run in s["runs"].as_array().unwrap() {
        assert_eq!(run["cursed_marked"], true, "{run}");
    }
    let tb = tbstream::Tablebase::open(dir.path()).unwrap();
    for side in ["white_to_move", "black_to_move"] {
        assert!(s[side]["white_cursed_wins"].as_u64().unwrap() > 0, "{side}");
        let example = s[side]["white_cursed_example"].as_str().expect("a cursed position");
        let plies = walk_to_cursed_conversion(&tb, example);
        println!("KBPvKN {side}: {example} reaches a conversion into a cursed position in {plies} plies");
    }
    let seen = check_categories_one_ply(&tb, "KBPkn", 20_000);
    println!("KBPvKN, 20,000 random positions: {seen:?}");
}

/// A random legal position with the men of `men` (upper case white, lower case black; the
/// kings first of each side), either side to move.
fn random_position(rng: &mut Rng, men: &str) -> Option<tbstream::Position> {
    let mut board = [' '; 64];
    for m in men.chars() {
        let sq = loop {
            let s = rng.below(64) as usize;
            if board[s] == ' ' {
                break s;
            }
        };
        board[sq] = m;
    }
    let rows: Vec<String> = (0..8)
        .rev()
        .map(|r| {
            let mut row = String::new();
            let mut empty = 0;
            for f in 0..8 {
                match board[8 * r + f] {
                    ' ' => empty += 1,
                    c => {
                        if empty > 0 {
                            row.push_str(&empty.to_string());
                            empty = 0;
                        }
                        row.push(c);
                    }
                }
            }
            if empty > 0 {
                row.push_str(&empty.to_string());
            }
            row
        })
        .collect();
    let stm = if rng.below(2) == 0 { "w" } else { "b" };
    let pos = tbstream::Position::from_fen(&format!("{} {stm} - - 0 1", rows.join("/"))).ok()?;
    (!pos.legal_moves().is_empty()).then_some(pos)
}
