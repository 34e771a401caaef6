//! The `tbstream` command: `gen` builds tables, `probe` reads them.

use anyhow::Context;
use clap::{Parser, Subcommand};
use std::io::{BufRead, Write};
use std::path::PathBuf;
use tbstream::gen::{generate, GenOptions};
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
    },
    /// Probe positions: prints FEN, WDL, DTZ and a best move per line.
    Probe {
        /// Folder of tables.
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Print one JSON object per line.
        #[arg(long)]
        json: bool,
        /// Positions; read from stdin (one per line) when none is given.
        fens: Vec<String>,
    },
}

/// The default endgame of `gen`.
const DEFAULT_SIGNATURE: &str = "KQvKR";

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Gen { signatures, out, threads } => run_gen(signatures, out, threads),
        Command::Probe { tables, json, fens } => run_probe(tables, json, fens),
    };
    match result {
        Ok(code) => std::process::exit(code),
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::exit(2);
        }
    }
}

fn run_gen(signatures: Vec<String>, out: PathBuf, threads: Option<usize>) -> anyhow::Result<i32> {
    let names = if signatures.is_empty() { vec![DEFAULT_SIGNATURE.to_string()] } else { signatures };
    let materials = names.iter().map(|s| Material::parse(s)).collect::<Result<Vec<_>, _>>()?;
    let threads = match threads {
        Some(0) => anyhow::bail!("--threads must be at least 1"),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let progress = Progress::auto();
    generate(&materials, &GenOptions { out, threads }, &progress)?;
    Ok(0)
}

fn run_probe(tables: PathBuf, json: bool, fens: Vec<String>) -> anyhow::Result<i32> {
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
            Ok((probe, mv))
        });
        match answer {
            Ok((p, mv)) => {
                if json {
                    let obj = serde_json::json!({ "fen": fen, "wdl": p.wdl, "dtz": p.dtz, "move": mv });
                    writeln!(out, "{obj}")?;
                } else {
                    writeln!(out, "{fen}\t{}\t{}\t{}", p.wdl, p.dtz, mv.as_deref().unwrap_or("-"))?;
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
