//! Packed bit vectors in 64-bit words, bit `i` being bit `i % 64` of word `i / 64`: the SIMD
//! copies of one wire, and the gates of one AND layer side by side in a message.

/// Words that hold `n` bits.
pub(crate) fn words(n: usize) -> usize {
    n.div_ceil(64)
}

/// The bits of the last of `words(n)` words that belong to an `n`-bit vector.
pub(crate) fn tail_mask(n: usize) -> u64 {
    match n % 64 {
        0 => !0,
        r => (1 << r) - 1,
    }
}

/// ORs the first `n` bits of `src` into `dst` from bit `at` on, where `dst` holds zeros.
pub(crate) fn put(dst: &mut [u64], at: usize, src: &[u64], n: usize) {
    let (first, shift) = (at / 64, at % 64);
    let count = words(n);
    for (i, &word) in src[..count].iter().enumerate() {
        let v = if i + 1 == count {
            word & tail_mask(n)
        } else {
            word
        };
        dst[first + i] |= v << shift;
        if shift != 0 && v >> (64 - shift) != 0 {
            dst[first + i + 1] |= v >> (64 - shift);
        }
    }
}

/// Writes the `n` bits of `src` from bit `at` on into `dst[..words(n)]`, zero above bit `n`.
pub(crate) fn get(src: &[u64], at: usize, n: usize, dst: &mut [u64]) {
    let (first, shift) = (at / 64, at % 64);
    let count = words(n);
    for (i, out) in dst[..count].iter_mut().enumerate() {
        let low = src[first + i] >> shift;
        let high = match src.get(first + i + 1) {
            Some(&next) if shift != 0 => next << (64 - shift),
            _ => 0,
        };
        *out = low | high;
    }
    if let Some(last) = dst[..count].last_mut() {
        *last &= tail_mask(n);
    }
}

/// `simd` random bits.
pub(crate) fn random(prg: &mut tessera_core::Prg, simd: usize, out: &mut [u64]) {
    for chunk in out.chunks_mut(2) {
        let b = prg.random_block();
        chunk[0] = b.low();
        if let Some(high) = chunk.get_mut(1) {
            *high = b.high();
        }
    }
    if let Some(last) = out.last_mut() {
        *last &= tail_mask(simd);
    }
}

/// Bit `i` of `v`.
pub(crate) fn bit(v: &[u64], i: usize) -> bool {
    (v[i / 64] >> (i % 64)) & 1 == 1
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn put_then_get_is_the_identity_at_any_offset(
            src in proptest::collection::vec(any::<u64>(), 1..5),
            at in 0usize..200,
            cut in 0usize..64,
        ) {
            let n = (64 * src.len()).saturating_sub(cut).max(1);
            let mut dst = vec![0u64; words(at + n) + 1];
            put(&mut dst, at, &src, n);
            for i in 0..dst.len() * 64 {
                let expect = i >= at && i < at + n && bit(&src, i - at);
                prop_assert_eq!(bit(&dst, i), expect, "bit {}", i);
            }
            let mut back = vec![!0u64; words(n)];
            get(&dst, at, n, &mut back);
            for i in 0..back.len() * 64 {
                prop_assert_eq!(bit(&back, i), i < n && bit(&src, i));
            }
        }
    }
}
