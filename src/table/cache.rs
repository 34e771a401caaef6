//! Decoded blocks of compact tables, kept for the next probes: a pool of buffers of one block
//! each (64 KiB), bounded in bytes, shared by every table a [`Tablebase`] opens, recycled by
//! the CLOCK rule (a buffer read since the hand last passed it is spared once). The pool is
//! one anonymous map, on huge pages where the kernel has them: probes read their blocks at
//! random, and with 4 KiB pages each read also walked the page tables.
//!
//! A table keeps one [`BlockRef`] per block: unknown, a constant block's value, or the buffer
//! its decoded bytes were put in. A hit reads that buffer's owner (the block it holds), the
//! words, and the owner again (a sequence lock): no lock, no hashing, no shared write but the
//! buffer's reference bit when it is clear, no allocation. A buffer taken over by another
//! block in between (its owner changed) is a miss. A miss claims a buffer under a lock,
//! decodes the block outside it (the reader's decoder, [`CompactTable::cached_block`]) and
//! publishes it; two threads missing the same block at once may both decode it, harmlessly.
//!
//! [`Tablebase`]: super::probe::Tablebase
//! [`CompactTable::cached_block`]: super::compact::CompactTable::cached_block

use super::compact::{BlockData, Part};
use super::error::FormatError;
use crate::work::IoContext;
use byteorder::{ByteOrder, LittleEndian};
use memmap2::{Advice, MmapMut};
use std::sync::atomic::{fence, AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;

/// Decoded bytes of the largest block of any section (2^18 classes or 2^16 distances).
pub const BLOCK_BYTES: usize = 64 << 10;
const BLOCK_WORDS: usize = BLOCK_BYTES / 8;

/// The default budget of a [`BlockCache`]: 512 MiB of decoded blocks (a probe session over
/// random KQRvKR positions touches about 300 MiB of them; `docs/BENCHMARKS.md`).
pub const DEFAULT_CACHE_BYTES: u64 = 512 << 20;

/// A table's reference to one of its blocks: 0 (not known yet), [`CONSTANT`] with the value
/// of a block whose positions all hold it, or 1 + the buffer its bytes were last put in.
pub type BlockRef = AtomicU32;

/// The flag of a [`BlockRef`] holding a constant block's value in its low byte.
const CONSTANT: u32 = 1 << 31;

/// The owner of a buffer being filled; 0 is a buffer that holds nothing.
const BUSY: u64 = u64::MAX;

/// A zeroed buffer of `len` bytes read at random (`what` names it in errors), on huge pages
/// where the kernel has them: a page-table walk per read would otherwise cost as much as the
/// read. Pages are taken as they are written. The block cache's pool and the verifier's
/// windows and loaded codes.
pub fn random_access_buffer(len: usize, what: &str) -> Result<MmapMut, FormatError> {
    let buffer = MmapMut::map_anon(len.max(1)).doing(|| format!("reserving {len} bytes of memory for {what}"))?;
    // Only advice: without huge pages the readers are slower, not wrong.
    let _ = buffer.advise(Advice::HugePage);
    Ok(buffer)
}

/// Fetches the cache line of `at` into the processor's caches (a hint; nothing on processors
/// without a prefetch instruction here).
#[inline(always)]
fn prefetch_read(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing the program sees and never faults, whatever the
    // address (SSE is part of x86-64).
    #[allow(unused_unsafe)]
    unsafe {
        std::arch::x86_64::_mm_prefetch(at.cast::<i8>(), std::arch::x86_64::_MM_HINT_T0)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}

/// A block's identity in the pool: the open table's id, the section, the block.
pub fn block_key(table_id: u32, part: Part, i: usize) -> u64 {
    assert!(i < 1 << 28, "block {i} beyond the cache's keys");
    (table_id as u64) << 32 | (part as u64) << 28 | i as u64
}

/// What a cached read found: a constant block's value, or the words asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cached<const N: usize> {
    Constant(u8),
    Words([u64; N]),
}

/// What a buffer holds.
struct Header {
    /// The key of the block held ([`block_key`]), [`BUSY`] while filled, 0 for none.
    owner: AtomicU64,
    /// Read since the clock hand last passed.
    referenced: AtomicBool,
}

/// Decoded blocks, at most `capacity` bytes of them.
pub struct BlockCache {
    /// The buffers' words, buffer `b` at `b * BLOCK_BYTES` (pages appear as buffers are first
    /// filled; only ever accessed as atomic words).
    pool: MmapMut,
    headers: Box<[Header]>,
    /// Buffers used so far (filled in order), and the clock hand.
    clock: Mutex<(usize, usize)>,
    capacity: u64,
}

impl BlockCache {
    /// A cache of at most `capacity` bytes of decoded blocks (64 KiB each; under 64 KiB, none
    /// is kept): the address space is reserved here, memory taken as blocks arrive.
    pub fn new(capacity: u64) -> Result<BlockCache, FormatError> {
        let n = (capacity / BLOCK_BYTES as u64) as usize;
        let pool = random_access_buffer(n * BLOCK_BYTES, "the block cache")?;
        let headers = (0..n).map(|_| Header { owner: AtomicU64::new(0), referenced: AtomicBool::new(false) }).collect();
        Ok(BlockCache { pool, headers, clock: Mutex::new((0, 0)), capacity })
    }

    /// The words of buffer `b`.
    #[inline]
    fn words_of(&self, b: usize) -> &[AtomicU64] {
        assert!(b < self.headers.len());
        // SAFETY: the pool is a live, page-aligned map of `headers.len()` buffers of
        // BLOCK_BYTES, zero-filled; AtomicU64 has u64's size and alignment, every value is
        // valid, and the pool is never accessed but through these atomics.
        unsafe { std::slice::from_raw_parts(self.pool.as_ptr().add(b * BLOCK_BYTES).cast::<AtomicU64>(), BLOCK_WORDS) }
    }

    /// The budget in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Decoded bytes held now (whole buffers).
    pub fn weight(&self) -> u64 {
        self.clock.lock().unwrap_or_else(|e| e.into_inner()).0 as u64 * BLOCK_BYTES as u64
    }

    /// Words `first..first + N` of the block `key` refers to through `block` (the table's
    /// [`BlockRef`]); on a miss `decode` gives the block.
    #[inline]
    pub fn words<const N: usize>(
        &self,
        key: u64,
        block: &BlockRef,
        first: usize,
        decode: impl FnOnce() -> Result<BlockData, FormatError>,
    ) -> Result<Cached<N>, FormatError> {
        let r = block.load(Ordering::Acquire);
        if r & CONSTANT != 0 {
            return Ok(Cached::Constant(r as u8));
        }
        if r != 0 {
            if let Some(words) = self.hit(r as usize - 1, key, first) {
                return Ok(Cached::Words(words));
            }
        }
        Ok(self.miss(key, block, first, decode()?))
    }

    /// Asks the processor to fetch word `first` of the block `block` refers to, when a buffer
    /// holds it, ahead of its read ([`BlockCache::words`]): a reader with several positions to
    /// read overlaps their memory latencies (a decoded block's word is mostly a miss in every
    /// cache). Only a hint: a buffer taken over meanwhile costs a useless fetch.
    #[inline]
    pub fn prefetch(&self, block: &BlockRef, first: usize) {
        let r = block.load(Ordering::Relaxed);
        if r & CONSTANT != 0 || r == 0 || r as usize > self.headers.len() || first >= BLOCK_WORDS {
            return;
        }
        prefetch_read(self.pool.as_ptr().wrapping_add((r as usize - 1) * BLOCK_BYTES + 8 * first));
    }

    /// The words from buffer `b` if it still holds `key` (read under its sequence lock).
    #[inline]
    fn hit<const N: usize>(&self, b: usize, key: u64, first: usize) -> Option<[u64; N]> {
        let buf = self.headers.get(b)?;
        if buf.owner.load(Ordering::Acquire) != key {
            return None;
        }
        let data = self.words_of(b);
        let words = std::array::from_fn(|k| data[first + k].load(Ordering::Relaxed));
        fence(Ordering::Acquire);
        if buf.owner.load(Ordering::Relaxed) != key {
            return None;
        }
        if !buf.referenced.load(Ordering::Relaxed) {
            buf.referenced.store(true, Ordering::Relaxed);
        }
        Some(words)
    }

    /// The words of a block just decoded, which is kept in a buffer (or, constant, in its
    /// reference) for the next reads.
    #[cold]
    fn miss<const N: usize>(&self, key: u64, block: &BlockRef, first: usize, decoded: BlockData) -> Cached<N> {
        let bytes = match decoded {
            BlockData::Constant(v) => {
                block.store(CONSTANT | v as u32, Ordering::Release);
                return Cached::Constant(v);
            }
            BlockData::Bytes(bytes) => bytes,
        };
        let word = |k: usize| LittleEndian::read_u64(&bytes[8 * k..8 * k + 8]);
        let words = std::array::from_fn(|k| word(first + k));
        // No buffer to keep it in (a budget under one block, or every buffer being filled
        // by other threads): the words are read from the decoded bytes.
        let Some(b) = self.claim() else { return Cached::Words(words) };
        let data = self.words_of(b);
        for (to, from) in data.iter().zip(bytes.chunks_exact(8)) {
            to.store(LittleEndian::read_u64(from), Ordering::Relaxed);
        }
        self.headers[b].owner.store(key, Ordering::Release);
        block.store(b as u32 + 1, Ordering::Release);
        Cached::Words(words)
    }

    /// A buffer to fill, its owner set to [`BUSY`]: an unused one while there is one, else
    /// the first one the clock hand finds unread since it last passed (`None` if the pool has
    /// none, or every buffer is being filled).
    fn claim(&self) -> Option<usize> {
        let mut clock = self.clock.lock().unwrap_or_else(|e| e.into_inner());
        let (allocated, hand) = &mut *clock;
        if *allocated < self.headers.len() {
            let b = *allocated;
            *allocated += 1;
            self.headers[b].owner.store(BUSY, Ordering::Relaxed);
            return Some(b);
        }
        for _ in 0..2 * self.headers.len() {
            let b = *hand;
            *hand = (*hand + 1) % self.headers.len();
            let buf = &self.headers[b];
            if buf.owner.load(Ordering::Relaxed) == BUSY || buf.referenced.swap(false, Ordering::Relaxed) {
                continue;
            }
            // Readers that saw the old owner see BUSY, or the new owner, after their words.
            buf.owner.store(BUSY, Ordering::Relaxed);
            fence(Ordering::Release);
            return Some(b);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_of(seed: u64) -> Vec<u8> {
        (0..BLOCK_WORDS as u64).flat_map(|k| (seed * 1_000_003 + k).to_le_bytes()).collect()
    }

    #[test]
    fn hits_misses_constants_and_recycling() {
        let cache = BlockCache::new(16 * BLOCK_BYTES as u64).unwrap();
        let refs: Vec<BlockRef> = (0..40).map(|_| BlockRef::new(0)).collect();
        let mut decoded = 0;
        for round in 0..3 {
            for (i, r) in refs.iter().enumerate() {
                let key = block_key(7, Part::WtmDtz, i);
                let got = cache
                    .words::<2>(key, r, 5, || {
                        decoded += 1;
                        Ok(if i % 10 == 0 {
                            BlockData::Constant(i as u8)
                        } else {
                            BlockData::Bytes(block_of(i as u64))
                        })
                    })
                    .unwrap();
                let want = if i % 10 == 0 {
                    Cached::Constant(i as u8)
                } else {
                    Cached::Words([i as u64 * 1_000_003 + 5, i as u64 * 1_000_003 + 6])
                };
                assert_eq!(got, want, "round {round}, block {i}");
            }
        }
        // Constants are decoded once; 36 blocks cycle through 16 buffers, so most are again.
        assert!(decoded > 4 + 36 && decoded <= 4 + 3 * 36, "{decoded} decodes");
        assert_eq!(cache.weight(), 16 * BLOCK_BYTES as u64);
        // A block read again at once is a hit.
        let key = block_key(7, Part::WtmDtz, 39);
        let hit = cache.words::<1>(key, &refs[39], 0, || panic!("decoded again")).unwrap();
        assert_eq!(hit, Cached::Words([39 * 1_000_003]));
    }

    #[test]
    fn a_cache_under_one_block_keeps_none() {
        let cache = BlockCache::new(BLOCK_BYTES as u64 - 1).unwrap();
        let r = BlockRef::new(0);
        for _ in 0..3 {
            let got = cache.words::<1>(block_key(1, Part::WtmDtz, 3), &r, 0, || Ok(BlockData::Bytes(block_of(3))));
            assert_eq!(got.unwrap(), Cached::Words([3 * 1_000_003]));
        }
        assert_eq!(cache.weight(), 0);
    }

    #[test]
    fn a_buffer_taken_over_is_a_miss() {
        let cache = BlockCache::new(16 * BLOCK_BYTES as u64).unwrap();
        let (a, b) = (BlockRef::new(0), BlockRef::new(0));
        let (ka, kb) = (block_key(1, Part::WtmWdl, 0), block_key(2, Part::WtmWdl, 0));
        cache.words::<1>(ka, &a, 0, || Ok(BlockData::Bytes(block_of(1)))).unwrap();
        // Table 2's block given table 1's buffer (as if recycled): its owner says otherwise.
        b.store(a.load(Ordering::Relaxed), Ordering::Relaxed);
        let got = cache.words::<1>(kb, &b, 0, || Ok(BlockData::Bytes(block_of(2)))).unwrap();
        assert_eq!(got, Cached::Words([2 * 1_000_003]));
    }

    #[test]
    fn threads_read_their_own_blocks_while_buffers_recycle() {
        let cache = BlockCache::new(16 * BLOCK_BYTES as u64).unwrap();
        let refs: Vec<BlockRef> = (0..64).map(|_| BlockRef::new(0)).collect();
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (cache, refs) = (&cache, &refs);
                s.spawn(move || {
                    for n in 0..2000u64 {
                        let i = ((n * 7 + t * 13) % 64) as usize;
                        let first = (n as usize * 31) % (BLOCK_WORDS - 1);
                        let got = cache
                            .words::<2>(block_key(3, Part::BtmWdl, i), &refs[i], first, || {
                                Ok(BlockData::Bytes(block_of(i as u64)))
                            })
                            .unwrap();
                        let base = i as u64 * 1_000_003 + first as u64;
                        assert_eq!(got, Cached::Words([base, base + 1]));
                    }
                });
            }
        });
    }
}
