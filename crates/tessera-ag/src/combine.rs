//! Comparing long vectors of MACs (or labels) by one random linear combination over GF(2^128):
//! Σ χ_j·v_j, the weights χ_j drawn from a PRG seeded by the SHA-256 of the public context that
//! fixes the vectors (the opened bits, the masked values), Fiat-Shamir style. Where the
//! vectors a cheater would have to match differ from the honest ones by multiples of a Δ it
//! does not know, Σ_{j ∈ S} χ_j·Δ must vanish for the difference S it chose; the weights follow
//! from its own message through the hash, so each try succeeds with probability 2^-128. This
//! costs one PRG block and one carry-less multiplication per value, where SHA-256 over the
//! values costs a compression per four.

use tessera_core::{Block, Prg, gf128};

/// Values combined at a time.
const CHUNK: usize = 1024;

/// A random linear combination being summed; see the module documentation.
pub struct Combination {
    prg: Prg,
    weights: Vec<Block>,
    values: Vec<Block>,
    sum: Block,
}

impl std::fmt::Debug for Combination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Combination").finish_non_exhaustive()
    }
}

impl Combination {
    /// A combination whose weights follow from `tag` (what is compared) and `context`.
    pub fn new(tag: &[u8], context: &[&[u8]]) -> Self {
        let seed = tessera_core::digest::tagged(tag, context);
        let seed = Block::from_bytes(seed[..16].try_into().unwrap_or_default());
        Combination {
            prg: Prg::from_seed_block(seed),
            weights: vec![Block::ZERO; CHUNK],
            values: Vec::with_capacity(CHUNK),
            sum: Block::ZERO,
        }
    }

    /// Adds the next value.
    pub fn push(&mut self, v: Block) {
        self.values.push(v);
        if self.values.len() == CHUNK {
            self.fold();
        }
    }

    /// Adds the next values, whole chunks straight from `vs`.
    pub fn extend(&mut self, vs: &[Block]) {
        let mut rest = vs;
        while !self.values.is_empty() && !rest.is_empty() {
            self.push(rest[0]);
            rest = &rest[1..];
        }
        let mut chunks = rest.chunks_exact(CHUNK);
        for chunk in &mut chunks {
            self.prg.fill_blocks(&mut self.weights);
            self.sum ^= gf128::inner_product(&self.weights, chunk);
        }
        for &v in chunks.remainder() {
            self.push(v);
        }
    }

    /// Sums the values held.
    fn fold(&mut self) {
        let n = self.values.len();
        self.prg.fill_blocks(&mut self.weights[..n]);
        self.sum ^= gf128::inner_product(&self.weights[..n], &self.values);
        self.values.clear();
    }

    /// The combination.
    pub fn finish(mut self) -> Block {
        self.fold();
        self.sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_combination_is_linear_and_follows_its_context() {
        let mut prg = Prg::from_seed_block(Block::new(3));
        let a = prg.random_blocks(3000);
        let b = prg.random_blocks(3000);
        let sum: Vec<Block> = a.iter().zip(&b).map(|(x, y)| *x ^ *y).collect();
        let comb = |v: &[Block], ctx: &[u8]| {
            let mut c = Combination::new(b"test", &[ctx]);
            c.extend(v);
            c.finish()
        };
        assert_eq!(comb(&a, b"x") ^ comb(&b, b"x"), comb(&sum, b"x"));
        assert_ne!(comb(&a, b"x"), comb(&a, b"y"));
        // One value changed by D changes the combination by its weight times D.
        let mut c = a.clone();
        c[1234] ^= Block::new(1);
        assert_ne!(comb(&a, b"x"), comb(&c, b"x"));
    }
}
