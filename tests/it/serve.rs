//! `tbstream serve`: the binary started on a free port of 127.0.0.1 and asked over HTTP.
//! Its answers are checked against the library's probes and `probe --json` on thousands of
//! random positions (lichess's conventions: categories with the clock folded in, `dtz`
//! ignoring the clock, moves best first from the view of the side to move after them), its
//! main lines played out, its errors (400 and 404 with a JSON message, the server serving on
//! after them), and its stop on SIGTERM with the requests under way answered.

use crate::fixtures::{kqvk_krvk, pawn_tables};
use crate::util::{bin, tbstream, Rng};
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tbstream::{board_field, Category, Position, Tablebase};

// ---------------------------------------------------------------------------------------
// The server and a minimal HTTP client
// ---------------------------------------------------------------------------------------

/// A running `tbstream serve`, its stderr in a file; killed if the test ends without
/// stopping it.
struct Server {
    child: Child,
    addr: String,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Starts `tbstream serve --tables DIR --listen 127.0.0.1:0 ARGS` (`--cache 64MiB` unless
    /// ARGS set it) and waits for the address it prints.
    fn start(tables: &Path, args: &[&str]) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("stderr");
        let cache: &[&str] = if args.contains(&"--cache") { &[] } else { &["--cache", "64MiB"] };
        let child = Command::new(bin())
            .args(["serve", "--listen", "127.0.0.1:0", "--tables"])
            .arg(tables)
            .args(cache)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let mut server = Server { child, addr: String::new(), log, _dir: dir };
        let start = Instant::now();
        loop {
            let text = server.log_text();
            // The line whole (the log may be read while it is being written).
            if let Some((addr, _)) = text.split("listening on http://").nth(1).and_then(|rest| rest.split_once('\n')) {
                server.addr = addr.split_whitespace().next().expect("an address").to_string();
                return server;
            }
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("serve exited with {status} before listening: {text}");
            }
            assert!(start.elapsed() < Duration::from_secs(20), "serve did not start: {text}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// `GET target`: the status and the body as JSON.
    fn get(&self, target: &str) -> (u16, Value) {
        let (status, body) = http_get(&self.addr, target);
        let json =
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("GET {target}: {status}, not JSON ({e}): {body}"));
        (status, json)
    }

    /// `GET /standard?fen=FEN` (spaces as `_`, as lichess allows), which must succeed.
    fn standard(&self, fen: &str) -> Value {
        let (status, json) = self.get(&format!("/standard?fen={}", fen.replace(' ', "_")));
        assert_eq!(status, 200, "{fen}: {json}");
        json
    }

    /// Sends SIGTERM and waits for the exit: its code and the whole log.
    fn terminate(self) -> (Option<i32>, String) {
        self.stop_with(libc::SIGTERM)
    }

    /// Sends `signal` and waits for the exit: its code and the whole log.
    fn stop_with(mut self, signal: i32) -> (Option<i32>, String) {
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, signal) }, 0);
        let start = Instant::now();
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(start.elapsed() < Duration::from_secs(20), "serve did not stop on SIGTERM");
            std::thread::sleep(Duration::from_millis(10));
        };
        (status.code(), self.log_text())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Sends `GET target` on a new connection and reads the whole answer: the status and the
/// body (the server sends a Content-Length; `Connection: close` ends the stream).
fn http_get(addr: &str, target: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(addr).unwrap();
    write!(stream, "GET {target} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").unwrap();
    read_response(&mut stream)
}

/// Reads an HTTP/1.1 response to the end of the stream: the status and the body.
fn read_response(stream: &mut TcpStream) -> (u16, String) {
    let mut raw = String::new();
    stream.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no HTTP head in {raw:?}"));
    assert!(!head.to_ascii_lowercase().contains("transfer-encoding"), "{head}");
    let status = head.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap();
    (status, body.to_string())
}

// ---------------------------------------------------------------------------------------
// Positions
// ---------------------------------------------------------------------------------------

/// The endgames served, white's men then black's (and their colour swaps, drawn too).
const MATERIALS: [&str; 6] = ["KQk", "KRk", "KPk", "KQkr", "KPkp", "KRkp"];

/// `n` random legal positions of [`MATERIALS`]: a fifth with a clock from 1 to 110, some
/// after a double step that can be taken en passant.
fn random_fens(seed: u64, n: usize) -> Vec<String> {
    let mut rng = Rng(seed);
    let mut fens = Vec::new();
    while fens.len() < n {
        let letters: Vec<char> = MATERIALS[rng.below(MATERIALS.len() as u64) as usize].chars().collect();
        let swap = rng.below(2) == 0;
        let mut board = [None::<char>; 64];
        for &c in &letters {
            let c = if swap { swap_case(c) } else { c };
            let (lo, span) = if c.eq_ignore_ascii_case(&'p') { (8, 48) } else { (0, 64) };
            let sq = loop {
                let sq = (lo + rng.below(span)) as usize;
                if board[sq].is_none() {
                    break sq;
                }
            };
            board[sq] = Some(c);
        }
        let clock = if rng.below(5) == 0 { 1 + rng.below(110) } else { 0 };
        let turn = if rng.below(2) == 0 { 'w' } else { 'b' };
        if letters == ['K', 'P', 'k', 'p'] && rng.below(2) == 0 {
            // The pawns placed for a double step beside the enemy pawn, answered en passant below.
            board.iter_mut().filter(|c| matches!(c, Some('P' | 'p'))).for_each(|c| *c = None);
            let file = rng.below(8) as usize;
            let taker = if file == 0 || (file < 7 && rng.below(2) == 0) { file + 1 } else { file - 1 };
            let (start, beside) =
                if turn == 'w' { ((8 + file, 'P'), (24 + taker, 'p')) } else { ((48 + file, 'p'), (32 + taker, 'P')) };
            if board[start.0].is_some() || board[beside.0].is_some() {
                continue;
            }
            board[start.0] = Some(start.1);
            board[beside.0] = Some(beside.1);
        }
        let Ok(pos) = Position::from_fen(&format!("{} {turn} - - {clock} 1", board_field(&board))) else { continue };
        let double_step = pos.legal_moves().into_iter().find(|m| m.pawn && m.from.abs_diff(m.to) == 16);
        match double_step {
            Some(mv) if pos.play(mv).ep.is_some() => fens.push(pos.play(mv).fen()),
            _ => fens.push(pos.fen()),
        }
    }
    fens
}

fn swap_case(c: char) -> char {
    if c.is_ascii_uppercase() {
        c.to_ascii_lowercase()
    } else {
        c.to_ascii_uppercase()
    }
}

/// The position with a fresh clock.
fn fresh(pos: &Position) -> Position {
    let mut p = pos.clone();
    p.halfmove = 0;
    p
}

fn mated(pos: &Position) -> bool {
    !pos.has_legal_move() && pos.in_check(pos.turn)
}

/// lichess's category of a position whose previous position had the clock
/// `halfmoves_before`, from the library's answers: decisive under the 50-move rule at its
/// clock (`probe`), unless the draw could be claimed before the move; else decisive only
/// with a fresh clock (`category`): cursed; else a draw.
fn expected_category(tb: &Tablebase, pos: &Position, halfmoves_before: u32) -> &'static str {
    let wdl = tb.probe(pos).unwrap().wdl;
    let claimable = halfmoves_before >= 100;
    match (wdl, tb.category(pos).unwrap().unwrap()) {
        (1, _) if !claimable => "win",
        (-1, _) if !claimable => "loss",
        (1, _) | (0, Category::Win | Category::CursedWin) => "cursed-win",
        (-1, _) | (0, Category::Loss | Category::BlessedLoss) => "blessed-loss",
        _ => "draw",
    }
}

/// lichess's `dtz`: the library's distance with a fresh clock; -1 for checkmate; null for a
/// result decided only past the 50-move rule (no distance stored).
fn expected_dtz(tb: &Tablebase, pos: &Position) -> Value {
    if mated(pos) {
        return Value::from(-1);
    }
    let p = tb.probe(&fresh(pos)).unwrap();
    match tb.category(pos).unwrap().unwrap() {
        Category::CursedWin | Category::BlessedLoss => Value::Null,
        _ => Value::from(p.dtz),
    }
}

/// The category names in lichess's sort order.
const ORDER: [&str; 6] = ["loss", "unknown", "blessed-loss", "draw", "cursed-win", "win"];

fn rank(category: &Value) -> usize {
    ORDER.iter().position(|c| category == c).unwrap_or_else(|| panic!("unknown category {category}"))
}

/// The category for the other side.
fn flip(category: &str) -> &'static str {
    match category {
        "loss" => "win",
        "blessed-loss" => "cursed-win",
        "draw" => "draw",
        "cursed-win" => "blessed-loss",
        "win" => "loss",
        other => panic!("no flip of {other}"),
    }
}

// ---------------------------------------------------------------------------------------
// The tests
// ---------------------------------------------------------------------------------------

/// Thousands of positions: each answer agrees with the library's probes and with
/// `probe --json`; the moves are the legal moves, sorted by lichess's rules, each with the
/// right category and distance; the best is tbstream's best move whenever that is at least
/// as good by lichess's ordering.
#[test]
fn answers_agree_with_the_probe_on_thousands_of_positions() {
    let dir = pawn_tables();
    let tb = Tablebase::open(dir).unwrap();
    let server = Server::start(dir, &[]);
    let fens = random_fens(0x5e7e_0001, 2500);
    // `probe --json` of every position and of every one with a fresh clock.
    let fresh_fens: Vec<String> = fens.iter().map(|f| fresh(&Position::from_fen(f).unwrap()).fen()).collect();
    let json = probe_json(dir, fens.iter().chain(&fresh_fens));
    let (mut clocked, mut en_passant, mut checked_moves) = (0, 0, 0);
    let mut best_behind = 0;
    for (i, fen) in fens.iter().enumerate() {
        let pos = Position::from_fen(fen).unwrap();
        let answer = server.standard(fen);
        let (probed, probed_fresh) = (&json[i], &json[fens.len() + i]);
        let category = answer["category"].as_str().unwrap();
        // The position: category and dtz, with and without the clock.
        assert_eq!(category, expected_category(&tb, &pos, pos.halfmove.saturating_sub(1)), "{fen}: {answer}");
        assert_eq!(answer["dtz"], expected_dtz(&tb, &pos), "{fen}");
        assert_eq!(answer["precise_dtz"], answer["dtz"], "{fen}");
        if pos.halfmove == 0 {
            assert_eq!(category, probed["category"], "{fen}: the category of probe --json");
        } else {
            clocked += 1;
        }
        match (mated(&pos), &answer["dtz"]) {
            (true, dtz) => assert_eq!((dtz, &probed_fresh["dtz"]), (&Value::from(-1), &Value::from(0)), "{fen}"),
            (false, Value::Null) => assert!(category.starts_with("cursed") || category.starts_with("blessed")),
            (false, dtz) => assert_eq!(dtz, &probed_fresh["dtz"], "{fen}: the dtz of probe --json (fresh clock)"),
        }
        assert_eq!(answer["checkmate"], mated(&pos));
        assert_eq!(answer["stalemate"], !pos.has_legal_move() && !pos.in_check(pos.turn));
        assert_eq!(answer["insufficient_material"], pos.insufficient_material());
        en_passant += usize::from(pos.ep.is_some());
        // The moves: all legal ones, sorted, the first one's category the position's, flipped.
        let moves = answer["moves"].as_array().unwrap();
        let mut ucis: Vec<&str> = moves.iter().map(|m| m["uci"].as_str().unwrap()).collect();
        assert_eq!(moves.len(), pos.legal_moves().len(), "{fen}");
        assert!(moves.windows(2).all(|w| rank(&w[0]["category"]) <= rank(&w[1]["category"])), "{fen}: {answer}");
        match moves.first() {
            Some(first) => assert_eq!(first["category"], flip(category), "{fen}: {answer}"),
            None => assert!(probed["move"].is_null()),
        }
        // Each move's fields, from the view of the side to move after it (every 5th position).
        if i % 5 == 0 {
            for m in moves {
                let mv = pos.parse_uci(m["uci"].as_str().unwrap()).unwrap();
                let after = pos.play(mv);
                assert_eq!(m["san"], pos.san(mv));
                assert_eq!(m["zeroing"], mv.is_zeroing());
                assert_eq!(m["category"], expected_category(&tb, &after, pos.halfmove), "{fen} {mv}");
                assert_eq!(m["dtz"], expected_dtz(&tb, &after), "{fen} {mv}");
                assert_eq!(m["checkmate"], mated(&after));
                checked_moves += 1;
            }
        }
        // The best move: probe's, unless lichess's order puts a move of a better category
        // first (with a clock, where the rule draws both).
        if let Some(best) = probed["move"].as_str() {
            let at = ucis.iter().position(|u| *u == best).unwrap();
            if at > 0 {
                assert!(rank(&moves[at]["category"]) > rank(&moves[0]["category"]), "{fen}: {answer}");
                assert!(pos.halfmove > 0, "{fen}: with a fresh clock the best move must lead");
                best_behind += 1;
            }
        }
        ucis.sort_unstable();
        ucis.dedup();
        assert_eq!(ucis.len(), moves.len(), "{fen}: a move twice");
    }
    assert!(clocked >= 300 && en_passant >= 20 && checked_moves >= 5000, "{clocked} {en_passant} {checked_moves}");
    eprintln!("{best_behind} of {} positions have a move of a better category than probe's best first", fens.len());
    drop(server);
}

/// `probe --tables DIR --json` of `fens`: one JSON object per FEN.
fn probe_json<'a>(dir: &Path, fens: impl Iterator<Item = &'a String>) -> Vec<Value> {
    let mut child = Command::new(bin())
        .args(["probe", "--json", "--tables"])
        .arg(dir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let input: String = fens.map(|f| format!("{f}\n")).collect();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Main lines: from a decisive position with a fresh clock, tbstream's best moves to
/// checkmate (through captures and pawn moves into smaller tables), the distances counting
/// down within each phase, the winner named; a draw has none. Up to the first capture or
/// pawn move, the line is the library's `line`.
#[test]
fn main_lines_lead_to_mate() {
    let dir = pawn_tables();
    let tb = Tablebase::open(dir).unwrap();
    let server = Server::start(dir, &[]);
    let (mut decisive, mut drawn, mut across) = (0, 0, 0);
    for fen in random_fens(0x5e7e_0002, 400) {
        let pos = fresh(&Position::from_fen(&fen).unwrap());
        let fen = pos.fen();
        let (status, answer) = server.get(&format!("/standard/mainline?fen={}", fen.replace(' ', "_")));
        assert_eq!(status, 200, "{fen}: {answer}");
        let steps = answer["mainline"].as_array().unwrap();
        let probe = tb.probe(&pos).unwrap();
        assert_eq!(answer["dtz"], expected_dtz(&tb, &pos), "{fen}");
        if probe.wdl == 0 || mated(&pos) {
            assert!(steps.is_empty() && answer["winner"].is_null(), "{fen}: {answer}");
            drawn += 1;
            continue;
        }
        decisive += 1;
        let line = tb.line(&pos, 200).unwrap();
        let mut p = pos.clone();
        let mut zeroed = false;
        for (k, step) in steps.iter().enumerate() {
            let mv = p.parse_uci(step["uci"].as_str().unwrap()).unwrap_or_else(|| panic!("{fen}: {step} illegal"));
            assert_eq!(step["san"], p.san(mv));
            if !zeroed {
                assert_eq!(mv, line[k], "{fen}: step {k} leaves the library's line");
            }
            zeroed |= mv.is_zeroing();
            p = p.play(mv);
            assert_eq!(step["dtz"], expected_dtz(&tb, &fresh(&p)), "{fen}: step {k}");
            assert_eq!(step["precise_dtz"], step["dtz"]);
        }
        across += usize::from(steps.len() > line.len());
        assert!(mated(&p), "{fen}: the line ends in {} without mate", p.fen());
        let winner = if probe.wdl > 0 { pos.turn } else { pos.turn.other() };
        assert_eq!(answer["winner"], if winner == tbstream::Color::White { "w" } else { "b" });
        assert_eq!(steps.last().unwrap()["dtz"], -1);
    }
    assert!(decisive >= 150 && drawn >= 30 && across >= 20, "{decisive} {drawn} {across}");
}

/// A late clock: lichess claims the draw once the clock reaches 100 plies, so the line stops
/// there without a winner, though the win with a fresh clock goes on.
#[test]
fn main_line_stops_at_the_fifty_move_claim() {
    let dir = kqvk_krvk();
    let server = Server::start(dir, &[]);
    // KRvK with black to move: lost in 32 plies with a fresh clock (the library's example).
    let (status, late) = server.get("/standard/mainline?fen=8/8/8/8/8/8/1Rk5/K7_b_-_-_90_1");
    assert_eq!(status, 200);
    assert_eq!(late["mainline"].as_array().unwrap().len(), 10, "{late}");
    assert!(late["winner"].is_null());
    assert_eq!(late["dtz"], -32);
    let early = server.get("/standard/mainline?fen=8/8/8/8/8/8/1Rk5/K7_b_-_-_0_1").1;
    assert_eq!(early["mainline"].as_array().unwrap().len(), 32);
    assert_eq!(early["mainline"].as_array().unwrap()[..10], late["mainline"].as_array().unwrap()[..]);
    assert_eq!(early["winner"], "w");
    // The position itself is a blessed loss at that clock (the rule saves black).
    let (_, answer) = server.get("/standard?fen=8/8/8/8/8/8/1Rk5/K7_b_-_-_90_1");
    assert_eq!((answer["category"].as_str(), answer["dtz"].as_i64()), (Some("blessed-loss"), Some(-32)));
    assert!(answer["moves"].as_array().unwrap().iter().all(|m| m["category"] == "cursed-win"), "{answer}");
}

/// Bad requests get 400 and a JSON message, material without a table 404, and the server
/// answers the next request as before.
#[test]
fn bad_requests_get_400_missing_tables_404_and_serving_goes_on() {
    let dir = kqvk_krvk();
    let server = Server::start(dir, &[]);
    let good = "/standard?fen=8/8/8/8/8/2k5/8/KQ6_w_-_-_0_1";
    let (status, ok) = server.get(good);
    assert_eq!((status, ok["category"].as_str()), (200, Some("win")));
    for (target, status, says) in [
        ("/standard?fen=not-a-fen", 400, "FEN"),
        ("/standard", 400, "fen"),
        ("/standard?fen=", 400, "FEN"),
        ("/standard?fen=8/8/8/8/8/2k5/8/KQ7_w_-_-_0_1", 400, "board"),
        // The side not to move in check, pawns on the first and last ranks.
        ("/standard?fen=k7/8/8/8/8/8/8/Q1K5_w_-_-_0_1", 400, "check"),
        ("/standard?fen=8/8/8/8/8/2k5/8/KP6_w_-_-_0_1", 400, "pawn"),
        ("/standard?fen=1P6/8/8/8/8/2k5/8/K7_b_-_-_0_1", 400, "pawn"),
        ("/standard?fen=8/8/8/8/8/2k5/8/KQ6_x_-_-_0_1", 400, "side to move"),
        ("/standard?fen=8/8/8/8/8/2k5/8/KQ6_w_-_-_x_1", 400, "clock"),
        ("/standard?fen=8/8/8/8/8/2k5/8/Q7_w_-_-_0_1", 400, "king"),
        // Seven men, and castling rights.
        ("/standard?fen=8/8/8/8/1ppp4/2k5/8/KQR5_w_-_-_0_1", 400, "7 men"),
        ("/standard?fen=4k3/8/8/8/8/8/8/R3K2R_w_KQ_-_0_1", 400, "castling"),
        ("/standard/mainline?fen=4k3/8/8/8/8/8/8/R3K2R_w_KQ_-_0_1", 400, "castling"),
        ("/standard?fen=8/8/8/8/8/2k5/8/KQ6_w_-_e3_0_1", 400, "en passant"),
        // No table of KQvKR, KPvK or KNNvK in this folder.
        ("/standard?fen=8/8/8/8/8/2k5/1r6/KQ6_w_-_-_0_1", 404, "KQvKR"),
        ("/standard/mainline?fen=8/8/8/8/8/2k5/1r6/KQ6_w_-_-_0_1", 404, "KQvKR"),
        ("/standard?fen=8/8/2k5/8/8/8/1P6/K7_w_-_-_0_1", 404, "KPvK"),
        ("/standard?fen=8/8/8/8/8/2k5/1NN5/K7_w_-_-_0_1", 404, "KNNvK"),
        ("/nowhere", 404, "endpoint"),
    ] {
        let (got, json) = server.get(target);
        assert_eq!(got, status, "{target}: {json}");
        let message = json["error"].as_str().unwrap_or_else(|| panic!("{target}: no message in {json}"));
        assert!(message.to_lowercase().contains(&says.to_lowercase()), "{target}: {message}");
        assert_eq!(server.get(good), (200, ok.clone()), "after {target}");
    }
    // Bare kings and a lone knight are draws that need no table.
    let kvk = server.standard("8/8/8/8/8/2k5/8/K7 w - - 0 1");
    assert_eq!((kvk["category"].as_str(), kvk["dtz"].as_i64()), (Some("draw"), Some(0)));
    assert_eq!(kvk["insufficient_material"], true);
    // Ctrl-C (SIGINT) stops it as SIGTERM does.
    let (code, log) = server.stop_with(libc::SIGINT);
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("GET /standard?fen=not-a-fen 400 "), "{log}");
    assert!(log.contains("GET /nowhere 404 "), "{log}");
}

/// A move into material whose table the folder lacks is listed as `unknown` (as lichess
/// lists it), the rest of the answer intact; the main line of such a position is a 404.
#[test]
fn a_move_into_a_missing_table_is_unknown() {
    let dir = tempfile::tempdir().unwrap();
    for table in ["KQvKR.tbs", "KRvKQ.tbs", "KQvK.tbs"] {
        std::fs::copy(crate::fixtures::kqvkr().join(table), dir.path().join(table)).unwrap();
    }
    let server = Server::start(dir.path(), &[]);
    // KQvKR, black to move: Rxb1+ leads to KRvK (black's rook against a bare king), which is
    // not in the folder; Kxb1 would follow, so black draws, and the position's own answer
    // reads classes only. Every other move leads to a win of KQvKR, whose distance searches
    // white's captures into KQvK.
    let answer = server.standard("8/8/8/8/8/2k5/1r6/KQ6 b - - 0 1");
    assert_eq!((answer["category"].as_str(), answer["dtz"].as_i64()), (Some("draw"), Some(0)), "{answer}");
    let moves = answer["moves"].as_array().unwrap();
    let take = moves.iter().find(|m| m["uci"] == "b2b1").unwrap();
    assert_eq!(
        (take["category"].as_str(), &take["dtz"], take["san"].as_str()),
        (Some("unknown"), &Value::Null, Some("Rxb1+"))
    );
    assert!(
        moves.iter().filter(|m| m["uci"] != "b2b1").all(|m| m["category"] != "unknown" && m["dtz"].is_i64()),
        "{answer}"
    );
    assert!(moves.windows(2).all(|w| rank(&w[0]["category"]) <= rank(&w[1]["category"])), "{answer}");
}

/// Without a sub-endgame that a won position's captures lead to, its distance cannot be
/// searched (format 6 leaves the wins by a zeroing move out of the distance section): the
/// answer is 404 and names the missing table and why.
#[test]
fn a_distance_needs_the_tables_its_captures_lead_to() {
    let dir = tempfile::tempdir().unwrap();
    for table in ["KQvKR.tbs", "KRvKQ.tbs"] {
        std::fs::copy(crate::fixtures::kqvkr().join(table), dir.path().join(table)).unwrap();
    }
    let server = Server::start(dir.path(), &[]);
    // KQvKR, white to move: white wins in 55 plies, and may take the rook (Qxd5+ Kxd5), into
    // KQvK, which is not in the folder.
    for path in
        ["/standard?fen=8/8/4k3/3r4/8/8/8/K2Q4_w_-_-_0_1", "/standard/mainline?fen=8/8/4k3/3r4/8/8/8/K2Q4_w_-_-_0_1"]
    {
        let (status, json) = server.get(path);
        assert_eq!(status, 404, "{path}: {json}");
        let error = json["error"].as_str().unwrap();
        assert!(error.contains("KQvK ") && error.contains("search the captures"), "{path}: {json}");
    }
}

/// A folder that does not exist, an address that is none or is taken: exit 2 with a message,
/// before serving anything.
#[test]
fn bad_flags_exit_2() {
    let dir = kqvk_krvk();
    let (code, _, err) = tbstream(&["serve", "--tables", "/nonexistent/tables", "--listen", "127.0.0.1:0"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("does not exist"), "{err}");
    let (code, _, err) = tbstream(&["serve", "--tables", dir.to_str().unwrap(), "--listen", "somewhere"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--listen"), "{err}");
    let (code, _, err) = tbstream(&["serve", "--tables", dir.to_str().unwrap(), "--cache", "lots"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--cache"), "{err}");
    let server = Server::start(dir, &[]);
    let (code, _, err) = tbstream(&["serve", "--tables", dir.to_str().unwrap(), "--listen", &server.addr]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(&format!("listening on {}", server.addr)), "{err}");
}

/// SIGTERM: every request the server has read is answered, then it exits 0. The requests
/// queue behind one slow probe thread; the signal is sent once the kernel shows that the
/// server has read all of them (the receive queues of its connections empty), so that the
/// stop begins with most of them still waiting for their probes.
#[test]
fn sigterm_answers_the_requests_under_way_and_exits_0() {
    let dir = pawn_tables();
    let tb = Tablebase::open(dir).unwrap();
    // One probe thread, and a cache of one block: every probe decodes, so that answering
    // takes far longer than reading the requests.
    let server = Server::start(dir, &["--threads", "1", "--cache", "64KiB"]);
    let port = server.addr.rsplit(':').next().unwrap().parse::<u16>().unwrap();
    // Long main lines: decisive positions far from their next capture or pawn move.
    let fens: Vec<String> = random_fens(0x5e7e_0003, 4000)
        .iter()
        .map(|f| fresh(&Position::from_fen(f).unwrap()))
        .filter(|p| tb.probe(p).unwrap().dtz.abs() >= 15)
        .map(|p| p.fen())
        .take(128)
        .collect();
    assert_eq!(fens.len(), 128);
    let mut streams: Vec<TcpStream> = fens
        .iter()
        .map(|fen| {
            let mut s = TcpStream::connect(&server.addr).unwrap();
            let target = format!("/standard/mainline?fen={}", fen.replace(' ', "_"));
            write!(s, "GET {target} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").unwrap();
            s
        })
        .collect();
    let start = Instant::now();
    while unread_connections(port) > 0 {
        assert!(start.elapsed() < Duration::from_secs(20), "the server does not read its connections");
        std::thread::sleep(Duration::from_millis(1));
    }
    let addr = server.addr.clone();
    let stop = std::thread::spawn(move || server.terminate());
    for (s, fen) in streams.iter_mut().zip(&fens) {
        let (status, body) = read_response(s);
        assert_eq!(status, 200, "{fen}: {body}");
        assert!(body.contains("\"winner\""), "{fen}: {body}");
    }
    let (code, log) = stop.join().unwrap();
    assert_eq!(code, Some(0), "{log}");
    assert!(log.trim_end().lines().last().unwrap().starts_with("stopped"), "{log}");
    assert_eq!(log.matches(" 200 ").count(), fens.len(), "{log}");
    let after_stop = log.split("stopping").nth(1).unwrap().matches(" 200 ").count();
    assert!(after_stop > 0, "no request was under way at the stop: {log}");
    eprintln!("{after_stop} of {} requests answered after the stop began", fens.len());
    assert!(TcpStream::connect(&addr).is_err(), "still accepting after the stop");
}

/// The established connections to `port` on this machine whose receive queue still holds
/// bytes the server has not read (`/proc/net/tcp`: local address, state 01, rx_queue).
fn unread_connections(port: u16) -> usize {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            let local_port = f[1].rsplit(':').next().and_then(|p| u16::from_str_radix(p, 16).ok());
            let rx_queue = f[4].split(':').nth(1).and_then(|q| u64::from_str_radix(q, 16).ok());
            local_port == Some(port) && f[3] == "01" && rx_queue != Some(0)
        })
        .count()
}
