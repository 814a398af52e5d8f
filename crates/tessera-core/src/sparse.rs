//! Products of a sparse GF(2) matrix with a vector of blocks, the local linear codes of
//! Ferret's LPN encoding (Yang, Weng, Lan, Zhang, Wang, CCS 2020, §3): `y ⊕= A·x` for an
//! n × k matrix A with `D` ones per row, where x and y are blocks (128 GF(2) instances side
//! by side). Row i is named by `D` 32-bit words, each mapped into [0, k) by Lemire's
//! multiply-shift ⌊w·k / 2^32⌋, so every column index is in bounds by construction and the
//! loads need no check; an index named twice in a row cancels, as in the product over GF(2).
//!
//! The work is the `D` random loads per row: the kernels turn a batch of words into indices
//! with vector multiplies, then keep two independent XOR chains per row so that the loads of
//! several rows are in flight at once. Two kernels beside the portable one: AVX2 and
//! AVX-512F ([`Simd`]), which differ only in the registers the index step is compiled for.

use crate::Block;
use crate::simd::Simd;

/// Rows whose indices are computed per batch: 64 rows of up to [`MAX_D`] words stay in L1.
const ROWS: usize = 64;

/// The most ones per row.
pub const MAX_D: usize = 16;

/// The column in [0, k) of a word: ⌊w·k / 2^32⌋.
#[inline(always)]
pub fn column(word: u32, k: usize) -> usize {
    ((u64::from(word) * k as u64) >> 32) as usize
}

/// `y[i] ⊕= Σ_{j < D} x[⌊words[D·i + j] · k / 2^32⌋]` for k = `x.len()` and every row i of `y`,
/// with the [`Simd::active`] kernel.
///
/// # Panics
/// If `words` is not `D` words per row of `y`, or `x` is empty while `y` is not.
pub fn accumulate<const D: usize>(x: &[Block], words: &[u32], y: &mut [Block]) {
    accumulate_with::<D>(Simd::active(), x, words, y);
}

/// [`accumulate`] with a given kernel, the portable one where this CPU lacks it.
///
/// # Panics
/// As [`accumulate`].
pub fn accumulate_with<const D: usize>(simd: Simd, x: &[Block], words: &[u32], y: &mut [Block]) {
    const { assert!(D >= 1 && D <= MAX_D, "sparse product: 1 to 16 ones per row") };
    assert_eq!(
        words.len(),
        D * y.len(),
        "sparse product: {D} words per row"
    );
    assert!(y.is_empty() || !x.is_empty(), "sparse product: no columns");
    assert!(x.len() < 1 << 32, "sparse product: over 2^32 columns");
    match simd.usable() {
        Simd::Portable => accumulate_portable::<D>(x, words, y),
        // SAFETY: `usable` checked the features; the lengths were checked.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { accumulate_avx2::<D>(x, words, y) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { accumulate_avx512::<D>(x, words, y) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => accumulate_portable::<D>(x, words, y),
    }
}

/// [`accumulate`] with checked loads.
fn accumulate_portable<const D: usize>(x: &[Block], words: &[u32], y: &mut [Block]) {
    for (out, row) in y.iter_mut().zip(words.chunks_exact(D)) {
        *out = row.iter().fold(*out, |acc, &w| acc ^ x[column(w, x.len())]);
    }
}

/// The vector kernels' body, compiled once per instruction set: a batch of rows' indices by
/// multiply-shift (vectorised by the compiler for the enclosing target features), then the
/// loads, two XOR chains per row.
///
/// # Safety
/// `words` holds `D` words per row of `y`, and `x` is not empty if `y` is not.
#[inline(always)]
unsafe fn accumulate_body<const D: usize>(x: &[Block], words: &[u32], y: &mut [Block]) {
    let k = x.len();
    let base = x.as_ptr();
    let mut columns = [0u32; MAX_D * ROWS];
    let columns = &mut columns[..D * ROWS];
    for (words, y) in words.chunks(D * ROWS).zip(y.chunks_mut(ROWS)) {
        let columns = &mut columns[..words.len()];
        for (c, &w) in columns.iter_mut().zip(words) {
            *c = column(w, k) as u32;
        }
        for (out, row) in y.iter_mut().zip(columns.chunks_exact(D)) {
            // SAFETY: every column is below k = `x.len()` (multiply-shift of a 32-bit word),
            // and `row` holds D of them.
            let load = |j: usize| unsafe { *base.add(*row.get_unchecked(j) as usize) };
            let (mut even, mut odd) = (*out, Block::ZERO);
            let mut j = 0;
            while j + 1 < D {
                even ^= load(j);
                odd ^= load(j + 1);
                j += 2;
            }
            if j < D {
                even ^= load(j);
            }
            *out = even ^ odd;
        }
    }
}

/// [`accumulate_body`] with AVX2.
///
/// # Safety
/// As [`accumulate_body`], and the CPU has AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn accumulate_avx2<const D: usize>(x: &[Block], words: &[u32], y: &mut [Block]) {
    // SAFETY: the caller's contract.
    unsafe { accumulate_body::<D>(x, words, y) }
}

/// [`accumulate_body`] with AVX-512F.
///
/// # Safety
/// As [`accumulate_body`], and the CPU has AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,avx512f")]
unsafe fn accumulate_avx512<const D: usize>(x: &[Block], words: &[u32], y: &mut [Block]) {
    // SAFETY: the caller's contract.
    unsafe { accumulate_body::<D>(x, words, y) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition: the matrix product over GF(2), one set bit of A at a time.
    fn definition<const D: usize>(x: &[Block], words: &[u32], y: &[Block]) -> Vec<Block> {
        let k = x.len() as u128;
        y.iter()
            .zip(words.chunks_exact(D))
            .map(|(&y, row)| {
                let mut ones = vec![0u8; x.len()];
                for &w in row {
                    ones[((u128::from(w) * k) >> 32) as usize] ^= 1;
                }
                (0..x.len())
                    .filter(|&c| ones[c] == 1)
                    .fold(y, |a, c| a ^ x[c])
            })
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]
        #[test]
        fn every_kernel_is_the_matrix_product(
            k in 1usize..300,
            rows in 0usize..200,
            repeat in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let mut prg = crate::Prg::with_backend(Block::new(seed.into()), crate::Backend::Portable).unwrap();
            let x = prg.random_blocks(k);
            let y = prg.random_blocks(rows);
            let mut words: Vec<u32> = prg.random_blocks(10 * rows).iter().map(|b| b.as_u128() as u32).collect();
            if repeat {
                // Some rows name a column twice, which cancels.
                for row in words.chunks_exact_mut(10).step_by(3) {
                    row[7] = row[2];
                }
            }
            let want = definition::<10>(&x, &words, &y);
            for kernel in Simd::available() {
                let mut got = y.clone();
                accumulate_with::<10>(kernel, &x, &words, &mut got);
                prop_assert_eq!(&got, &want, "{}", kernel.name());
            }
            // An odd row weight takes the last load outside the pairs.
            let words3 = &words[..3 * rows];
            let want = definition::<3>(&x, words3, &y);
            for kernel in Simd::available() {
                let mut got = y.clone();
                accumulate_with::<3>(kernel, &x, words3, &mut got);
                prop_assert_eq!(&got, &want, "{} d=3", kernel.name());
            }
        }
    }

    #[test]
    fn the_last_column_is_reached_and_never_passed() {
        let x: Vec<Block> = (0..5).map(|c| Block::new(1 << c)).collect();
        for kernel in Simd::available() {
            let mut y = [Block::ZERO; 2];
            accumulate_with::<2>(kernel, &x, &[u32::MAX, 0, u32::MAX, u32::MAX], &mut y);
            assert_eq!(y, [Block::new(0b10001), Block::ZERO], "{}", kernel.name());
        }
    }

    #[test]
    #[should_panic(expected = "10 words per row")]
    fn a_short_index_stream_is_refused() {
        accumulate_with::<10>(Simd::Portable, &[Block::ZERO], &[0; 9], &mut [Block::ZERO]);
    }
}
