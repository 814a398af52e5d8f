//! Half-gates (Zahur, Rosulek, Evans, "Two halves make a whole", EUROCRYPT 2015, Fig. 2) with
//! the three hash instantiations of VASA §4.3.1: gate g hashes its first input with tweak
//! j = 2g and its second with j' = 2g + 1, and
//!
//! T_G = H(A0, j) ⊕ H(A1, j) ⊕ pb·Δ, T_E = H(B0, j') ⊕ H(B1, j') ⊕ A0,
//! out0 = H(A0, j) ⊕ pa·T_G ⊕ H(B0, j') ⊕ pb·(T_E ⊕ A0),
//!
//! with pa, pb the colours of A0, B0 and selection by masks, never a branch on a label bit
//! (VASA §5.2 measured such branches mispredicting). Four hashes per AND gate to garble, two to
//! evaluate, two table blocks; XOR gates are free. All three hashes run in the core's fused
//! register-oriented kernels ([`FixedKeyHash::half_gates_garble`]): inputs prepared, keys
//! expanded, AES rounds and the combination above without leaving the registers (VASA §4.2.1).

use super::{GateCost, Offset, Scheme, SchemeCost};
use crate::delta::Delta;
use crate::plan::XorGates;
use std::marker::PhantomData;
use std::ops::Range;
use tessera_core::hazmat::{GateHash, Labels, SlotGates, SlotSteps};
use tessera_core::{Backend, Block, FixedKeyHash, Prg};

/// A half-gates hash instantiation: its registry constants (see [`Scheme`]) and the core's
/// [`GateHash`].
pub trait HalfGatesHash: Clone + Send + 'static {
    /// Name as on the command line.
    const NAME: &'static str;
    /// The scheme's byte on the wire ([`Scheme::CODE`]).
    const CODE: u8;
    /// One line for help texts.
    const SUMMARY: &'static str;
    /// Key schedules per AND gate, to garble and to evaluate (each gate also costs four AES
    /// calls to garble and two to evaluate).
    const KEY_SCHEDULES: (f64, f64);
    /// The hash, for the session's public random block (see [`Scheme::with_backend`]).
    fn gate_hash(session: Block) -> GateHash;
}

/// H(x, j) = π(2x ⊕ j) ⊕ 2x over a fixed-key permutation π (VASA §4.3.1 "PRP"; Bellare,
/// Hoang, Keelveedhi, Rogaway, S&P 2013): no key schedule.
#[derive(Clone, Copy, Debug, Default)]
pub struct PrpHash;

impl HalfGatesHash for PrpHash {
    const NAME: &'static str = "prp";
    const CODE: u8 = 1;
    const SUMMARY: &'static str = "half-gates, fixed-key tweakable hash H(x, j) = π(2x ⊕ j) ⊕ 2x";
    const KEY_SCHEDULES: (f64, f64) = (0.0, 0.0);
    fn gate_hash(_session: Block) -> GateHash {
        GateHash::Prp
    }
}

/// The multi-instance hash of Guo, Katz, Wang, Weng, Yu ("Better concrete security for
/// half-gates garbling (in the multi-instance setting)", CRYPTO 2020), as EMP-toolkit garbles
/// with it: H(x, j) = AES_{S ⊕ j}(σ(x)) ⊕ σ(x), the label as AES input and the tweak, offset by
/// the session's public random block S, as AES key. Two key schedules per AND gate to garble
/// (two blocks each) and two to evaluate.
#[derive(Clone, Copy, Debug, Default)]
pub struct MiHash;

impl HalfGatesHash for MiHash {
    const NAME: &'static str = "mi";
    const CODE: u8 = 2;
    const SUMMARY: &'static str =
        "half-gates, multi-instance hash keyed by the gate index (EMP-toolkit's default)";
    const KEY_SCHEDULES: (f64, f64) = (2.0, 2.0);
    fn gate_hash(session: Block) -> GateHash {
        GateHash::Mi(session)
    }
}

/// H(x, j) = AES_x(j): the label is the AES key and the tweak the plaintext, which needs AES to
/// be secure under keys that encrypt functions of themselves (the circular-security assumption
/// of VASA §4.3.1 "CIRC"). Four key schedules per AND gate to garble, two to evaluate, one block
/// each.
#[derive(Clone, Copy, Debug, Default)]
pub struct CircHash;

impl HalfGatesHash for CircHash {
    const NAME: &'static str = "circ";
    const CODE: u8 = 3;
    const SUMMARY: &'static str = "half-gates, labels as AES keys (circular security)";
    const KEY_SCHEDULES: (f64, f64) = (4.0, 2.0);
    fn gate_hash(_session: Block) -> GateHash {
        GateHash::Circ
    }
}

/// The half-gates scheme over hash `H`.
#[derive(Clone, Debug)]
pub struct HalfGates<H> {
    hash: FixedKeyHash,
    gate_hash: GateHash,
    kind: PhantomData<H>,
}

impl<H: HalfGatesHash> HalfGates<H> {
    /// Half-gates over `hash`'s backend (and permutation, for PRP), with the session's public
    /// random block `session` (MI's key offset).
    pub fn new(hash: FixedKeyHash, session: Block) -> Self {
        HalfGates {
            hash,
            gate_hash: H::gate_hash(session),
            kind: PhantomData,
        }
    }
}

/// Half-gates with the fixed-key tweakable hash ("PRP").
pub type Prp = HalfGates<PrpHash>;
/// Half-gates with the multi-instance hash ("MI").
pub type Mi = HalfGates<MiHash>;
/// Half-gates with labels as AES keys ("CIRC").
pub type Circ = HalfGates<CircHash>;

impl Default for Prp {
    fn default() -> Self {
        Prp::new(FixedKeyHash::default(), Block::ZERO)
    }
}

impl<H: HalfGatesHash> Scheme for HalfGates<H> {
    const NAME: &'static str = H::NAME;
    const CODE: u8 = H::CODE;
    const SUMMARY: &'static str = H::SUMMARY;
    const XOR_GATES: XorGates = XorGates::Free;
    const COST: SchemeCost = SchemeCost::free_xor(
        GateCost::new(4.0, H::KEY_SCHEDULES.0),
        GateCost::new(2.0, H::KEY_SCHEDULES.1),
    );
    const TABLE_GRAIN: usize = 1;
    type Wire = Block;
    type Secret = Delta;

    fn with_backend(backend: Backend, session: Block) -> Result<Self, tessera_core::Error> {
        let hash = FixedKeyHash::with_backend(tessera_core::hash::DEFAULT_FIXED_KEY, backend)?;
        Ok(HalfGates::new(hash, session))
    }

    fn random_secret(prg: &mut Prg) -> Delta {
        Delta::random(prg)
    }

    fn with_offset(delta: Block, _prg: &mut Prg) -> Option<Offset<Self>> {
        Some(Offset {
            secret: Delta::new(delta),
            wire: |zero| zero,
        })
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

    fn xor_steps(steps: &SlotSteps, range: Range<usize>, labels: &mut [Block]) {
        steps.xor(range, labels);
    }

    fn not(secret: &Delta, a: Block) -> Block {
        // Inverting swaps the meaning of the two labels.
        a ^ secret.block()
    }

    fn constant(secret: &Delta, value: bool) -> Block {
        // The evaluator holds the zero block for either constant: it is the 0-label of a
        // constant 0 and the 1-label of a constant 1.
        secret.label(Block::ZERO, value)
    }

    fn and_table_blocks(gates: usize) -> usize {
        2 * gates
    }

    fn garble_and(
        &mut self,
        secret: &Delta,
        labels: Labels<'_, Block>,
        gates: SlotGates<'_>,
        table: &mut [Block],
    ) {
        let delta = secret.block();
        self.hash
            .half_gates_garble(self.gate_hash, delta, labels, gates, table);
    }

    fn evaluate_and(&mut self, labels: Labels<'_, Block>, gates: SlotGates<'_>, table: &[Block]) {
        self.hash
            .half_gates_eval(self.gate_hash, labels, gates, table);
    }
}
