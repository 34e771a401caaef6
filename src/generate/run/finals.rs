//! A solved level's final bitbases, kept in its folder for the levels below (whose pawn
//! pushes lead into it): extracted from the table being assembled, and checked (extracted
//! again if damaged) when an interrupted run resumes.

use crate::chess::Color;
use crate::index::{Block, Level};
use crate::progress::Progress;
use crate::solve::WorkTable;
use crate::table::uncompressed::{beyond_rule_mask, PartialTable, Section, VALUE_WORD_BYTES};
use crate::work::bits::{load_sums, save_sums, BitFile};
use crate::work::LevelFolder;
use anyhow::Context;
use byteorder::{ByteOrder, LittleEndian};

/// The final bitbases of one solved level, in its folder.
pub struct LevelFinals<'a> {
    pub level: &'a Level,
    pub folder: &'a LevelFolder,
    /// Whether the level has cursed positions: then the positions won with or without the
    /// rule are kept too.
    pub cursed: bool,
    pub block_bits: u32,
}

impl LevelFinals<'_> {
    fn n_blocks(&self) -> usize {
        (self.level.n_slots >> self.block_bits) as usize
    }

    fn block_words(&self) -> usize {
        1usize << (self.block_bits - 6)
    }

    /// The tables kept: the final bitbases, and with cursed positions the eventual ones.
    fn tables(&self) -> Vec<WorkTable> {
        let eventual = [WorkTable::FinalEventual(Color::White), WorkTable::FinalEventual(Color::Black)];
        let finals = [WorkTable::Final(Color::White), WorkTable::Final(Color::Black)];
        finals.into_iter().chain(eventual.into_iter().filter(|_| self.cursed)).collect()
    }

    /// Makes sure the level's final bitbases are in its folder and intact, extracting them
    /// again from the table being assembled (whose ranges were checked) if not.
    pub fn ensure(&self, partial: &PartialTable, progress: &dyn Progress) -> anyhow::Result<()> {
        let (n_blocks, block_words) = (self.n_blocks(), self.block_words());
        let folder = self.folder;
        let intact = |table: WorkTable| -> anyhow::Result<()> {
            anyhow::ensure!(folder.bits(table).exists(), "{} is missing", folder.bits(table).display());
            let sums = load_sums(&folder.sums(table), n_blocks)?;
            let file = BitFile::open(&folder.bits(table), self.level.n_words(), block_words)?;
            let step = (1 << 20) / (block_words * 8).max(1);
            for first in (0..n_blocks).step_by(step.max(1)) {
                file.read_range(first, step.min(n_blocks - first), block_words, &sums)?;
            }
            Ok(())
        };
        if self.tables().into_iter().try_for_each(intact).is_ok() {
            return Ok(());
        }
        if folder.path().exists() {
            progress.log(&format!(
                "{}: extracting the final bitbases of level {} again",
                partial.path().display(),
                self.level.number
            ));
        }
        self.extract(partial)
    }

    /// Writes the level's final bitbases (`final-wtm`, `final-btm`) into its folder from the
    /// table being assembled: exactly the level's ranges of the table's bitbase sections;
    /// with cursed positions, also the positions won with or without the rule
    /// (`final-wtm-inf`, `final-btm-inf`: the bitbase and the cursed codes of the values).
    pub fn extract(&self, partial: &PartialTable) -> anyhow::Result<()> {
        let folder = self.folder;
        std::fs::create_dir_all(folder.path()).with_context(|| format!("creating {}", folder.path().display()))?;
        let (n_blocks, block_words) = (self.n_blocks(), self.block_words());
        let level = self.level;
        for table in self.tables() {
            let (stm, eventual) = match table {
                WorkTable::Final(stm) => (stm, false),
                WorkTable::FinalEventual(stm) => (stm, true),
                _ => unreachable!("final tables only"),
            };
            let file = BitFile::open(&folder.bits(table), level.n_words(), block_words)?;
            let (offset, _) = partial.range(Section::bitbase(stm), level.first_slot, level.n_slots);
            let (values_offset, _) = partial.range(Section::values(stm), level.first_slot, level.n_slots);
            let mut sums = Vec::with_capacity(n_blocks);
            let group = ((1 << 20) / (block_words * 8)).max(1);
            for first in (0..n_blocks).step_by(group) {
                let n = group.min(n_blocks - first);
                let mut bytes = vec![0u8; n * block_words * 8];
                partial.read_at(offset + (first * block_words * 8) as u64, &mut bytes)?;
                let mut words = vec![0u64; n * block_words];
                LittleEndian::read_u64_into(&bytes, &mut words);
                if eventual {
                    let per_word = VALUE_WORD_BYTES as usize;
                    let mut values = vec![0u8; n * block_words * per_word];
                    partial.read_at(values_offset + (first * block_words * per_word) as u64, &mut values)?;
                    for (w, planes) in words.iter_mut().zip(values.chunks_exact(per_word)) {
                        let planes = std::array::from_fn(|j| LittleEndian::read_u64(&planes[8 * j..8 * j + 8]));
                        *w |= beyond_rule_mask(stm, &planes);
                    }
                }
                sums.extend(file.write_blocks(&Block::run_of(first, n, block_words), &words)?.0);
            }
            // Not synced: on resume `ensure` checks them block by block.
            save_sums(&folder.sums(table), &sums)?;
        }
        Ok(())
    }
}
