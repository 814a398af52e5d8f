//! Garbling schemes: how a batch of independent AND gates is garbled and evaluated. The engine
//! gathers the gates' input labels, hands the batch to the scheme and scatters its output
//! labels; everything scheme-specific (hashes, tables) stays behind this trait.

use crate::encoding::Delta;
use tessera_core::{Block, FixedKeyHash};

/// A free-XOR garbling scheme for AND gates.
pub trait Scheme {
    /// Name as on the command line.
    const NAME: &'static str;
    /// Table blocks per AND gate.
    const TABLE_BLOCKS: usize;

    /// Garbles the gates k = 0..n (n = `a0.len()`): `a0[k]`, `b0[k]` are the input
    /// zero-labels, `ids[k]` the gate's unique index. Writes the output zero-labels to `out0`
    /// and `n · TABLE_BLOCKS` table blocks to `table`.
    fn garble_and(
        &mut self,
        delta: Delta,
        a0: &[Block],
        b0: &[Block],
        ids: &[u32],
        out0: &mut [Block],
        table: &mut [Block],
    );

    /// Evaluates the gates k = 0..n from the active input labels and the tables the garbler
    /// wrote for the same gates; writes the active output labels to `out`.
    fn eval_and(
        &mut self,
        a: &[Block],
        b: &[Block],
        ids: &[u32],
        table: &[Block],
        out: &mut [Block],
    );
}

/// Half-gates (Zahur, Rosulek, Evans, "Two halves make a whole", EUROCRYPT 2015, Fig. 2) with
/// the fixed-key tweakable hash H(x, i) = π(2x ⊕ i) ⊕ 2x (VASA §4.3.1 "PRP"): 4 AES calls per
/// AND gate to garble, 2 to evaluate, 2 table blocks, no key schedule. Gate g uses tweaks 2g
/// and 2g + 1. The batch runs in the core's fused register-oriented kernels
/// ([`FixedKeyHash::half_gates_garble`], [`FixedKeyHash::half_gates_eval`]).
#[derive(Clone, Debug)]
pub struct HalfGates {
    hash: FixedKeyHash,
    tweaks: Vec<Block>,
}

impl Default for HalfGates {
    fn default() -> Self {
        HalfGates::new(FixedKeyHash::default())
    }
}

impl HalfGates {
    /// Half-gates over `hash`'s permutation (and so its AES backend).
    pub fn new(hash: FixedKeyHash) -> Self {
        HalfGates {
            hash,
            tweaks: Vec::new(),
        }
    }

    /// The hash and the first tweak (2g) of every gate.
    fn prepare(&mut self, ids: &[u32]) -> (&FixedKeyHash, &[Block]) {
        self.tweaks.clear();
        self.tweaks
            .extend(ids.iter().map(|&id| Block::new(2 * u128::from(id))));
        (&self.hash, &self.tweaks)
    }
}

impl Scheme for HalfGates {
    const NAME: &'static str = "prp";
    const TABLE_BLOCKS: usize = 2;

    fn garble_and(
        &mut self,
        delta: Delta,
        a0: &[Block],
        b0: &[Block],
        ids: &[u32],
        out0: &mut [Block],
        table: &mut [Block],
    ) {
        let (hash, tweaks) = self.prepare(ids);
        hash.half_gates_garble(delta.block(), a0, b0, tweaks, out0, table);
    }

    fn eval_and(
        &mut self,
        a: &[Block],
        b: &[Block],
        ids: &[u32],
        table: &[Block],
        out: &mut [Block],
    ) {
        let (hash, tweaks) = self.prepare(ids);
        hash.half_gates_eval(a, b, tweaks, table, out);
    }
}
