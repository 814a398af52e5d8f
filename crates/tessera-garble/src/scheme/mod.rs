//! Garbling schemes: how a batch of independent gates is garbled and evaluated. The engine
//! gathers the gates' input labels, hands the batch to the scheme and scatters its output
//! labels; everything scheme-specific (hashes, key schedules, tables, what the garbler keeps
//! per wire) stays behind [`Scheme`].
//!
//! | scheme | `--scheme` | AND: table blocks, AES to garble / evaluate | XOR | source |
//! |---|---|---|---|---|
//! | [`Prp`] | `prp` | 2, 4 / 2, no key schedule | free | half-gates, fixed-key tweakable hash |
//! | [`Mi`] | `mi` | 2, 4 / 2, 2 / 2 key schedules | free | half-gates, multi-instance hash (Guo et al., CRYPTO 2020) |
//! | [`Circ`] | `circ` | 2, 4 / 2, 4 / 2 key schedules | free | half-gates, labels as AES keys |
//! | [`Prf`] | `prf` | 2, 8 / 2 with 4 / 2 keys | 1 block, 3 / 1-2 AES | Gueron, Lindell, Nof, Pinkas (CCS 2015) |
//! | [`ThreeHalves`] | `3h` | 1.5 + 5 bits, 6 / 3, no key schedule | free | Rosulek, Roy (CRYPTO 2021) |
//!
//! VASA §4.3.1 (seed `000_43950d4e73a4a867.txt`) names and measures the first four.

mod half_gates;
mod multi_key;
mod prf;
mod random_bits;
mod three_halves;

pub use half_gates::{Circ, CircHash, HalfGates, HalfGatesHash, Mi, MiHash, Prp, PrpHash};
pub use prf::{Prf, PrfSecret, PrfWire};
pub use three_halves::{ThreeHalves, ThreeHalvesSecret};

use crate::plan::XorGates;
use tessera_core::{Backend, Block, Prg};

/// A garbling scheme for circuits of AND, XOR, NOT and constant gates.
///
/// The garbler keeps a [`Scheme::Wire`] per wire (the zero-label for free-XOR schemes, both
/// labels for the PRF-based scheme) and a per-circuit [`Scheme::Secret`] (Δ, or the source of
/// its random permutation bits); the evaluator keeps one label ([`Block`]) per wire whose least
/// significant bit is the wire's colour, so decoding is the same for every scheme.
pub trait Scheme {
    /// Name as on the command line.
    const NAME: &'static str;
    /// Whether the plan must batch XOR gates for this scheme.
    const XOR_GATES: XorGates;

    /// What the garbler knows of one wire.
    type Wire: Copy + Default + std::fmt::Debug;
    /// The garbler's secret for one garbled circuit.
    type Secret;

    /// The scheme on `backend`. `session` is a public random block both parties share (the MI
    /// hash's key offset; the other schemes ignore it).
    fn with_backend(backend: Backend, session: Block) -> Result<Self, tessera_core::Error>
    where
        Self: Sized;
    /// A fresh secret.
    fn random_secret(prg: &mut Prg) -> Self::Secret;
    /// Fresh labels for an input wire.
    fn random_wire(secret: &Self::Secret, prg: &mut Prg) -> Self::Wire;
    /// The label that encodes `bit` on wire `w`, selected without branching on `bit`.
    fn encode(secret: &Self::Secret, w: &Self::Wire, bit: bool) -> Block;
    /// The colour of `w`'s label for 0: an output label's colour XOR this is the bit.
    fn decoding_bit(w: &Self::Wire) -> bool;

    /// out = a ⊕ b without cryptography. Called only for plans with [`XorGates::Free`], that
    /// is, only when [`Scheme::XOR_GATES`] says so.
    fn free_xor(a: Self::Wire, b: Self::Wire) -> Self::Wire;
    /// out = ¬a (the evaluator's label is unchanged).
    fn not(secret: &Self::Secret, a: Self::Wire) -> Self::Wire;
    /// A public constant, whose evaluator label is [`Block::ZERO`].
    fn constant(secret: &mut Self::Secret, value: bool) -> Self::Wire;

    /// Garbles gates k = 0..n of one kind (AND, or XOR when [`Scheme::XOR_GATES`] is
    /// [`XorGates::Garbled`]):
    /// `a[k]`, `b[k]` are the input wires, `ids[k]` the gate's unique index. Writes the output
    /// wires to `out` and [`Scheme::table_blocks`]`(xor, n)` table blocks to `table`.
    #[allow(clippy::too_many_arguments)]
    fn garble(
        &mut self,
        xor: bool,
        secret: &mut Self::Secret,
        a: &[Self::Wire],
        b: &[Self::Wire],
        ids: &[u32],
        out: &mut [Self::Wire],
        table: &mut [Block],
    );

    /// Evaluates gates k = 0..n of one kind from the active input labels and the tables the
    /// garbler wrote for the same gates; writes the active output labels to `out`.
    fn evaluate(
        &mut self,
        xor: bool,
        a: &[Block],
        b: &[Block],
        ids: &[u32],
        table: &[Block],
        out: &mut [Block],
    );

    /// Table blocks of a batch of `gates` gates of one kind (XOR if `xor`).
    fn table_blocks(xor: bool, gates: usize) -> usize;
}

/// out = a ⊕ b gate by gate: what a free-XOR scheme does should a plan ever batch XOR gates
/// (free-XOR plans never do; the engine's plan check refuses the other kind).
fn xor_batch(a: &[Block], b: &[Block], out: &mut [Block]) {
    for ((o, &x), &y) in out.iter_mut().zip(a).zip(b) {
        *o = x ^ y;
    }
}

/// The schemes by name, for choosing one at run time (`--scheme`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchemeKind {
    /// [`Prp`].
    Prp,
    /// [`Mi`].
    Mi,
    /// [`Circ`].
    Circ,
    /// [`Prf`].
    Prf,
    /// [`ThreeHalves`].
    ThreeHalves,
}

impl SchemeKind {
    /// Every scheme: VASA's four in the order of its tables, then three-halves.
    pub const ALL: [SchemeKind; 5] = [
        SchemeKind::Prp,
        SchemeKind::Mi,
        SchemeKind::Circ,
        SchemeKind::Prf,
        SchemeKind::ThreeHalves,
    ];

    /// The name on the command line ([`Scheme::NAME`]).
    pub const fn name(self) -> &'static str {
        match self {
            SchemeKind::Prp => Prp::NAME,
            SchemeKind::Mi => Mi::NAME,
            SchemeKind::Circ => Circ::NAME,
            SchemeKind::Prf => Prf::NAME,
            SchemeKind::ThreeHalves => ThreeHalves::NAME,
        }
    }

    /// The scheme's [`Scheme::XOR_GATES`].
    pub const fn xor_gates(self) -> XorGates {
        match self {
            SchemeKind::Prp => Prp::XOR_GATES,
            SchemeKind::Mi => Mi::XOR_GATES,
            SchemeKind::Circ => Circ::XOR_GATES,
            SchemeKind::Prf => Prf::XOR_GATES,
            SchemeKind::ThreeHalves => ThreeHalves::XOR_GATES,
        }
    }
}

impl std::fmt::Display for SchemeKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for SchemeKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        SchemeKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("{s:?} is not a garbling scheme (prp, mi, circ, prf, 3h)"))
    }
}

/// AES work of one gate: block encryptions and key schedules.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GateCost {
    /// AES block encryptions.
    pub aes: f64,
    /// AES-128 key expansions.
    pub key_schedules: f64,
}

impl GateCost {
    const fn new(aes: f64, key_schedules: f64) -> Self {
        GateCost { aes, key_schedules }
    }

    /// AES-equivalents, a key expansion counted as one encryption (both are ten rounds of
    /// the AES unit: `aesenc` or `aesenclast`).
    pub fn aes_equivalents(self) -> f64 {
        self.aes + self.key_schedules
    }
}

/// A scheme's AES work per gate (VASA §4.3.1), to set measured times against the AES roofline.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SchemeCost {
    /// Garbling an AND gate.
    pub and_garble: GateCost,
    /// Evaluating an AND gate.
    pub and_eval: GateCost,
    /// Garbling an XOR gate.
    pub xor_garble: GateCost,
    /// Evaluating an XOR gate (on average over the colour of the second input).
    pub xor_eval: GateCost,
}

impl SchemeCost {
    /// AES-equivalents to garble and to evaluate a circuit of `and` AND and `xor` XOR gates.
    pub fn circuit(&self, and: usize, xor: usize) -> (f64, f64) {
        let (and, xor) = (and as f64, xor as f64);
        (
            and * self.and_garble.aes_equivalents() + xor * self.xor_garble.aes_equivalents(),
            and * self.and_eval.aes_equivalents() + xor * self.xor_eval.aes_equivalents(),
        )
    }
}

impl SchemeKind {
    /// The scheme's AES work per gate.
    pub const fn cost(self) -> SchemeCost {
        let free = GateCost::new(0.0, 0.0);
        let (and_garble, and_eval, xor_garble, xor_eval) = match self {
            SchemeKind::Prp => (GateCost::new(4.0, 0.0), GateCost::new(2.0, 0.0), free, free),
            SchemeKind::Mi => (GateCost::new(4.0, 2.0), GateCost::new(2.0, 2.0), free, free),
            SchemeKind::Circ => (GateCost::new(4.0, 4.0), GateCost::new(2.0, 2.0), free, free),
            SchemeKind::Prf => (
                GateCost::new(8.0, 4.0),
                GateCost::new(2.0, 2.0),
                GateCost::new(3.0, 3.0),
                GateCost::new(1.5, 1.5),
            ),
            SchemeKind::ThreeHalves => {
                (GateCost::new(6.0, 0.0), GateCost::new(3.0, 0.0), free, free)
            }
        };
        SchemeCost {
            and_garble,
            and_eval,
            xor_garble,
            xor_eval,
        }
    }
}
