//! An OT receiver's choice bits, packed 64 to a word: what every receiver flavour takes
//! ([`Choices`], a view that slices at any bit) and an owned vector of them
//! ([`ChoiceBits`]). A bool a byte would be eight times the memory, and OT extension packs the
//! choices into its matrix 128 at a time anyway ([`Choices::bits128`]). Reading a bit
//! indexes by its position only, never branches on its value.

use crate::bits::pack_bools;
use std::ops::Range;

/// Packed choice bits: bit j in bit j % 64 of word j / 64.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ChoiceBits {
    words: Vec<u64>,
    len: usize,
}

impl ChoiceBits {
    /// No bits.
    pub fn new() -> Self {
        ChoiceBits::default()
    }

    /// `bools`, packed (eight at a time, with no branch on them).
    pub fn from_bools(bools: &[bool]) -> Self {
        let mut words = Vec::with_capacity(bools.len().div_ceil(64));
        for chunk in bools.chunks(128) {
            let packed = pack_bools(chunk);
            words.push(packed as u64);
            if chunk.len() > 64 {
                words.push((packed >> 64) as u64);
            }
        }
        ChoiceBits {
            words,
            len: bools.len(),
        }
    }

    /// Appends `bit`.
    pub fn push(&mut self, bit: bool) {
        if self.len.is_multiple_of(64) {
            self.words.push(0);
        }
        let last = self.words.len() - 1;
        self.words[last] |= u64::from(bit) << (self.len % 64);
        self.len += 1;
    }

    /// How many bits.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A view of all of them.
    pub fn as_choices(&self) -> Choices<'_> {
        Choices {
            words: &self.words,
            start: 0,
            len: self.len,
        }
    }
}

impl FromIterator<bool> for ChoiceBits {
    fn from_iter<I: IntoIterator<Item = bool>>(bits: I) -> Self {
        let mut packed = ChoiceBits::new();
        for bit in bits {
            packed.push(bit);
        }
        packed
    }
}

impl<'a> From<&'a ChoiceBits> for Choices<'a> {
    fn from(bits: &'a ChoiceBits) -> Self {
        bits.as_choices()
    }
}

/// A view of packed choice bits: `len` bits from bit `start` of `words`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Choices<'a> {
    words: &'a [u64],
    start: usize,
    len: usize,
}

impl<'a> Choices<'a> {
    /// No choices.
    pub const EMPTY: Choices<'static> = Choices {
        words: &[],
        start: 0,
        len: 0,
    };

    /// How many bits.
    pub fn len(self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(self) -> bool {
        self.len == 0
    }

    /// Bit `j`.
    ///
    /// # Panics
    /// If `j` is not below [`Choices::len`].
    pub fn get(self, j: usize) -> bool {
        assert!(j < self.len, "choice {j} of {}", self.len);
        let at = self.start + j;
        (self.words[at / 64] >> (at % 64)) & 1 == 1
    }

    /// Bits `range`.
    ///
    /// # Panics
    /// If the range is not within [`Choices::len`].
    pub fn slice(self, range: Range<usize>) -> Choices<'a> {
        assert!(
            range.start <= range.end && range.end <= self.len,
            "choices {range:?} of {}",
            self.len
        );
        Choices {
            words: self.words,
            start: self.start + range.start,
            len: range.end - range.start,
        }
    }

    /// Bits from `from` on, or none if there are not that many.
    pub fn skip(self, from: usize) -> Choices<'a> {
        self.slice(from.min(self.len)..self.len)
    }

    /// The first `n` bits, or all if there are fewer.
    pub fn take(self, n: usize) -> Choices<'a> {
        self.slice(0..n.min(self.len))
    }

    /// Consecutive pieces of `n` bits (the last may be shorter).
    pub fn chunks(self, n: usize) -> impl Iterator<Item = Choices<'a>> {
        let n = n.max(1);
        (0..self.len)
            .step_by(n)
            .map(move |at| self.slice(at..(at + n).min(self.len)))
    }

    /// Every bit, in order.
    pub fn iter(self) -> impl ExactSizeIterator<Item = bool> + 'a {
        (0..self.len).map(move |j| self.get(j))
    }

    /// Up to 128 bits from bit `at`, bit `at + i` as bit i; bits past the end are 0.
    pub fn bits128(self, at: usize) -> u128 {
        let n = self.len.saturating_sub(at).min(128);
        if n == 0 {
            return 0;
        }
        let first = self.start + at;
        let (word, shift) = (first / 64, first % 64);
        let mut bits = 0u128;
        for k in 0..3 {
            let w = u128::from(self.words.get(word + k).copied().unwrap_or(0));
            bits |= match (64 * k).checked_sub(shift) {
                Some(left) if left < 128 => w << left,
                Some(_) => 0,
                None => w >> (shift - 64 * k),
            };
        }
        if n == 128 {
            bits
        } else {
            bits & ((1u128 << n) - 1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every view (any start, any length) reads the bits it was cut from, one at a time,
        /// 128 at a time and in pieces.
        #[test]
        fn views_read_the_bits_they_cover(
            bools in proptest::collection::vec(any::<bool>(), 0..600),
            a in 0usize..600,
            b in 0usize..600,
            at in 0usize..300,
        ) {
            let packed = ChoiceBits::from_bools(&bools);
            prop_assert_eq!(&packed, &bools.iter().copied().collect::<ChoiceBits>());
            let (a, b) = (a.min(bools.len()), b.min(bools.len()));
            let (a, b) = (a.min(b), a.max(b));
            let view = packed.as_choices().slice(a..b);
            let want = &bools[a..b];
            prop_assert_eq!(view.iter().collect::<Vec<_>>(), want.to_vec());
            let mut bits = 0u128;
            for (i, &bit) in want.iter().skip(at).take(128).enumerate() {
                bits |= u128::from(bit) << i;
            }
            prop_assert_eq!(view.bits128(at), bits);
            let pieces: Vec<bool> = view.chunks(7).flat_map(Choices::iter).collect();
            prop_assert_eq!(pieces, want.to_vec());
            prop_assert_eq!(view.skip(at).len(), want.len().saturating_sub(at));
        }
    }
}
