//! Words on the wire at their own width: a ciphertext's row modulo a prime of b bits travels
//! in b bits a word, not 64 (a 49-bit prime's row in 77 % of the bytes).

/// A run of `count` words of `bits` bits each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// How many words.
    pub count: usize,
    /// Bits per word, 1 to 64.
    pub bits: u32,
}

/// The bytes `runs` take: their bits, rounded up to a byte once at the end.
pub fn packed_len(runs: &[Run]) -> Option<usize> {
    let bits = runs.iter().try_fold(0usize, |acc, r| {
        acc.checked_add(r.count.checked_mul(r.bits as usize)?)
    })?;
    Some(bits.div_ceil(8))
}

/// `words` laid out as `runs` say (their counts summing to `words.len()`), each word's low
/// `bits` bits, least significant first; a word's higher bits are the caller's to have cleared.
pub fn pack(words: &[u64], runs: &[Run]) -> Vec<u8> {
    let mut out = Vec::with_capacity(packed_len(runs).unwrap_or(0));
    let (mut acc, mut held) = (0u128, 0u32);
    let mut words = words.iter();
    for run in runs {
        for &w in words.by_ref().take(run.count) {
            acc |= u128::from(w) << held;
            held += run.bits;
            while held >= 8 {
                out.push(acc as u8);
                acc >>= 8;
                held -= 8;
            }
        }
    }
    if held > 0 {
        out.push(acc as u8);
    }
    out
}

/// The words of `bytes` laid out as `runs` say, or `None` unless `bytes` has exactly their
/// length and the last byte's unused bits are zero.
pub fn unpack(bytes: &[u8], runs: &[Run]) -> Option<Vec<u64>> {
    if packed_len(runs)? != bytes.len() || runs.iter().any(|r| !(1..=64).contains(&r.bits)) {
        return None;
    }
    let total = runs.iter().map(|r| r.count).sum();
    let mut words = Vec::with_capacity(total);
    let (mut acc, mut held) = (0u128, 0u32);
    let mut bytes = bytes.iter();
    for run in runs {
        let mask = if run.bits == 64 {
            u64::MAX
        } else {
            (1u64 << run.bits) - 1
        };
        for _ in 0..run.count {
            while held < run.bits {
                acc |= u128::from(*bytes.next()?) << held;
                held += 8;
            }
            words.push(acc as u64 & mask);
            acc >>= run.bits;
            held -= run.bits;
        }
    }
    (acc == 0).then_some(words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_round_trip_at_their_widths_and_nothing_else_is_taken() {
        let runs = [
            Run { count: 5, bits: 49 },
            Run { count: 3, bits: 64 },
            Run { count: 7, bits: 3 },
        ];
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let words: Vec<u64> = runs
            .iter()
            .flat_map(|r| (0..r.count).map(move |_| r.bits))
            .map(|bits| {
                x = x.wrapping_mul(0x5851_f42d_4c95_7f2d).wrapping_add(1);
                if bits == 64 { x } else { x >> (64 - bits) }
            })
            .collect();
        let bytes = pack(&words, &runs);
        assert_eq!(bytes.len(), (5 * 49 + 3 * 64 + 7 * 3usize).div_ceil(8));
        assert_eq!(unpack(&bytes, &runs), Some(words));
        assert_eq!(unpack(&bytes[1..], &runs), None);
        assert_eq!(unpack(&[bytes.clone(), vec![0]].concat(), &runs), None);
        // 458 bits: the last byte's top six bits are padding, which must be zero.
        let mut padded = bytes.clone();
        *padded.last_mut().unwrap() |= 0x80;
        assert_eq!(unpack(&padded, &runs), None);
        assert_eq!(unpack(&[], &[Run { count: 1, bits: 0 }]), None);
    }
}
