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
/// and 2g + 1.
#[derive(Clone, Debug)]
pub struct HalfGates {
    hash: FixedKeyHash,
    x: Vec<Block>,
    tweaks: Vec<Block>,
    h: Vec<Block>,
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
            x: Vec::new(),
            tweaks: Vec::new(),
            h: Vec::new(),
        }
    }

    fn scratch(&mut self, n: usize) {
        if self.x.len() < n {
            self.x.resize(n, Block::ZERO);
            self.tweaks.resize(n, Block::ZERO);
            self.h.resize(n, Block::ZERO);
        }
    }
}

/// The two tweaks of gate `id`.
#[inline(always)]
fn tweaks(id: u32) -> (Block, Block) {
    let j = 2 * u128::from(id);
    (Block::new(j), Block::new(j + 1))
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
        let n = a0.len();
        assert!(b0.len() == n && ids.len() == n && out0.len() == n && table.len() == 2 * n);
        self.scratch(4 * n);
        let d = delta.block();
        let (x, t) = (&mut self.x[..4 * n], &mut self.tweaks[..4 * n]);
        for k in 0..n {
            let (j0, j1) = tweaks(ids[k]);
            x[4 * k..4 * k + 4].copy_from_slice(&[a0[k], a0[k] ^ d, b0[k], b0[k] ^ d]);
            t[4 * k..4 * k + 4].copy_from_slice(&[j0, j0, j1, j1]);
        }
        let h = &mut self.h[..4 * n];
        self.hash.tweakable(x, t, h);
        for k in 0..n {
            let (ha0, ha1, hb0, hb1) = (h[4 * k], h[4 * k + 1], h[4 * k + 2], h[4 * k + 3]);
            let (pa, pb) = (Block::mask(a0[k].lsb()), Block::mask(b0[k].lsb()));
            // Garbler's half: a ∧ pb, with pa selecting the row.
            let tg = ha0 ^ ha1 ^ (pb & d);
            let wg = ha0 ^ (pa & tg);
            // Evaluator's half: a ∧ (b ⊕ pb), the evaluator knowing b ⊕ pb.
            let te = hb0 ^ hb1 ^ a0[k];
            let we = hb0 ^ (pb & (te ^ a0[k]));
            out0[k] = wg ^ we;
            table[2 * k] = tg;
            table[2 * k + 1] = te;
        }
    }

    fn eval_and(
        &mut self,
        a: &[Block],
        b: &[Block],
        ids: &[u32],
        table: &[Block],
        out: &mut [Block],
    ) {
        let n = a.len();
        assert!(b.len() == n && ids.len() == n && out.len() == n && table.len() == 2 * n);
        self.scratch(2 * n);
        let (x, t) = (&mut self.x[..2 * n], &mut self.tweaks[..2 * n]);
        for k in 0..n {
            let (j0, j1) = tweaks(ids[k]);
            x[2 * k] = a[k];
            x[2 * k + 1] = b[k];
            t[2 * k] = j0;
            t[2 * k + 1] = j1;
        }
        let h = &mut self.h[..2 * n];
        self.hash.tweakable(x, t, h);
        for k in 0..n {
            let (sa, sb) = (Block::mask(a[k].lsb()), Block::mask(b[k].lsb()));
            let wg = h[2 * k] ^ (sa & table[2 * k]);
            let we = h[2 * k + 1] ^ (sb & (table[2 * k + 1] ^ a[k]));
            out[k] = wg ^ we;
        }
    }
}
