//! Bit helpers shared by the protocols: masks of secret bits built behind `subtle`'s barrier
//! (a plain `0 − bit` lets the compiler branch on the bit, as it did in Gilboa's receiver),
//! and the low bits of blocks packed together.

use subtle::{Choice, ConditionallySelectable, ConstantTimeEq};
use tessera_core::Block;

/// All ones where `a == b` and zero elsewhere, without a branch on either.
pub(crate) fn eq_mask(a: u64, b: u64) -> Block {
    select_mask(a.ct_eq(&b))
}

/// All ones if the secret `bit` is set, zero otherwise, without a branch on it.
pub(crate) fn bit_mask(bit: bool) -> Block {
    select_mask(Choice::from(u8::from(bit)))
}

fn select_mask(choice: Choice) -> Block {
    let m = u64::conditional_select(&0, &u64::MAX, choice);
    Block::from_halves(m, m)
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
