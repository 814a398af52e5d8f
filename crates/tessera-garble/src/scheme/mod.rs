//! Garbling schemes: how a batch of independent gates is garbled and evaluated. The engine
//! hands the scheme the slot array and the batch's slot indices; the scheme reads the input
//! labels and writes the output labels where [`Labels`] says (into their slots, or into a
//! buffer when threads share the batch); everything scheme-specific (hashes, key schedules,
//! tables, what the garbler keeps per wire) stays behind [`Scheme`].
//!
//! | scheme | `--scheme` | AND: table blocks, AES to garble / evaluate | XOR | source |
//! |---|---|---|---|---|
//! | [`Prp`] | `prp` | 2, 4 / 2, no key schedule | free | half-gates, fixed-key tweakable hash |
//! | [`Mi`] | `mi` | 2, 4 / 2, 2 / 2 key schedules | free | half-gates, multi-instance hash (Guo et al., CRYPTO 2020) |
//! | [`Circ`] | `circ` | 2, 4 / 2, 4 / 2 key schedules | free | half-gates, labels as AES keys |
//! | [`Prf`] | `prf` | 2, 8 / 2 with 4 / 2 keys | 1 block, 3 / 2 AES | Gueron, Lindell, Nof, Pinkas (CCS 2015) |
//! | [`ThreeHalves`] | `3h` | 1.5 + 5 bits, 6 / 3, no key schedule | free | Rosulek, Roy (CRYPTO 2021) |
//!
//! VASA §4.3.1 (ACSAC 2021) names and measures the first four.

mod coins;
mod half_gates;
mod multi_key;
mod prf;
mod three_halves;

pub use half_gates::{Circ, CircHash, HalfGates, HalfGatesHash, Mi, MiHash, Prp, PrpHash};
pub use prf::{Prf, PrfSecret, PrfWire};
pub use three_halves::{ThreeHalves, ThreeHalvesSecret};

use crate::plan::XorGates;
use std::ops::Range;
use tessera_core::hazmat::{Labels, SlotGates, SlotReader, SlotSteps};
use tessera_core::{Backend, Block, Prg};

/// A garbling scheme for circuits of AND, XOR, NOT and constant gates.
///
/// The garbler keeps a [`Scheme::Wire`] per wire (the zero-label for free-XOR schemes, both
/// labels for the PRF-based scheme) and a per-circuit [`Scheme::Secret`] (Δ, or the source of
/// its random permutation bits); the evaluator keeps one label ([`Block`]) per wire whose least
/// significant bit is the wire's colour, so decoding is the same for every scheme.
///
/// A scheme is listed once, in [`SchemeKind`]; everything that chooses a scheme at run time
/// goes through [`SchemeKind::visit`].
pub trait Scheme: Clone + Send + 'static {
    /// Name as on the command line.
    const NAME: &'static str;
    /// The scheme's byte on the wire (in Yao's fingerprint message). An explicit constant, so
    /// that listing the schemes in another order never changes the protocol.
    const CODE: u8;
    /// One line for help texts.
    const SUMMARY: &'static str;
    /// Whether the plan must batch XOR gates for this scheme.
    const XOR_GATES: XorGates;
    /// The AES work per gate (VASA §4.3.1), to set measured times against the AES roofline.
    const COST: SchemeCost;
    /// Gates whose tables form a unit: a batch's tables cut at any multiple of this many gates
    /// are the tables of the two parts (1 where every gate has its own blocks), so threads
    /// sharing a batch at such cuts write the same stream as one thread.
    const TABLE_GRAIN: usize;

    /// What the garbler knows of one wire.
    type Wire: Copy + Default + PartialEq + std::fmt::Debug + Send + Sync;
    /// The garbler's secret for one garbled circuit. Randomness a scheme needs per gate is a
    /// PRF of the gate's index under this secret, never drawn in garbling order.
    type Secret: Send + Sync;

    /// The scheme on `backend`. `session` is a public random block both parties share (the MI
    /// hash's key offset; the other schemes ignore it).
    fn with_backend(backend: Backend, session: Block) -> Result<Self, tessera_core::Error>;
    /// A fresh secret.
    fn random_secret(prg: &mut Prg) -> Self::Secret;
    /// For schemes whose labels share a global offset (free XOR): the secret for an offset Δ
    /// made elsewhere (a correlated OT's, so the OT hands out zero-labels directly), with what
    /// else it needs drawn from `prg`. `None` for schemes without one.
    fn with_offset(delta: Block, prg: &mut Prg) -> Option<Offset<Self>>;
    /// Fresh labels for an input wire.
    fn random_wire(secret: &Self::Secret, prg: &mut Prg) -> Self::Wire;
    /// The label that encodes `bit` on wire `w`, selected without branching on `bit`.
    fn encode(secret: &Self::Secret, w: &Self::Wire, bit: bool) -> Block;
    /// The colour of `w`'s label for 0: an output label's colour XOR this is the bit.
    fn decoding_bit(w: &Self::Wire) -> bool;

    /// out = a ⊕ b without cryptography, for the free XOR gates of plans with
    /// [`XorGates::Free`] (only schemes whose [`Scheme::XOR_GATES`] says so get those).
    fn free_xor(a: Self::Wire, b: Self::Wire) -> Self::Wire;
    /// Runs the free XOR steps `range` of a plan over the garbler's slot array `labels`, in
    /// order, each `out = a ⊕ b` as [`Scheme::free_xor`]; schemes whose wires are blocks hand
    /// them to [`SlotSteps::xor`]'s kernel.
    ///
    /// # Panics
    /// If an index is out of bounds.
    fn xor_steps(steps: &SlotSteps, range: Range<usize>, labels: &mut [Self::Wire]) {
        for [a, b, o] in steps.get(range) {
            labels[o as usize] = Self::free_xor(labels[a as usize], labels[b as usize]);
        }
    }
    /// out = ¬a (the evaluator's label is unchanged).
    fn not(secret: &Self::Secret, a: Self::Wire) -> Self::Wire;
    /// A public constant, whose evaluator label is [`Block::ZERO`].
    fn constant(secret: &Self::Secret, value: bool) -> Self::Wire;

    /// Table blocks of a batch of `gates` AND gates.
    fn and_table_blocks(gates: usize) -> usize;

    /// Garbles AND gates k = 0..n: gate k's input wires are in slots `gates.a[k]` and
    /// `gates.b[k]` of `labels`, `gates.ids[k]` is its unique index. Writes the output wires
    /// where `labels` says ([`Labels::split`]) and [`Scheme::and_table_blocks`]`(n)` table
    /// blocks to `table`.
    fn garble_and(
        &mut self,
        secret: &Self::Secret,
        labels: Labels<'_, Self::Wire>,
        gates: SlotGates<'_>,
        table: &mut [Block],
    );

    /// Evaluates AND gates k = 0..n from the active input labels in `labels` (read as
    /// [`Scheme::garble_and`] reads them) and the tables the garbler wrote for the same gates;
    /// writes the active output labels where `labels` says.
    fn evaluate_and(&mut self, labels: Labels<'_, Block>, gates: SlotGates<'_>, table: &[Block]);

    /// Table blocks of a batch of `gates` XOR gates: none for free-XOR schemes.
    fn xor_table_blocks(_gates: usize) -> usize {
        0
    }

    /// Garbles a batch of XOR gates, as [`Scheme::garble_and`]. Schemes with
    /// [`XorGates::Garbled`] override it; free-XOR plans never batch XOR gates, and the
    /// default XORs the wires.
    fn garble_xor(
        &mut self,
        _secret: &Self::Secret,
        labels: Labels<'_, Self::Wire>,
        gates: SlotGates<'_>,
        _table: &mut [Block],
    ) {
        let (read, mut write) = labels.split(gates.out);
        for (k, (a, b)) in wires(read, gates).enumerate() {
            write.put(k, Self::free_xor(a, b));
        }
    }

    /// Evaluates a batch of XOR gates, as [`Scheme::evaluate_and`]; the default XORs the labels.
    fn evaluate_xor(&mut self, labels: Labels<'_, Block>, gates: SlotGates<'_>, _table: &[Block]) {
        let (read, mut write) = labels.split(gates.out);
        for (k, (a, b)) in wires(read, gates).enumerate() {
            write.put(k, a ^ b);
        }
    }
}

/// The gates' two input labels each, read from the slot array, gate after gate.
#[inline(always)]
pub(crate) fn wires<'a, L: Copy>(
    labels: SlotReader<'a, L>,
    gates: SlotGates<'a>,
) -> impl ExactSizeIterator<Item = (L, L)> + Clone + 'a {
    let read = move |(&a, &b): (&u32, &u32)| (labels.get(a), labels.get(b));
    gates.a.iter().zip(gates.b).map(read)
}

/// A free-XOR scheme's secret for a global offset made elsewhere, and how a wire is made from
/// its zero-label ([`Scheme::with_offset`]).
pub struct Offset<S: Scheme> {
    /// The secret holding the offset.
    pub secret: S::Secret,
    /// The wire whose zero-label is the argument.
    pub wire: fn(Block) -> S::Wire,
}

/// A computation over a scheme's type, for a scheme chosen at run time ([`SchemeKind::visit`]).
pub trait SchemeVisitor {
    /// What the computation returns.
    type Output;
    /// Runs the computation with scheme `S`.
    fn visit<S: Scheme>(self) -> Self::Output;
}

/// The registry of garbling schemes: each variant names one [`Scheme`] type. Parsing, help
/// texts, Yao's dispatch, benchmarks and tests derive from [`SchemeKind::ALL`] and
/// [`SchemeKind::visit`], the one place that maps a variant to its type.
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

    /// Runs `v` with this scheme's type.
    pub fn visit<V: SchemeVisitor>(self, v: V) -> V::Output {
        match self {
            SchemeKind::Prp => v.visit::<Prp>(),
            SchemeKind::Mi => v.visit::<Mi>(),
            SchemeKind::Circ => v.visit::<Circ>(),
            SchemeKind::Prf => v.visit::<Prf>(),
            SchemeKind::ThreeHalves => v.visit::<ThreeHalves>(),
        }
    }

    /// The name on the command line ([`Scheme::NAME`]).
    pub fn name(self) -> &'static str {
        self.visit(Consts).name
    }

    /// The byte on the wire ([`Scheme::CODE`]).
    pub fn code(self) -> u8 {
        self.visit(Consts).code
    }

    /// The scheme whose [`Scheme::CODE`] is `code`.
    pub fn from_code(code: u8) -> Option<SchemeKind> {
        SchemeKind::ALL.into_iter().find(|k| k.code() == code)
    }

    /// One line for help texts ([`Scheme::SUMMARY`]).
    pub fn summary(self) -> &'static str {
        self.visit(Consts).summary
    }

    /// The scheme's [`Scheme::XOR_GATES`].
    pub fn xor_gates(self) -> XorGates {
        self.visit(Consts).xor_gates
    }

    /// The scheme's AES work per gate ([`Scheme::COST`]).
    pub fn cost(self) -> SchemeCost {
        self.visit(Consts).cost
    }

    /// The names of all schemes, comma-separated, for messages.
    pub fn names() -> String {
        SchemeKind::ALL.map(SchemeKind::name).join(", ")
    }
}

/// A scheme's constants, read through the visitor.
struct Consts;

struct SchemeConsts {
    name: &'static str,
    code: u8,
    summary: &'static str,
    xor_gates: XorGates,
    cost: SchemeCost,
}

impl SchemeVisitor for Consts {
    type Output = SchemeConsts;
    fn visit<S: Scheme>(self) -> SchemeConsts {
        SchemeConsts {
            name: S::NAME,
            code: S::CODE,
            summary: S::SUMMARY,
            xor_gates: S::XOR_GATES,
            cost: S::COST,
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
            .ok_or_else(|| format!("{s:?} is not a garbling scheme ({})", SchemeKind::names()))
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
    /// A gate with no AES work (a free XOR).
    pub const FREE: GateCost = GateCost::new(0.0, 0.0);

    /// `aes` encryptions and `key_schedules` key expansions.
    pub const fn new(aes: f64, key_schedules: f64) -> Self {
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
    /// Evaluating an XOR gate.
    pub xor_eval: GateCost,
}

impl SchemeCost {
    /// A free-XOR scheme's cost: AND gates only.
    pub const fn free_xor(and_garble: GateCost, and_eval: GateCost) -> Self {
        SchemeCost {
            and_garble,
            and_eval,
            xor_garble: GateCost::FREE,
            xor_eval: GateCost::FREE,
        }
    }

    /// AES-equivalents to garble and to evaluate a circuit of `and` AND and `xor` XOR gates.
    pub fn circuit(&self, and: usize, xor: usize) -> (f64, f64) {
        let (and, xor) = (and as f64, xor as f64);
        (
            and * self.and_garble.aes_equivalents() + xor * self.xor_garble.aes_equivalents(),
            and * self.and_eval.aes_equivalents() + xor * self.xor_eval.aes_equivalents(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Names and wire codes are unique, and every code maps back to its scheme.
    #[test]
    fn the_registry_is_consistent() {
        for (i, a) in SchemeKind::ALL.iter().enumerate() {
            assert_eq!(SchemeKind::from_code(a.code()), Some(*a));
            assert_eq!(a.name().parse::<SchemeKind>(), Ok(*a));
            assert!(!a.summary().is_empty());
            for b in &SchemeKind::ALL[i + 1..] {
                assert_ne!(a.code(), b.code(), "{a} and {b}");
                assert_ne!(a.name(), b.name());
            }
        }
        assert_eq!(SchemeKind::from_code(0), None);
        let err = "nope".parse::<SchemeKind>().unwrap_err();
        assert!(err.contains(&SchemeKind::names()), "{err}");
    }
}
