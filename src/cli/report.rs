//! How results are shown: the lines of `plan`, `status`, `verify`, `stats` and `probe`.

use std::io::Write;
use tbstream::{
    show_duration, show_size, Category, Color, JobPlan, JobStatus, Longest, Machine, Pass, Probe, Projection,
    RunStatus, SampleReport, SignatureStats, TimeEstimate, ToMove, VerifyReport, MAX_DISTANCE,
};

/// A plan report line per run (chunks, blocks, RAM, disk, I/O, time), then the totals.
pub fn plan_lines(plan: &JobPlan) -> Vec<String> {
    let mut lines: Vec<String> = plan
        .runs
        .iter()
        .map(|r| match &r.plan {
            Ok((p, mem)) => format!(
                "{}: {}{} positions/side{}, {} white + {} black chunks, blocks of {}, RAM ~{}, work peak {}, final ~{}, \
                 I/O ~{} per step (up to 101 steps{}, more where wins need more than 100 plies), time ~{}",
                r.material,
                if r.built { "[built] " } else { "" },
                r.n_slots,
                r.slices.map_or(String::new(), |(s, l)| format!(" in {s} pawn slices, {l} levels")),
                r.chunks.0,
                r.chunks.1,
                show_size(1u64 << (p.block_bits - 3)),
                show_size(*mem),
                show_size(r.needs.work_peak),
                show_size(r.needs.final_bytes),
                show_size(r.needs.pass_io),
                if r.slices.is_some() { " per level" } else { "" },
                show_time(&r.time),
            ),
            Err(e) => format!("{}: {e}", r.material),
        })
        .collect();
    let todo: Vec<&TimeEstimate> = plan.runs.iter().filter(|r| !r.built).map(|r| &r.time).collect();
    let m = &plan.machine;
    lines.push(format!(
        "total: final tables ~{}, work folder peak {}, time ~{} for the {} run(s) to build \
         ({} threads, {} RAM, disk {:.0}/{:.0} MB/s read/write{})",
        show_size(plan.final_bytes),
        show_size(plan.work_peak),
        show_duration(todo.iter().map(|t| t.total()).sum()),
        todo.len(),
        m.threads,
        show_size(m.ram),
        m.disk_read / 1e6,
        m.disk_write / 1e6,
        if todo.iter().any(|t| t.disk_bound) { "; bound by the disk" } else { "" },
    ));
    for d in &plan.disk {
        lines.push(format!(
            "disk in {}: the job still needs {} more at its peak (its unfinished files there take {}), {} free",
            d.place.display(),
            show_size(d.growth),
            show_size(d.held),
            d.free.map_or("?".into(), show_size),
        ));
    }
    lines
}

/// The lines of `tbstream status`.
pub fn status_lines(s: &JobStatus) -> Vec<String> {
    let mut lines = vec![format!("job: {} -> {} (work folder {})", s.signatures.join(" "), s.out, s.work.display())];
    for run in &s.runs {
        lines.push(match run {
            RunStatus::Damaged { folder, error } => format!("{folder}: {error} (the next `gen` restarts this run)"),
            RunStatus::Merging { run, bytes } => {
                format!("{run}: all steps done, merging ({} in work files)", show_size(*bytes))
            }
            RunStatus::Compacting { run, bytes, written } => format!(
                "{run}: merged, writing the compact table ({} of it written, {} in work files)",
                show_size(*written),
                show_size(*bytes)
            ),
            RunStatus::InPass { run, level, pass, chunks_done, chunks, passes_done, secs, bytes, eta, last, ranks } => {
                let name = match pass {
                    Pass::InitWhite => "init (white chunks)".to_string(),
                    Pass::InitBlack => "init (black chunks, t0)".to_string(),
                    Pass::Step(k) => format!("step {k} ({})", if k % 2 == 1 { "white" } else { "black" }),
                };
                let eta = eta.map_or("unknown".to_string(), |s| format!("{s:.1}s"));
                let level = level.map_or(String::new(), |(n, i, of)| format!("level {n} ({i} of {of}), "));
                let last = last.map_or(String::new(), |(p, new, secs, read, written)| {
                    format!(
                        "; last pass ({}) {new} new in {secs:.1}s, read {}, written {}",
                        p.to_string().split_whitespace().collect::<Vec<_>>().join(" "),
                        show_size(read),
                        show_size(written)
                    )
                });
                let ranks = ranks.as_ref().map_or(String::new(), |r| {
                    let each: Vec<String> = r.iter().map(|n| n.to_string()).collect();
                    format!(", {} ranks (chunks per rank: {})", r.len(), each.join(" / "))
                });
                format!(
                    "{run}: {level}{name}, chunk {chunks_done}/{chunks}{ranks}, {passes_done} passes done in {secs:.1}s, \
                     {} written in work files, ETA of this pass {eta}{last}",
                    show_size(*bytes)
                )
            }
        });
    }
    lines
}

/// The line `tbstream verify` prints for a run that passed.
pub fn verify_line(r: &VerifyReport) -> String {
    format!(
        "{}: ok, {} positions per side to move checked in {:.1}s (wtm: {} won, {} won only without the \
         50-move rule, {} not won, {} illegal; btm: {} lost, {} lost only without the rule, {} not lost, {} illegal, \
         {} checkmated, {} stalemated; longest {} plies)",
        r.material,
        r.n_slots,
        r.secs,
        r.wtm.won,
        r.wtm.cursed,
        r.wtm.not_won,
        r.wtm.illegal,
        r.btm.won,
        r.btm.cursed,
        r.btm.not_won,
        r.btm.illegal,
        r.btm.mates,
        r.btm.stalemates,
        r.last_step
    )
}

/// What `verify --sample` checked of one run.
pub fn sample_line(r: &SampleReport) -> String {
    format!(
        "{}: ok, sampled {} positions per side to move (seed {}), {} wtm and {} btm legal ones checked in {:.1}s",
        r.material, r.drawn[0], r.seed, r.legal[0], r.legal[1], r.secs
    )
}

/// What `probe` found for one FEN.
pub struct ProbeAnswer {
    pub probe: Probe,
    /// The five-valued result with a fresh counter (`None`: a table does not mark all its
    /// cursed positions).
    pub category: Option<Category>,
    /// A best move in UCI, if the position has moves.
    pub best: Option<String>,
    /// The principal line, with `--line`.
    pub line: Option<Vec<String>>,
}

/// Writes one answer of `probe`: `FEN<TAB>WDL<TAB>DTZ<TAB>MOVE[<TAB>LINE]<TAB>CATEGORY`, or
/// a JSON object.
pub fn write_probe(out: &mut impl Write, fen: &str, a: &ProbeAnswer, json: bool) -> std::io::Result<()> {
    let p = a.probe;
    let category = a.category.map(Category::name);
    if json {
        let mut obj =
            serde_json::json!({ "fen": fen, "wdl": p.wdl, "dtz": p.dtz, "move": a.best, "category": category });
        if let Some(line) = &a.line {
            obj["line"] = serde_json::json!(line);
        }
        return writeln!(out, "{obj}");
    }
    write!(out, "{fen}\t{}\t{}\t{}", p.wdl, p.dtz, a.best.as_deref().unwrap_or("-"))?;
    if let Some(line) = &a.line {
        let text = if line.is_empty() { "-".to_string() } else { line.join(" ") };
        write!(out, "\t{text}")?;
    }
    writeln!(out, "\t{}", category.unwrap_or("unknown"))
}

/// Formats a count with thousands separators.
pub fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The report `tbstream stats` prints.
pub fn stats_lines(s: &SignatureStats) -> Vec<String> {
    let mut out = vec![format!(
        "{}: positions counted once up to symmetry (runs: {})",
        s.material,
        s.runs.iter().map(|r| r.run.to_string()).collect::<Vec<_>>().join(", ")
    )];
    let pct = |n: u64, of: u64| if of == 0 { 0.0 } else { 100.0 * n as f64 / of as f64 };
    for t in [&s.white_to_move, &s.black_to_move] {
        let side = if t.side == Color::White { "white" } else { "black" };
        out.push(format!(
            "{side} to move: {} legal; white wins {} ({:.2}%), white cursed wins {} ({:.2}%), draws {} ({:.2}%), \
             black cursed wins {} ({:.2}%), black wins {} ({:.2}%); stalemated {}, checkmated {}",
            thousands(t.legal),
            thousands(t.white_wins),
            pct(t.white_wins, t.legal),
            thousands(t.white_cursed),
            pct(t.white_cursed, t.legal),
            thousands(t.draws()),
            pct(t.draws(), t.legal),
            thousands(t.black_cursed),
            pct(t.black_cursed, t.legal),
            thousands(t.black_wins),
            pct(t.black_wins, t.legal),
            thousands(t.stalemates),
            thousands(t.checkmates),
        ));
        let cursed = [
            ("white", t.longest_cursed_white, &t.cursed_white_example),
            ("black", t.longest_cursed_black, &t.cursed_black_example),
        ];
        for (who, plies, example) in cursed {
            match (plies, example) {
                (0, None) => {}
                (0, Some(fen)) => out.push(format!("  {who} cursed wins, e.g. {fen}")),
                (_, None) => out.push(format!("  longest {who} cursed win: {plies} plies")),
                (_, Some(fen)) => out.push(format!("  longest {who} cursed win: {plies} plies; one cursed win: {fen}")),
            }
        }
        for (who, l) in [("white", &t.longest_white), ("black", &t.longest_black)] {
            if let Some(l) = l {
                out.push(format!("  longest {who} win: {} plies, e.g. {}", l.plies, l.fen));
            }
        }
    }
    out.push("distance histogram (plies: positions; odd = winner to move, even = loser to move):".to_string());
    for (who, winner) in [("white", Color::White), ("black", Color::Black)] {
        let mut cells = Vec::new();
        for d in 0..=MAX_DISTANCE {
            let n: u64 = [&s.white_to_move, &s.black_to_move]
                .iter()
                .map(|t| if winner == Color::White { t.white_by_distance[d] } else { t.black_by_distance[d] })
                .sum();
            if n > 0 {
                cells.push(format!("{d}:{}", thousands(n)));
            }
        }
        out.push(format!("  {who} wins: {}", if cells.is_empty() { "none".to_string() } else { cells.join(" ") }));
    }
    out.push(format!("longest wins: white {}, black {} (plies)", s.longest(Color::White), s.longest(Color::Black)));
    for r in &s.runs {
        out.push(format!(
            "run {}: {} slots per side to move; illegal slots wtm {}, btm {}{}{}",
            r.run,
            thousands(r.slots),
            thousands(r.illegal[0]),
            thousands(r.illegal[1]),
            if r.five_valued {
                ""
            } else {
                "; cursed results incomplete (built before they were, or from such sub-endgames)"
            },
            if r.edge_exact { "" } else { "; its wtm cursed wins include any wins of exactly 100 plies" },
        ));
    }
    out
}

/// The statistics as one JSON object (`tbstream stats --json`).
pub fn stats_json(s: &SignatureStats) -> serde_json::Value {
    let longest = |l: &Option<Longest>| l.as_ref().map(|l| serde_json::json!({ "plies": l.plies, "fen": l.fen }));
    let side = |t: &ToMove| {
        serde_json::json!({
            "legal": t.legal,
            "white_wins": t.white_wins,
            "white_cursed_wins": t.white_cursed,
            "draws": t.draws(),
            "black_cursed_wins": t.black_cursed,
            "black_wins": t.black_wins,
            "longest_white_cursed_win": t.longest_cursed_white,
            "longest_black_cursed_win": t.longest_cursed_black,
            "white_cursed_example": t.cursed_white_example,
            "black_cursed_example": t.cursed_black_example,
            "stalemates": t.stalemates,
            "checkmates": t.checkmates,
            "white_wins_by_distance": t.white_by_distance,
            "black_wins_by_distance": t.black_by_distance,
            "longest_white_win": longest(&t.longest_white),
            "longest_black_win": longest(&t.longest_black),
        })
    };
    serde_json::json!({
        "signature": s.material.to_string(),
        "white_to_move": side(&s.white_to_move),
        "black_to_move": side(&s.black_to_move),
        "longest_white_win": s.longest(Color::White),
        "longest_black_win": s.longest(Color::Black),
        "runs": s.runs.iter().map(|r| serde_json::json!({
            "run": r.run.to_string(),
            "slots_per_side": r.slots,
            "illegal_slots": { "wtm": r.illegal[0], "btm": r.illegal[1] },
            "legal": { "wtm": r.legal[0], "btm": r.legal[1] },
            "cursed_marked": r.five_valued,
            "edge_exact": r.edge_exact,
        })).collect::<Vec<_>>(),
    })
}

/// The line of a projected 7-men pawnless endgame: one of its runs (the colour swap costs
/// the same).
pub fn projection_line(signature: &str, p: &Projection, m: &Machine, mem: u64) -> String {
    format!(
        "{signature} ({} men, beyond this build; projected from the 6-men rates): {} positions/side, bit table {}, \
         work peak {}, final ~{}, RAM {} (--mem) plus the 6-men bitbases it probes, time per run ~{} \
         ({} threads, {} RAM, disk {:.0}/{:.0} MB/s read/write)",
        p.men,
        p.positions,
        show_size(p.needs.table_bytes),
        show_size(p.needs.work_peak),
        show_size(p.needs.final_bytes),
        show_size(mem),
        show_time(&p.time),
        m.threads,
        show_size(m.ram),
        m.disk_read / 1e6,
        m.disk_write / 1e6,
    )
}

/// A run's estimated time: the total and its stages.
fn show_time(t: &TimeEstimate) -> String {
    format!(
        "{} (init {}, white {}, black {}, merge {}, compaction {}{})",
        show_duration(t.total()),
        show_duration(t.init),
        show_duration(t.white),
        show_duration(t.black),
        show_duration(t.merge),
        show_duration(t.compact),
        if t.disk_bound { ", bound by the disk" } else { "" }
    )
}
