//! The garbler's private per-gate randomness (permutation bits, dicing coins) as a PRF of the
//! gate index: coins(g) = AES_k(domain ‖ g) for a secret random key k. A gate's coins then depend on
//! its index only, not on the order or the thread that garbles it, so fine-grained parallel
//! garbling (UltraSFE §4) produces the same tables on any thread count, and a seed reproduces
//! a garbling on every backend.

use tessera_core::{Block, FixedKeyAes, Prg};

/// A PRF from gate indices to 128 random bits, keyed by the garbler's secret.
#[derive(Clone, Debug)]
pub(crate) struct GateCoins {
    prf: FixedKeyAes,
}

impl GateCoins {
    /// Coins under a key drawn from `prg`.
    pub(crate) fn new(prg: &mut Prg) -> Self {
        GateCoins {
            prf: FixedKeyAes::new(prg.random_block()),
        }
    }

    /// The coins of gates `ids` of `domain` (below 2^63), one block each, in one batched AES
    /// call.
    pub(crate) fn fill(&self, domain: u64, ids: &[u32], out: &mut Vec<Block>) {
        out.clear();
        out.extend(
            ids.iter()
                .map(|&id| Block::from_halves(domain, u64::from(id))),
        );
        self.prf.encrypt_blocks(out);
    }

    /// A random block outside the gate indices' inputs (the high half is nonzero).
    pub(crate) fn block(&self, label: u64) -> Block {
        self.prf
            .encrypt_block(Block::from_halves(label | 1 << 63, 0))
    }
}
