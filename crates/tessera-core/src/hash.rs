//! Hashes built from a fixed-key permutation π (AES-128 under a public key), batched over
//! slices. One AES call per hash, except TCCR's two.
//!
//! | hash | definition | source |
//! |---|---|---|
//! | [`FixedKeyHash::tweakable`] | H(x, i) = π(2x ⊕ i) ⊕ 2x | Bellare, Hoang, Keelveedhi, Rogaway (S&P 2013); the "PRP" half-gates hash of VASA §4.3.1, JustGarble and ABY |
//! | [`FixedKeyHash::cr`] | H(x) = π(x) ⊕ x (MMO) | Matyas-Meyer-Oseas; Guo, Katz, Wang, Yu (S&P 2020) |
//! | [`FixedKeyHash::ccr`] | H(x) = π(σ(x)) ⊕ σ(x), σ(xL ‖ xR) = (xL ⊕ xR ‖ xL) | Guo, Katz, Wang, Yu (S&P 2020) §7 |
//! | [`FixedKeyHash::tccr`] | H(x, i) = π(π(x) ⊕ i) ⊕ π(x) | Guo, Katz, Wang, Yu (S&P 2020) §7: tweakable circular correlation robust |
//!
//! 2x is doubling in GF(2^128) ([`Block::gf_double`]).

use crate::aes::{Aes, Backend, FixedKeyAes};
use crate::{Block, Error};

/// The public key of the default fixed-key permutation: the first 32 hex digits of π's
/// fractional part (a nothing-up-my-sleeve number).
pub const DEFAULT_FIXED_KEY: Block = Block::new(0x243f_6a88_85a3_08d3_1319_8a2e_0370_7344);

/// Batched hashes over π = AES-128 under a fixed public key.
#[derive(Clone, Debug)]
pub struct FixedKeyHash {
    aes: FixedKeyAes,
}

impl Default for FixedKeyHash {
    fn default() -> Self {
        FixedKeyHash::new(DEFAULT_FIXED_KEY)
    }
}

impl FixedKeyHash {
    /// π under `key` on [`Backend::active`].
    pub fn new(key: Block) -> Self {
        FixedKeyHash {
            aes: FixedKeyAes::new(key),
        }
    }

    /// π under `key` on a given backend.
    pub fn with_backend(key: Block, backend: Backend) -> Result<Self, Error> {
        Ok(FixedKeyHash {
            aes: FixedKeyAes::with_aes(Aes::with_backend(backend)?, key),
        })
    }

    /// The permutation π.
    pub fn permutation(&self) -> &FixedKeyAes {
        &self.aes
    }

    /// `out[k] = π(2 x[k] ⊕ tweaks[k]) ⊕ 2 x[k]`.
    ///
    /// # Panics
    /// If the three slices differ in length.
    pub fn tweakable(&self, x: &[Block], tweaks: &[Block], out: &mut [Block]) {
        assert!(
            x.len() == tweaks.len() && x.len() == out.len(),
            "tweakable hash: lengths differ"
        );
        (self.aes.kernels().prp)(self.aes.round_keys(), x, tweaks, out);
    }

    /// `out[k] = π(x[k]) ⊕ x[k]`.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn cr(&self, x: &[Block], out: &mut [Block]) {
        assert_eq!(x.len(), out.len(), "cr hash: lengths differ");
        (self.aes.kernels().cr)(self.aes.round_keys(), x, &[], out);
    }

    /// `out[k] = π(σ(x[k])) ⊕ σ(x[k])`.
    ///
    /// # Panics
    /// If the slices differ in length.
    pub fn ccr(&self, x: &[Block], out: &mut [Block]) {
        assert_eq!(x.len(), out.len(), "ccr hash: lengths differ");
        (self.aes.kernels().ccr)(self.aes.round_keys(), x, &[], out);
    }

    /// `out[k] = π(π(x[k]) ⊕ tweaks[k]) ⊕ π(x[k])`.
    ///
    /// # Panics
    /// If the three slices differ in length.
    pub fn tccr(&self, x: &[Block], tweaks: &[Block], out: &mut [Block]) {
        assert!(
            x.len() == tweaks.len() && x.len() == out.len(),
            "tccr hash: lengths differ"
        );
        (self.aes.kernels().tccr)(self.aes.round_keys(), x, tweaks, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One-block reference definitions, on the portable backend's single-block call.
    fn pi(h: &FixedKeyHash, x: Block) -> Block {
        h.permutation().encrypt_block(x)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        #[test]
        fn every_hash_matches_its_definition_on_every_backend(
            key in any::<u128>(),
            xs in proptest::collection::vec(any::<u128>(), 0..70),
            seed in any::<u128>(),
        ) {
            let x: Vec<Block> = xs.iter().map(|&v| Block::new(v)).collect();
            let t: Vec<Block> = (0..x.len() as u128).map(|i| Block::new(seed.wrapping_add(i))).collect();
            let reference = FixedKeyHash::with_backend(Block::new(key), Backend::Portable).unwrap();
            for backend in Backend::available() {
                let h = FixedKeyHash::with_backend(Block::new(key), backend).unwrap();
                let mut out = vec![Block::ZERO; x.len()];
                h.tweakable(&x, &t, &mut out);
                for k in 0..x.len() {
                    let kk = x[k].gf_double() ^ t[k];
                    prop_assert_eq!(out[k], pi(&reference, kk) ^ kk, "prp {} k={}", backend, k);
                }
                h.cr(&x, &mut out);
                for k in 0..x.len() {
                    prop_assert_eq!(out[k], pi(&reference, x[k]) ^ x[k], "cr {}", backend);
                }
                h.ccr(&x, &mut out);
                for k in 0..x.len() {
                    let s = x[k].sigma();
                    prop_assert_eq!(out[k], pi(&reference, s) ^ s, "ccr {}", backend);
                }
                h.tccr(&x, &t, &mut out);
                for k in 0..x.len() {
                    let y = pi(&reference, x[k]);
                    prop_assert_eq!(out[k], pi(&reference, y ^ t[k]) ^ y, "tccr {}", backend);
                }
            }
        }
    }
}
