//! Hybrid programs over MOTION2NX's five sharings (seed `003_09f17a858ba9cc5b.txt`,
//! §2 and App. A.2), written once and run as a setup phase that needs no inputs, then an
//! online phase:
//!
//! | sharing | a value x is held as | cost online |
//! |---|---|---|
//! | Y (Yao) | party 0: zero-labels K₀ and Δ; party 1: K₀ ⊕ x·Δ | AND: garbled by party 0, 32 bytes of tables, no round trip |
//! | B (Boolean GMW) | x = x₀ ⊕ x₁ | AND: 2 bits per party, 1 round |
//! | A (arithmetic GMW over Z_2^ℓ) | x = x₀ + x₁ | MUL: 2 elements per party, 1 round |
//! | β (ABY2.0 Boolean) | public Δx = x ⊕ δx, δx = δ₀ ⊕ δ₁ | AND: 1 bit per party, 1 round |
//! | α (ABY2.0 arithmetic) | public Δx = x + δx, δx = δ₀ + δ₁ | MUL: 1 element per party, 1 round |
//!
//! Values are SIMD vectors of `n` copies: Boolean values of `width` wires ([`Kind::Bits`]),
//! arithmetic ones of elements of Z_2^ℓ, ℓ ∈ {8, 16, 32, 64} ([`Kind::Ring`]). A
//! [`Program`] is plain data: the operations in order. [`Program::setup`] walks it once,
//! drawing GMW's triples and ABY2.0's masks and mask products (the [`algebra`] of shared random
//! vectors: ABY2.0 §3, MOTION2NX App. A.2); [`Program::online`] walks it again with the inputs,
//! one exchange per interactive operation.
//!
//! Operations (their setup and online costs are stated at each [`Program`] method):
//! XOR, AND, NOT, MUX and whole circuits ([`tessera_circuit`]) on Y, B and β; ADD, SUB, NEG,
//! multiplication by and addition of a public constant, MUL on A and α; the mixed products
//! bit × number (B·A → A, β·α → α) and bit × bit → number (β·β → α); conversions among the
//! four sharings ([`Program::convert`], routes in [`route`]).
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
pub mod linear;
mod online;
mod prepare;
pub mod ring;
#[cfg(test)]
mod tests;

pub use crate::boolean::Reveal;
use crate::boolean::{BoolCircuit, BoolSharing};
use crate::{Error, Session};
pub use linear::{LinearMap, LinearWeights};
pub use online::Step;
pub use prepare::{Prepared, SetupStep};
use sha2::{Digest, Sha256};
use tessera_circuit::Circuit;
use tessera_net::Kind as MessageKind;

/// The program's hello: the fingerprint of its operations.
pub const HELLO: MessageKind = MessageKind::new(0x50, "hybrid program hello");
/// The setup's Beaver openings.
pub const SETUP: MessageKind = MessageKind::new(0x51, "hybrid setup products");
/// The setup's cross products: the OT sender's corrections τ.
pub const CROSS: MessageKind = MessageKind::new(0x53, "hybrid setup cross products");
/// The setup of a private linear map: the owner's coefficients minus its random multipliers.
pub const LINEAR: MessageKind = MessageKind::new(0x54, "hybrid linear map coefficients");
/// An online operation's message.
pub const EXCHANGE: MessageKind = MessageKind::new(0x52, "hybrid operation");

/// A sharing of MOTION2NX.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sharing {
    /// Yao's garbled labels: party 0 (the garbler) holds each bit's zero-label K₀ and the
    /// free-XOR offset Δ (its OT sender's), party 1 (the evaluator) K₀ ⊕ x·Δ. XOR and NOT are
    /// local; AND and circuits are garbled online (half-gates) by party 0.
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

/// A primitive step between two sharings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Hop {
    /// B → β: open x ⊕ δ with a fresh mask. 1 round.
    BToBeta,
    /// β → B: local.
    BetaToB,
    /// A → α: open x + δ. 1 round.
    AToAlpha,
    /// α → A: local.
    AlphaToA,
    /// B → A with daBits: open x ⊕ r per bit. 1 round.
    BToA,
    /// β → A with the arithmetic sharing of each mask bit from the setup: local.
    BetaToA,
    /// Y → B: the labels' permutation bits (least significant bits) are XOR shares: local.
    YToB,
    /// B → Y: random correlated OTs of the setup, derandomised by the evaluator's share ⊕ its
    /// choice bit, the garbler folding its own share into the zero-label. 1 message, 1 bit per
    /// bit.
    BToY,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Op {
    Input {
        out: usize,
        owner: usize,
    },
    Xor {
        a: usize,
        b: usize,
        out: usize,
    },
    And {
        a: usize,
        b: usize,
        out: usize,
    },
    Not {
        a: usize,
        out: usize,
    },
    Add {
        a: usize,
        b: usize,
        out: usize,
    },
    Sub {
        a: usize,
        b: usize,
        out: usize,
    },
    AddConst {
        a: usize,
        c: u64,
        out: usize,
    },
    MulConst {
        a: usize,
        c: u64,
        out: usize,
    },
    Mul {
        a: usize,
        b: usize,
        out: usize,
    },
    BitMul {
        bit: usize,
        x: usize,
        out: usize,
    },
    BitProduct {
        a: usize,
        b: usize,
        out: usize,
    },
    Convert {
        hop: Hop,
        a: usize,
        out: usize,
    },
    /// A's shares as two B values, each held by one party (the other's share zero).
    Split {
        a: usize,
        out: [usize; 2],
    },
    Circuit {
        circuit: usize,
        inputs: Vec<usize>,
        outputs: Vec<usize>,
    },
    /// A circuit on Y values: the garbler garbles it on the inputs' zero-labels and sends the
    /// tables; the evaluator evaluates them.
    Garbled {
        circuit: usize,
        inputs: Vec<usize>,
        outputs: Vec<usize>,
    },
    /// Wires `start..start + len` of a Boolean value; `repeat`: wire `start` `len` times.
    Wires {
        a: usize,
        start: usize,
        len: usize,
        repeat: bool,
        out: usize,
    },
    Output {
        a: usize,
        reveal: Reveal,
    },
    /// Both parties wait for each other: one byte each way.
    Barrier,
    /// `maps[map]` with `owner`'s coefficients on an α value, into A.
    Linear {
        x: usize,
        map: usize,
        owner: usize,
        out: usize,
    },
    /// Copies of a ring value picked by `gathers[indices]`.
    Gather {
        a: usize,
        indices: usize,
        out: usize,
    },
    /// Local truncation of an A value by `f` bits: SecureML's (party 1 shifts its negated
    /// share), or each party shifting its share as an unsigned number (`unsigned`).
    Truncate {
        a: usize,
        f: u32,
        unsigned: bool,
        out: usize,
    },
    /// The top bit of each party's A share: party 1's as a one-wire B value, and each party's
    /// as an A value (the other's share zero).
    TopBits {
        a: usize,
        out: [usize; 3],
    },
}

impl Op {
    fn name(&self) -> &'static str {
        match self {
            Op::Input { .. } => "input",
            Op::Xor { .. } => "xor",
            Op::And { .. } => "and",
            Op::Not { .. } => "not",
            Op::Add { .. } => "add",
            Op::Sub { .. } => "sub",
            Op::AddConst { .. } => "add constant",
            Op::MulConst { .. } => "multiply by constant",
            Op::Mul { .. } => "mul",
            Op::BitMul { .. } => "bit × number",
            Op::BitProduct { .. } => "bit × bit",
            Op::Convert { hop, .. } => match hop {
                Hop::BToBeta => "b → beta",
                Hop::BetaToB => "beta → b",
                Hop::AToAlpha => "a → alpha",
                Hop::AlphaToA => "alpha → a",
                Hop::BToA => "b → a",
                Hop::BetaToA => "beta → a",
                Hop::YToB => "y → b",
                Hop::BToY => "b → y",
            },
            Op::Split { .. } => "a → b: split shares",
            Op::Circuit { .. } => "circuit",
            Op::Garbled { .. } => "garbled circuit",
            Op::Wires { .. } => "wires",
            Op::Output { .. } => "output",
            Op::Barrier => "barrier",
            Op::Linear { .. } => "linear map",
            Op::Truncate { .. } => "truncate",
            Op::TopBits { .. } => "top bits of the shares",
            Op::Gather { .. } => "gather",
        }
    }
}

/// A circuit for Y values of `n` copies: its `n` copies side by side
/// ([`tessera_circuit::simd`]) and their plan.
#[derive(Clone, Debug)]
struct YCircuit {
    widened: Circuit,
    plan: tessera_garble::Plan,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
    n: usize,
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
}

/// The route of a conversion: the sharings it passes through after the first. Direct hops:
/// Y ↔ B, B ↔ β, A ↔ α, B → A, β → A and A → B; the others go through B and A.
///
/// | hop | setup | online |
/// |---|---|---|
/// | Y → B, β → B, α → A | none | local |
/// | β → A | the arithmetic sharing of each mask bit (one Beaver product per bit) | local |
/// | B → β, A → α | a fresh mask | 1 round, 1 bit (element) per party |
/// | B → A | a daBit per bit (one Beaver product) | 1 round, 1 bit per bit and party |
/// | B → Y | a random correlated OT per bit | 1 message: the evaluator's bit ⊕ its OT choice |
/// | A → B | the triples of an ℓ-bit parallel-prefix adder | its AND-depth, log₂ ℓ + 1 rounds |
pub fn route(from: Sharing, to: Sharing) -> &'static [Sharing] {
    use Sharing::*;
    match (from, to) {
        (Y, B) | (Beta, B) | (A, B) => &[B],
        (B, Y) => &[Y],
        (B, Beta) => &[Beta],
        (A, Alpha) => &[Alpha],
        (Alpha, A) | (B, A) | (Beta, A) => &[A],
        (Y, Beta) | (A, Beta) => &[B, Beta],
        (Y, A) => &[B, A],
        (Y, Alpha) => &[B, A, Alpha],
        (Beta, Y) | (A, Y) => &[B, Y],
        (B, Alpha) | (Beta, Alpha) => &[A, Alpha],
        (Alpha, B) => &[A, B],
        (Alpha, Beta) => &[A, B, Beta],
        (Alpha, Y) => &[A, B, Y],
        _ => &[],
    }
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

fn bad(what: String) -> Error {
    Error::Input(what)
}

impl Program {
    /// An empty program.
    pub fn new() -> Self {
        Self::default()
    }

    fn value(&mut self, t: Type) -> usize {
        self.types.push(t);
        self.types.len() - 1
    }

    fn ty(&self, v: Value) -> Result<Type, Error> {
        self.types
            .get(v.0)
            .copied()
            .ok_or_else(|| bad(format!("value {} is not of this program", v.0)))
    }

    /// The type of `v`.
    pub fn type_of(&self, v: Value) -> Option<Type> {
        self.types.get(v.0).copied()
    }

    /// An input of party `owner` (0: the lower-numbered of the two). Online B and A: the
    /// owner sends the peer a random share; β and α: the owner, who alone knows the mask from
    /// the setup, sends Δ (one message, owner to peer). Y: a random correlated OT per bit from
    /// the setup, derandomised by the evaluator (one bit per bit, evaluator to garbler).
    pub fn input(&mut self, owner: usize, t: Type) -> Result<Value, Error> {
        if owner > 1 || t.n == 0 {
            return Err(bad(format!("input of party {owner} with {} copies", t.n)));
        }
        match (t.sharing.is_boolean(), t.kind) {
            (true, Kind::Bits(w)) if w > 0 => {}
            (false, Kind::Ring(b)) if ring::RING_BITS.contains(&b) => {}
            _ => {
                return Err(bad(format!(
                    "{:?} values cannot be {} shared",
                    t.kind,
                    t.sharing.name()
                )));
            }
        }
        let out = self.value(t);
        self.ops.push(Op::Input { out, owner });
        Ok(Value(out))
    }

    /// Checks that `a` and `b` have one type, Boolean or not as `boolean` says.
    fn same(&self, a: Value, b: Value, boolean: bool) -> Result<Type, Error> {
        let (ta, tb) = (self.ty(a)?, self.ty(b)?);
        if ta != tb {
            return Err(bad(format!("operands of types {ta:?} and {tb:?}")));
        }
        if ta.sharing.is_boolean() != boolean {
            return Err(bad(format!(
                "a {} operation on {} values",
                if boolean { "Boolean" } else { "arithmetic" },
                ta.sharing.name()
            )));
        }
        Ok(ta)
    }

    fn binary(
        &mut self,
        a: Value,
        b: Value,
        boolean: bool,
        op: fn(usize, usize, usize) -> Op,
    ) -> Result<Value, Error> {
        let t = self.same(a, b, boolean)?;
        let out = self.value(t);
        self.ops.push(op(a.0, b.0, out));
        Ok(Value(out))
    }

    /// a ⊕ b on B or β: local.
    pub fn xor(&mut self, a: Value, b: Value) -> Result<Value, Error> {
        self.binary(a, b, true, |a, b, out| Op::Xor { a, b, out })
    }

    /// a ∧ b on B (one triple per bit; online 2 bits per party, 1 round) or β (setup: δa·δb
    /// by Beaver; online 1 bit per party, 1 round).
    pub fn and(&mut self, a: Value, b: Value) -> Result<Value, Error> {
        let t = self.same(a, b, true)?;
        if t.sharing == Sharing::Y {
            // A garbled circuit of `width` AND gates.
            let w = t.width() as u32;
            let c = Circuit {
                num_wires: 3 * w,
                inputs: vec![w, w],
                outputs: vec![w],
                gates: (0..w)
                    .map(|i| tessera_circuit::Gate {
                        kind: tessera_circuit::GateKind::And,
                        a: i,
                        b: w + i,
                        out: 2 * w + i,
                    })
                    .collect(),
            };
            return Ok(self.circuit(&c, &[a, b])?[0]);
        }
        self.binary(a, b, true, |a, b, out| Op::And { a, b, out })
    }

    /// ¬a on B or β: local.
    pub fn not(&mut self, a: Value) -> Result<Value, Error> {
        let t = self.same(a, a, true)?;
        let out = self.value(t);
        self.ops.push(Op::Not { a: a.0, out });
        Ok(Value(out))
    }

    /// Wires `start..start + len` of a Boolean value: local.
    pub fn wires(&mut self, a: Value, start: usize, len: usize) -> Result<Value, Error> {
        self.wire_op(a, start, len, false)
    }

    /// Wire `at` of a Boolean value, `times` times: local.
    pub fn repeat(&mut self, a: Value, at: usize, times: usize) -> Result<Value, Error> {
        self.wire_op(a, at, times, true)
    }

    fn wire_op(
        &mut self,
        a: Value,
        start: usize,
        len: usize,
        repeat: bool,
    ) -> Result<Value, Error> {
        let t = self.same(a, a, true)?;
        let end = if repeat { start + 1 } else { start + len };
        if len == 0 || end > t.width() || len > u32::MAX as usize {
            return Err(bad(format!(
                "wires {start}..{end} of a {}-wire value",
                t.width()
            )));
        }
        let out = self.value(Type {
            kind: Kind::Bits(len as u32),
            ..t
        });
        self.ops.push(Op::Wires {
            a: a.0,
            start,
            len,
            repeat,
            out,
        });
        Ok(Value(out))
    }

    /// s ? a : b, as b ⊕ s·(a ⊕ b), with `s` one wire (repeated over the width): one AND.
    pub fn mux(&mut self, s: Value, a: Value, b: Value) -> Result<Value, Error> {
        let width = self.same(a, b, true)?.width();
        let s = self.repeat(s, 0, width)?;
        let d = self.xor(a, b)?;
        let m = self.and(s, d)?;
        self.xor(b, m)
    }

    /// a + b on A or α: local.
    pub fn add(&mut self, a: Value, b: Value) -> Result<Value, Error> {
        self.binary(a, b, false, |a, b, out| Op::Add { a, b, out })
    }

    /// a − b on A or α: local.
    pub fn sub(&mut self, a: Value, b: Value) -> Result<Value, Error> {
        self.binary(a, b, false, |a, b, out| Op::Sub { a, b, out })
    }

    /// −a on A or α: local.
    pub fn neg(&mut self, a: Value) -> Result<Value, Error> {
        self.mul_const(a, u64::MAX)
    }

    /// a + c for a public c on A or α: local.
    pub fn add_const(&mut self, a: Value, c: u64) -> Result<Value, Error> {
        let t = self.same(a, a, false)?;
        let out = self.value(t);
        self.ops.push(Op::AddConst { a: a.0, c, out });
        Ok(Value(out))
    }

    /// c·a for a public c on A or α: local.
    pub fn mul_const(&mut self, a: Value, c: u64) -> Result<Value, Error> {
        let t = self.same(a, a, false)?;
        let out = self.value(t);
        self.ops.push(Op::MulConst { a: a.0, c, out });
        Ok(Value(out))
    }

    /// a·b on A (one triple per element; online 2 elements per party, 1 round) or α (setup:
    /// δa·δb by Beaver; online 1 element per party, 1 round).
    pub fn mul(&mut self, a: Value, b: Value) -> Result<Value, Error> {
        self.binary(a, b, false, |a, b, out| Op::Mul { a, b, out })
    }

    /// bit × number: B·A → A (setup: a daBit r and a random a with r·a; online the bit ⊕ r and
    /// x − a, 1 round) or β·α → α (setup: the arithmetic sharing of the bit's mask and its
    /// product with x's mask; online 1 element per party, 1 round). `bit` is one wire.
    pub fn bit_mul(&mut self, bit: Value, x: Value) -> Result<Value, Error> {
        let (tb, tx) = (self.ty(bit)?, self.ty(x)?);
        let pair = matches!(
            (tb.sharing, tx.sharing),
            (Sharing::B, Sharing::A) | (Sharing::Beta, Sharing::Alpha)
        );
        if !pair || tb.kind != Kind::Bits(1) || tb.n != tx.n {
            return Err(bad(format!(
                "bit × number takes a one-wire B (β) bit and an A (α) number of as many copies, got {tb:?} and {tx:?}"
            )));
        }
        let out = self.value(tx);
        self.ops.push(Op::BitMul {
            bit: bit.0,
            x: x.0,
            out,
        });
        Ok(Value(out))
    }

    /// bit × bit as an element of Z_2^`bits`: β·β → α (setup: both masks' arithmetic sharings
    /// and their product; online 1 element per party, 1 round).
    pub fn bit_product(&mut self, a: Value, b: Value, bits: u32) -> Result<Value, Error> {
        let t = self.same(a, b, true)?;
        if t.sharing != Sharing::Beta || t.kind != Kind::Bits(1) || !ring::RING_BITS.contains(&bits)
        {
            return Err(bad(format!(
                "bit × bit takes two one-wire β bits and ℓ in 8, 16, 32, 64, got {t:?} and ℓ = {bits}"
            )));
        }
        let out = self.value(Type {
            sharing: Sharing::Alpha,
            kind: Kind::Ring(bits),
            n: t.n,
        });
        self.ops.push(Op::BitProduct {
            a: a.0,
            b: b.0,
            out,
        });
        Ok(Value(out))
    }

    /// `a` in sharing `to`, along [`route`]. Boolean values of `w` wires become elements of
    /// Z_2^w (w ∈ {8, 16, 32, 64}; [`Program::convert_to_ring`] picks ℓ), ring elements
    /// become their ℓ bits (least significant first).
    pub fn convert(&mut self, a: Value, to: Sharing) -> Result<Value, Error> {
        let t = self.ty(a)?;
        self.convert_to_ring(a, to, t.ring_bits())
    }

    /// [`Program::convert`], a Boolean value of w ≤ `bits` wires becoming Σ 2^j·x_j in
    /// Z_2^`bits` (a single bit: 0 or 1).
    pub fn convert_to_ring(&mut self, a: Value, to: Sharing, bits: u32) -> Result<Value, Error> {
        let t = self.ty(a)?;
        if t.sharing.is_boolean() && !to.is_boolean() {
            let w = t.width() as u32;
            if !ring::RING_BITS.contains(&bits) || w > bits {
                return Err(bad(format!(
                    "a {w}-wire value into Z_2^{bits}: ℓ must be 8, 16, 32 or 64 and at least the width"
                )));
            }
        }
        let mut at = a;
        for &next in route(t.sharing, to) {
            at = self.hop(at, next, bits)?;
        }
        Ok(at)
    }

    fn hop(&mut self, a: Value, to: Sharing, bits: u32) -> Result<Value, Error> {
        use Sharing::*;
        let t = self.ty(a)?;
        let hop = match (t.sharing, to) {
            (B, Beta) => Hop::BToBeta,
            (Beta, B) => Hop::BetaToB,
            (A, Alpha) => Hop::AToAlpha,
            (Alpha, A) => Hop::AlphaToA,
            (B, A) => Hop::BToA,
            (Beta, A) => Hop::BetaToA,
            (Y, B) => Hop::YToB,
            (B, Y) => Hop::BToY,
            (A, B) => return self.a_to_b(a),
            _ => return Err(bad(format!("no hop {} → {}", t.sharing.name(), to.name()))),
        };
        let kind = match hop {
            Hop::BToA | Hop::BetaToA => Kind::Ring(bits),
            _ => t.kind,
        };
        let out = self.value(Type {
            sharing: to,
            kind,
            n: t.n,
        });
        self.ops.push(Op::Convert { hop, a: a.0, out });
        Ok(Value(out))
    }

    /// A → B: the two shares as B values, added by the library's parallel-prefix adder.
    fn a_to_b(&mut self, a: Value) -> Result<Value, Error> {
        self.split_into("addpp", a, Sharing::B)
    }

    /// The most significant bit of an A value (its sign in two's complement) as a one-wire
    /// value of the Boolean sharing `to` (B, β or Y): the two shares as B values (converted to
    /// `to`: β 1 round, Y a random correlated OT per bit) into the library's `msbadd` circuit,
    /// which forms only the carry into the top bit (181 AND gates at ℓ = 64 where the whole
    /// A → B adder takes 373, at the same AND-depth 1 + ⌈log₂(ℓ − 1)⌉).
    pub fn sign(&mut self, a: Value, to: Sharing) -> Result<Value, Error> {
        let t = self.ty(a)?;
        if t.sharing != Sharing::A || !to.is_boolean() {
            return Err(bad(format!(
                "the sign of a value in {} into {}: an A value into B, β or Y",
                t.sharing.name(),
                to.name()
            )));
        }
        self.split_into("msbadd", a, to)
    }

    /// The circuit `name<ℓ>` of the library on the two shares of an A value, each a B value
    /// converted to `sharing`.
    fn split_into(&mut self, name: &str, a: Value, sharing: Sharing) -> Result<Value, Error> {
        let t = self.ty(a)?;
        let bits = t.ring_bits();
        let half = Type {
            sharing: Sharing::B,
            kind: Kind::Bits(bits),
            n: t.n,
        };
        let out = [self.value(half), self.value(half)];
        self.ops.push(Op::Split { a: a.0, out });
        let mut halves = [Value(out[0]), Value(out[1])];
        if sharing != Sharing::B {
            for h in &mut halves {
                *h = self.convert(*h, sharing)?;
            }
        }
        let circuit = tessera_circuit::library::builtin(&format!("{name}{bits}"))
            .ok_or_else(|| bad(format!("no circuit {name}{bits}")))??;
        let sum = self.circuit(&circuit, &halves)?;
        Ok(sum[0])
    }

    /// A circuit of [`tessera_circuit`] on Boolean values of one sharing (Y, B or β) and as
    /// many copies, one per input value of its width; returns one value per output value. B
    /// and β: one round per AND layer, the setup as for whole circuits ([`crate::boolean`]);
    /// Y: garbled online, one message of tables.
    pub fn circuit(&mut self, c: &Circuit, inputs: &[Value]) -> Result<Vec<Value>, Error> {
        let types: Vec<Type> = inputs
            .iter()
            .map(|&v| self.ty(v))
            .collect::<Result<_, _>>()?;
        let Some(&first) = types.first() else {
            return Err(bad("a circuit needs inputs".into()));
        };
        let widths: Vec<u32> = types.iter().map(|t| t.width() as u32).collect();
        if c.inputs != widths
            || types
                .iter()
                .any(|t| t.sharing != first.sharing || t.n != first.n)
        {
            return Err(bad(format!(
                "a circuit with inputs of {:?} bits given values {types:?}",
                c.inputs
            )));
        }
        let sharing = match first.sharing {
            Sharing::B => BoolSharing::Gmw,
            Sharing::Beta => BoolSharing::Aby2,
            Sharing::Y => return self.garbled_circuit(c, inputs, first),
            s => return Err(bad(format!("circuits run in Y, B or β, not {}", s.name()))),
        };
        self.circuits
            .push(BoolCircuit::new(c.clone(), sharing, first.n)?);
        let outputs = self.circuit_outputs(c, first);
        self.ops.push(Op::Circuit {
            circuit: self.circuits.len() - 1,
            inputs: inputs.iter().map(|v| v.0).collect(),
            outputs: outputs.clone(),
        });
        Ok(outputs.into_iter().map(Value).collect())
    }

    /// New values for the outputs of circuit `c` run on values of type `t`.
    fn circuit_outputs(&mut self, c: &Circuit, t: Type) -> Vec<usize> {
        c.outputs
            .iter()
            .map(|&w| {
                self.value(Type {
                    kind: Kind::Bits(w),
                    ..t
                })
            })
            .collect()
    }

    /// [`Program::circuit`] on Y values: garbled online by party 0 (half-gates with the
    /// fixed-key hash, free XOR with the OT's Δ), the tables sent in one message.
    fn garbled_circuit(
        &mut self,
        c: &Circuit,
        inputs: &[Value],
        t: Type,
    ) -> Result<Vec<Value>, Error> {
        let widened = tessera_circuit::simd::simd(c, t.n)?;
        let plan = tessera_garble::Plan::default_for(&widened, tessera_garble::XorGates::Free);
        self.garbled.push(YCircuit {
            widened,
            plan,
            inputs: c.inputs.clone(),
            outputs: c.outputs.clone(),
            n: t.n,
        });
        let outputs = self.circuit_outputs(c, t);
        self.ops.push(Op::Garbled {
            circuit: self.garbled.len() - 1,
            inputs: inputs.iter().map(|v| v.0).collect(),
            outputs: outputs.clone(),
        });
        Ok(outputs.into_iter().map(Value).collect())
    }

    /// Opens `a` to `reveal`: the other party sends its share (B, A) or its mask share (β,
    /// α). One message.
    pub fn output(&mut self, a: Value, reveal: Reveal) -> Result<Output, Error> {
        self.ty(a)?;
        if let Reveal::To(p) = reveal
            && p > 1
        {
            return Err(bad(format!("party {p} of two")));
        }
        self.ops.push(Op::Output { a: a.0, reveal });
        self.outputs.push(a.0);
        Ok(Output(self.outputs.len() - 1))
    }

    /// `map` on the α value `x` with coefficients private to party `owner`, given to its
    /// [`Program::setup_with`]: an A value of `map.outputs()` elements, the owner's bias added.
    /// Setup: Gilboa's products of the other party's mask share by the coefficients (see
    /// [`linear`]); online: local.
    pub fn linear(&mut self, x: Value, map: LinearMap, owner: usize) -> Result<Value, Error> {
        let t = self.ty(x)?;
        if t.sharing != Sharing::Alpha || !matches!(t.kind, Kind::Ring(_)) {
            return Err(bad(format!(
                "a linear map on a {} value; it takes α",
                t.sharing.name()
            )));
        }
        if t.n != map.inputs() || owner > 1 {
            return Err(bad(format!(
                "a linear map of {} inputs on {} copies, owner {owner}",
                map.inputs(),
                t.n
            )));
        }
        let out = self.value(Type {
            sharing: Sharing::A,
            kind: t.kind,
            n: map.outputs(),
        });
        self.maps.push(map);
        self.ops.push(Op::Linear {
            x: x.0,
            map: self.maps.len() - 1,
            owner,
            out,
        });
        Ok(Value(out))
    }

    /// The copies `indices` of a ring value (A or α), in that order (repeats allowed): a
    /// vector of `indices.len()` copies. Local.
    pub fn gather(&mut self, a: Value, indices: Vec<u32>) -> Result<Value, Error> {
        let t = self.ty(a)?;
        if t.sharing.is_boolean()
            || indices.iter().any(|&i| i as usize >= t.n)
            || indices.is_empty()
        {
            return Err(bad(format!(
                "gathering {} copies of a {} value of {}",
                indices.len(),
                t.sharing.name(),
                t.n
            )));
        }
        let out = self.value(Type {
            n: indices.len(),
            ..t
        });
        self.gathers.push(indices);
        self.ops.push(Op::Gather {
            a: a.0,
            indices: self.gathers.len() - 1,
            out,
        });
        Ok(Value(out))
    }

    /// ⌊a / 2^f⌋ of an A value, by SecureML's local truncation: off by one in the last place,
    /// and wrong with probability at most 2^(ℓₐ + 1 − ℓ) where |a| < 2^ℓₐ. Local.
    pub fn truncate(&mut self, a: Value, f: u32) -> Result<Value, Error> {
        let t = self.ty(a)?;
        if t.sharing != Sharing::A || f >= t.ring_bits() {
            return Err(bad(format!(
                "truncating a {} value by {f} bits; it takes A and fewer bits than the ring",
                t.sharing.name()
            )));
        }
        let out = self.value(t);
        self.ops.push(Op::Truncate {
            a: a.0,
            f,
            unsigned: false,
            out,
        });
        Ok(Value(out))
    }

    /// ⌊a / 2^f⌋ or one more of an A value known to lie in [0, 2^(ℓ−1)) (a ReLU's output, a
    /// maximum of such), never a large error, and never negative: each party shifts its share
    /// as an unsigned number, which gives ⌊a/2^f⌋ − c + w·2^(ℓ−f) for the low bits' carry c and
    /// the wrap w of the shares' sum; w = m₀ ∨ m₁ for the shares' top bits m₀, m₁ (a's own top
    /// bit being 0) is taken off, with m₀·m₁ by one B·A product (setup: a daBit and a product;
    /// online 1 round, 1 bit and one element per party), and 1 added. The exact variant of
    /// [`Program::truncate`] (Mohassel and Zhang's local truncation errs with probability about
    /// |a|/2^(ℓ−1), which matters at ℓ = 32).
    pub fn truncate_nonnegative(&mut self, a: Value, f: u32) -> Result<Value, Error> {
        let t = self.ty(a)?;
        if t.sharing != Sharing::A || f >= t.ring_bits() {
            return Err(bad(format!(
                "truncating a {} value by {f} bits; it takes A and fewer bits than the ring",
                t.sharing.name()
            )));
        }
        let bit = self.value(Type {
            kind: Kind::Bits(1),
            sharing: Sharing::B,
            n: t.n,
        });
        let out = [bit, self.value(t), self.value(t)];
        self.ops.push(Op::TopBits { a: a.0, out });
        let (m1, a0, a1) = (Value(out[0]), Value(out[1]), Value(out[2]));
        let both = self.bit_mul(m1, a0)?;
        let either = self.add(a0, a1)?;
        let wrap = self.sub(either, both)?;
        let wrap = self.mul_const(wrap, 1u64 << (t.ring_bits() - f))?;
        let low = self.value(t);
        self.ops.push(Op::Truncate {
            a: a.0,
            f,
            unsigned: true,
            out: low,
        });
        let exact_or_less = self.sub(Value(low), wrap)?;
        self.add_const(exact_or_less, 1)
    }

    /// Both parties wait for each other here (one byte each way, one round): for timing the
    /// operations after it apart from a peer still busy with those before.
    pub fn barrier(&mut self) {
        self.ops.push(Op::Barrier);
    }

    /// SHA-256 of the program: both parties must run the same.
    pub fn fingerprint(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(b"tessera/hybrid/1");
        h.update(format!("{:?}{:?}", self.types, self.ops).as_bytes());
        for c in &self.circuits {
            h.update(c.fingerprint(Reveal::Both));
        }
        for c in &self.garbled {
            crate::yao::hash_circuit(&mut h, &c.widened);
        }
        for m in &self.maps {
            h.update(m.digest_bytes());
        }
        for g in &self.gathers {
            h.update((g.len() as u64).to_le_bytes());
            h.update(g.iter().flat_map(|i| i.to_le_bytes()).collect::<Vec<u8>>());
        }
        h.finalize().into()
    }

    /// The setup with `peer`: the hello, the triples from the session's OT, and the masks and
    /// mask products of ABY2.0's values, resolved in as many exchanges as the products are
    /// deep (at most 2).
    pub fn setup(&self, session: &mut Session, peer: usize) -> Result<Prepared, Error> {
        Ok(prepare::setup(self, session, peer, &[])?.0)
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
        Ok(prepare::setup(self, session, peer, weights)?.0)
    }

    /// [`Program::setup_with`], also returning the setup's parts with their time and traffic:
    /// the shared parts, and each linear map's (with its operation's index).
    pub fn setup_steps(
        &self,
        session: &mut Session,
        peer: usize,
        weights: &[LinearWeights],
    ) -> Result<(Prepared, Vec<SetupStep>), Error> {
        prepare::setup(self, session, peer, weights)
    }

    /// The online phase with `peer` on this party's `inputs` (one per input value it owns),
    /// with a setup of this program. Returns each output, if this party learns it.
    pub fn online(
        &self,
        session: &mut Session,
        peer: usize,
        prepared: Prepared,
        inputs: &[(Value, Plain)],
    ) -> Result<Vec<Option<Plain>>, Error> {
        Ok(online::run(self, session, peer, prepared, inputs)?.0)
    }

    /// [`Program::online`], also returning each operation's time and traffic, in order.
    pub fn online_steps(
        &self,
        session: &mut Session,
        peer: usize,
        prepared: Prepared,
        inputs: &[(Value, Plain)],
    ) -> Result<(Vec<Option<Plain>>, Vec<Step>), Error> {
        online::run(self, session, peer, prepared, inputs)
    }

    /// How many operations the program has so far: [`Program::online_steps`] gives one step
    /// per operation, so a caller can group steps by where it was when adding them.
    pub fn op_count(&self) -> usize {
        self.ops.len()
    }

    /// The operations' names, in order (as [`Step::op`] gives them).
    pub fn describe(&self) -> Vec<&'static str> {
        self.ops.iter().map(Op::name).collect()
    }
}
