//! One white-wins run: init, the alternating white/black passes over chunks, delta streams,
//! and the merge into the final table file.

pub mod captures;
pub mod frame;
pub mod init;
pub mod kernels;

use crate::delta::{decode, GapEncoder};
use crate::format::{step_code, TableWriter, CODE_ILLEGAL, VALUE_WORD_BYTES};
use crate::index::{Block, ChunkScheme, Layout};
use crate::material::{Color, Material};
use crate::progress::Progress;
use anyhow::Context;
use captures::Captures;
use frame::Frame;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// The last step of the chains: `t100` (btm).
pub const LAST_STEP: u8 = 100;

/// A chunk with its stored blocks.
pub struct Chunk {
    pub key: usize,
    pub blocks: Vec<Block>,
}

/// The chunks of one side's passes.
pub struct Chunks {
    pub scheme: ChunkScheme,
    pub list: Vec<Chunk>,
}

impl Chunks {
    pub fn new(layout: &Layout, mover: Color) -> Chunks {
        let scheme = ChunkScheme::new(layout, mover, layout.low_bits.min(layout.total_bits - 7));
        let list = (0..scheme.n_keys())
            .map(|key| Chunk { key, blocks: scheme.blocks(layout, key) })
            .filter(|c| !c.blocks.is_empty())
            .collect();
        Chunks { scheme, list }
    }
}

/// Copies a chunk's words out of a storage-ordered table.
pub fn gather(table: &[u64], blocks: &[Block], local: &mut [u64]) {
    for b in blocks {
        local[b.local_word..b.local_word + b.words].copy_from_slice(&table[b.slot_word..b.slot_word + b.words]);
    }
}

/// Runs `work` on every chunk with `threads` workers and hands each result to `consume` on
/// the calling thread (in completion order).
pub fn for_each_chunk<R: Send>(
    chunks: &Chunks,
    threads: usize,
    work: impl Fn(&Chunk) -> R + Sync,
    mut consume: impl FnMut(usize, R) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = crossbeam::channel::bounded(threads.max(1));
    crossbeam::scope(|s| -> anyhow::Result<()> {
        for _ in 0..threads.max(1) {
            let tx = tx.clone();
            let (next, work) = (&next, &work);
            s.spawn(move |_| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= chunks.list.len() || tx.send((i, work(&chunks.list[i]))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (i, r) in rx.iter() {
            if let Err(e) = consume(i, r) {
                next.store(usize::MAX / 2, Ordering::Relaxed);
                drop(rx);
                return Err(e);
            }
        }
        Ok(())
    })
    .map_err(|_| anyhow::anyhow!("a worker thread panicked"))?
}

/// What a run measured.
#[derive(Debug, Default, Clone)]
pub struct RunReport {
    /// New positions per step (index = step).
    pub new_per_step: Vec<u64>,
    pub last_step: u8,
    pub init_secs: f64,
    pub white_secs: f64,
    pub black_secs: f64,
    pub merge_secs: f64,
    pub delta_bytes: u64,
    pub path: PathBuf,
}

/// Computes one white-wins run and writes its table into `out_dir`.
pub fn solve_run(
    material: &Material,
    caps: &Captures,
    out_dir: &Path,
    work_dir: &Path,
    threads: usize,
    progress: &Progress,
) -> anyhow::Result<RunReport> {
    let layout = Layout::new(material);
    let white = Chunks::new(&layout, Color::White);
    let black = Chunks::new(&layout, Color::Black);
    let n = layout.n_words();
    std::fs::create_dir_all(work_dir).with_context(|| format!("creating {}", work_dir.display()))?;
    let mut report = RunReport::default();
    let t = Instant::now();

    // Init: illegal wtm (the start of the odd chain) and c, then d and t0.
    let mut t_odd = vec![0u64; n];
    let mut c = vec![0u64; n];
    progress.start(format!("{material} init white"), white.list.len() as u64);
    for_each_chunk(
        &white,
        threads,
        |ch| {
            let frame = Frame::new(&layout, &white.scheme, ch.key);
            let mut illegal = vec![!0u64; white.scheme.local_words()];
            let mut cw = vec![0u64; white.scheme.local_words()];
            init::init_white(&frame, caps, &mut illegal, &mut cw);
            (illegal, cw)
        },
        |i, (illegal, cw)| {
            for b in &white.list[i].blocks {
                t_odd[b.slot_word..][..b.words].copy_from_slice(&illegal[b.local_word..][..b.words]);
                c[b.slot_word..][..b.words].copy_from_slice(&cw[b.local_word..][..b.words]);
            }
            progress.inc();
            Ok(())
        },
    )?;
    progress.finish("done");
    let mut d = vec![0u64; n];
    let mut t_even = vec![0u64; n];
    let mut streams = vec![Vec::new(); black.list.len()];
    let mut new_count = 0;
    progress.start(format!("{material} init black"), black.list.len() as u64);
    for_each_chunk(
        &black,
        threads,
        |ch| {
            let frame = Frame::new(&layout, &black.scheme, ch.key);
            let mut illegal = vec![!0u64; black.scheme.local_words()];
            gather(&t_odd, &ch.blocks, &mut illegal);
            let mut dw = vec![0u64; black.scheme.local_words()];
            let mut t0 = vec![0u64; black.scheme.local_words()];
            init::init_black(&frame, caps, &illegal, &mut dw, &mut t0);
            (dw, t0)
        },
        |i, (dw, t0)| {
            let mut enc = GapEncoder::new();
            for b in &black.list[i].blocks {
                d[b.slot_word..][..b.words].copy_from_slice(&dw[b.local_word..][..b.words]);
                t_even[b.slot_word..][..b.words].copy_from_slice(&t0[b.local_word..][..b.words]);
                for w in 0..b.words {
                    enc.push_word(b.local_word + w, t0[b.local_word + w]);
                }
            }
            new_count += enc.count();
            streams[i] = enc.finish();
            progress.inc();
            Ok(())
        },
    )?;
    report.delta_bytes += write_step(work_dir, 0, &streams)?;
    report.new_per_step.push(new_count);
    progress.finish(&format!("t0: {new_count} checkmates"));
    report.init_secs = t.elapsed().as_secs_f64();

    // The passes.
    let mut quiet = 0;
    let mut c = Some(c);
    for k in 1..=LAST_STEP {
        let t = Instant::now();
        let (chunks, mover) = if k % 2 == 1 { (&white, Color::White) } else { (&black, Color::Black) };
        let mut streams = vec![Vec::new(); chunks.list.len()];
        let mut new_count = 0u64;
        progress.start(
            format!("{material} step {k:>3} {}", if k % 2 == 1 { "white" } else { "black" }),
            chunks.list.len() as u64,
        );
        {
            let (input, target) = if mover == Color::White { (&t_even, &mut t_odd) } else { (&t_odd, &mut t_even) };
            let (d, c) = (&d, c.as_deref());
            for_each_chunk(
                chunks,
                threads,
                |ch| {
                    let frame = Frame::new(&layout, &chunks.scheme, ch.key);
                    let words = chunks.scheme.local_words();
                    let mut inp = vec![0u64; words];
                    gather(input, &ch.blocks, &mut inp);
                    let mut extra = vec![0u64; words];
                    if mover == Color::White {
                        let mut out = vec![0u64; words];
                        kernels::white_moves(&frame, &inp, &mut out);
                        if let Some(c) = c {
                            gather(c, &ch.blocks, &mut extra);
                            out.iter_mut().zip(&extra).for_each(|(o, e)| *o |= e);
                        }
                        out
                    } else {
                        let mut out = vec![!0u64; words];
                        kernels::black_moves(&frame, &inp, &mut out);
                        gather(d, &ch.blocks, &mut extra);
                        out.iter_mut().zip(&extra).for_each(|(o, e)| *o &= e);
                        out
                    }
                },
                |i, out| {
                    let mut enc = GapEncoder::new();
                    for b in &chunks.list[i].blocks {
                        for w in 0..b.words {
                            let old = target[b.slot_word + w];
                            let x = out[b.local_word + w];
                            target[b.slot_word + w] = old | x;
                            enc.push_word(b.local_word + w, x & !old);
                        }
                    }
                    new_count += enc.count();
                    streams[i] = enc.finish();
                    progress.inc();
                    Ok(())
                },
            )?;
        }
        if k == 1 {
            c = None; // c is inside t1 and every later odd table.
        }
        report.delta_bytes += write_step(work_dir, k, &streams)?;
        report.new_per_step.push(new_count);
        let secs = t.elapsed().as_secs_f64();
        if mover == Color::White {
            report.white_secs += secs
        } else {
            report.black_secs += secs
        }
        progress.finish(&format!("{new_count} new"));
        if new_count > 0 {
            report.last_step = k;
            quiet = 0;
        } else {
            quiet += 1;
            if quiet == 2 {
                break; // one odd and one even step added nothing: every later table is equal
            }
        }
    }

    // Merge the delta streams into the 6-bit values and write the table.
    let t = Instant::now();
    let writer = TableWriter::create(out_dir, material, layout.n_slots)?;
    writer.write_bitbase(Color::White, &t_odd)?;
    writer.write_bitbase(Color::Black, &t_even)?;
    drop((t_odd, t_even, d));
    let steps = report.new_per_step.len() as u8;
    merge_side(&layout, &white, Color::White, &writer, work_dir, steps, threads, progress)?;
    merge_side(&layout, &black, Color::Black, &writer, work_dir, steps, threads, progress)?;
    report.path = writer.finish(report.last_step)?;
    report.merge_secs = t.elapsed().as_secs_f64();
    std::fs::remove_dir_all(work_dir).ok();
    Ok(report)
}

fn step_path(work_dir: &Path, k: u8) -> PathBuf {
    work_dir.join(format!("step-{k:03}.delta"))
}

/// Writes one step's per-chunk streams: chunk count, offsets, then the streams.
fn write_step(work_dir: &Path, k: u8, streams: &[Vec<u8>]) -> anyhow::Result<u64> {
    let path = step_path(work_dir, k);
    let mut w = BufWriter::new(File::create(&path).with_context(|| format!("creating {}", path.display()))?);
    w.write_all(&(streams.len() as u64).to_le_bytes())?;
    let mut off = 0u64;
    for s in streams {
        w.write_all(&off.to_le_bytes())?;
        off += s.len() as u64;
    }
    w.write_all(&off.to_le_bytes())?;
    for s in streams {
        w.write_all(s)?;
    }
    w.flush().with_context(|| format!("writing {}", path.display()))?;
    Ok(off)
}

/// An opened step file: its chunk offsets and the file.
struct StepFile {
    step: u8,
    offsets: Vec<u64>,
    data_start: u64,
    file: File,
}

impl StepFile {
    fn open(work_dir: &Path, k: u8) -> anyhow::Result<StepFile> {
        let path = step_path(work_dir, k);
        let file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
        let mut b = [0u8; 8];
        file.read_exact_at(&mut b, 0)?;
        let n = u64::from_le_bytes(b) as usize;
        let mut raw = vec![0u8; 8 * (n + 1)];
        file.read_exact_at(&mut raw, 8)?;
        let offsets = raw.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap())).collect();
        Ok(StepFile { step: k, offsets, data_start: 8 + 8 * (n as u64 + 1), file })
    }

    fn stream(&self, i: usize) -> anyhow::Result<Vec<u8>> {
        let (a, b) = (self.offsets[i], self.offsets[i + 1]);
        let mut buf = vec![0u8; (b - a) as usize];
        self.file.read_exact_at(&mut buf, self.data_start + a)?;
        Ok(buf)
    }
}

/// Builds one side's 6-bit values chunk by chunk from the delta streams of its steps.
#[allow(clippy::too_many_arguments)]
fn merge_side(
    layout: &Layout,
    chunks: &Chunks,
    stm: Color,
    writer: &TableWriter,
    work_dir: &Path,
    steps: u8,
    threads: usize,
    progress: &Progress,
) -> anyhow::Result<()> {
    let parity = if stm == Color::White { 1 } else { 0 };
    let files: Vec<StepFile> =
        (0..steps).filter(|k| k % 2 == parity).map(|k| StepFile::open(work_dir, k)).collect::<Result<_, _>>()?;
    let base = writer.section_offset(crate::format::Section::values(stm));
    progress.start(
        format!("{} merge {}", layout.material, if stm == Color::White { "wtm" } else { "btm" }),
        chunks.list.len() as u64,
    );
    for_each_chunk(
        chunks,
        threads,
        |ch| -> anyhow::Result<Vec<u8>> {
            let words = chunks.scheme.local_words();
            let mut planes = vec![0u64; words * 6];
            let frame = Frame::new(layout, &chunks.scheme, ch.key);
            let mut illegal = vec![!0u64; words];
            if stm == Color::White {
                init::illegal_wtm(&frame, &mut illegal)
            } else {
                init::illegal_btm(&frame, &mut illegal)
            }
            let i = chunks.list.iter().position(|c| c.key == ch.key).expect("chunk");
            for f in &files {
                let code = step_code(f.step);
                for pos in decode(&f.stream(i)?) {
                    let pos = pos.with_context(|| format!("delta stream of step {} chunk {i}", f.step))?;
                    let (w, bit) = ((pos / 64) as usize, pos % 64);
                    for j in 0..6 {
                        planes[w * 6 + j] |= (((code >> j) & 1) as u64) << bit;
                    }
                }
            }
            let mut bytes = Vec::with_capacity(ch.blocks.iter().map(|b| b.words).sum::<usize>() * 48);
            for b in &ch.blocks {
                for w in b.local_word..b.local_word + b.words {
                    for j in 0..6 {
                        let p = planes[w * 6 + j] | if CODE_ILLEGAL >> j & 1 != 0 { illegal[w] } else { 0 };
                        bytes.extend_from_slice(&p.to_le_bytes());
                    }
                }
            }
            Ok(bytes)
        },
        |i, bytes| {
            let bytes = bytes?;
            let mut off = 0;
            for b in &chunks.list[i].blocks {
                let len = b.words * VALUE_WORD_BYTES as usize;
                writer.write_at(base + b.slot_word as u64 * VALUE_WORD_BYTES, &bytes[off..off + len])?;
                off += len;
            }
            progress.inc();
            Ok(())
        },
    )?;
    progress.finish("written");
    Ok(())
}
