//! Half-gates (Zahur, Rosulek, Evans, "Two halves make a whole", EUROCRYPT 2015, Fig. 2) with
//! the three hash instantiations of VASA §4.3.1: gate g hashes its first input with tweak
//! j = 2g and its second with j' = 2g + 1, and
//!
//! T_G = H(A0, j) ⊕ H(A1, j) ⊕ pb·Δ, T_E = H(B0, j') ⊕ H(B1, j') ⊕ A0,
//! out0 = H(A0, j) ⊕ pa·T_G ⊕ H(B0, j') ⊕ pb·(T_E ⊕ A0),
//!
//! with pa, pb the colours of A0, B0 and selection by masks, never a branch on a label bit
//! (VASA §5.2 measured such branches mispredicting). Four hashes per AND gate to garble, two to
//! evaluate, two table blocks; XOR gates are free.

use super::Scheme;
use super::multi_key::{MultiKeyBatch, tweak};
use crate::encoding::Delta;
use crate::plan::XorGates;
use tessera_core::{Aes, Backend, Block, FixedKeyHash, Prg};

/// How a half-gates scheme computes its hashes H(x, j) for a batch of AND gates.
pub trait HalfGatesHash {
    /// Name as on the command line.
    const NAME: &'static str;

    /// The hash on `backend`, with the session's public random block (see
    /// [`Scheme::with_backend`]).
    fn with_backend(backend: Backend, session: Block) -> Result<Self, tessera_core::Error>
    where
        Self: Sized;

    /// Garbles the AND gates k = 0..n: writes `out0[k]` and `table[2k]` = T_G,
    /// `table[2k + 1]` = T_E (see the module documentation).
    fn garble(
        &mut self,
        delta: Block,
        a0: &[Block],
        b0: &[Block],
        ids: &[u32],
        out0: &mut [Block],
        table: &mut [Block],
    );

    /// Evaluates the AND gates k = 0..n from the active labels and the tables.
    fn evaluate(
        &mut self,
        a: &[Block],
        b: &[Block],
        ids: &[u32],
        table: &[Block],
        out: &mut [Block],
    );
}

/// The half-gates scheme over hash `H`.
#[derive(Clone, Debug)]
pub struct HalfGates<H> {
    hash: H,
}

impl<H> HalfGates<H> {
    /// Half-gates over `hash`.
    pub fn with_hash(hash: H) -> Self {
        HalfGates { hash }
    }
}

/// Half-gates with the fixed-key tweakable hash ("PRP").
pub type Prp = HalfGates<PrpHash>;
/// Half-gates with the multi-instance hash ("MI").
pub type Mi = HalfGates<MiHash>;
/// Half-gates with labels as AES keys ("CIRC").
pub type Circ = HalfGates<CircHash>;

impl<H: HalfGatesHash> Scheme for HalfGates<H> {
    const NAME: &'static str = H::NAME;
    const XOR_GATES: XorGates = XorGates::Free;
    type Wire = Block;
    type Secret = Delta;

    fn with_backend(backend: Backend, session: Block) -> Result<Self, tessera_core::Error> {
        Ok(HalfGates::with_hash(H::with_backend(backend, session)?))
    }

    fn random_secret(prg: &mut Prg) -> Delta {
        Delta::random(prg)
    }

    fn random_wire(_secret: &Delta, prg: &mut Prg) -> Block {
        prg.random_block()
    }

    fn encode(secret: &Delta, w: &Block, bit: bool) -> Block {
        secret.label(*w, bit)
    }

    fn decoding_bit(w: &Block) -> bool {
        w.lsb()
    }

    fn free_xor(a: Block, b: Block) -> Block {
        a ^ b
    }

    fn not(secret: &Delta, a: Block) -> Block {
        // Inverting swaps the meaning of the two labels.
        a ^ secret.block()
    }

    fn constant(secret: &mut Delta, value: bool) -> Block {
        // The evaluator holds the zero block for either constant: it is the 0-label of a
        // constant 0 and the 1-label of a constant 1.
        secret.label(Block::ZERO, value)
    }

    fn table_blocks(xor: bool, gates: usize) -> usize {
        if xor { 0 } else { 2 * gates }
    }

    fn garble(
        &mut self,
        xor: bool,
        secret: &mut Delta,
        a: &[Block],
        b: &[Block],
        ids: &[u32],
        out: &mut [Block],
        table: &mut [Block],
    ) {
        if xor {
            // Free-XOR plans never batch XOR gates; should one do, XOR is still correct.
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = x ^ y;
            }
        } else {
            self.hash.garble(secret.block(), a, b, ids, out, table);
        }
    }

    fn evaluate(
        &mut self,
        xor: bool,
        a: &[Block],
        b: &[Block],
        ids: &[u32],
        table: &[Block],
        out: &mut [Block],
    ) {
        if xor {
            for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
                *o = x ^ y;
            }
        } else {
            self.hash.evaluate(a, b, ids, table, out);
        }
    }
}

/// The half-gates combination on the garbler's side, from the four hashes of each gate in
/// `h` (H(A0, j), H(A1, j), H(B0, j'), H(B1, j')).
fn combine_garble(
    delta: Block,
    a0: &[Block],
    b0: &[Block],
    h: &[Block],
    out0: &mut [Block],
    table: &mut [Block],
) {
    let gates = a0.iter().zip(b0).zip(h.chunks_exact(4));
    for (((&a, &b), h), (o, t)) in gates.zip(out0.iter_mut().zip(table.chunks_exact_mut(2))) {
        let (pa, pb) = (Block::mask(a.lsb()), Block::mask(b.lsb()));
        let tg = h[0] ^ h[1] ^ (pb & delta);
        let te = h[2] ^ h[3] ^ a;
        *o = h[0] ^ (pa & tg) ^ h[2] ^ (pb & (te ^ a));
        t[0] = tg;
        t[1] = te;
    }
}

/// The half-gates combination on the evaluator's side, from the two hashes of each gate in `h`
/// (H(A, j), H(B, j')).
fn combine_eval(a: &[Block], b: &[Block], h: &[Block], table: &[Block], out: &mut [Block]) {
    let gates = a.iter().zip(b).zip(h.chunks_exact(2));
    for (((&a, &b), h), (o, t)) in gates.zip(out.iter_mut().zip(table.chunks_exact(2))) {
        let (sa, sb) = (Block::mask(a.lsb()), Block::mask(b.lsb()));
        *o = h[0] ^ (sa & t[0]) ^ h[1] ^ (sb & (t[1] ^ a));
    }
}

/// H(x, j) = π(2x ⊕ j) ⊕ 2x over a fixed-key permutation π (VASA §4.3.1 "PRP"; Bellare,
/// Hoang, Keelveedhi, Rogaway, S&P 2013): no key schedule; the batch runs in the core's fused
/// register-oriented kernels ([`FixedKeyHash::half_gates_garble`]).
#[derive(Clone, Debug, Default)]
pub struct PrpHash {
    hash: FixedKeyHash,
    tweaks: Vec<Block>,
}

impl PrpHash {
    /// The hash over `hash`'s permutation (and so its AES backend).
    pub fn new(hash: FixedKeyHash) -> Self {
        PrpHash {
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

impl HalfGatesHash for PrpHash {
    const NAME: &'static str = "prp";

    fn with_backend(backend: Backend, _session: Block) -> Result<Self, tessera_core::Error> {
        Ok(PrpHash::new(FixedKeyHash::with_backend(
            tessera_core::hash::DEFAULT_FIXED_KEY,
            backend,
        )?))
    }

    fn garble(
        &mut self,
        delta: Block,
        a0: &[Block],
        b0: &[Block],
        ids: &[u32],
        out0: &mut [Block],
        table: &mut [Block],
    ) {
        let (hash, tweaks) = self.prepare(ids);
        hash.half_gates_garble(delta, a0, b0, tweaks, out0, table);
    }

    fn evaluate(
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

impl Prp {
    /// PRP half-gates over `hash`'s permutation.
    pub fn new(hash: FixedKeyHash) -> Self {
        HalfGates::with_hash(PrpHash::new(hash))
    }
}

impl Default for Prp {
    fn default() -> Self {
        Prp::new(FixedKeyHash::default())
    }
}

/// The multi-instance hash of Guo, Katz, Wang, Weng, Yu ("Better concrete security for
/// half-gates garbling (in the multi-instance setting)", CRYPTO 2020), as EMP-toolkit garbles
/// with it: H(x, j) = AES_{S ⊕ j}(σ(x)) ⊕ σ(x), the label as AES input and the tweak, offset by
/// a random public S per circuit, as AES key. Two key schedules per AND gate to garble (two
/// blocks each) and two to evaluate.
#[derive(Clone, Debug)]
pub struct MiHash {
    offset: Block,
    batch: MultiKeyBatch,
}

impl MiHash {
    /// The hash with key offset `offset` (both parties must use the same), on `aes`'s backend.
    pub fn new(aes: Aes, offset: Block) -> Self {
        MiHash {
            offset,
            batch: MultiKeyBatch::new(aes),
        }
    }

    /// Hashes the `N` inputs of every gate: the first `N / 2` with tweak 2g, the others with
    /// 2g + 1, as blocks of `out` (out = AES_{S ⊕ j}(σ(x)) ⊕ σ(x)).
    fn hash<const N: usize>(
        &mut self,
        ids: &[u32],
        inputs: impl ExactSizeIterator<Item = [Block; N]> + Clone,
    ) -> &[Block] {
        let offset = self.offset;
        let gates = ids.iter().zip(inputs.clone());
        let h = self.batch.run(gates, 2, N / 2, |(&id, x), k, blk| {
            let j = Block::new(2 * u128::from(id));
            k.copy_from_slice(&[offset ^ j, offset ^ j ^ Block::new(1)]);
            for (b, x) in blk.iter_mut().zip(x) {
                *b = x.sigma();
            }
        });
        for (h, x) in h.iter_mut().zip(inputs.flatten()) {
            *h ^= x.sigma();
        }
        h
    }
}

impl HalfGatesHash for MiHash {
    const NAME: &'static str = "mi";

    fn with_backend(backend: Backend, session: Block) -> Result<Self, tessera_core::Error> {
        Ok(MiHash::new(Aes::with_backend(backend)?, session))
    }

    fn garble(
        &mut self,
        delta: Block,
        a0: &[Block],
        b0: &[Block],
        ids: &[u32],
        out0: &mut [Block],
        table: &mut [Block],
    ) {
        let inputs = a0
            .iter()
            .zip(b0)
            .map(|(&a, &b)| [a, a ^ delta, b, b ^ delta]);
        let h = self.hash(ids, inputs);
        combine_garble(delta, a0, b0, h, out0, table);
    }

    fn evaluate(
        &mut self,
        a: &[Block],
        b: &[Block],
        ids: &[u32],
        table: &[Block],
        out: &mut [Block],
    ) {
        let h = self.hash(ids, a.iter().zip(b).map(|(&a, &b)| [a, b]));
        combine_eval(a, b, h, table, out);
    }
}

impl Mi {
    /// MI half-gates with key offset `offset` on `aes`'s backend.
    pub fn new(aes: Aes, offset: Block) -> Self {
        HalfGates::with_hash(MiHash::new(aes, offset))
    }
}

/// H(x, j) = AES_x(j): the label is the AES key and the tweak (gate index g in the low 64 bits,
/// 0 for the first input's half gate and 1 for the second's in the high 64) the plaintext, which needs AES to
/// be secure under keys that encrypt functions of themselves (the circular-security assumption
/// of VASA §4.3.1 "CIRC"). Four key schedules per AND gate to garble, two to evaluate, one block
/// each.
#[derive(Clone, Debug)]
pub struct CircHash {
    batch: MultiKeyBatch,
}

impl CircHash {
    /// The hash on `aes`'s backend.
    pub fn new(aes: Aes) -> Self {
        CircHash {
            batch: MultiKeyBatch::new(aes),
        }
    }
}

impl HalfGatesHash for CircHash {
    const NAME: &'static str = "circ";

    fn with_backend(backend: Backend, _session: Block) -> Result<Self, tessera_core::Error> {
        Ok(CircHash::new(Aes::with_backend(backend)?))
    }

    fn garble(
        &mut self,
        delta: Block,
        a0: &[Block],
        b0: &[Block],
        ids: &[u32],
        out0: &mut [Block],
        table: &mut [Block],
    ) {
        let gates = a0.iter().zip(b0).zip(ids);
        let h = self.batch.run(gates, 4, 1, |((&a, &b), &id), k, blk| {
            k.copy_from_slice(&[a, a ^ delta, b, b ^ delta]);
            let (j, j1) = (tweak(id, 0), tweak(id, 1));
            blk.copy_from_slice(&[j, j, j1, j1]);
        });
        combine_garble(delta, a0, b0, h, out0, table);
    }

    fn evaluate(
        &mut self,
        a: &[Block],
        b: &[Block],
        ids: &[u32],
        table: &[Block],
        out: &mut [Block],
    ) {
        let gates = a.iter().zip(b).zip(ids);
        let h = self.batch.run(gates, 2, 1, |((&a, &b), &id), k, blk| {
            k.copy_from_slice(&[a, b]);
            blk.copy_from_slice(&[tweak(id, 0), tweak(id, 1)]);
        });
        combine_eval(a, b, h, table, out);
    }
}

impl Circ {
    /// CIRC half-gates on `aes`'s backend.
    pub fn new(aes: Aes) -> Self {
        HalfGates::with_hash(CircHash::new(aes))
    }
}
