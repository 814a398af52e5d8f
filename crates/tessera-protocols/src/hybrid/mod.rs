//! Hybrid programs over MOTION2NX's five sharings (Braun et al.,
//! §2 and App. A.2), written once and run as a setup phase that needs no inputs, then an
//! online phase:
//!
//! | sharing | a value x is held as | cost online |
//! |---|---|---|
//! | Y (Yao) | party 0: zero-labels K₀ and Δ; party 1: K₀ ⊕ x·Δ | AND: garbled by party 0 in the setup (32 bytes of tables there), evaluated locally; a bit entering Y: 1 bit and a 16-byte label |
//! | B (Boolean GMW) | x = x₀ ⊕ x₁ | AND: 2 bits per party, 1 round |
//! | A (arithmetic GMW over Z_2^ℓ) | x = x₀ + x₁ | MUL: 2 elements per party, 1 round |
//! | β (ABY2.0 Boolean) | public Δx = x ⊕ δx, δx = δ₀ ⊕ δ₁ | AND: 1 bit per party, 1 round |
//! | α (ABY2.0 arithmetic) | public Δx = x + δx, δx = δ₀ + δ₁ | MUL: 1 element per party, 1 round |
//!
//! Values are SIMD vectors of `n` copies: Boolean values of `width` wires ([`Kind::Bits`]),
//! arithmetic ones of elements of Z_2^ℓ, ℓ ∈ {8, 16, 32, 64} ([`Kind::Ring`]). A
//! [`Program`] is plain data: the operations in order. [`Program::setup`] walks it once,
//! drawing GMW's triples and ABY2.0's masks and mask products (the algebra of shared random
//! vectors: ABY2.0 §3, MOTION2NX App. A.2); [`Program::online`] walks it again with the inputs,
//! one exchange per interactive operation.
//!
//! Operations (their setup and online costs are stated at each [`Program`] method):
//! XOR, AND, NOT, MUX and whole circuits ([`tessera_circuit`]) on Y, B and β; ADD, SUB, NEG,
//! multiplication by and addition of a public constant, MUL on A and α, and batches of matrix
//! products on A and α ([`Program::matmul`], one matrix triple per product); the mixed products
//! bit × number (B·A → A, β·α → α) and bit × bit → number (β·β → α), and B·A on random OT
//! ([`Program::select`]); the sign of A values by a circuit ([`Program::sign`]) or a
//! millionaires' protocol on random OT ([`Program::sign_by_comparison`]); truncations;
//! conversions among the sharings ([`Program::convert`], routes in [`route`]).
//!
//! Every value a peer sends has the length the program fixes; a malformed or missing message
//! ends both parties with an error naming it, within the network's timeout.
//!
//! # Example
//!
//! Party 0's and party 1's 32-bit numbers multiplied in α, the product's bits compared with
//! party 1's threshold by a B circuit, the result opened to both; the setup runs before the
//! inputs are known.
//!
//! ```
//! use tessera_protocols::hybrid::{Kind, Plain, Program, Reveal, Sharing, Type};
//! use tessera_protocols::{Error, Session, SessionConfig};
//!
//! fn program() -> Result<(Program, [tessera_protocols::hybrid::Value; 3]), Error> {
//!     let mut p = Program::new();
//!     let n = 4; // SIMD copies
//!     let number = Type { sharing: Sharing::Alpha, kind: Kind::Ring(32), n };
//!     let (x, y) = (p.input(0, number)?, p.input(1, number)?);
//!     let bound = p.input(1, Type { sharing: Sharing::B, kind: Kind::Bits(32), n })?;
//!     let product = p.mul(x, y)?; // one element per party online
//!     let bits = p.convert(product, Sharing::B)?; // α → A (local) → B (prefix adder)
//!     let lt = tessera_circuit::library::builtin("lt32").unwrap()?;
//!     let below = p.circuit(&lt, &[bits, bound])?[0];
//!     p.output(below, Reveal::Both)?;
//!     Ok((p, [x, y, bound]))
//! }
//!
//! let (net0, net1) = tessera_net::memory::pair()?;
//! let party = |net: tessera_net::Network, inputs: Vec<(usize, Plain)>| {
//!     std::thread::spawn(move || -> Result<_, Error> {
//!         let (p, values) = program()?;
//!         let peer = 1 - net.id();
//!         let mut s = Session::new(net, SessionConfig::default())?;
//!         let prepared = p.setup(&mut s, peer)?; // no inputs yet
//!         let inputs: Vec<_> = inputs.into_iter().map(|(i, x)| (values[i], x)).collect();
//!         p.online(&mut s, peer, prepared, &inputs)
//!     })
//! };
//! let bits = |v: u64| Plain::Bits(vec![(0..32).map(|j| (v >> j) & 1 == 1).collect(); 4]);
//! let p0 = party(net0, vec![(0, Plain::Ring(vec![3, 5, 7, 9]))]);
//! let p1 = party(net1, vec![(1, Plain::Ring(vec![4, 4, 4, 4])), (2, bits(21))]);
//! let out = p0.join().unwrap()?;
//! assert_eq!(out, p1.join().unwrap()?);
//! // 12 < 21, 20 < 21, 28 ≥ 21, 36 ≥ 21
//! let below = |b: bool| vec![b];
//! assert_eq!(
//!     out[0],
//!     Some(Plain::Bits(vec![below(true), below(true), below(false), below(false)]))
//! );
//! # Ok::<(), Error>(())
//! ```

mod algebra;
mod lattice;
pub mod linear;
mod matrix;
mod online;
mod op;
mod prepare;
pub mod ring;
#[cfg(test)]
mod tests;

use crate::boolean::BoolCircuit;
pub use crate::boolean::Reveal;
use crate::{Error, Session};
pub use lattice::CIPHERTEXTS;
pub use linear::{ConvGeometry, LinearMap, LinearMethod, LinearWeights};
pub use matrix::MatShape;
pub use online::Step;
pub use op::{OnlineCost, route};
use op::{Op, YCircuit};
pub use prepare::{Prepared, SetupStep};
use sha2::Digest;
use tessera_net::Kind as MessageKind;

/// The most words of setup a streamed run ([`Program::run_streamed`]) makes at once: 2^25
/// (256 MiB) of triples, correlated OTs, garbled tables and mask products, beside the values
/// still to be read. A constant, as both parties must cut a program alike.
pub const SEGMENT_WORDS: usize = 1 << 25;

/// What a streamed run ([`Program::run_streamed`]) gives: the outputs, as
/// [`Program::online`]; the setup's parts, as [`Program::setup_steps`], each summed over the
/// segments; the online steps, one per operation, as [`Program::online_steps`].
#[derive(Debug)]
pub struct Streamed {
    /// Each output, if this party learns it.
    pub outputs: Vec<Option<Plain>>,
    /// The setup's parts.
    pub setup: Vec<SetupStep>,
    /// The online steps.
    pub steps: Vec<Step>,
}

/// The version of the hybrid programs' messages; parties of different versions refuse each
/// other.
pub const PROTOCOL_VERSION: u8 = 6;
/// The program's hello ([`crate::hello`]): the fingerprint of its operations.
pub use crate::hello::HELLO;
/// The setup's Beaver openings.
pub const SETUP: MessageKind = MessageKind::new(0x51, "hybrid setup products");
/// The setup's cross products: the OT sender's corrections τ.
pub const CROSS: MessageKind = MessageKind::new(0x53, "hybrid setup cross products");
/// The setup of a private linear map of one column: the other party's mask minus its random
/// multipliers.
pub const LINEAR: MessageKind = MessageKind::new(0x54, "hybrid linear map multipliers");
/// The widths of the coefficients of the linear maps each party owns, stated after the hello.
pub const WIDTHS: MessageKind = MessageKind::new(0x56, "hybrid linear map widths");
/// The garbled circuits' tables, garbler to evaluator, in the setup.
pub const TABLES: MessageKind = MessageKind::new(0x55, "hybrid garbled tables");
/// An online operation's message.
pub const EXCHANGE: MessageKind = MessageKind::new(0x52, "hybrid operation");

/// A sharing of MOTION2NX.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sharing {
    /// Yao's garbled labels: party 0 (the garbler) holds each bit's zero-label K₀ and the
    /// free-XOR offset Δ (its OT sender's), party 1 (the evaluator) K₀ ⊕ x·Δ. XOR and NOT are
    /// local; AND and circuits are garbled (half-gates) by party 0 in the setup, on the
    /// zero-labels it fixes there, and evaluated online by party 1.
    Y,
    /// Boolean GMW.
    B,
    /// Arithmetic GMW over Z_2^ℓ.
    A,
    /// ABY2.0's Boolean sharing.
    Beta,
    /// ABY2.0's arithmetic sharing.
    Alpha,
}

impl Sharing {
    /// Every sharing, in MOTION2NX's order.
    pub const ALL: [Sharing; 5] = [
        Sharing::Y,
        Sharing::B,
        Sharing::A,
        Sharing::Beta,
        Sharing::Alpha,
    ];

    /// Its name in MOTION2NX's notation and on the command line.
    pub const fn name(self) -> &'static str {
        match self {
            Sharing::Y => "y",
            Sharing::B => "b",
            Sharing::A => "a",
            Sharing::Beta => "beta",
            Sharing::Alpha => "alpha",
        }
    }

    /// The sharing called `name`.
    pub fn from_name(name: &str) -> Option<Sharing> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Whether it shares bits (Y, B, β) rather than ring elements (A, α).
    pub const fn is_boolean(self) -> bool {
        matches!(self, Sharing::Y | Sharing::B | Sharing::Beta)
    }

    /// Whether it is one of ABY2.0's (masked values).
    const fn is_masked(self) -> bool {
        matches!(self, Sharing::Beta | Sharing::Alpha)
    }
}

/// What a value holds per SIMD copy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `width` bits (wires), for B and β.
    Bits(u32),
    /// An element of Z_2^ℓ, ℓ ∈ {8, 16, 32, 64}, for A and α.
    Ring(u32),
}

/// A value's type: sharing, kind and number of SIMD copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Type {
    /// The sharing.
    pub sharing: Sharing,
    /// Bits or ring elements.
    pub kind: Kind,
    /// SIMD copies.
    pub n: usize,
}

impl Type {
    fn width(self) -> usize {
        match self.kind {
            Kind::Bits(w) => w as usize,
            Kind::Ring(_) => 1,
        }
    }

    fn ring_bits(self) -> u32 {
        match self.kind {
            Kind::Ring(b) => b,
            Kind::Bits(w) => w,
        }
    }

    fn field(self) -> algebra::Field {
        match self.kind {
            Kind::Bits(w) => algebra::Field::Bits {
                width: w as usize,
                n: self.n,
            },
            Kind::Ring(bits) => algebra::Field::Ring { bits, n: self.n },
        }
    }
}

/// One operation's cost ([`Program::costs`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cost {
    /// Setup bytes, both parties together.
    pub setup_bytes: u64,
    /// The online phase's traffic.
    pub online: OnlineCost,
}

/// A value of a program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Value(usize);

/// An output of a program: [`Program::online`] returns outputs in this order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Output(usize);

/// A plaintext vector: per SIMD copy its bits (Boolean values, wire `j` at index `j`), or
/// elements of Z_2^ℓ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plain {
    /// Per copy, `width` bits.
    Bits(Vec<Vec<bool>>),
    /// `n` elements, each below 2^ℓ.
    Ring(Vec<u64>),
}

/// A hybrid program; see the module documentation.
#[derive(Clone, Debug, Default)]
pub struct Program {
    types: Vec<Type>,
    ops: Vec<Op>,
    circuits: Vec<BoolCircuit>,
    garbled: Vec<YCircuit>,
    maps: Vec<LinearMap>,
    gathers: Vec<Vec<u32>>,
    outputs: Vec<usize>,
    /// SHA-256 of each circuit, map and gather as it was added, in order: what the
    /// fingerprint hashes of them (so that it costs no pass over large circuits).
    digests: Vec<[u8; 32]>,
}

/// Wires `start..start + len` (or wire `start`, `len` times, if `repeat`) of a vector of
/// `w` words per wire.
fn select_wires(v: &[u64], w: usize, start: usize, len: usize, repeat: bool) -> Vec<u64> {
    (0..len)
        .flat_map(|j| {
            let wire = if repeat { start } else { start + j };
            v[wire * w..(wire + 1) * w].iter().copied()
        })
        .collect()
}

impl Program {
    /// An empty program.
    pub fn new() -> Self {
        Self::default()
    }

    /// The type of `v`.
    pub fn type_of(&self, v: Value) -> Option<Type> {
        self.types.get(v.0).copied()
    }

    /// SHA-256 of the program: both parties must run the same.
    pub fn fingerprint(&self) -> [u8; 32] {
        crate::hello::fingerprint(b"tessera/hybrid", |h| {
            h.update([PROTOCOL_VERSION]);
            h.update(format!("{:?}{:?}", self.types, self.ops).as_bytes());
            for d in &self.digests {
                h.update(d);
            }
        })
    }

    /// The setup with `peer`: the hello, the triples from the session's OT, and the masks and
    /// mask products of ABY2.0's values, resolved in as many exchanges as the products are
    /// deep (at most 2).
    pub fn setup(&self, session: &mut Session, peer: usize) -> Result<Prepared, Error> {
        Ok(self.setup_steps(session, peer, &[])?.0)
    }

    /// [`Program::setup`] for a program with linear maps ([`Program::linear`]): `weights` holds
    /// this party's coefficients for each map it owns, in the order of the maps (empty at a
    /// party that owns none).
    pub fn setup_with(
        &self,
        session: &mut Session,
        peer: usize,
        weights: &[LinearWeights],
    ) -> Result<Prepared, Error> {
        Ok(self.setup_steps(session, peer, weights)?.0)
    }

    /// [`Program::setup_with`], also returning the setup's parts with their time and traffic:
    /// the shared parts, and each linear map's (with its operation's index). The session's
    /// observer ([`Session::observe`]) hears of it as the phase "setup", sized by the cost
    /// model ([`Program::costs`]).
    pub fn setup_steps(
        &self,
        session: &mut Session,
        peer: usize,
        weights: &[LinearWeights],
    ) -> Result<(Prepared, Vec<SetupStep>), Error> {
        let ot = session.ot_choice();
        session.run(|s| {
            let (link, widths) = prepare::greet(self, s, peer, weights)?;
            let total = || {
                let setup = prepare::setup_sizes(self, ot.bytes_per_cot(), &widths);
                setup.iter().map(|b| b.bytes.round() as u64).sum()
            };
            s.metered("setup", total, |s| {
                prepare::setup(self, s, link, weights, &widths)
            })
        })
    }

    /// The online phase with `peer` on this party's `inputs` (one per input value it owns),
    /// with a setup of this program. Returns each output, if this party learns it. Like the
    /// setup, a failure stops the peer too, told why by a code ([`Session::run`]).
    pub fn online(
        &self,
        session: &mut Session,
        peer: usize,
        prepared: Prepared,
        inputs: &[(Value, Plain)],
    ) -> Result<Vec<Option<Plain>>, Error> {
        Ok(self.online_steps(session, peer, prepared, inputs)?.0)
    }

    /// [`Program::online`], also returning each operation's time and traffic, in order. The
    /// session's observer hears of it as the phase "online".
    pub fn online_steps(
        &self,
        session: &mut Session,
        peer: usize,
        prepared: Prepared,
        inputs: &[(Value, Plain)],
    ) -> Result<(Vec<Option<Plain>>, Vec<Step>), Error> {
        let total = || {
            let bytes = self.ops.iter().map(|op| op.operation().traffic(self).bytes);
            bytes.sum()
        };
        session.run(|s| {
            s.metered("online", total, |s| {
                online::run(self, s, peer, prepared, inputs)
            })
        })
    }

    /// The setup and online phase with `peer` in one, streamed: the program's operations cut
    /// into segments whose setups hold at most [`SEGMENT_WORDS`] words, each segment's setup
    /// made just before its online steps and dropped after them, and each value dropped after
    /// the last operation that uses it, so that a party holds one segment's setup and the
    /// values still to be read, however large the program. `weights` and `inputs` as for
    /// [`Program::setup_with`] and [`Program::online`]. The setup sends what
    /// [`Program::setup_with`] does, in as many parts as segments; a failure stops the peer
    /// too. The observer hears the phases "setup" and "online" in turns, each counting on
    /// from its last part.
    pub fn run_streamed(
        &self,
        session: &mut Session,
        peer: usize,
        weights: &[LinearWeights],
        inputs: &[(Value, Plain)],
    ) -> Result<Streamed, Error> {
        self.streamed(session, (peer, SEGMENT_WORDS), weights, inputs)
    }

    /// [`Program::run_streamed`] in segments of at most `budget` words.
    fn streamed(
        &self,
        session: &mut Session,
        (peer, budget): (usize, usize),
        weights: &[LinearWeights],
        inputs: &[(Value, Plain)],
    ) -> Result<Streamed, Error> {
        let ot = session.ot_choice();
        session.run(|s| {
            let (greeted, widths) = prepare::greet(self, s, peer, weights)?;
            let sizes = prepare::setup_sizes(self, ot.bytes_per_cot(), &widths);
            let segments = prepare::segments(&sizes, budget);
            let (setup_parts, online_parts) = if s.observed() {
                let online = self.ops.iter().map(|op| op.operation().traffic(self).bytes);
                let setup: Vec<u64> = sizes.iter().map(|b| b.bytes.round() as u64).collect();
                let online: Vec<u64> = online.collect();
                (
                    metered_parts(&setup, &segments),
                    metered_parts(&online, &segments),
                )
            } else {
                let none = vec![crate::MeteredPart::default(); segments.len()];
                (none.clone(), none)
            };
            let mut setup = prepare::Setup::start(self, s, greeted, widths, weights)?;
            let (side, delta) = setup.side_and_offset();
            let mut live = online::Live::new(self, s, side, delta);
            let mut steps = Vec::with_capacity(self.ops.len());
            for ((ops, setup_part), online_part) in
                segments.iter().zip(setup_parts).zip(online_parts)
            {
                let material = s.metered_part("setup", setup_part, |s| {
                    setup.segment(s, ops.clone(), &mut live.masks)
                })?;
                let done = s.metered_part("online", online_part, |s| {
                    online::run_ops(self, s, peer, &mut live, inputs, (ops.start, material))
                })?;
                steps.extend(done);
            }
            Ok(Streamed {
                outputs: live.outputs(),
                setup: setup.finish()?,
                steps,
            })
        })
    }

    /// How many operations the program has so far: [`Program::online_steps`] gives one step
    /// per operation, so a caller can group steps by where it was when adding them.
    pub fn op_count(&self) -> usize {
        self.ops.len()
    }

    /// Each operation's cost, in order: its setup bytes when the session's OT is `ot` (see
    /// [`tessera_ot::OtChoice::bytes_per_cot`]; the hello and the base OTs left out) and its
    /// online traffic, from the lengths the setup and online phases send. `weights` are the
    /// linear maps' coefficients, map by map, as far as they are known (the width a
    /// convolution's owner states depends on them: see [`linear`]); a map past them is costed
    /// at ℓ bits, the most.
    pub fn costs(&self, ot: tessera_ot::OtChoice, weights: &[LinearWeights]) -> Vec<Cost> {
        let widths = prepare::widths(self, weights);
        let setup = prepare::setup_sizes(self, ot.bytes_per_cot(), &widths);
        self.ops
            .iter()
            .zip(setup)
            .map(|(op, setup)| Cost {
                setup_bytes: setup.bytes.round() as u64,
                online: op.operation().traffic(self),
            })
            .collect()
    }

    /// The operations' names, in order (as [`Step::op`] gives them).
    pub fn describe(&self) -> Vec<&'static str> {
        self.ops.iter().map(|op| op.operation().name()).collect()
    }
}

/// The metered parts of a phase run segment by segment ([`Program::run_streamed`]): each
/// segment's bytes of the phase done before it, of the phase's total, from each operation's
/// estimated bytes (`per_op`).
fn metered_parts(per_op: &[u64], segments: &[std::ops::Range<usize>]) -> Vec<crate::MeteredPart> {
    let total = per_op.iter().sum();
    let mut before = 0;
    segments
        .iter()
        .enumerate()
        .map(|(k, ops)| {
            let part = crate::MeteredPart {
                before,
                total,
                ends: k + 1 == segments.len(),
            };
            before += per_op[ops.clone()].iter().sum::<u64>();
            part
        })
        .collect()
}
