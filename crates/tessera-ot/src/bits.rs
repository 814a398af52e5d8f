//! Bit helpers shared by the protocols: masks of secret bits built behind `subtle`'s barrier
//! (a plain `0 − bit` lets the compiler branch on the bit, as it did in Gilboa's receiver),
//! and the low bits of blocks packed together.

use subtle::{Choice, ConditionallySelectable};
use tessera_core::Block;

/// All ones if the secret `bit` is set, zero otherwise, without a branch on it.
pub(crate) fn bit_mask(bit: bool) -> Block {
    select_mask(Choice::from(u8::from(bit)))
}

fn select_mask(choice: Choice) -> Block {
    let m = u64::conditional_select(&0, &u64::MAX, choice);
    Block::from_halves(m, m)
}

/// At most 128 bools, bool j as bit j, eight at a time by one multiplication: for a word whose
/// bytes are 0 or 1, multiplying by Σ_k 2^(7·k + 7) moves byte k's bit to bit 56 + k with no
/// carries, so bits 56..64 are the eight bools. No branch on them.
pub(crate) fn pack_bools(bools: &[bool]) -> u128 {
    debug_assert!(bools.len() <= 128, "{} bools", bools.len());
    const GATHER: u64 = 0x0102_0408_1020_4080;
    let mut packed = 0u128;
    let mut eights = bools.chunks_exact(8);
    for (k, eight) in eights.by_ref().enumerate() {
        let word = u64::from_le_bytes(core::array::from_fn(|i| u8::from(eight[i])));
        packed |= u128::from(word.wrapping_mul(GATHER) >> 56) << (8 * k);
    }
    let done = bools.len() - eights.remainder().len();
    for (k, &b) in eights.remainder().iter().enumerate() {
        packed |= u128::from(b) << (done + k);
    }
    packed
}

/// The least significant bits of at most 128 blocks, block j's as bit j.
pub(crate) fn low_bits(blocks: &[Block]) -> u128 {
    debug_assert!(blocks.len() <= 128, "{} blocks", blocks.len());
    let mut halves = [0u64; 2];
    for (half, blocks) in halves.iter_mut().zip(blocks.chunks(64)) {
        for (k, b) in blocks.iter().enumerate() {
            *half |= (b.low() & 1) << k;
        }
    }
    u128::from(halves[0]) | u128::from(halves[1]) << 64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn pack_bools_puts_bool_j_at_bit_j(bools in proptest::collection::vec(any::<bool>(), 0..=128)) {
            let want = bools.iter().enumerate().fold(0u128, |acc, (j, &b)| acc | (u128::from(b) << j));
            prop_assert_eq!(pack_bools(&bools), want);
        }
    }
}
