//! The `tbstream` command: `gen` builds tables, `probe` reads them.

use anyhow::Context;
use clap::{Parser, Subcommand};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use tbstream::gen::{describe_plan, generate, GenOptions};
use tbstream::plan::{parse_size, Budget};
use tbstream::progress::Progress;
use tbstream::{Material, Position, Tablebase};

/// Endgame tablebase generator after Urban Koistinen's scheme.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build tables for endgames and every sub-endgame they need.
    Gen {
        /// Endgames such as KQRvKR or KQRKR (default: KQvKR).
        signatures: Vec<String>,
        /// Output folder.
        #[arg(long, default_value = "tables")]
        out: PathBuf,
        /// Worker threads (default: the number of cores).
        #[arg(long)]
        threads: Option<usize>,
        /// RAM budget, e.g. 16MiB, 4GiB.
        #[arg(long, default_value = "1GiB")]
        mem: String,
        /// Folder of intermediate files (default: DIR/.work).
        #[arg(long)]
        work: Option<PathBuf>,
        /// I/O block size, 256KiB to 8MiB.
        #[arg(long, default_value = "512KiB")]
        block: String,
    },
    /// Show what an interrupted or running job in a work folder has done.
    Status {
        /// The work folder (default: tables/.work).
        #[arg(long, default_value = "tables/.work")]
        work: PathBuf,
    },
    /// Estimate chunks, RAM, disk and I/O of a job before running it.
    Plan {
        /// Endgames such as KQRvKR.
        #[arg(required = true)]
        signatures: Vec<String>,
        #[arg(long, default_value = "tables")]
        out: PathBuf,
        #[arg(long)]
        work: Option<PathBuf>,
        #[arg(long)]
        threads: Option<usize>,
        #[arg(long, default_value = "1GiB")]
        mem: String,
        #[arg(long, default_value = "512KiB")]
        block: String,
    },
    /// Re-derive every stored value from its successors with an independent move generator.
    Verify {
        /// Folder of tables (the sub-endgames' tables must be there too).
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Endgames such as KQRvKR (both runs of each are checked).
        #[arg(required = true)]
        signatures: Vec<String>,
        /// Worker threads (default: the number of cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Positions by result and side to move, stalemates, the distance histogram, longest wins.
    Stats {
        /// Folder of tables.
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Endgame such as KQvKR.
        signature: String,
        /// Draw the distance histogram to FILE.svg or FILE.png.
        #[arg(long, value_name = "FILE")]
        plot: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        /// Worker threads (default: the number of cores).
        #[arg(long)]
        threads: Option<usize>,
    },
    /// Probe positions: prints FEN, WDL, DTZ and a best move per line.
    Probe {
        /// Folder of tables.
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Print one JSON object per line.
        #[arg(long)]
        json: bool,
        /// Also print the line to mate or a zeroing move (space-separated UCI moves).
        #[arg(long)]
        line: bool,
        /// Positions; read from stdin (one per line) when none is given.
        fens: Vec<String>,
    },
}

/// The default endgame of `gen`.
const DEFAULT_SIGNATURE: &str = "KQvKR";

fn main() {
    // A file-size limit then makes writes fail with an error instead of killing us.
    // SAFETY: setting a signal disposition to SIG_IGN has no preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Gen { signatures, out, threads, mem, work, block } => {
            gen_options(out, work, threads, &mem, &block).and_then(|o| run_gen(signatures, o))
        }
        Command::Status { work } => run_status(work),
        Command::Plan { signatures, out, work, threads, mem, block } => {
            gen_options(out, work, threads, &mem, &block).and_then(|o| run_plan(signatures, o))
        }
        Command::Verify { tables, signatures, threads } => {
            thread_count(threads).and_then(|t| run_verify(tables, signatures, t))
        }
        Command::Stats { tables, signature, plot, json, threads } => {
            thread_count(threads).and_then(|t| run_stats(tables, &signature, plot, json, t))
        }
        Command::Probe { tables, json, line, fens } => run_probe(tables, json, line, fens),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(2);
        }
    }
}

/// Validates the job options in one place.
fn gen_options(
    out: PathBuf,
    work: Option<PathBuf>,
    threads: Option<usize>,
    mem: &str,
    block: &str,
) -> anyhow::Result<GenOptions> {
    let threads = thread_count(threads)?;
    let mem = parse_size(mem).map_err(|e| anyhow::anyhow!("--mem: {e}"))?;
    let block_bytes = parse_size(block).map_err(|e| anyhow::anyhow!("--block: {e}"))?;
    anyhow::ensure!(
        ((256 << 10)..=(8 << 20)).contains(&block_bytes) && block_bytes.is_power_of_two(),
        "--block must be a power of two from 256KiB to 8MiB"
    );
    anyhow::ensure!(mem > 0, "--mem must be positive");
    Ok(GenOptions { out, work, budget: Budget { mem, threads, block_bytes } })
}

/// `--threads`: at least 1; the number of cores by default.
fn thread_count(threads: Option<usize>) -> anyhow::Result<usize> {
    match threads {
        Some(0) => anyhow::bail!("--threads must be at least 1"),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

fn parse_materials(signatures: Vec<String>) -> anyhow::Result<Vec<Material>> {
    let names = if signatures.is_empty() { vec![DEFAULT_SIGNATURE.to_string()] } else { signatures };
    Ok(names.iter().map(|s| Material::parse(s)).collect::<Result<Vec<_>, _>>()?)
}

fn run_gen(signatures: Vec<String>, opts: GenOptions) -> anyhow::Result<i32> {
    let materials = parse_materials(signatures)?;
    let progress = Progress::auto();
    generate(&materials, &opts, &progress)?;
    Ok(0)
}

fn run_plan(signatures: Vec<String>, opts: GenOptions) -> anyhow::Result<i32> {
    let materials = parse_materials(signatures)?;
    for line in describe_plan(&materials, &opts)? {
        println!("{line}");
    }
    Ok(0)
}

fn run_status(work: PathBuf) -> anyhow::Result<i32> {
    for line in tbstream::status::describe(&work)? {
        println!("{line}");
    }
    Ok(0)
}

fn run_verify(tables: PathBuf, signatures: Vec<String>, threads: usize) -> anyhow::Result<i32> {
    let materials = signatures.iter().map(|s| Material::parse(s)).collect::<Result<Vec<_>, _>>()?;
    anyhow::ensure!(tables.is_dir(), "table folder {} does not exist", tables.display());
    let progress = Progress::auto();
    for m in &materials {
        let mut current: Option<Material> = None;
        let reports = tbstream::verify::verify_signature(&tables, m, threads, |run, done, total| {
            if current.as_ref() != Some(run) {
                progress.start_positions(format!("verify {run}"), total);
                current = Some(run.clone());
            }
            progress.set(done);
        });
        let reports = match reports {
            Ok(r) => r,
            Err(e) => {
                progress.finish("failed");
                return Err(e);
            }
        };
        progress.finish("ok");
        for r in reports {
            println!(
                "{}: ok, {} positions per side to move checked in {:.1}s (wtm: {} won, {} not won, {} illegal; \
                 btm: {} lost, {} not lost, {} illegal, {} checkmated, {} stalemated; longest {} plies)",
                r.material,
                r.n_slots,
                r.secs,
                r.wtm.won,
                r.wtm.not_won,
                r.wtm.illegal,
                r.btm.won,
                r.btm.not_won,
                r.btm.illegal,
                r.btm.mates,
                r.btm.stalemates,
                r.last_step
            );
        }
    }
    Ok(0)
}

fn run_stats(
    tables: PathBuf,
    signature: &str,
    plot: Option<PathBuf>,
    json: bool,
    threads: usize,
) -> anyhow::Result<i32> {
    let material = Material::parse(signature)?;
    anyhow::ensure!(tables.is_dir(), "table folder {} does not exist", tables.display());
    let stats = tbstream::stats::signature_stats(&tables, &material, threads)?;
    if json {
        println!("{}", tbstream::stats::to_json(&stats));
    } else {
        for line in tbstream::stats::describe(&stats) {
            println!("{line}");
        }
    }
    if let Some(path) = plot {
        tbstream::plot::histogram(&stats, &path)?;
        eprintln!("histogram written to {}", path.display());
    }
    Ok(0)
}

/// Longest line printed by `probe --line` (a stored distance is at most 100 plies).
const MAX_LINE_PLIES: usize = 100;

fn run_probe(tables: PathBuf, json: bool, with_line: bool, fens: Vec<String>) -> anyhow::Result<i32> {
    let tb = Tablebase::open(&tables)?;
    let lines: Vec<String> = if fens.is_empty() {
        std::io::stdin().lock().lines().collect::<Result<_, _>>().context("reading stdin")?
    } else {
        fens
    };
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut failed = 0;
    for (n, line) in lines.iter().enumerate() {
        let fen = line.trim();
        if fen.is_empty() {
            continue;
        }
        let answer = Position::from_fen(fen).map_err(anyhow::Error::from).and_then(|pos| {
            let probe = tb.probe(&pos)?;
            let mv = tb.best_move(&pos)?.map(|(m, _)| m.to_string());
            let line: Option<Vec<String>> = if with_line {
                Some(tb.line(&pos, MAX_LINE_PLIES)?.iter().map(|m| m.to_string()).collect())
            } else {
                None
            };
            Ok((probe, mv, line))
        });
        match answer {
            Ok((p, mv, line)) => {
                if json {
                    let mut obj = serde_json::json!({ "fen": fen, "wdl": p.wdl, "dtz": p.dtz, "move": mv });
                    if let Some(line) = line {
                        obj["line"] = serde_json::json!(line);
                    }
                    writeln!(out, "{obj}")?;
                } else {
                    write!(out, "{fen}\t{}\t{}\t{}", p.wdl, p.dtz, mv.as_deref().unwrap_or("-"))?;
                    if let Some(line) = line {
                        let text = if line.is_empty() { "-".to_string() } else { line.join(" ") };
                        write!(out, "\t{text}")?;
                    }
                    writeln!(out)?;
                }
            }
            Err(e) => {
                failed += 1;
                eprintln!("error: line {}: {fen}: {e:#}", n + 1);
            }
        }
    }
    Ok(if failed > 0 { 1 } else { 0 })
}
