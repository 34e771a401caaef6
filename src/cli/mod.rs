//! The command line: arguments (validated into library options in one place), the
//! commands, and how their results are shown. Exit codes: 0 success, 1 some probe lines
//! failed, 2 error.
//!
//! Owns: flags, terminal output, plots. Part of the binary, not the library: it uses only
//! what `tbstream` (lib.rs) exports.

mod lichess;
mod plot;
mod progress;
mod report;
mod serve;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use progress::Console;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use tbstream::{plan_job, Budget, GenOptions, Machine, Material, Position, StepMode, Tablebase};

/// Endgame tablebase generator after Urban Koistinen's scheme.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The flags of a job: where tables go, and the machine it may use.
#[derive(Args)]
struct JobArgs {
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
    /// zstd level of the final tables' blocks, 1 to 22 (higher: smaller and slower to write).
    #[arg(long = "level", default_value_t = tbstream::file::compact::DEFAULT_ZSTD_LEVEL)]
    zstd_level: i32,
    /// How steps compute a chunk: auto (sparse where the last step found few positions),
    /// dense or sparse. The tables are the same; this only changes the time.
    #[arg(long, default_value = "auto")]
    steps: StepMode,
}

/// A set of endgames, built (or planned) as one job.
#[derive(Args)]
struct SetArgs {
    /// Every endgame of N men (3 to 6), 145 tables up to 5 men; SHA256SUMS is written over
    /// the set's tables when it is complete.
    #[arg(long, value_name = "N")]
    men: Option<usize>,
    /// With --men: only the endgames with P pawns in all (0: the pawnless ones).
    #[arg(long, value_name = "P", requires = "men")]
    pawns: Option<usize>,
    /// The endgames listed in FILE, one signature per line (`#` starts a comment): a set,
    /// with its SHA256SUMS.
    #[arg(long, value_name = "FILE")]
    list: Option<PathBuf>,
}

impl SetArgs {
    /// Whether a set was asked for.
    fn is_set(&self) -> bool {
        self.men.is_some() || self.list.is_some()
    }

    /// The signatures to build: those named and the set's (the default endgame when there
    /// are none), and whether a set was asked for.
    fn materials(&self, signatures: Vec<String>) -> anyhow::Result<(Vec<Material>, bool)> {
        let is_set = self.is_set();
        let mut materials = if signatures.is_empty() && is_set { Vec::new() } else { parse_materials(signatures)? };
        if let Some(men) = self.men {
            materials.extend(tbstream::set_of_size(men, self.pawns)?);
        }
        if let Some(list) = &self.list {
            materials.extend(tbstream::set_from_list(list)?);
        }
        Ok((materials, is_set))
    }
}

/// The flags of commands that read finished tables.
#[derive(Args)]
struct ReadArgs {
    /// Folder of tables.
    #[arg(long, default_value = "tables")]
    tables: PathBuf,
    /// Worker threads (default: the number of cores).
    #[arg(long)]
    threads: Option<usize>,
}

#[derive(Subcommand)]
enum Command {
    /// Build tables for endgames and every sub-endgame they need.
    Gen {
        /// Endgames such as KQRvKR or KQRKR (default: KQvKR, unless a set is given).
        signatures: Vec<String>,
        #[command(flatten)]
        set: SetArgs,
        #[command(flatten)]
        job: JobArgs,
    },
    /// Show what an interrupted or running job in a work folder has done.
    Status {
        /// The work folder (default: tables/.work).
        #[arg(long, default_value = "tables/.work")]
        work: PathBuf,
    },
    /// Estimate chunks, RAM, disk, I/O and time of a job before running it.
    Plan {
        /// Endgames such as KQRvKR (or a set: --men, --list).
        #[arg(required_unless_present_any = ["men", "list"])]
        signatures: Vec<String>,
        #[command(flatten)]
        set: SetArgs,
        #[command(flatten)]
        job: JobArgs,
        /// RAM of the machine the time is estimated for (default: this one's).
        #[arg(long)]
        ram: Option<String>,
        /// Streaming read speed of its disk in MB/s (default: the reference machine's).
        #[arg(long, value_name = "MB/s")]
        disk_read: Option<f64>,
        /// Streaming write speed of its disk in MB/s (default: the reference machine's).
        #[arg(long, value_name = "MB/s")]
        disk_write: Option<f64>,
    },
    /// Re-derive every stored value from its successors with an independent move generator.
    Verify {
        /// Endgames such as KQRvKR (both runs of each are checked; the sub-endgames' tables
        /// must be in the folder too).
        #[arg(required = true)]
        signatures: Vec<String>,
        /// Check N random positions of each side to move, read in place (seconds, at any
        /// size), instead of every position.
        #[arg(long, value_name = "N")]
        sample: Option<u64>,
        /// Seed of the sampled positions (the same seed draws the same positions).
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Budget of the cache of decoded table blocks with --sample.
        #[arg(long, default_value = "512MiB")]
        cache: String,
        /// RAM the full check may take (default: what the machine has available): pawnless
        /// runs are checked in chunks that fit, black's derived codes kept in a temporary
        /// file beside the tables when they do not; a run whose smallest chunks do not fit
        /// is refused before anything is read.
        #[arg(long)]
        mem: Option<String>,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Positions by result and side to move, stalemates, the distance histogram, longest wins.
    Stats {
        /// Endgame such as KQvKR (one; with --compare any number, default every table of
        /// FILE whose runs the folder holds).
        signatures: Vec<String>,
        /// Compare the folder's tables with a statistics file in the published format (the
        /// leading generator's `--stats` blocks) and print one verdict per table; exit 1 if
        /// any table differs.
        #[arg(long, value_name = "FILE", conflicts_with_all = ["plot", "json"])]
        compare: Option<PathBuf>,
        /// Draw the distance histogram to FILE.svg or FILE.png.
        #[arg(long, value_name = "FILE")]
        plot: Option<PathBuf>,
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        read: ReadArgs,
    },
    /// Convert the uncompressed tables of a folder (formats 1 and 2) into the compact format,
    /// in place, without regenerating them.
    Compact {
        /// Folder of tables.
        #[arg(default_value = "tables")]
        dir: PathBuf,
        /// Worker threads (default: the number of cores).
        #[arg(long)]
        threads: Option<usize>,
        /// Folder of intermediate files (default: DIR/.work).
        #[arg(long)]
        work: Option<PathBuf>,
        /// zstd level of the blocks, 1 to 22 (higher: smaller and slower to write).
        #[arg(long = "level", default_value_t = tbstream::file::compact::DEFAULT_ZSTD_LEVEL)]
        zstd_level: i32,
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
        /// Budget of the cache of decoded table blocks, e.g. 64MiB, 1GiB.
        #[arg(long, default_value = "512MiB")]
        cache: String,
        /// Positions; read from stdin (one per line) when none is given.
        fens: Vec<String>,
    },
    /// Answer probes over HTTP like the lichess tablebase server (`GET /standard?fen=...`,
    /// `GET /standard/mainline?fen=...`) until SIGTERM or Ctrl-C.
    Serve {
        /// Folder of tables.
        #[arg(long, default_value = "tables")]
        tables: PathBuf,
        /// Address to listen on (port 0: any free port; the address is printed on stderr).
        #[arg(long, default_value = "127.0.0.1:9000")]
        listen: String,
        /// Budget of the cache of decoded table blocks, e.g. 64MiB, 1GiB.
        #[arg(long, default_value = "512MiB")]
        cache: String,
        /// Requests probed at once (default: the number of cores).
        #[arg(long)]
        threads: Option<usize>,
    },
}

/// The default endgame of `gen`.
const DEFAULT_SIGNATURE: &str = "KQvKR";

/// Parses the command line, runs the command, and returns the exit code.
pub fn run() -> i32 {
    let cli = Cli::parse();
    let result = match cli.command {
        #[cfg(feature = "mpi")]
        Command::Gen { signatures, set, job } => return run_gen_distributed(signatures, set, job),
        #[cfg(not(feature = "mpi"))]
        Command::Gen { signatures, set, job } => job.options().and_then(|o| run_gen(signatures, set, o)),
        Command::Status { work } => run_status(work),
        Command::Plan { signatures, set, job, ram, disk_read, disk_write } => job
            .options()
            .and_then(|o| machine(&o, ram, disk_read, disk_write).map(|m| (o, m)))
            .and_then(|(o, m)| run_plan(signatures, set, o, m)),
        Command::Verify { signatures, sample: Some(n), seed, cache, read, .. } => parse_size(&cache)
            .map_err(|e| anyhow::anyhow!("--cache: {e}"))
            .and_then(|cache| Ok((cache, thread_count(read.threads)?)))
            .and_then(|(cache, t)| run_verify_sample(read.tables, signatures, n, seed, cache, t)),
        Command::Verify { signatures, sample: None, read, mem, .. } => thread_count(read.threads)
            .and_then(|t| Ok((t, mem.map(|m| parse_size(&m)).transpose().map_err(|e| anyhow::anyhow!("--mem: {e}"))?)))
            .and_then(|(t, mem)| run_verify(read.tables, signatures, t, mem)),
        Command::Stats { signatures, compare: Some(file), read, .. } => {
            thread_count(read.threads).and_then(|t| run_stats_compare(read.tables, &file, signatures, t))
        }
        Command::Stats { signatures, compare: None, plot, json, read } => {
            thread_count(read.threads).and_then(|t| match signatures.as_slice() {
                [signature] => run_stats(read.tables, signature, plot, json, t),
                _ => anyhow::bail!("stats takes one signature (or any number with --compare)"),
            })
        }
        Command::Probe { tables, json, line, cache, fens } => parse_size(&cache)
            .map_err(|e| anyhow::anyhow!("--cache: {e}"))
            .and_then(|cache| run_probe(tables, json, line, cache, fens)),
        Command::Serve { tables, listen, cache, threads } => parse_size(&cache)
            .map_err(|e| anyhow::anyhow!("--cache: {e}"))
            .and_then(|cache| Ok((cache, thread_count(threads)?)))
            .and_then(|(cache, threads)| serve::run(serve::ServeOptions { tables, listen, cache, threads })),
        Command::Compact { dir, threads, work, zstd_level } => {
            thread_count(threads).and_then(|t| run_compact(dir, work, zstd_level, t))
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            2
        }
    }
}

impl JobArgs {
    /// Validates the job flags into library options.
    fn options(self) -> anyhow::Result<GenOptions> {
        let threads = thread_count(self.threads)?;
        let mem = parse_size(&self.mem).map_err(|e| anyhow::anyhow!("--mem: {e}"))?;
        let block_bytes = parse_size(&self.block).map_err(|e| anyhow::anyhow!("--block: {e}"))?;
        anyhow::ensure!(
            ((256 << 10)..=(8 << 20)).contains(&block_bytes) && block_bytes.is_power_of_two(),
            "--block must be a power of two from 256KiB to 8MiB"
        );
        anyhow::ensure!(mem > 0, "--mem must be positive");
        anyhow::ensure!((1..=22).contains(&self.zstd_level), "--level must be from 1 to 22");
        Ok(GenOptions {
            out: self.out,
            work: self.work,
            budget: Budget { mem, threads, block_bytes },
            zstd_level: self.zstd_level,
            steps: self.steps,
            max_fixed_bits: None,
            hooks: None,
        })
    }
}

/// `--threads`: at least 1; the number of cores by default.
fn thread_count(threads: Option<usize>) -> anyhow::Result<usize> {
    match threads {
        Some(0) => anyhow::bail!("--threads must be at least 1"),
        Some(n) => Ok(n),
        None => Ok(std::thread::available_parallelism().map_or(1, |n| n.get())),
    }
}

/// Parses a size such as `512KiB`, `16MiB`, `4GiB`, `1G` or `65536` (powers of 1024).
fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let n: f64 = num.parse().map_err(|_| format!("bad size '{text}' (e.g. 512KiB, 16MiB, 4GiB)"))?;
    let mult: u64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => return Err(format!("bad size unit in '{text}' (use KiB, MiB, GiB)")),
    };
    Ok((n * mult as f64) as u64)
}

fn parse_materials(signatures: Vec<String>) -> anyhow::Result<Vec<Material>> {
    let names = if signatures.is_empty() { vec![DEFAULT_SIGNATURE.to_string()] } else { signatures };
    Ok(names.iter().map(|s| Material::parse(s)).collect::<Result<Vec<_>, _>>()?)
}

#[cfg(not(feature = "mpi"))]
fn run_gen(signatures: Vec<String>, set: SetArgs, opts: GenOptions) -> anyhow::Result<i32> {
    let (materials, is_set) = set.materials(signatures)?;
    tbstream::generate(&materials, &opts, &Console::auto())?;
    if is_set {
        write_set_checksums(&opts, &materials)?;
    }
    Ok(0)
}

/// A finished set's SHA256SUMS, and a line saying so.
fn write_set_checksums(opts: &GenOptions, materials: &[Material]) -> anyhow::Result<()> {
    let sums = tbstream::write_checksums(&opts.out, materials)?;
    println!(
        "set of {} endgames complete: {} tables, {}; checksums in {}",
        materials.len(),
        sums.tables,
        tbstream::show_size(sums.bytes),
        sums.path.display()
    );
    Ok(())
}

/// `gen` built with MPI: launched by `mpirun` with more than one rank, rank 0 runs the job and
/// the others compute the chunks it shares out; an error on any rank ends every rank with
/// exit code 2. Without `mpirun`, or with one rank, it is the plain `gen`.
#[cfg(feature = "mpi")]
fn run_gen_distributed(signatures: Vec<String>, set: SetArgs, job: JobArgs) -> i32 {
    use tbstream::cluster;
    let mpi = match cluster::init() {
        Ok(mpi) => mpi,
        Err(e) => {
            eprintln!("error: {e:#}");
            return 2;
        }
    };
    if let (Some(world), Ok(threads)) = (cluster::world(), thread_count(job.threads)) {
        if let Some(warning) = world.binding_warning(threads) {
            eprintln!("{warning}");
        }
    }
    let result = job.options().and_then(|o| {
        let (materials, is_set) = set.materials(signatures)?;
        tbstream::generate_on_ranks(&materials, &o, &Console::auto())?;
        if is_set && cluster::world().is_none_or(|w| w.rank == 0) {
            write_set_checksums(&o, &materials)?;
        }
        Ok(0)
    });
    match (result, cluster::world()) {
        (Ok(code), _) => {
            drop(mpi);
            code
        }
        (Err(e), Some(world)) => {
            eprintln!("error (rank {} of {}): {e:#}", world.rank, world.size);
            world.abort()
        }
        (Err(e), None) => {
            eprintln!("error: {e:#}");
            2
        }
    }
}

fn run_compact(dir: PathBuf, work: Option<PathBuf>, zstd_level: i32, threads: usize) -> anyhow::Result<i32> {
    anyhow::ensure!((1..=22).contains(&zstd_level), "--level must be from 1 to 22");
    let work = work.unwrap_or_else(|| dir.join(".work"));
    let done = tbstream::convert_folder(&dir, &work, zstd_level, threads, &Console::auto())?;
    for (path, outcome) in done {
        match outcome {
            tbstream::Conversion::Converted { old_bytes, new_bytes, secs } => println!(
                "{}: converted, {old_bytes} -> {new_bytes} bytes ({:.1}x smaller), {secs:.1}s",
                path.display(),
                old_bytes as f64 / new_bytes.max(1) as f64
            ),
            tbstream::Conversion::AlreadyCompact => println!("{}: already compact", path.display()),
        }
    }
    Ok(0)
}

/// The machine `plan` estimates times for: this one, with what the flags change.
fn machine(opts: &GenOptions, ram: Option<String>, read: Option<f64>, write: Option<f64>) -> anyhow::Result<Machine> {
    let mut m = Machine::this(opts.budget.threads);
    if let Some(ram) = ram {
        m.ram = parse_size(&ram).map_err(|e| anyhow::anyhow!("--ram: {e}"))?;
    }
    for (flag, speed, field) in [("--disk-read", read, &mut m.disk_read), ("--disk-write", write, &mut m.disk_write)] {
        if let Some(mbps) = speed {
            anyhow::ensure!(mbps.is_finite() && mbps > 0.0, "{flag} must be a positive speed in MB/s");
            *field = mbps * 1e6;
        }
    }
    Ok(m)
}

fn run_plan(signatures: Vec<String>, set: SetArgs, opts: GenOptions, machine: Machine) -> anyhow::Result<i32> {
    // Pawnless endgames of 7 men are beyond this build: projected only.
    let (seven, signatures): (Vec<String>, Vec<String>) = signatures
        .into_iter()
        .partition(|s| matches!(Material::parse(s), Err(tbstream::MaterialError::Count(_, 7))) && !s.contains('P'));
    let (materials, is_set) =
        if signatures.is_empty() && !set.is_set() { (Vec::new(), false) } else { set.materials(signatures)? };
    if !materials.is_empty() {
        if is_set {
            println!("set: {} endgames", materials.len());
        }
        for line in report::plan_lines(&plan_job(&materials, &opts, &machine)?) {
            println!("{line}");
        }
    }
    for sig in seven {
        let p = tbstream::project_pawnless(7, &machine);
        println!("{}", report::projection_line(&sig, &p, &machine, opts.budget.mem));
    }
    Ok(0)
}

fn run_status(work: PathBuf) -> anyhow::Result<i32> {
    for line in report::status_lines(&tbstream::job_status(&work)?) {
        println!("{line}");
    }
    Ok(0)
}

fn run_verify(tables: PathBuf, signatures: Vec<String>, threads: usize, mem: Option<u64>) -> anyhow::Result<i32> {
    use tbstream::Progress;
    let materials = signatures.iter().map(|s| Material::parse(s)).collect::<Result<Vec<_>, _>>()?;
    anyhow::ensure!(tables.is_dir(), "table folder {} does not exist", tables.display());
    // Refused up front rather than killed by the kernel halfway.
    let budget = mem.or_else(tbstream::available_ram);
    for run in materials.iter().flat_map(|m| m.runs_of_signature()) {
        if let (Some(need), Some(budget)) = (tbstream::verify_memory(&run, threads), budget) {
            anyhow::ensure!(
                need <= budget,
                "verifying {run} needs at least {} of RAM (its sub-endgames' codes and its smallest chunks), more than {} ({}); `verify --sample N` checks N random positions in a few hundred MiB",
                tbstream::show_size(need),
                tbstream::show_size(budget),
                if mem.is_some() { "--mem" } else { "available on this machine" }
            );
        }
    }
    let progress = Console::auto();
    for m in &materials {
        let mut current: Option<Material> = None;
        let reports = tbstream::verify_signature(&tables, m, threads, budget, |run, done, total| {
            if current.as_ref() != Some(run) {
                progress.start(format!("verify {run}"), total, "positions");
                current = Some(run.clone());
            }
            progress.set(done);
        });
        let reports = match reports {
            Ok(r) => r,
            Err(e) => {
                progress.finish("failed");
                return Err(e.into());
            }
        };
        progress.finish("ok");
        for r in reports {
            println!("{}", report::verify_line(&r));
        }
    }
    Ok(0)
}

fn run_verify_sample(
    tables: PathBuf,
    signatures: Vec<String>,
    n: u64,
    seed: u64,
    cache: u64,
    threads: usize,
) -> anyhow::Result<i32> {
    let materials = signatures.iter().map(|s| Material::parse(s)).collect::<Result<Vec<_>, _>>()?;
    anyhow::ensure!(tables.is_dir(), "table folder {} does not exist", tables.display());
    anyhow::ensure!(n > 0, "--sample must be at least 1");
    for m in &materials {
        for run in m.runs_of_signature() {
            let r = tbstream::sample_run(&tables, &run, n, seed, threads, cache)?;
            println!("{}", report::sample_line(&r));
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
    let stats = tbstream::signature_stats(&tables, &material, threads)?;
    if json {
        println!("{}", report::stats_json(&stats));
    } else {
        for line in report::stats_lines(&stats) {
            println!("{line}");
        }
    }
    if let Some(path) = plot {
        plot::histogram(&stats, &path)?;
        eprintln!("histogram written to {}", path.display());
    }
    Ok(0)
}

/// `stats --compare`: one verdict per table of `file` (those named, or every one whose runs
/// `tables` holds); 0 if all match, 1 if any differs.
fn run_stats_compare(tables: PathBuf, file: &Path, signatures: Vec<String>, threads: usize) -> anyhow::Result<i32> {
    use tbstream::published::{compare, parse_published};
    anyhow::ensure!(tables.is_dir(), "table folder {} does not exist", tables.display());
    let text = std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let published = parse_published(&text).with_context(|| format!("{} is not a statistics file", file.display()))?;
    let built = |m: &Material| m.runs_of_signature().iter().all(|r| tbstream::file::table_path(&tables, r).exists());
    let named: Vec<(&tbstream::published::PublishedTable, Material)> = published
        .iter()
        .map(|t| Material::parse(&t.name).map(|m| (t, m)))
        .collect::<Result<_, _>>()
        .with_context(|| format!("{}: a table name", file.display()))?;
    let mut chosen = Vec::new();
    if signatures.is_empty() {
        chosen.extend(named.iter().filter(|(_, m)| built(m)));
        anyhow::ensure!(
            !chosen.is_empty(),
            "{} holds none of the {} tables of {}",
            tables.display(),
            published.len(),
            file.display()
        );
    } else {
        for signature in &signatures {
            let material = Material::parse(signature)?;
            let entry = named
                .iter()
                .find(|(_, m)| m.runs_of_signature().contains(&material))
                .with_context(|| format!("{} has no statistics of {signature}", file.display()))?;
            anyhow::ensure!(built(&entry.1), "{} does not hold the tables of {}", tables.display(), entry.0.name);
            chosen.push(entry);
        }
    }
    let mut differing = 0;
    for (table, material) in &chosen {
        let verdict = compare(table, &tbstream::signature_stats(&tables, material, threads)?);
        differing += usize::from(!verdict.matches());
        println!("{verdict}");
    }
    println!(
        "{} of {} tables equal the published statistics ({} tables in {}, {} of them compared)",
        chosen.len() - differing,
        chosen.len(),
        published.len(),
        file.display(),
        chosen.len()
    );
    Ok(i32::from(differing > 0))
}

/// Longest line printed by `probe --line` (a stored distance is at most 100 plies).
const MAX_LINE_PLIES: usize = 100;

fn run_probe(tables: PathBuf, json: bool, with_line: bool, cache: u64, fens: Vec<String>) -> anyhow::Result<i32> {
    let tb = Tablebase::with_cache(&tables, cache)?;
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
        match probe_one(&tb, fen, with_line) {
            Ok(answer) => report::write_probe(&mut out, fen, &answer, json)?,
            Err(e) => {
                failed += 1;
                eprintln!("error: line {}: {fen}: {e:#}", n + 1);
            }
        }
    }
    out.flush()?;
    Ok(if failed > 0 { 1 } else { 0 })
}

/// Probes one FEN: the probe, a best move, and the line when asked for.
fn probe_one(tb: &Tablebase, fen: &str, with_line: bool) -> anyhow::Result<report::ProbeAnswer> {
    let pos = Position::from_fen(fen)?;
    let probe = tb.probe(&pos)?;
    let best = tb.best_move(&pos)?.map(|(m, _)| m.to_string());
    let line =
        if with_line { Some(tb.line(&pos, MAX_LINE_PLIES)?.iter().map(|m| m.to_string()).collect()) } else { None };
    let category = tb.category(&pos)?;
    Ok(report::ProbeAnswer { probe, category, best, line })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("512KiB"), Ok(512 << 10));
        assert_eq!(parse_size("16MiB"), Ok(16 << 20));
        assert_eq!(parse_size("4GiB"), Ok(4 << 30));
        assert_eq!(parse_size("1g"), Ok(1 << 30));
        assert_eq!(parse_size("100"), Ok(100));
        assert!(parse_size("lots").is_err());
        assert!(parse_size("5 parsecs").is_err());
    }
}
