//! Decoded blocks of compact tables, kept for the next probes: a concurrent cache bounded
//! in bytes (`quick_cache`, scan-resistant), shared by every table a [`Tablebase`] opens.
//! A hit takes no lock and allocates nothing; a miss decodes the block (allocating its
//! buffer) and may evict others. The cache does not know how blocks are decoded: a miss calls
//! the reader's decoder ([`CompactTable::cached_block`]).
//!
//! [`Tablebase`]: super::probe::Tablebase
//! [`CompactTable::cached_block`]: super::compact::CompactTable::cached_block

use super::compact::Part;
use super::error::FormatError;
use std::sync::Arc;

/// Cache key: the open table's id, the section, the block.
type Key = (u32, u8, u32);

#[derive(Clone)]
struct Bytes;

impl quick_cache::Weighter<Key, Arc<[u8]>> for Bytes {
    fn weight(&self, _key: &Key, val: &Arc<[u8]>) -> u64 {
        val.len().max(1) as u64
    }
}

/// The default budget of a [`BlockCache`]: 512 MiB of decoded blocks (a probe session over
/// random KQRvKR positions touches about 300 MiB of them; `docs/BENCHMARKS.md`).
pub const DEFAULT_CACHE_BYTES: u64 = 512 << 20;

/// Decoded blocks, at most `capacity` bytes of them.
pub struct BlockCache {
    cache: quick_cache::sync::Cache<Key, Arc<[u8]>, Bytes>,
    capacity: u64,
}

impl BlockCache {
    /// A cache of at most `capacity` bytes of decoded blocks (64 KiB each).
    pub fn new(capacity: u64) -> BlockCache {
        let items = (capacity / (64 << 10)).max(16) as usize;
        BlockCache { cache: quick_cache::sync::Cache::with_weighter(items, capacity.max(64 << 10), Bytes), capacity }
    }

    /// The budget in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Decoded bytes held now.
    pub fn weight(&self) -> u64 {
        self.cache.weight()
    }

    /// Block `i` of section `part` of the open table `table_id`; on a miss, `decode` gives it.
    #[inline]
    pub fn get(
        &self,
        table_id: u32,
        part: Part,
        i: usize,
        decode: impl FnOnce() -> Result<Arc<[u8]>, FormatError>,
    ) -> Result<Arc<[u8]>, FormatError> {
        let key = (table_id, part as u8, i as u32);
        if let Some(block) = self.cache.get(&key) {
            return Ok(block);
        }
        self.cache.get_or_insert_with(&key, decode)
    }
}
