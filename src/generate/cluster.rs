//! One job over several processes through MPI (`--features mpi`, `mpirun -np N tbstream gen
//! ...`): rank 0 runs the job as a single process would (lock, resume, every write to the
//! work folder and the output folder), and shares out the chunks of each pass still to do;
//! the other ranks compute the chunks they are given, reading the pass's tables from the
//! shared work folder, and send each chunk's outputs back to rank 0, which commits them like
//! its own. A distributed pass therefore leaves exactly the files of a single-process pass,
//! and either resumes the other (`docs/DISTRIBUTED.md`).
//!
//! Every rank that waits polls with a short sleep instead of blocking in MPI (a blocked
//! receive spins a core). Any error on any rank aborts the whole job with exit code 2; so does
//! a rank that dies (MPI has no fault tolerance): the resume is the recovery.

use super::captures::{Loaded, LoadedCaptures};
use super::level::{LevelContext, RunContext};
use super::options::GenOptions;
use super::pass::{worker_sources, ChunkOutput, ChunkWork};
use super::plan::{Cut, Plan};
use super::status::RankShare;
use crate::chess::Material;
use crate::index::Layout;
use crate::pipeline::{self, Order};
use crate::progress::SilentProgress;
use crate::solve::{ChunkTables, Pass, PassSpec, Promotions, WorkTable};
use crate::work::manifest;
use crate::work::publish::Durability;
use crate::work::RunFolder;
use anyhow::Context;
use byteorder::{ByteOrder, LittleEndian, ReadBytesExt, WriteBytesExt};
use mpi::point_to_point::MatchedReceiveVec;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::{Destination, Source};
use std::io::{Cursor, Read};
use std::sync::OnceLock;
use std::time::Duration;

/// Rank 0 to a worker: compute these chunks of a pass.
const TAG_ORDER: i32 = 1;
/// Rank 0 to a worker: the job is over.
const TAG_QUIT: i32 = 2;
/// A worker to rank 0: one computed chunk, with the tag its order gave (one per pass in
/// flight: two runs may be solved side by side), from this one on.
const FIRST_CHUNK_TAG: i32 = 16;
/// The first sleep of a waiting rank between two looks at its messages; it doubles while
/// nothing comes, up to a cap (a look costs a few microseconds of MPI progress).
const FIRST_POLL: Duration = Duration::from_micros(20);
/// The cap of rank 0 collecting chunks: a worker's send of a chunk spins until rank 0 takes
/// it, so rank 0 looks often while a pass runs.
const COLLECT_POLL: Duration = Duration::from_micros(100);
/// The cap of an idle worker, which may wait through a whole merge and compaction.
const IDLE_POLL: Duration = Duration::from_micros(500);

/// Waits for a message that `probe` finds, sleeping between looks up to `cap`.
fn poll<T>(cap: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let mut sleep = FIRST_POLL;
    loop {
        if let Some(found) = probe() {
            return found;
        }
        std::thread::sleep(sleep);
        sleep = (sleep * 2).min(cap);
    }
}

/// This process's place in a distributed job of more than one rank.
pub struct World {
    pub rank: i32,
    pub size: i32,
    /// Ranks on this rank's node (sharing its memory), itself included.
    pub node_ranks: usize,
}

static WORLD: OnceLock<World> = OnceLock::new();

/// Held around every MPI call: threads take turns (MPI_THREAD_SERIALIZED), since two runs'
/// passes may share out and collect chunks at once on rank 0.
static CALLS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs one MPI call (or a probe and its receive) while no other thread makes one.
fn call<T>(f: impl FnOnce() -> T) -> T {
    let _turn = CALLS.lock().unwrap_or_else(|e| e.into_inner());
    f()
}

/// The distributed job this process belongs to, if it has more than one rank.
pub fn world() -> Option<&'static World> {
    WORLD.get()
}

/// MPI for the whole process: initialized once, finalized when dropped.
pub struct Mpi {
    _universe: mpi::environment::Universe,
}

/// Initializes MPI when launched by an MPI launcher (`mpirun`, `srun`): `None` otherwise,
/// without the cost of a singleton MPI start. With one rank, or none, the process is a job of
/// its own and [`world`] stays `None`.
pub fn init() -> anyhow::Result<Option<Mpi>> {
    // What OpenMPI, MPICH / Hydra, PMIx and Slurm's PMI set in the processes they launch.
    const LAUNCHED: [&str; 5] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "MPI_LOCALNRANKS"];
    if !LAUNCHED.iter().any(|v| std::env::var_os(v).is_some()) {
        return Ok(None);
    }
    let (universe, provided) =
        mpi::initialize_with_threading(mpi::Threading::Serialized).context("MPI was initialized already")?;
    // Rank 0 calls MPI from one thread at a time, not always the same one.
    anyhow::ensure!(
        provided >= mpi::Threading::Serialized,
        "this MPI library does not let threads take turns calling it (MPI_THREAD_SERIALIZED)"
    );
    let comm = universe.world();
    if comm.size() > 1 {
        let node_ranks = comm.split_shared(comm.rank()).size() as usize;
        WORLD.get_or_init(|| World { rank: comm.rank(), size: comm.size(), node_ranks });
    }
    Ok(Some(Mpi { _universe: universe }))
}

impl World {
    fn comm(&self) -> SimpleCommunicator {
        SimpleCommunicator::world()
    }

    /// A warning when this rank may run on fewer cores than it has threads: `mpirun` binds
    /// each rank to one core unless told otherwise (`--bind-to none`, docs/DISTRIBUTED.md).
    pub fn binding_warning(&self, threads: usize) -> Option<String> {
        // SAFETY: a zeroed cpu_set_t is a valid empty set, filled in by the call.
        let cores = unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0)
                .then(|| libc::CPU_COUNT(&set) as usize)
        }?;
        let wanted = if self.rank == 0 { threads * self.node_ranks } else { threads };
        (cores < wanted).then(|| {
            format!(
                "warning: rank {} may use {cores} core(s) for {wanted} thread(s); launch with `mpirun --bind-to none` \
                 (or bind each rank to as many cores as its --threads)",
                self.rank
            )
        })
    }

    /// Ends the whole job after an error on this rank: every rank exits with code 2.
    pub fn abort(&self) -> ! {
        self.comm().abort(2)
    }

    /// Rank 0, the job done: the workers may exit.
    pub fn release_workers(&self) {
        let comm = self.comm();
        for r in 1..self.size {
            call(|| comm.process_at_rank(r).send_with_tag(&[0u8][..], TAG_QUIT));
        }
    }

    /// Rank 0: sends every worker its share of `todo` (chunk `todo[i]` goes to rank `i %
    /// size`); returns rank 0's own share, how many chunks the workers will send back, and
    /// the tag they send them with.
    pub(super) fn share_out(
        &self,
        ctx: &LevelContext,
        spec: &PassSpec,
        todo: &[usize],
    ) -> anyhow::Result<(Vec<usize>, usize, i32)> {
        use std::sync::atomic::{AtomicI32, Ordering};
        static PASSES: AtomicI32 = AtomicI32::new(0);
        let reply_tag = FIRST_CHUNK_TAG + PASSES.fetch_add(1, Ordering::Relaxed) % 30_000;
        let size = self.size as usize;
        let comm = self.comm();
        let shares: Vec<Vec<usize>> = (0..size).map(|r| todo.iter().skip(r).step_by(size).copied().collect()).collect();
        // For `tbstream status` (not synced: it only informs).
        let run_folder = ctx.folder.path().parent().context("a level folder lies in its run's folder")?;
        let share = RankShare {
            format: manifest::MANIFEST_FORMAT,
            pass: spec.pass.number(),
            chunks: shares.iter().map(Vec::len).collect(),
        };
        manifest::save_with(&RankShare::path(run_folder), &share, Durability::Atomic)?;
        let mut remote = 0;
        // A rank without chunks gets no order: rank 0 would not wait for it, and it could open
        // the pass's tables after the next pass has removed them.
        for (r, share) in shares.iter().enumerate().skip(1).filter(|(_, share)| !share.is_empty()) {
            remote += share.len();
            let order = PassOrder {
                run: ctx.layout.material.to_string(),
                level: ctx.level.number,
                cut: ctx.plan.cut(),
                pass: spec.pass,
                above_cursed: ctx.eventual.as_ref().map(|e| e.above_cursed.clone()).unwrap_or_default(),
                chunks: share.clone(),
                reply_tag,
            };
            let bytes = order.encode()?;
            call(|| comm.process_at_rank(r as i32).send_with_tag(&bytes[..], TAG_ORDER));
        }
        Ok((shares.into_iter().next().unwrap_or_default(), remote, reply_tag))
    }

    /// Rank 0: receives the `n` chunks the workers compute (sent with `tag`; their tables
    /// are `outputs`) and commits each.
    pub(super) fn collect(
        &self,
        n: usize,
        tag: i32,
        outputs: &[WorkTable],
        commit: &(dyn Fn(usize, ChunkOutput) -> anyhow::Result<()> + Sync),
    ) -> anyhow::Result<()> {
        let comm = self.comm();
        for _ in 0..n {
            let receive = || {
                let probed = comm.any_process().immediate_matched_probe_with_tag(tag)?;
                Some(probed.matched_receive_vec::<u8>().0)
            };
            let bytes = poll(COLLECT_POLL, || call(receive));
            let (chunk, out) = decode_chunk(&bytes, outputs)?;
            commit(chunk, out)?;
        }
        Ok(())
    }

    /// The pass line's note on the ranks: chunks computed here and by the others.
    pub(super) fn chunks_line(&self, local: usize, remote: usize) -> String {
        format!("ranks {}: {local} chunks on rank 0, {remote} on the others", self.size)
    }
}

/// What rank 0 asks of a worker: chunks of one pass of one level of one run.
struct PassOrder {
    run: String,
    level: u8,
    cut: Cut,
    pass: Pass,
    above_cursed: Vec<bool>,
    chunks: Vec<usize>,
    /// The tag of the computed chunks' messages.
    reply_tag: i32,
}

impl PassOrder {
    fn encode(&self) -> anyhow::Result<Vec<u8>> {
        let mut b = Vec::new();
        b.write_u32::<LittleEndian>(self.run.len() as u32)?;
        b.extend_from_slice(self.run.as_bytes());
        b.write_u8(self.level)?;
        b.write_u32::<LittleEndian>(self.cut.block_bits)?;
        b.write_u32::<LittleEndian>(self.cut.max_fixed_bits.unwrap_or(u32::MAX))?;
        b.write_i32::<LittleEndian>(self.pass.number())?;
        b.write_u32::<LittleEndian>(self.above_cursed.len() as u32)?;
        for &c in &self.above_cursed {
            b.write_u8(c as u8)?;
        }
        b.write_u32::<LittleEndian>(self.chunks.len() as u32)?;
        for &c in &self.chunks {
            b.write_u32::<LittleEndian>(c as u32)?;
        }
        b.write_i32::<LittleEndian>(self.reply_tag)?;
        Ok(b)
    }

    fn decode(bytes: &[u8]) -> anyhow::Result<PassOrder> {
        let mut r = Cursor::new(bytes);
        let mut run = vec![0u8; r.read_u32::<LittleEndian>()? as usize];
        r.read_exact(&mut run)?;
        let level = r.read_u8()?;
        let block_bits = r.read_u32::<LittleEndian>()?;
        let max_fixed_bits = Some(r.read_u32::<LittleEndian>()?).filter(|&n| n != u32::MAX);
        let cut = Cut { block_bits, max_fixed_bits };
        let number = r.read_i32::<LittleEndian>()?;
        let pass = Pass::from_number(number).with_context(|| format!("pass {number} in an order"))?;
        let above_cursed =
            (0..r.read_u32::<LittleEndian>()?).map(|_| Ok(r.read_u8()? != 0)).collect::<anyhow::Result<_>>()?;
        let chunks = (0..r.read_u32::<LittleEndian>()?)
            .map(|_| Ok(r.read_u32::<LittleEndian>()? as usize))
            .collect::<anyhow::Result<_>>()?;
        let reply_tag = r.read_i32::<LittleEndian>()?;
        Ok(PassOrder { run: String::from_utf8(run)?, level, cut, pass, above_cursed, chunks, reply_tag })
    }
}

/// One computed chunk, as a worker sends it: its index, how it was computed, its new
/// positions' count, its output tables' words in the order of `outputs` (only the runs
/// `(first word, words)` in `runs`, the rest zero; none for a chunk of a step updated in
/// place that gained nothing) and its blocks' streams.
fn encode_chunk(
    chunk: usize,
    out: &ChunkOutput,
    outputs: &[WorkTable],
    runs: &[(usize, usize)],
) -> anyhow::Result<Vec<u8>> {
    let tables: Vec<&[u64]> = match out.tables.get(outputs[0]) {
        None => Vec::new(),
        Some(_) => outputs.iter().map(|&t| out.tables.words(t)).collect(),
    };
    let words: usize = runs.iter().map(|r| r.1).sum::<usize>() * tables.len();
    let mut b = Vec::with_capacity(64 + 8 * words + out.streams.iter().map(|s| 4 + s.len()).sum::<usize>());
    b.write_u32::<LittleEndian>(chunk as u32)?;
    let (kind, limit) = match out.work {
        ChunkWork::Unchanged => (0, 0),
        ChunkWork::Sparse { limit: None } => (1, 0),
        ChunkWork::Sparse { limit: Some(n) } => (2, n),
        ChunkWork::Dense => (3, 0),
    };
    b.write_u8(kind)?;
    b.write_u64::<LittleEndian>(limit)?;
    b.write_u64::<LittleEndian>(out.new_count)?;
    b.write_u64::<LittleEndian>(out.bytes_read)?;
    b.write_u32::<LittleEndian>(tables.len() as u32)?;
    for t in tables {
        b.write_u32::<LittleEndian>(t.len() as u32)?;
        b.write_u32::<LittleEndian>(runs.len() as u32)?;
        for &(first, n) in runs {
            b.write_u32::<LittleEndian>(first as u32)?;
            b.write_u32::<LittleEndian>(n as u32)?;
            let at = b.len();
            b.resize(at + 8 * n, 0);
            LittleEndian::write_u64_into(&t[first..first + n], &mut b[at..]);
        }
    }
    b.write_u32::<LittleEndian>(out.streams.len() as u32)?;
    for s in &out.streams {
        b.write_u32::<LittleEndian>(s.len() as u32)?;
        b.extend_from_slice(s);
    }
    Ok(b)
}

/// A chunk sent by [`encode_chunk`], whose tables are `outputs`.
fn decode_chunk(bytes: &[u8], outputs: &[WorkTable]) -> anyhow::Result<(usize, ChunkOutput)> {
    let mut r = Cursor::new(bytes);
    let chunk = r.read_u32::<LittleEndian>()? as usize;
    let kind = r.read_u8()?;
    let limit = r.read_u64::<LittleEndian>()?;
    let work = match kind {
        0 => ChunkWork::Unchanged,
        1 => ChunkWork::Sparse { limit: None },
        2 => ChunkWork::Sparse { limit: Some(limit) },
        3 => ChunkWork::Dense,
        k => anyhow::bail!("chunk message with work kind {k}"),
    };
    let new_count = r.read_u64::<LittleEndian>()?;
    let bytes_read = r.read_u64::<LittleEndian>()?;
    let mut tables = ChunkTables::new();
    let n_tables = r.read_u32::<LittleEndian>()? as usize;
    anyhow::ensure!(n_tables == 0 || n_tables == outputs.len(), "chunk message with {n_tables} tables");
    for &name in &outputs[..n_tables] {
        let mut t = vec![0u64; r.read_u32::<LittleEndian>()? as usize];
        for _ in 0..r.read_u32::<LittleEndian>()? {
            let first = r.read_u32::<LittleEndian>()? as usize;
            let n = r.read_u32::<LittleEndian>()? as usize;
            let run = t.get_mut(first..first + n).context("chunk message with a run past its table")?;
            r.read_u64_into::<LittleEndian>(run)?;
        }
        tables.insert(name, t);
    }
    let mut streams = Vec::new();
    for _ in 0..r.read_u32::<LittleEndian>()? {
        let mut s = vec![0u8; r.read_u32::<LittleEndian>()? as usize];
        r.read_exact(&mut s)?;
        streams.push(s);
    }
    Ok((chunk, ChunkOutput { tables, streams, new_count, work, bytes_read }))
}

/// A worker rank: computes the chunks rank 0 orders until it is released.
pub fn serve(world: &World, opts: &GenOptions) -> anyhow::Result<()> {
    let comm = world.comm();
    let root = comm.process_at_rank(0);
    // Rank 0 checked the sub-endgames; each is checked here once too, when first loaded.
    let mut loaded = Loaded::default();
    // The captures of the last two runs ordered (two runs may be solved side by side).
    let mut held: Vec<(Material, LoadedCaptures)> = Vec::new();
    loop {
        let (bytes, status) =
            poll(IDLE_POLL, || call(|| Some(root.immediate_matched_probe()?.matched_receive_vec::<u8>())));
        if status.tag() == TAG_QUIT {
            return Ok(());
        }
        anyhow::ensure!(status.tag() == TAG_ORDER, "unexpected message (tag {}) from rank 0", status.tag());
        let order = PassOrder::decode(&bytes)?;
        let material = Material::parse(&order.run)?;
        if !held.iter().any(|(m, _)| *m == material) {
            if held.len() == 2 {
                held.remove(0); // its bitbases go before the next ones load
            }
            let work = opts.work_dir().join(&order.run);
            held.push((
                material.clone(),
                loaded.captures_of(&material, &opts.out, &opts.budget, &work, Promotions::Load)?,
            ));
            let now_checked: Vec<Material> = loaded.bitbases.keys().cloned().collect();
            loaded.checked.extend(now_checked);
        }
        let caps = &held.iter().find(|(m, _)| *m == material).expect("captures loaded").1;
        let layout = Layout::new(&material);
        let level = *layout
            .levels()
            .iter()
            .find(|l| l.number == order.level)
            .with_context(|| format!("{material} has no level {}", order.level))?;
        let folder = RunFolder::new(&opts.work_dir().join(&order.run));
        let plan = Plan::new(&layout, &level, order.cut);
        let run = RunContext {
            layout: &layout,
            folder: &folder,
            caps,
            budget: &opts.budget,
            steps: opts.steps,
            progress: &SilentProgress,
            hooks: opts.hooks(),
        };
        let ctx = LevelContext::new(&run, level, plan, order.above_cursed.clone());
        let spec = ctx.spec(order.pass);
        let sources = worker_sources(&ctx, &spec)?;
        let in_place = sources.in_place;
        let threads = ctx.plan.pass_threads(order.pass, &ctx.budget).max(1);
        let chunks = &order.chunks;
        pipeline::run(
            chunks.len(),
            threads,
            Order::Completion,
            |i| sources.read(&ctx, &spec, chunks[i]),
            |i, input| sources.compute(&ctx, &spec, chunks[i], input),
            |i, out| {
                ctx.hooks.after_chunk()?;
                // A step updated in place writes only the blocks that gained positions.
                let blocks = &ctx.plan.chunks_of(order.pass).list[chunks[i]].blocks;
                let runs: Vec<(usize, usize)> = match in_place {
                    true => blocks
                        .iter()
                        .zip(&out.streams)
                        .filter(|(b, s)| sources.writes_block(b.id, !s.is_empty()))
                        .map(|(b, _)| (b.local_word, b.words))
                        .collect(),
                    false => vec![(0, ctx.plan.chunks_of(order.pass).buffer_words)],
                };
                let bytes = encode_chunk(chunks[i], &out, &spec.outputs, &runs)?;
                call(|| root.send_with_tag(&bytes[..], order.reply_tag));
                Ok(())
            },
        )
        .with_context(|| format!("rank {}: {material} {}", world.rank, order.pass))?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_and_chunks_round_trip() {
        let order = PassOrder {
            run: "KQRvKR".into(),
            level: 3,
            cut: Cut { block_bits: 16, max_fixed_bits: Some(2) },
            pass: Pass::Step(17),
            above_cursed: vec![true, false],
            chunks: vec![1, 5, 9],
            reply_tag: 77,
        };
        let back = PassOrder::decode(&order.encode().unwrap()).unwrap();
        assert_eq!((back.run.as_str(), back.level, back.cut), ("KQRvKR", 3, order.cut));
        assert_eq!((back.pass, back.above_cursed, back.chunks), (Pass::Step(17), vec![true, false], vec![1, 5, 9]));
        assert_eq!(back.reply_tag, 77);
        let outputs = [WorkTable::Chain(0), WorkTable::IllegalWtm];
        let out = ChunkOutput {
            tables: [(WorkTable::IllegalWtm, vec![7, 8]), (WorkTable::Chain(0), vec![1, u64::MAX])]
                .into_iter()
                .collect(),
            streams: vec![vec![], vec![3, 4, 5]],
            new_count: 42,
            work: ChunkWork::Sparse { limit: Some(99) },
            bytes_read: 1 << 40,
        };
        let (chunk, back) = decode_chunk(&encode_chunk(12, &out, &outputs, &[(0, 2)]).unwrap(), &outputs).unwrap();
        assert_eq!(
            (chunk, back.tables.words(WorkTable::Chain(0)), &back.streams),
            (12, &[1, u64::MAX][..], &out.streams)
        );
        assert_eq!(back.tables.words(WorkTable::IllegalWtm), [7, 8]);
        assert_eq!((back.new_count, back.work, back.bytes_read), (42, out.work, 1 << 40));
        // Only the runs sent: the rest of each table is zero.
        let (_, back) = decode_chunk(&encode_chunk(12, &out, &outputs, &[(1, 1)]).unwrap(), &outputs).unwrap();
        assert_eq!(back.tables.words(WorkTable::Chain(0)), [0, u64::MAX]);
        assert_eq!(back.tables.words(WorkTable::IllegalWtm), [0, 8]);
        assert!(decode_chunk(&[1, 2, 3], &outputs).is_err());
    }
}
