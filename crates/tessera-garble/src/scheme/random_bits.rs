//! The garbler's private random bits (permutation bits, dicing coins), drawn from its PRG 128
//! at a time in garbling order, so a seed reproduces a garbling on every backend.

use tessera_core::{Block, Prg};

/// A stream of random bits over a [`Prg`].
#[derive(Clone, Debug)]
pub(crate) struct RandomBits {
    prg: Prg,
    bits: u128,
    left: u32,
}

impl RandomBits {
    /// Bits drawn from `prg`.
    pub(crate) fn new(prg: Prg) -> Self {
        RandomBits {
            prg,
            bits: 0,
            left: 0,
        }
    }

    /// The next `n` bits (1 ≤ n ≤ 64), least significant first. A block that has fewer than
    /// `n` bits left is replaced by a fresh one.
    pub(crate) fn take(&mut self, n: u32) -> u64 {
        debug_assert!((1..=64).contains(&n));
        if self.left < n {
            self.bits = self.prg.random_block().as_u128();
            self.left = 128;
        }
        let v = self.bits as u64 & (u64::MAX >> (64 - n));
        self.bits >>= n;
        self.left -= n;
        v
    }

    /// One random bit.
    pub(crate) fn bit(&mut self) -> bool {
        self.take(1) == 1
    }

    /// A fresh random block from the same PRG.
    pub(crate) fn block(&mut self) -> Block {
        self.prg.random_block()
    }
}
