//! Constant-time writes at a secret position: [`write_at`] sets one block of a slice and masks
//! the others, reading and writing every block the same way, so that neither the addresses
//! touched nor the branches taken depend on the position (a punctured GGM tree's path in
//! Ferret and SoftSpoken, Roy CRYPTO 2022 §4 and Yang et al. CCS 2020 §4). The vector kernels
//! compare a register of block indices with the position and blend; the portable one builds
//! the mask by arithmetic on the index (no comparison for the compiler to branch on).

use crate::Block;
use crate::simd::Simd;

/// Sets `nodes[at]` to `value` and every other block to itself ANDed with `keep`, with the
/// [`Simd::active`] kernel; a position past the end changes only the masking.
pub fn write_at(nodes: &mut [Block], at: u64, value: Block, keep: Block) {
    write_at_with(Simd::active(), nodes, at, value, keep);
}

/// [`write_at`] with a given kernel, the portable one where this CPU lacks it.
pub fn write_at_with(simd: Simd, nodes: &mut [Block], at: u64, value: Block, keep: Block) {
    let at = core::hint::black_box(at);
    match simd.usable() {
        Simd::Portable => write_at_portable(nodes, at, value, keep),
        // SAFETY: `usable` checked the features.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { x86::write_at_avx2(nodes, at, value, keep) },
        // SAFETY: as above.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { x86::write_at_avx512(nodes, at, value, keep) },
        #[cfg(not(target_arch = "x86_64"))]
        _ => write_at_portable(nodes, at, value, keep),
    }
}

/// [`write_at`] one block at a time: the mask is all ones iff q ⊕ at = 0, from the top bit of
/// (x | −x).
fn write_at_portable(nodes: &mut [Block], at: u64, value: Block, keep: Block) {
    for (q, node) in nodes.iter_mut().enumerate() {
        let x = q as u64 ^ at;
        let m = ((x | x.wrapping_neg()) >> 63).wrapping_sub(1);
        let m = Block::from_halves(m, m);
        *node = (*node & keep & !m) ^ (value & m);
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! # Safety
    //! Each kernel runs only where `Simd::usable` found its features; its loads and stores
    //! stay inside `nodes`.

    use super::write_at_portable;
    use crate::Block;
    use core::arch::x86_64::*;

    /// [`super::write_at`] four blocks per register.
    ///
    /// # Safety
    /// AVX-512F is present.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn write_at_avx512(nodes: &mut [Block], at: u64, value: Block, keep: Block) {
        let whole = nodes.len() / 4;
        // SAFETY: AVX-512F is the caller's contract; registers i cover blocks 4i..4i + 4 of
        // the `whole` full ones.
        unsafe {
            let p = nodes.as_mut_ptr().cast::<__m512i>();
            let target = _mm512_set1_epi64(at as i64);
            let value = _mm512_broadcast_i32x4(_mm_loadu_si128((&raw const value).cast()));
            let keep = _mm512_broadcast_i32x4(_mm_loadu_si128((&raw const keep).cast()));
            let step = _mm512_set1_epi64(4);
            let mut index = _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0);
            for i in 0..whole {
                let x = _mm512_and_si512(_mm512_loadu_si512(p.add(i).cast()), keep);
                let hit = _mm512_cmpeq_epi64_mask(index, target);
                _mm512_storeu_si512(p.add(i).cast(), _mm512_mask_mov_epi64(x, hit, value));
                index = _mm512_add_epi64(index, step);
            }
        }
        let done = 4 * whole;
        write_at_portable(
            &mut nodes[done..],
            at.wrapping_sub(done as u64),
            value,
            keep,
        );
    }

    /// [`super::write_at`] two blocks per register.
    ///
    /// # Safety
    /// AVX2 is present.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn write_at_avx2(nodes: &mut [Block], at: u64, value: Block, keep: Block) {
        let whole = nodes.len() / 2;
        // SAFETY: AVX2 is the caller's contract; registers i cover blocks 2i..2i + 2 of the
        // `whole` full ones.
        unsafe {
            let p = nodes.as_mut_ptr().cast::<__m256i>();
            let target = _mm256_set1_epi64x(at as i64);
            let value = _mm256_broadcastsi128_si256(_mm_loadu_si128((&raw const value).cast()));
            let keep = _mm256_broadcastsi128_si256(_mm_loadu_si128((&raw const keep).cast()));
            let step = _mm256_set1_epi64x(2);
            let mut index = _mm256_set_epi64x(1, 1, 0, 0);
            for i in 0..whole {
                let x = _mm256_and_si256(_mm256_loadu_si256(p.add(i)), keep);
                let hit = _mm256_cmpeq_epi64(index, target);
                _mm256_storeu_si256(p.add(i), _mm256_blendv_epi8(x, value, hit));
                index = _mm256_add_epi64(index, step);
            }
        }
        let done = 2 * whole;
        write_at_portable(
            &mut nodes[done..],
            at.wrapping_sub(done as u64),
            value,
            keep,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn every_kernel_writes_one_block_and_masks_the_rest(
            len in 0usize..70,
            at in 0u64..80,
            value in any::<u128>(),
            keep in any::<u128>(),
            seed in any::<u64>(),
        ) {
            let mut prg = crate::Prg::with_backend(Block::new(seed.into()), crate::Backend::Portable).unwrap();
            let nodes = prg.random_blocks(len);
            let (value, keep) = (Block::new(value), Block::new(keep));
            let want: Vec<Block> = nodes
                .iter()
                .enumerate()
                .map(|(q, &n)| if q as u64 == at { value } else { n & keep })
                .collect();
            for simd in Simd::available() {
                let mut got = nodes.clone();
                write_at_with(simd, &mut got, at, value, keep);
                prop_assert_eq!(&got, &want, "{} at {} of {}", simd.name(), at, len);
            }
        }
    }
}
