//! Ferret's LPN encoding (Yang, Weng, Lan, Zhang, Wang, CCS 2020, §3 and §6.1): y ← y ⊕ A·x for
//! a public n × k matrix A over GF(2) with [`D`] ones per row (a local linear code), applied to
//! vectors of blocks (128 GF(2) instances side by side).
//!
//! Row i's [`D`] column indices are the 32-bit words 10i..10i+9 of the AES-CTR stream under
//! [`LPN_KEY`] (the core's [`Prg`] seeded with it: word w is lane w mod 4, least significant
//! first, of block ⌊w/4⌋ = AES(⌊w/4⌋)),
//! each mapped to [0, k) by Lemire's multiply-shift ⌊w·k / 2^32⌋ (no division; the bias is at
//! most k/2^32 per index). An index drawn twice in a row cancels, as in the matrix product over
//! GF(2). The rows are a function of i alone, so any range of rows can be encoded on its own.
//! The product itself is the core's [`sparse::accumulate`].

use tessera_core::hazmat::sparse;
use tessera_core::{Block, Prg};

/// Ones per row of the matrix (Ferret's d).
pub const D: usize = 10;

/// The key of the index stream: the 32 hex digits of π after SoftSpoken's stream key, itself
/// after the GGM tree key (public, nothing up the sleeve, and a permutation of its own; the
/// LPN assumption is over a random public matrix).
pub const LPN_KEY: Block = Block::new(0xc0ac_29b7_c97c_50dd_3f84_d5b5_b547_0917);

/// Rows whose indices are generated per batch.
const ROWS: usize = 1 << 10;

/// The encoder for a secret of length k, with its index scratch.
pub struct Lpn {
    k: u64,
    indices: Prg,
    stream: Vec<Block>,
}

impl std::fmt::Debug for Lpn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lpn")
            .field("k", &self.k)
            .finish_non_exhaustive()
    }
}

impl Lpn {
    /// The encoder for secrets of `k` blocks, 1 ≤ k < 2^32.
    ///
    /// # Panics
    /// If `k` is out of range.
    pub fn new(k: usize) -> Self {
        assert!(k > 0 && k < 1 << 32, "LPN secret length {k} out of range");
        Lpn {
            k: k as u64,
            indices: Prg::from_seed_block(LPN_KEY),
            stream: vec![Block::ZERO; (ROWS * D).div_ceil(4) + 2],
        }
    }

    /// The index words of rows `first..first + rows` (rows ≤ `ROWS`), in `self.stream`: returns
    /// the offset of row `first`'s first word.
    fn words(&mut self, first: u64, rows: usize) -> (usize, &[u32]) {
        let (start, end) = (first * D as u64, (first + rows as u64) * D as u64);
        let (b0, b1) = (start / 4, end.div_ceil(4));
        let blocks = &mut self.stream[..(b1 - b0) as usize];
        self.indices.seek(b0.into());
        self.indices.fill_blocks(blocks);
        ((start - 4 * b0) as usize, bytemuck::cast_slice(blocks))
    }

    /// y ← y ⊕ A·x for rows `first..first + y.len()` of A: `y[i] ^= Σ_j x[index_j(first + i)]`.
    ///
    /// # Panics
    /// If `x` is not k blocks long.
    pub fn encode(&mut self, x: &[Block], first: u64, y: &mut [Block]) {
        assert_eq!(x.len() as u64, self.k, "LPN secret length");
        for (c, part) in y.chunks_mut(ROWS).enumerate() {
            let (at, words) = self.words(first + (c * ROWS) as u64, part.len());
            sparse::accumulate::<D>(x, &words[at..at + D * part.len()], part);
        }
    }
}
