//! Gap encoding of a step's new positions (Koistinen's byte code).
//!
//! Positions are listed in increasing order as gaps from the previous one (the first gap is
//! counted from position -1). A byte 1..=255 ends a gap of that size; a byte 0 adds 255 to
//! the gap still being read. Dense steps cost 8 bits per new position, sparse ones a little
//! more; the seed bounds the total over a run at about 10 bits per position.

/// Builds one gap-encoded stream.
#[derive(Default)]
pub struct GapEncoder {
    next: u64,
    bytes: Vec<u8>,
    count: u64,
}

impl GapEncoder {
    pub fn new() -> GapEncoder {
        GapEncoder::default()
    }

    /// Adds the set bits of `bits`, the word of positions `64*word .. 64*word+64`.
    /// Words must come in increasing order.
    #[inline]
    pub fn push_word(&mut self, word: usize, bits: u64) {
        if bits == 0 {
            return;
        }
        // Only the word's first gap can exceed 255 (the others are below 64): its zero bytes
        // first, then a byte per position from a buffer on the stack.
        let first = bits.trailing_zeros();
        let gap = (word as u64) * 64 + first as u64 + 1 - self.next;
        let zeros = (gap - 1) / 255;
        if zeros > 0 {
            self.bytes.resize(self.bytes.len() + zeros as usize, 0);
        }
        let mut out = [0u8; 64];
        out[0] = (gap - 255 * zeros) as u8;
        let (mut n, mut last) = (1, first);
        let mut rest = bits & (bits - 1);
        while rest != 0 {
            let at = rest.trailing_zeros();
            out[n] = (at - last) as u8;
            (n, last) = (n + 1, at);
            rest &= rest - 1;
        }
        self.bytes.extend_from_slice(&out[..n]);
        self.next = (word as u64) * 64 + last as u64 + 1;
        self.count += n as u64;
    }

    /// Number of positions pushed.
    pub fn count(&self) -> u64 {
        self.count
    }

    pub fn finish(self) -> Vec<u8> {
        self.bytes
    }
}

/// Error for a stream whose last gap is unterminated.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("gap-encoded stream ends inside a gap")]
pub struct Truncated;

/// Why a stream's positions could not be set in a block's words.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BadStream {
    #[error("gap-encoded stream ends inside a gap")]
    Truncated,
    #[error("stream position {0} outside its block")]
    Outside(u64),
}

/// Sets the positions of a block's gap-encoded stream in the block's words (straight into
/// them, a position at a time: no branch on where a word ends, so dense streams decode fast).
pub fn set_positions(words: &mut [u64], stream: &[u8]) -> Result<(), BadStream> {
    // The position before the first: -1.
    let (mut pos, mut gap) = (u64::MAX, 0u64);
    for &b in stream {
        if b == 0 {
            gap += 255;
            continue;
        }
        pos = pos.wrapping_add(gap + b as u64);
        gap = 0;
        match words.get_mut((pos / 64) as usize) {
            Some(word) => *word |= 1 << (pos % 64),
            None => return Err(BadStream::Outside(pos)),
        }
    }
    match gap {
        0 => Ok(()),
        _ => Err(BadStream::Truncated),
    }
}

/// The positions of a gap-encoded stream a word at a time: `each(word, bits)` for every word
/// holding some, in increasing order (faster than [`decode`] where positions are dense).
pub fn decode_words(bytes: &[u8], mut each: impl FnMut(u64, u64)) -> Result<(), Truncated> {
    let (mut next, mut gap) = (0u64, 0u64);
    let (mut word, mut bits) = (0u64, 0u64);
    for &b in bytes {
        if b == 0 {
            gap += 255;
            continue;
        }
        let pos = next + gap + b as u64 - 1;
        (next, gap) = (pos + 1, 0);
        if pos / 64 != word {
            if bits != 0 {
                each(word, bits);
            }
            (word, bits) = (pos / 64, 0);
        }
        bits |= 1 << (pos % 64);
    }
    if bits != 0 {
        each(word, bits);
    }
    if gap != 0 {
        return Err(Truncated);
    }
    Ok(())
}

/// Iterates the positions of a gap-encoded stream.
pub fn decode(bytes: &[u8]) -> impl Iterator<Item = Result<u64, Truncated>> + '_ {
    let mut next = 0u64;
    let mut i = 0;
    std::iter::from_fn(move || {
        if i >= bytes.len() {
            return None;
        }
        let mut gap = 0u64;
        loop {
            let Some(&b) = bytes.get(i) else { return Some(Err(Truncated)) };
            i += 1;
            if b == 0 {
                gap += 255;
            } else {
                gap += b as u64;
                break;
            }
        }
        let pos = next + gap - 1;
        next = pos + 1;
        Some(Ok(pos))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn round_trip(words in proptest::collection::vec(any::<u64>(), 0..40), sparse in 0usize..9) {
            let mut enc = GapEncoder::new();
            let mut expected = Vec::new();
            for (i, &w) in words.iter().enumerate() {
                let w = if i % (sparse + 1) == 0 { w } else { 0 };
                let word = i * (1 + sparse * 3);
                enc.push_word(word, w);
                for b in 0..64 { if w >> b & 1 != 0 { expected.push(word as u64 * 64 + b); } }
            }
            prop_assert_eq!(enc.count(), expected.len() as u64);
            let bytes = enc.finish();
            let got: Vec<u64> = decode(&bytes).collect::<Result<_, _>>().unwrap();
            prop_assert_eq!(&got, &expected);
            let mut by_words = Vec::new();
            decode_words(&bytes, |w, bits| {
                assert_ne!(bits, 0);
                by_words.extend((0..64).filter(|b| bits >> b & 1 != 0).map(|b| w * 64 + b));
            }).unwrap();
            prop_assert_eq!(&by_words, &expected);
            // Set into words: the same positions; a block one word too short refuses the first
            // position of the last word.
            let n = expected.last().map_or(0, |&p| p / 64 + 1) as usize;
            let mut set = vec![0u64; n];
            set_positions(&mut set, &bytes).unwrap();
            let set_list: Vec<u64> = (0..n as u64 * 64).filter(|&p| set[(p / 64) as usize] >> (p % 64) & 1 != 0).collect();
            prop_assert_eq!(set_list, expected.clone());
            if let Some(&first_out) = expected.iter().find(|&&p| p / 64 + 1 == n as u64) {
                prop_assert_eq!(set_positions(&mut vec![0u64; n - 1], &bytes), Err(BadStream::Outside(first_out)));
            }
        }
    }

    #[test]
    fn set_positions_refuses_an_unterminated_gap() {
        assert_eq!(set_positions(&mut [0u64; 8], &[3, 0]), Err(BadStream::Truncated));
        let mut words = [0u64; 8];
        set_positions(&mut words, &[3, 0, 2]).unwrap();
        assert_eq!(words[..5], [1 << 2, 0, 0, 0, 1 << (259 - 256)]);
    }

    #[test]
    fn long_gaps_use_zero_bytes() {
        let mut enc = GapEncoder::new();
        enc.push_word(0, 1 << 9); // position 9: gap 10
        enc.push_word(8, 1); // position 512: gap 503 = 255 + 248
        enc.push_word(11, 1 << 62); // position 766: gap 254
        enc.push_word(15, 1 << 60 | 1 << 61 | 1 << 63); // 1020 (gap 254), 1021, 1023
        enc.push_word(23, 1 << 26); // 1498: gap 475 = 255 + 220
        enc.push_word(27, 1 << 51); // 1779: gap 281 = 255 + 26
        enc.push_word(39, 1 << 40); // 2536: gap 757 = 2 * 255 + 247
        enc.push_word(43, 1 << 34 | 1 << 35); // 2786 (gap 250), 2787
        enc.push_word(47, 1 << 41 | 1); // 3008 (gap 221), 3049 (gap 41)
        enc.push_word(51, 1 << 36); // 3300: gap 251
        enc.push_word(55, 1 << 35); // 3555: gap 255, one byte
        enc.push_word(63, 1 << 33); // 4065: gap 510 = 255 + 255
        assert_eq!(enc.count(), 16);
        assert_eq!(
            enc.finish(),
            vec![10, 0, 248, 254, 254, 1, 2, 0, 220, 0, 26, 0, 0, 247, 250, 1, 221, 41, 251, 255, 0, 255]
        );
        assert_eq!(decode(&[0]).next(), Some(Err(Truncated)));
    }
}
