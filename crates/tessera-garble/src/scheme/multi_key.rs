//! Scratch for the many-key AES call of the PRF-based scheme: a scheme writes one
//! key and `m` blocks per key for a batch of gates, the core's register-oriented kernel expands
//! the keys and encrypts in one pass (round key r + 1 computed while round r is in flight), and
//! the scheme combines the results.

use tessera_core::{Aes, Block};

/// Keys and blocks for one [`Aes::encrypt_multi_key`] call, reused across batches.
#[derive(Clone, Debug)]
pub(crate) struct MultiKeyBatch {
    aes: Aes,
    keys: Vec<Block>,
    blocks: Vec<Block>,
    /// Blocks encrypted so far (the AES work, which must not depend on secrets).
    encrypted: u64,
}

impl MultiKeyBatch {
    /// Batches on `aes`'s backend.
    pub(crate) fn new(aes: Aes) -> Self {
        MultiKeyBatch {
            aes,
            keys: Vec::new(),
            blocks: Vec::new(),
            encrypted: 0,
        }
    }

    /// One batch for `gates`: `fill(gate, keys, blocks)` writes each gate's `keys_per_gate`
    /// keys and their `per_key` blocks each; then block i is encrypted under key i / per_key.
    /// Returns the encrypted blocks, gate after gate.
    pub(crate) fn run<G>(
        &mut self,
        gates: impl ExactSizeIterator<Item = G>,
        keys_per_gate: usize,
        per_key: usize,
        mut fill: impl FnMut(G, &mut [Block], &mut [Block]),
    ) -> &mut [Block] {
        let keys = gates.len() * keys_per_gate;
        self.keys.resize(keys, Block::ZERO);
        self.blocks.resize(keys * per_key, Block::ZERO);
        let io = self
            .keys
            .chunks_exact_mut(keys_per_gate)
            .zip(self.blocks.chunks_exact_mut(keys_per_gate * per_key));
        for ((k, b), g) in io.zip(gates) {
            fill(g, k, b);
        }
        self.aes.encrypt_multi_key(&self.keys, &mut self.blocks);
        self.encrypted += self.blocks.len() as u64;
        &mut self.blocks
    }

    /// Blocks encrypted so far.
    #[cfg(test)]
    pub(crate) fn encrypted(&self) -> u64 {
        self.encrypted
    }
}

/// A gate's index and a small counter (`slot` < 4) as one AES input block: the index in the
/// low 64 bits, the batch's `domain` (below 2^62) and `slot` in the high 64 (distinct inputs
/// for the same key within a gate and across domains).
#[inline(always)]
pub(crate) fn tweak(domain: u64, id: u32, slot: u64) -> Block {
    Block::from_halves(domain << 2 | slot, u64::from(id))
}
