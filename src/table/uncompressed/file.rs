//! An uncompressed table opened for reading: a run being compacted, an old published file to
//! convert, or a table the verifier expanded.

use super::header::Header;
use super::sections::{Section, VALUE_WORD_BYTES};
use crate::chess::{Color, Material};
use crate::table::error::FormatError;
use crate::table::version::HEADER_LEN;
use crate::work::IoContext;
use byteorder::{ByteOrder, LittleEndian};
use memmap2::Mmap;
use std::fs::File;
use std::path::{Path, PathBuf};
use xxhash_rust::xxh3::Xxh3;

/// A table file opened read-only and memory-mapped.
pub struct TableFile {
    pub path: PathBuf,
    pub header: Header,
    map: Mmap,
    file: File,
}

impl TableFile {
    /// Opens and checks the header and the length (not the section checksums).
    pub fn open(path: &Path) -> Result<TableFile, FormatError> {
        let file = File::open(path).doing(|| format!("opening {}", path.display()))?;
        // SAFETY: tables are published by rename and never modified in place afterwards.
        let map = unsafe { Mmap::map(&file) }.doing(|| format!("mapping {}", path.display()))?;
        let header = Header::decode(path, &map[..map.len().min(HEADER_LEN)])?;
        if map.len() as u64 != header.file_len() {
            return Err(FormatError::Length(path.to_path_buf(), map.len() as u64, header.file_len()));
        }
        Ok(TableFile { path: path.to_path_buf(), header, map, file })
    }

    /// Opens the table of run `material` and checks it: the header must name that run (a
    /// file of another run under its name is refused, even one of the same size), and every
    /// section's checksum must match.
    pub fn open_run(path: &Path, material: &Material) -> Result<TableFile, FormatError> {
        let file = TableFile::open_run_unchecked(path, material)?;
        file.verify()?;
        Ok(file)
    }

    /// Like [`TableFile::open_run`] without the section checksums (for a table checked
    /// moments ago by the same process).
    pub fn open_run_unchecked(path: &Path, material: &Material) -> Result<TableFile, FormatError> {
        let file = TableFile::open(path)?;
        if &file.header.material != material {
            return Err(FormatError::WrongRun {
                path: path.to_path_buf(),
                found: file.header.material.clone(),
                expected: material.clone(),
            });
        }
        Ok(file)
    }

    /// Checks every section's checksum. The file is read, not touched through the map, so
    /// that checking a large table does not make it resident in this process.
    pub fn verify(&self) -> Result<(), FormatError> {
        use std::os::unix::fs::FileExt;
        let mut buf = vec![0u8; 1 << 20];
        for (i, s) in self.header.sections.iter().enumerate() {
            let mut hasher = Xxh3::new();
            let mut done = 0;
            while done < s.length {
                let n = buf.len().min((s.length - done) as usize);
                let at = s.offset + done;
                self.file
                    .read_exact_at(&mut buf[..n], at)
                    .doing(|| format!("reading {} at offset {at}", self.path.display()))?;
                hasher.update(&buf[..n]);
                done += n as u64;
            }
            if hasher.digest() != s.checksum {
                return Err(FormatError::SectionChecksum {
                    path: self.path.clone(),
                    section: Section::at(i),
                    offset: s.offset,
                });
            }
        }
        Ok(())
    }

    /// The header's bytes (which hold every section's checksum: an identity of the table).
    pub fn header_bytes(&self) -> &[u8] {
        &self.map[..HEADER_LEN]
    }

    /// Bytes of a section.
    pub fn section(&self, s: Section) -> &[u8] {
        let e = self.header.sections[s as usize];
        &self.map[e.offset as usize..(e.offset + e.length) as usize]
    }

    /// The bitbase word of storage word `w`.
    #[inline]
    pub fn bitbase_word(&self, stm: Color, w: usize) -> u64 {
        let b = self.section(Section::bitbase(stm));
        LittleEndian::read_u64(&b[w * 8..w * 8 + 8])
    }

    /// The value planes of words `first..first + n` of a side to move, read from the file (not
    /// through the map, so that going through a large table does not make it resident in
    /// this process).
    pub fn read_planes(&self, stm: Color, first: usize, n: usize, out: &mut Vec<[u64; 6]>) -> Result<(), FormatError> {
        use std::os::unix::fs::FileExt;
        let e = self.header.sections[Section::values(stm) as usize];
        let per_word = VALUE_WORD_BYTES as usize;
        let mut bytes = vec![0u8; n * per_word];
        let at = e.offset + (first * per_word) as u64;
        self.file.read_exact_at(&mut bytes, at).doing(|| format!("reading {} at offset {at}", self.path.display()))?;
        out.clear();
        out.extend(
            bytes.chunks_exact(per_word).map(|b| std::array::from_fn(|j| LittleEndian::read_u64(&b[8 * j..8 * j + 8]))),
        );
        Ok(())
    }

    /// The 6-bit value code of a storage slot.
    #[inline]
    pub fn value_code(&self, stm: Color, slot: u64) -> u8 {
        let e = self.header.sections[Section::values(stm) as usize];
        let base = (e.offset + (slot >> 6) * VALUE_WORD_BYTES) as usize;
        let bit = slot & 63;
        let mut code = 0u8;
        for j in 0..6 {
            let o = base + 8 * j;
            let plane = LittleEndian::read_u64(&self.map[o..o + 8]);
            code |= (((plane >> bit) & 1) as u8) << j;
        }
        code
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::table::uncompressed::PartialTable;
    use crate::table::version::table_path;
    use xxhash_rust::xxh3::xxh3_64;

    /// Assembles a table of `KQvK`'s size in two levels (two halves of every section) with
    /// recognisable bytes, completes it and moves it into `dir` as `KQvK.tbs`.
    fn write_sample(dir: &Path) -> PathBuf {
        let m = Material::parse("KQvK").unwrap();
        let n_slots = crate::index::Layout::new(&m).n_slots;
        let partial = PartialTable::open(&dir.join("table.partial"), &crate::index::Layout::new(&m)).unwrap();
        for (first, n) in [(n_slots / 2, n_slots / 2), (0, n_slots / 2)] {
            for (i, s) in Section::ALL.into_iter().enumerate() {
                let (off, len) = partial.range(s, first, n);
                let bytes: Vec<u8> =
                    (off..off + len).map(|b| (b as u8).wrapping_mul(31).wrapping_add(i as u8)).collect();
                partial.write_at(off, &bytes).unwrap();
            }
        }
        let done = partial.finish(7, [0, 0], (true, true), None, None).unwrap();
        let path = table_path(dir, &m);
        std::fs::rename(done, &path).unwrap();
        path
    }

    fn flip(path: &Path, at: u64) {
        let mut bytes = std::fs::read(path).unwrap();
        bytes[at as usize] ^= 0x20;
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn an_assembled_table_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let m = Material::parse("KQvK").unwrap();
        let path = write_sample(dir.path());
        assert!(!dir.path().join("table.partial").exists());
        let file = TableFile::open_run(&path, &m).unwrap();
        assert_eq!(file.header.last_step, 7);
        let e = file.header.sections[Section::BtmValues as usize];
        let b = file.section(Section::BtmValues);
        assert_eq!(b[100], ((e.offset + 100) as u8).wrapping_mul(31).wrapping_add(3));
    }

    #[test]
    fn a_flipped_byte_in_each_section_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let m = Material::parse("KQvK").unwrap();
        let path = write_sample(dir.path());
        let file = TableFile::open_run(&path, &m).unwrap();
        let sections = file.header.sections.clone();
        drop(file);
        for (i, e) in sections.iter().enumerate() {
            for at in [e.offset, e.offset + e.length / 2, e.offset + e.length - 1] {
                flip(&path, at);
                let err = TableFile::open_run(&path, &m).err().expect("damage found");
                let text = err.to_string();
                assert!(
                    matches!(err, FormatError::SectionChecksum { section, .. } if section == Section::ALL[i]),
                    "{text}"
                );
                assert!(text.contains(&format!("{:?}", Section::ALL[i])) && text.contains("KQvK.tbs"), "{text}");
                flip(&path, at);
            }
        }
        TableFile::open_run(&path, &m).unwrap();
        // The header: its checksum, or the checksum itself.
        for at in [9, 20, 40, 100, 250] {
            flip(&path, at);
            let err = TableFile::open_run(&path, &m).err().expect("damage found");
            assert!(matches!(err, FormatError::HeaderChecksum(_) | FormatError::Version(..)), "byte {at}: {err}");
            flip(&path, at);
        }
    }

    #[test]
    fn an_unfinished_table_is_never_published() {
        let dir = tempfile::tempdir().unwrap();
        let m = Material::parse("KQvK").unwrap();
        // A kill while the table is assembled: the work folder holds it, the output folder
        // nothing; opening it again keeps what was written.
        let partial_path = dir.path().join("table.partial");
        let partial = PartialTable::open(&partial_path, &crate::index::Layout::new(&m)).unwrap();
        let (off, _) = partial.range(Section::WtmValues, 0, 64);
        partial.write_at(off, &[7; 48]).unwrap();
        drop(partial);
        assert!(!table_path(dir.path(), &m).exists());
        let partial = PartialTable::open(&partial_path, &crate::index::Layout::new(&m)).unwrap();
        assert_eq!(partial.checksum(off, 48).unwrap(), xxh3_64(&[7; 48]));
        assert!(TableFile::open(&partial_path).is_err(), "no header yet: not a table");
    }
}
