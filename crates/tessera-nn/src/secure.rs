//! Private inference: a [`Model`] compiled to a hybrid program
//! ([`tessera_protocols::hybrid`]) between the model's owner (the server, party 0, whose
//! weights enter the setup) and the client (party 1, whose input enters online and who alone
//! learns the logits, or only the class: [`Output`]).
//!
//! Layers (MOTION2NX, Braun et al., App. A.3), in any of its four
//! combinations of sharings ([`Protocol`]):
//! - Gemm and Conv: private linear maps on α ([`tessera_protocols::hybrid::linear`]; the
//!   image-to-column layout of [`crate::kernels::im2col`]), bias at 2f bits. An A input is
//!   turned into α first (1 round).
//! - Truncation by f ([`Truncation`]): SecureML's local truncation right after each product
//!   (wrong with probability about |x|/2^(ℓ−1); at ℓ = 64 where that is rare for the model),
//!   or deferred past ReLU and max pooling, whose outputs are non-negative, and exact there
//!   ([`Program::truncate_nonnegative`], 1 round), and exact where a value of either sign
//!   must be truncated (a sum of branches, a clip, a pool: [`Program::truncate_bounded`], 1
//!   round); logits at 2^2f are truncated by the client in the clear ([`Compiled::logits`]).
//! - ReLU: the sign by [`Program::sign`] (the carry tree of the two A shares' sum, in B, β or
//!   Y), then NOT of it times the value (B·A → A or β·α → α, 1 round).
//! - MaxPool: a tree of max(a, b) = a + ReLU(b − a) over the window's offsets, each level one
//!   ReLU on all pairs (padding repeats one of the window's inputs); AveragePool and
//!   GlobalAveragePool: sums times the public ⌊2^f/k⌉, then truncation (padding adds zeros;
//!   windows of each divisor, [`crate::model::Pool::divisor`], are averaged apart).
//! - Reshape, Flatten, Transpose: data movement (gathers of copies); Add and Sub of computed
//!   tensors: local; Add of a constant: the server's A input (its constant is a weight).
//!
//! [`estimate`] gives each layer's bytes and rounds without running the protocol.

use crate::error::Error;
use crate::fixed::{Arith, Fixed};
use crate::model::Model;
use crate::op::arguments;
use tessera_protocols::hybrid::{
    Cost, Kind, LinearMap, LinearMethod, LinearWeights, Program, Reveal, Sharing, Type, Value,
    linear,
};

/// MOTION2NX's combinations of sharings (Braun et al., Tables 1-3): the
/// linear layers always run on α (private linear maps, local online); the arithmetic sharing
/// of ReLU's and the pools' outputs, and the Boolean sharing of the sign.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
    /// A and B (GMW): the sign in B (one round per AND layer), B·A.
    AB,
    /// A and Y: the sign garbled by the server (tables in the setup, a constant number of rounds),
    /// back to B locally, B·A.
    AY,
    /// α and β (ABY2.0): the sign in β (half GMW's online bits, one round per AND layer),
    /// β·α; outputs stay in α for the next linear map.
    AlphaBeta,
    /// α and Y: the sign garbled, to β (1 round), β·α.
    AlphaY,
}

impl Protocol {
    /// All four.
    pub const ALL: [Protocol; 4] = [
        Protocol::AB,
        Protocol::AY,
        Protocol::AlphaBeta,
        Protocol::AlphaY,
    ];

    /// The name the command line uses: `a+b`, `a+y`, `alpha+beta`, `alpha+y`.
    pub fn name(self) -> &'static str {
        match self {
            Protocol::AB => "a+b",
            Protocol::AY => "a+y",
            Protocol::AlphaBeta => "alpha+beta",
            Protocol::AlphaY => "alpha+y",
        }
    }

    /// The sharing the sign is computed in.
    pub fn boolean(self) -> Sharing {
        match self {
            Protocol::AB => Sharing::B,
            Protocol::AY | Protocol::AlphaY => Sharing::Y,
            Protocol::AlphaBeta => Sharing::Beta,
        }
    }

    /// The sharing of ReLU's output.
    pub fn arithmetic(self) -> Sharing {
        match self {
            Protocol::AB | Protocol::AY => Sharing::A,
            Protocol::AlphaBeta | Protocol::AlphaY => Sharing::Alpha,
        }
    }
}

/// How a product's scale 2^2f is brought back to 2^f (truncation by f).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Truncation {
    /// [`Truncation::Exact`] at ℓ = 32, and at ℓ = 64 where [`Truncation::Local`]'s failures
    /// are not rare for this model (`Truncation::resolve`).
    Auto,
    /// SecureML's local truncation (Mohassel and Zhang, S&P 2017, §4.1) right after each
    /// product: free, off by one in the last place, and wrong by about 2^(ℓ−f) with
    /// probability |x|/2^(ℓ−1) per element (x at scale 2^2f). ReLU's and the pools' outputs
    /// stay in α for the next map. At ℓ = 64 only.
    Local,
    /// Deferred to where the value is known to be non-negative (after ReLU and max pooling)
    /// and exact there ([`Program::truncate_nonnegative`]), or exact with an offset of
    /// 2^(ℓ−2) where a value of either sign must be truncated
    /// ([`Program::truncate_bounded`]): one B·A product and one round per element, never the
    /// large error.
    Exact,
}

impl Truncation {
    /// The three choices.
    pub const ALL: [Truncation; 3] = [Truncation::Auto, Truncation::Local, Truncation::Exact];

    /// The name the command line uses: `auto`, `local`, `exact`.
    pub fn name(self) -> &'static str {
        match self {
            Truncation::Auto => "auto",
            Truncation::Local => "local",
            Truncation::Exact => "exact",
        }
    }

    /// The choice for `fixed`: [`Truncation::Exact`] for `Auto` at ℓ = 32, `Auto` left for
    /// [`compile`] to decide at ℓ = 64, and an error for local truncation at ℓ = 32, where it
    /// errs about once in 2^(31−2f−m) elements of magnitude 2^m.
    fn resolve(self, fixed: Fixed) -> Result<Truncation, Error> {
        match self {
            Truncation::Local if fixed.bits() < 64 => Err(Error::Input(format!(
                "local truncation at ℓ = {}: wrong too often there; use exact (or ℓ = 64)",
                fixed.bits()
            ))),
            Truncation::Auto if fixed.bits() < 64 => Ok(Truncation::Exact),
            chosen => Ok(chosen),
        }
    }
}

/// The magnitude [`Truncation::Auto`] assumes of a product's real value: below 2^4.
const AUTO_MAGNITUDE_BITS: u32 = 4;
/// [`Truncation::Auto`]'s bound on local truncation's expected failures per inference: 2^−10.
const AUTO_FAILURE_BITS: u32 = 10;

/// Whether `truncated` local truncations in `fixed` would fail more often than once in
/// 2^[`AUTO_FAILURE_BITS`] inferences, each failing with probability 2^(m + 2f + 1 − ℓ) for a
/// real value below 2^m, m = [`AUTO_MAGNITUDE_BITS`] (SecureML, Theorem 1).
fn local_failures_matter(truncated: u64, fixed: Fixed) -> bool {
    let per_element = AUTO_MAGNITUDE_BITS + 2 * fixed.frac() + 1;
    let allowed = fixed.bits().saturating_sub(per_element + AUTO_FAILURE_BITS);
    truncated > 1u64.checked_shl(allowed).unwrap_or(u64::MAX)
}

/// How the products of a private linear layer (Conv, Gemm, MatMul and Mul by constants,
/// BatchNormalization) with the client's mask are made in the setup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LinearChoice {
    /// Per layer, the method of fewer setup bytes ([`LinearMethod::cheaper`], at coefficients
    /// of f + 4 bits and the answers' nominal primes): homomorphic for convolutions and
    /// dense layers, Gilboa's where a layer's products are few (depthwise and 1 × 1 maps of
    /// few channels).
    Auto,
    /// Homomorphic products on the client's encrypted mask: Cheetah's HomConv and HomFC under
    /// RLWE ([`LinearMethod::Lattice`]).
    He,
    /// Gilboa's products on correlated OT (MOTION2NX; [`LinearMethod::Products`]).
    Ot,
}

impl LinearChoice {
    /// The three choices.
    pub const ALL: [LinearChoice; 3] = [LinearChoice::Auto, LinearChoice::He, LinearChoice::Ot];

    /// The name the command line uses: `auto`, `he`, `ot`.
    pub fn name(self) -> &'static str {
        match self {
            LinearChoice::Auto => "auto",
            LinearChoice::He => "he",
            LinearChoice::Ot => "ot",
        }
    }

    /// The method for `map` in `fixed` with `ot`'s correlated OTs.
    fn method(self, map: &LinearMap, fixed: Fixed, ot: tessera_ot::OtChoice) -> LinearMethod {
        match self {
            LinearChoice::He => LinearMethod::Lattice,
            LinearChoice::Ot => LinearMethod::Products,
            LinearChoice::Auto => {
                let width = (fixed.frac() + 4).min(fixed.bits());
                LinearMethod::cheaper(map, fixed.bits(), width, ot)
            }
        }
    }
}

/// How the non-linear layers' signs (ReLU, max pooling, the smooth functions' ranges) and
/// their selections bit × value are computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NonlinearChoice {
    /// [`NonlinearChoice::Millionaire`] for [`Protocol::AB`], whose GMW circuit it replaces
    /// in fewer than half its bytes on ImageNet-sized layers (with Ferret, on a network of a
    /// few thousand ReLUs, Ferret's iterations of 6.2 million OTs can make it dearer);
    /// [`NonlinearChoice::Circuit`] for the others (the garbled sign of the Y protocols and
    /// ABY2.0's β sign being what their names choose).
    Auto,
    /// The sign by a millionaires' protocol on silent OT ([`Program::sign_by_comparison`]:
    /// CrypTFlow2 §3.1 as Cheetah runs it), in B and converted to the protocol's Boolean
    /// sharing where it is another; bit × value by random OT ([`Program::select`]) for the A
    /// protocols, β·α for the α ones. A value at scale 2^2f is compared without its low f
    /// bits: one below a unit in the last place of its truncated result may be taken as
    /// negative (ReLU then gives 0 for it, within the truncation's error). ResNet-50's ReLU
    /// layers at ℓ = 32 with Ferret b12 send 35 bytes a ReLU where the GMW circuit and the
    /// daBit product send 81.5 (`tessera nn info resnet50 --ot ferret`).
    Millionaire,
    /// The sign by the protocol's Boolean circuit ([`Program::sign`]: GMW's, ABY2.0's or
    /// garbled) and bit × value by a daBit (B·A) or ABY2.0's β·α: MOTION2NX's lowering.
    Circuit,
}

impl NonlinearChoice {
    /// The three choices.
    pub const ALL: [NonlinearChoice; 3] = [
        NonlinearChoice::Auto,
        NonlinearChoice::Millionaire,
        NonlinearChoice::Circuit,
    ];

    /// The name the command line uses: `auto`, `millionaire`, `circuit`.
    pub fn name(self) -> &'static str {
        match self {
            NonlinearChoice::Auto => "auto",
            NonlinearChoice::Millionaire => "millionaire",
            NonlinearChoice::Circuit => "circuit",
        }
    }

    /// The choice for `protocol`: [`NonlinearChoice::Millionaire`] or
    /// [`NonlinearChoice::Circuit`], `Auto` resolved.
    pub fn resolve(self, protocol: Protocol) -> NonlinearChoice {
        match self {
            NonlinearChoice::Auto if protocol == Protocol::AB => NonlinearChoice::Millionaire,
            NonlinearChoice::Auto => NonlinearChoice::Circuit,
            chosen => chosen,
        }
    }
}

/// `FromStr` and `Display` of a choice by its names (`ALL` and `name`): the command line's and
/// the Python package's spelling; an unknown name is answered with the list.
macro_rules! named_choices {
    ($($t:ty),*) => {$(
        impl std::str::FromStr for $t {
            type Err = String;

            fn from_str(s: &str) -> Result<Self, String> {
                <$t>::ALL.into_iter().find(|c| c.name() == s).ok_or_else(|| {
                    let names: Vec<&str> = <$t>::ALL.iter().map(|c| c.name()).collect();
                    format!("one of {}", names.join(", "))
                })
            }
        }

        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    )*};
}

named_choices!(Truncation, LinearChoice, NonlinearChoice);

/// The server: the model's owner.
pub const SERVER: usize = 0;
/// The client: the input's owner, who learns the output.
pub const CLIENT: usize = 1;

/// A model compiled for private inference.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// The hybrid program both parties run.
    pub program: Program,
    /// The client's input (α).
    pub input: Value,
    /// The server's coefficients for the program's linear maps, in order (empty for a
    /// stripped model: the client has none).
    pub weights: Vec<LinearWeights>,
    /// The server's constant tensors (Add of a constant), its inputs of the online phase, in
    /// fixed point (empty for a stripped model).
    pub constants: Vec<(Value, Vec<u64>)>,
    /// The number system.
    pub fixed: Fixed,
    /// How products are truncated: [`Truncation::Local`] or [`Truncation::Exact`].
    pub truncation: Truncation,
    /// The elements truncated per inference (all of a batch's).
    pub truncated: u64,
    /// How signs are computed: [`NonlinearChoice::Millionaire`] or
    /// [`NonlinearChoice::Circuit`].
    pub nonlinear: NonlinearChoice,
    /// The model's layers in order, each with the program operations it became.
    pub layers: Vec<Layer>,
    /// Whether the revealed logits are at scale 2^2f (the last layer's truncation left to the
    /// client, in the clear: [`Compiled::logits`]).
    pub output_double: bool,
    /// What the client learns.
    pub output: Output,
    /// Inputs per inference: the client's input is their tensors one after another, and so
    /// is what it learns.
    pub batch: usize,
    /// The OT the setup draws its correlations from ([`Options::ot`]).
    pub ot: tessera_ot::OtChoice,
    /// Threads of this party's local work ([`Options::threads`]).
    pub threads: usize,
    /// Each operation's estimated setup bytes, made at first need ([`Compiled::setup_bytes`]).
    setup_bytes: std::sync::OnceLock<Vec<u64>>,
}

impl Compiled {
    /// Each operation's setup bytes as the cost model estimates them ([`Program::costs`] with
    /// this OT and these weights), walked once, at the first report that weighs the setup's
    /// shared parts by them.
    pub fn setup_bytes(&self) -> &[u64] {
        self.setup_bytes.get_or_init(|| {
            let costs = self.program.costs(self.ot, &self.weights);
            costs.iter().map(|k| k.setup_bytes).collect()
        })
    }

    /// The session both parties run this program on: its OT.
    pub fn session_config(&self) -> tessera_protocols::SessionConfig {
        tessera_protocols::SessionConfig::with_ot(self.ot)
    }

    /// The logits at scale 2^f from the revealed output: ⌊y/2^f⌋ in the clear where the
    /// output is at 2^2f, as the plaintext reference truncates.
    pub fn logits(&self, revealed: Vec<u64>) -> Vec<u64> {
        if !self.output_double || self.output == Output::Class {
            return revealed;
        }
        revealed
            .into_iter()
            .map(|v| self.fixed.rescale(v))
            .collect()
    }
}

/// One layer of a compiled model.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layer {
    /// The node's name.
    pub name: String,
    /// Its operator ([`crate::model::Op::kind`]).
    pub op: &'static str,
    /// Its class in VASA's per-operator table ([`crate::infer::CLASSES`]).
    pub class: &'static str,
    /// Its operations in the program: indices into [`Program::online_steps`]' steps.
    pub ops: std::ops::Range<usize>,
}

/// A value being compiled: its sharing is A or α; its scale 2^f, or 2^2f where a product's
/// truncation is deferred to where it is cheapest (after ReLU, whose output is non-negative:
/// exact truncation then costs one round, [`Program::truncate_nonnegative`]); whether it is
/// known to be non-negative.
#[derive(Clone, Copy)]
pub(crate) struct Shared {
    /// The value in the program.
    pub(crate) v: Value,
    /// At scale 2^2f.
    pub(crate) double: bool,
    /// Known to be non-negative.
    pub(crate) nonnegative: bool,
}

impl Shared {
    /// A value at scale 2^f, of either sign.
    pub(crate) fn plain(v: Value) -> Self {
        Shared {
            v,
            double: false,
            nonnegative: false,
        }
    }

    /// `v` with this value's scale and sign.
    pub(crate) fn like(self, v: Value) -> Self {
        Shared { v, ..self }
    }
}

/// A model being compiled: the program so far and what the server will input to it. The
/// operators' lowerings ([`crate::op::Operator::lower`]) build on its methods.
pub(crate) struct Compiler {
    /// The number system.
    pub(crate) fixed: Fixed,
    protocol: Protocol,
    /// [`Truncation::Local`] or [`Truncation::Exact`].
    truncation: Truncation,
    /// How linear layers' products are made, and the OT they would take.
    linear: (LinearChoice, tessera_ot::OtChoice),
    /// Whether signs are computed by the millionaires' protocol ([`NonlinearChoice`]).
    millionaire: bool,
    /// Elements truncated so far.
    truncated: u64,
    /// Inputs per inference: every value holds `batch` tensors, input by input.
    pub(crate) batch: usize,
    /// The program.
    pub(crate) p: Program,
    weights: Vec<LinearWeights>,
    constants: Vec<(Value, Vec<u64>)>,
}

fn protocol_error(e: tessera_protocols::Error) -> Error {
    Error::Compile(e)
}

impl Compiler {
    fn ty(&self, v: Value) -> Type {
        self.p.type_of(v).expect("a value of this program")
    }

    /// The sharing `x` is in.
    pub(crate) fn sharing(&self, x: Shared) -> Sharing {
        self.ty(x.v).sharing
    }

    /// The value as α (converting from A costs a round).
    pub(crate) fn alpha(&mut self, v: Shared) -> Result<Value, Error> {
        if self.ty(v.v).sharing == Sharing::Alpha {
            return Ok(v.v);
        }
        self.p.convert(v.v, Sharing::Alpha).map_err(protocol_error)
    }

    /// The value as A (local from α).
    pub(crate) fn a(&mut self, v: Shared) -> Result<Value, Error> {
        if self.ty(v.v).sharing == Sharing::A {
            return Ok(v.v);
        }
        self.p.convert(v.v, Sharing::A).map_err(protocol_error)
    }

    /// Whether products stay at scale 2^2f until their truncation is cheapest
    /// ([`Truncation::Exact`]) or are truncated at once ([`Truncation::Local`]).
    pub(crate) fn defers_truncation(&self) -> bool {
        self.truncation == Truncation::Exact
    }

    /// The value at scale 2^f: a deferred truncation done, as [`Truncation`] says: exactly
    /// (one round), a non-negative value as it is and one of either sign offset by 2^(ℓ−2)
    /// ([`Program::truncate_bounded`]), or by SecureML's local truncation.
    pub(crate) fn settle(&mut self, x: Shared) -> Result<Shared, Error> {
        if !x.double {
            return Ok(x);
        }
        self.truncated(x, self.fixed.frac())
    }

    /// `x` shifted right by `bits` (a product's scale back to a value's), as
    /// [`Compiler::settle`] truncates.
    pub(crate) fn truncated(&mut self, x: Shared, bits: u32) -> Result<Shared, Error> {
        let e = protocol_error;
        let a = self.a(x)?;
        self.truncated += self.ty(a).n as u64;
        let t = match (self.defers_truncation(), x.nonnegative) {
            (true, true) => self.p.truncate_nonnegative(a, bits).map_err(e)?,
            (true, false) => self.p.truncate_bounded(a, bits).map_err(e)?,
            (false, _) => self.p.truncate(a, bits).map_err(e)?,
        };
        Ok(Shared {
            v: t,
            double: false,
            nonnegative: x.nonnegative,
        })
    }

    /// A value at 2^f lifted to 2^2f (exact, local).
    pub(crate) fn lift(&mut self, v: Shared) -> Result<Shared, Error> {
        let scale = 1u64 << self.fixed.frac();
        let lifted = self.p.mul_const(v.v, scale).map_err(protocol_error)?;
        Ok(Shared {
            v: lifted,
            double: true,
            nonnegative: v.nonnegative,
        })
    }

    /// Both at one scale: a value at 2^f lifted to 2^2f if the other is there.
    pub(crate) fn align(&mut self, x: Shared, y: Shared) -> Result<(Shared, Shared), Error> {
        match (x.double, y.double) {
            (true, false) => Ok((x, self.lift(y)?)),
            (false, true) => Ok((self.lift(x)?, y)),
            _ => Ok((x, y)),
        }
    }

    /// W·x + b: at ℓ = 64 truncated at once, at ℓ = 32 at scale 2^2f, its truncation deferred
    /// to where the value is known to be non-negative.
    pub(crate) fn linear(
        &mut self,
        x: Shared,
        map: LinearMap,
        w: &[f32],
        b: &[f32],
    ) -> Result<Shared, Error> {
        let x = self.settle(x)?;
        let x = self.alpha(x)?;
        let f = self.fixed;
        let e = protocol_error;
        let batched = map.batched(self.batch).map_err(e)?;
        let (choice, ot) = self.linear;
        let method = choice.method(&batched, f, ot);
        let mut y = self.p.linear(x, batched, SERVER, method).map_err(e)?;
        if self.batch > 1 {
            y = self.p.gather(y, map.batched_order(self.batch)).map_err(e)?;
        }
        self.weights.push(LinearWeights {
            matrix: w.iter().map(|&v| f.encode(v)).collect(),
            bias: b.iter().map(|&v| f.encode_product(v)).collect(),
        });
        let y = Shared {
            v: y,
            double: true,
            nonnegative: false,
        };
        if self.defers_truncation() {
            Ok(y)
        } else {
            self.settle(y)
        }
    }

    pub(crate) fn relu(&mut self, x: Shared) -> Result<Shared, Error> {
        let bit = self.nonnegative(x)?;
        let y = self.times(bit, x)?;
        Ok(Shared {
            nonnegative: true,
            ..y
        })
    }

    /// [x ≥ 0] of each element: the NOT of its sign ([`Program::sign`] in the protocol's
    /// Boolean sharing, or [`Program::sign_by_comparison`] in B as [`NonlinearChoice`] says),
    /// in B for the A protocols and in β for the α ones, ready for [`Compiler::times`].
    pub(crate) fn nonnegative(&mut self, x: Shared) -> Result<Value, Error> {
        let e = protocol_error;
        let xa = self.a(x)?;
        let sign = if self.millionaire {
            // At scale 2^2f the bits below 2^f are below the result's last place.
            let skip = if x.double { self.fixed.frac() } else { 0 };
            self.p.sign_by_comparison(xa, Sharing::B, skip).map_err(e)?
        } else {
            self.p.sign(xa, self.protocol.boolean()).map_err(e)?
        };
        let positive = self.p.not(sign).map_err(e)?;
        let bit = if self.protocol.arithmetic() == Sharing::A {
            Sharing::B
        } else {
            Sharing::Beta
        };
        self.p.convert(positive, bit).map_err(e)
    }

    /// `bit·v` for a bit of [`Compiler::nonnegative`]: B·A or β·α, one round; on random OT
    /// for the A protocols under the millionaires' choice ([`Program::select`], two rounds).
    pub(crate) fn times(&mut self, bit: Value, v: Shared) -> Result<Shared, Error> {
        let e = protocol_error;
        if self.protocol.arithmetic() == Sharing::A {
            let number = self.a(v)?;
            let y = if self.millionaire {
                self.p.select(bit, number).map_err(e)?
            } else {
                self.p.bit_mul(bit, number).map_err(e)?
            };
            return Ok(v.like(y));
        }
        let number = self.alpha(v)?;
        let y = self.p.bit_mul(bit, number).map_err(e)?;
        Ok(v.like(y))
    }

    /// Copies of `x` (A or α, as it is): `indices` into each input's tensor.
    pub(crate) fn gather(&mut self, x: Shared, indices: Vec<u32>) -> Result<Shared, Error> {
        let indices = self.per_input(x.v, indices);
        Ok(x.like(self.p.gather(x.v, indices).map_err(protocol_error)?))
    }

    /// `indices` into one input's tensor of `v`, for each of the batch's inputs in turn.
    fn per_input(&self, v: Value, indices: Vec<u32>) -> Vec<u32> {
        if self.batch == 1 {
            return indices;
        }
        let len = (self.ty(v).n / self.batch) as u32;
        let shifted = |b: u32, i: u32| if i == linear::ZERO { i } else { i + b * len };
        (0..self.batch as u32)
            .flat_map(|b| indices.iter().map(move |&i| shifted(b, i)))
            .collect()
    }

    /// A public tensor of the server's as an A input, one copy per input of the batch.
    pub(crate) fn public(&mut self, values: Vec<u64>) -> Result<Value, Error> {
        let t = Type {
            sharing: Sharing::A,
            kind: Kind::Ring(self.fixed.bits()),
            n: values.len() * self.batch,
        };
        let v = self.p.input(SERVER, t).map_err(protocol_error)?;
        let all = (0..self.batch)
            .flat_map(|_| values.iter().copied())
            .collect();
        self.constants.push((v, all));
        Ok(v)
    }

    /// The server's constant `k` at `like`'s scale, one element input and copied locally to
    /// `like`'s length: an A value.
    pub(crate) fn scalar(&mut self, k: f32, like: Shared) -> Result<Value, Error> {
        let encoded = if like.double {
            self.fixed.encode_product(k)
        } else {
            self.fixed.encode(k)
        };
        let one = self.public(vec![encoded])?;
        let n = self.ty(like.v).n / self.batch;
        Ok(self.gather(Shared::plain(one), vec![0; n])?.v)
    }

    /// `x` and `y` in one sharing: α if both are, else A (α → A is local).
    pub(crate) fn same(&mut self, x: Shared, y: Shared) -> Result<(Value, Value), Error> {
        let alpha = |c: &Self, v: Shared| c.ty(v.v).sharing == Sharing::Alpha;
        if alpha(self, x) && alpha(self, y) {
            Ok((x.v, y.v))
        } else {
            Ok((self.a(x)?, self.a(y)?))
        }
    }

    /// The sums of `x`'s elements in `groups` ([`crate::kernels::reduction_groups`]: list `j`
    /// holds every output's `j`-th summand, by index into one input's tensor, or
    /// [`linear::ZERO`]), at `x`'s scale after any deferred truncation: local.
    pub(crate) fn sum(&mut self, x: Shared, groups: Vec<Vec<u32>>) -> Result<Shared, Error> {
        let e = protocol_error;
        let x = self.settle(x)?;
        let mut sum: Option<Value> = None;
        for g in groups {
            let v = self.gather(x, g)?.v;
            sum = Some(match sum {
                None => v,
                Some(s) => self.p.add(s, v).map_err(e)?,
            });
        }
        let sum = sum.ok_or_else(|| Error::Input("a sum of no elements".into()))?;
        Ok(x.like(sum))
    }

    /// The means of `count` elements in each group: [`Compiler::sum`] times the public
    /// ⌊2^f/count⌉, at scale 2^2f (local; truncated where the value settles).
    pub(crate) fn mean(
        &mut self,
        x: Shared,
        groups: Vec<Vec<u32>>,
        count: usize,
    ) -> Result<Shared, Error> {
        let sum = self.sum(x, groups)?;
        let reciprocal = self.fixed.reciprocal(count);
        let scaled = self
            .p
            .mul_const(sum.v, reciprocal)
            .map_err(protocol_error)?;
        Ok(Shared {
            v: scaled,
            double: true,
            nonnegative: sum.nonnegative,
        })
    }

    /// The maxima of `x`'s elements in `groups` (as for [`Compiler::sum`]; a missing element
    /// repeats one of its group's): a tree of `max(a, b) = a + ReLU(b − a)`, each level one
    /// ReLU on all pairs.
    pub(crate) fn maximum(
        &mut self,
        x: Shared,
        mut groups: Vec<Vec<u32>>,
    ) -> Result<Shared, Error> {
        let e = protocol_error;
        let mut cur = x;
        while groups.len() > 1 {
            let pairs = groups.len().div_ceil(2);
            let (mut left, mut right) = (Vec::new(), Vec::new());
            for j in 0..pairs {
                left.extend_from_slice(&groups[2 * j]);
                right.extend_from_slice(groups.get(2 * j + 1).unwrap_or(&groups[2 * j]));
            }
            let size = groups[0].len() as u32;
            let a = self.gather(cur, left)?;
            let b = self.gather(cur, right)?;
            let d = self.p.sub(b.v, a.v).map_err(e)?;
            let r = self.relu(a.like(d))?;
            let (av, rv) = self.same(a, r)?;
            cur = a.like(self.p.add(av, rv).map_err(e)?);
            groups = (0..pairs as u32)
                .map(|j| (j * size..(j + 1) * size).collect())
                .collect();
        }
        Ok(cur)
    }

    /// The index of the largest of `x`'s `n` elements (the first of equal ones), in A: a tree
    /// of pairs (a, b) → (a + s·(b − a), i + s·(j − i)) with s = [a − b < 0] from
    /// [`Program::sign`] in the protocol's Boolean sharing, B·A products for both. The
    /// indices 0..n are the server's A input (public values).
    fn argmax(&mut self, x: Shared, n: usize) -> Result<Value, Error> {
        let e = protocol_error;
        let mut values = self.a(x)?;
        let mut index = self.public((0..n as u64).collect())?;
        let mut len = n;
        while len > 1 {
            let pairs = len.div_ceil(2);
            let left = self.per_input(values, (0..pairs).map(|j| (2 * j) as u32).collect());
            let right: Vec<u32> = (0..pairs)
                .map(|j| (2 * j + 1).min(len - 1) as u32)
                .collect();
            let right = self.per_input(values, right);
            let a = self.p.gather(values, left.clone()).map_err(e)?;
            let b = self.p.gather(values, right.clone()).map_err(e)?;
            let i = self.p.gather(index, left).map_err(e)?;
            let j = self.p.gather(index, right).map_err(e)?;
            let a_minus_b = self.p.sub(a, b).map_err(e)?;
            let s = self.p.sign(a_minus_b, self.protocol.boolean()).map_err(e)?;
            let s = self.p.convert(s, Sharing::B).map_err(e)?;
            let (dv, di) = (self.p.sub(b, a).map_err(e)?, self.p.sub(j, i).map_err(e)?);
            let (sv, si) = (
                self.p.bit_mul(s, dv).map_err(e)?,
                self.p.bit_mul(s, di).map_err(e)?,
            );
            values = self.p.add(a, sv).map_err(e)?;
            index = self.p.add(i, si).map_err(e)?;
            len = pairs;
        }
        Ok(index)
    }
}

/// What the client learns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Output {
    /// The logits (the network's output).
    Logits,
    /// Only the index of the largest logit (the first of equal ones): a tree of comparisons in
    /// the protocol's Boolean sharing over the logits and their indices.
    Class,
}

/// Memory a Y protocol's program holds per ReLU or maximum and bit of the ring: its garbled
/// tables and plan, all of them at once (measured: 1.6 GB for MiniONN-CIFAR's 173 056 ReLUs at
/// ℓ = 64).
const Y_BYTES_PER_COMPARISON_BIT: u64 = 150;
/// The most a compiled Y program may hold: the bound on a party's memory.
const Y_MEMORY: u64 = 8 << 30;

/// An error, before any of it is allocated, where a Y protocol would plan more garbled circuits
/// at once than [`Y_MEMORY`] (ImageNet networks: their setup is not yet streamed layer by layer).
fn within_garbling_memory(model: &Model, fixed: Fixed, options: Options) -> Result<(), Error> {
    if options.protocol.boolean() != Sharing::Y {
        return Ok(());
    }
    let comparisons = model.nodes.iter().fold(0u64, |n, node| {
        let c = model.cost(node);
        n.saturating_add(c.relus as u64)
            .saturating_add(c.maxima as u64)
    });
    let bytes = comparisons
        .saturating_mul(options.batch as u64)
        .saturating_mul(u64::from(fixed.bits()) * Y_BYTES_PER_COMPARISON_BIT);
    if bytes > Y_MEMORY {
        return Err(Error::Input(format!(
            "{}: {comparisons} ReLUs and maxima would hold about {} GiB of garbled circuits at once \
             (at most {} GiB); use a+b or alpha+beta for a network this size",
            options.protocol.name(),
            bytes >> 30,
            Y_MEMORY >> 30
        )));
    }
    Ok(())
}

/// Holds `model` to the ceiling, and its weights (where it has them) to `fixed`'s range.
fn checked(model: &Model, fixed: Fixed) -> Result<(), Error> {
    if model.has_weights {
        fixed.check_model(model)
    } else {
        model.check(&crate::model::CEILING)
    }
}

/// What [`compile`] makes of a model besides its number system.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Options {
    /// The sharings.
    pub protocol: Protocol,
    /// What the client learns.
    pub output: Output,
    /// Inputs per inference (at least 1): every operation runs on all of them at once, as
    /// SIMD copies (MOTION2NX's SIMD rows), the rounds shared.
    pub batch: usize,
    /// The OT of the setup's triples and products, which both parties must name alike:
    /// [`crate::infer::default_ot`] (SoftSpoken), or Ferret for a fifteenth of the triples'
    /// bytes at more computation.
    pub ot: tessera_ot::OtChoice,
    /// Threads of this party's local work (the setup's hashing and products, the linear
    /// maps, the Boolean layers): 0 for as many as the machine has. A party's own choice,
    /// not the program's: the parties may differ.
    pub threads: usize,
    /// How products are truncated, which both parties must choose alike.
    pub truncation: Truncation,
    /// How linear layers' products are made, which both parties must choose alike.
    pub linear: LinearChoice,
    /// How signs and selections are computed, which both parties must choose alike.
    pub nonlinear: NonlinearChoice,
}

impl Options {
    /// `protocol` on one input, revealing the logits.
    pub fn new(protocol: Protocol) -> Self {
        Options {
            protocol,
            output: Output::Logits,
            batch: 1,
            ot: crate::infer::default_ot(),
            threads: 0,
            truncation: Truncation::Auto,
            linear: LinearChoice::Auto,
            nonlinear: NonlinearChoice::Auto,
        }
    }
}

/// Compiles `model` in `fixed` as `options` say: the same program at both parties (the
/// client's model may be stripped: its weights are not used).
pub fn compile(model: &Model, fixed: Fixed, options: Options) -> Result<Compiled, Error> {
    checked(model, fixed)?;
    let batch = options.batch;
    if batch == 0 || model.input_len().checked_mul(batch).is_none() {
        return Err(Error::Input(format!("a batch of {batch} inputs")));
    }
    within_garbling_memory(model, fixed, options)?;
    match options.truncation.resolve(fixed)? {
        Truncation::Auto => {
            let local = lower(model, fixed, options, Truncation::Local)?;
            if local_failures_matter(local.truncated, fixed) {
                lower(model, fixed, options, Truncation::Exact)
            } else {
                Ok(local)
            }
        }
        chosen => lower(model, fixed, options, chosen),
    }
}

/// [`compile`] with truncation `truncation` ([`Truncation::Local`] or [`Truncation::Exact`]).
fn lower(
    model: &Model,
    fixed: Fixed,
    options: Options,
    truncation: Truncation,
) -> Result<Compiled, Error> {
    let Options {
        protocol,
        output,
        batch,
        ot,
        threads,
        linear,
        nonlinear,
        ..
    } = options;
    let mut c = Compiler {
        fixed,
        protocol,
        truncation,
        linear: (linear, ot),
        millionaire: nonlinear.resolve(protocol) == NonlinearChoice::Millionaire,
        truncated: 0,
        batch,
        p: Program::new(),
        weights: Vec::new(),
        constants: Vec::new(),
    };
    let e = protocol_error;
    let input_type = Type {
        sharing: Sharing::Alpha,
        kind: Kind::Ring(fixed.bits()),
        n: model.input_len() * batch,
    };
    // Online timing starts when both parties are ready, whoever finished its setup first.
    c.p.barrier();
    let after_barrier = c.p.op_count();
    let input = c.p.input(CLIENT, input_type).map_err(e)?;
    let mut values: Vec<Option<Shared>> = vec![None; model.shapes.len()];
    values[model.input] = Some(Shared::plain(input));
    let mut layers = vec![Layer {
        name: "input".to_owned(),
        op: "Input",
        class: "other",
        ops: after_barrier..c.p.op_count(),
    }];
    for node in &model.nodes {
        let first = c.p.op_count();
        let (args, io) = arguments(model, node, |v| values[v])?;
        let operator = node.op.operator();
        if fixed.bits() < operator.ring_bits() {
            let why = format!(
                "its method needs the {}-bit ring (--bits {0}), not {}",
                operator.ring_bits(),
                fixed.bits()
            );
            return Err(Error::node(&node.name, node.op.kind(), why));
        }
        let y = operator.lower(&mut c, &args, &io)?;
        values[node.output] = Some(y);
        layers.push(Layer {
            name: node.name.clone(),
            op: node.op.kind(),
            class: node.op.class(),
            ops: first..c.p.op_count(),
        });
    }
    let first = c.p.op_count();
    let out = values[model.output].expect("the output is computed");
    // Logits at 2^2f are revealed as they are: the client truncates them in the clear.
    let output_double = out.double;
    let out = match output {
        Output::Logits => c.a(out)?,
        Output::Class => c.argmax(out, model.output_len())?,
    };
    c.p.output(out, Reveal::To(CLIENT)).map_err(e)?;
    layers.push(Layer {
        name: "output".to_owned(),
        op: "Output",
        class: "other",
        ops: first..c.p.op_count(),
    });
    Ok(Compiled {
        program: c.p,
        input,
        weights: if model.has_weights {
            c.weights
        } else {
            Vec::new()
        },
        constants: if model.has_weights {
            c.constants
        } else {
            Vec::new()
        },
        fixed,
        truncation,
        truncated: c.truncated,
        nonlinear: nonlinear.resolve(protocol),
        layers,
        output_double,
        output,
        batch,
        ot,
        threads,
        setup_bytes: std::sync::OnceLock::new(),
    })
}

/// The cost of one layer in [`compile`]'s protocol (both parties' bytes together).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LayerEstimate {
    /// Setup bytes: OT extension, triples, Gilboa's corrections.
    pub setup_bytes: u64,
    /// Online bytes, frame headers included.
    pub online_bytes: u64,
    /// Online rounds: per operation, the messages the party that waits more waits for.
    pub online_rounds: u64,
    /// Messages the server and the client wait for online.
    pub online_waits: [u64; 2],
}

impl LayerEstimate {
    /// This layer's cost with an operation's added.
    fn with(self, op: &Cost) -> Self {
        let w = op.online.waits;
        LayerEstimate {
            setup_bytes: self.setup_bytes + op.setup_bytes,
            online_bytes: self.online_bytes + op.online.bytes,
            online_rounds: self.online_rounds + op.online.rounds(),
            online_waits: [self.online_waits[0] + w[0], self.online_waits[1] + w[1]],
        }
    }

    /// Two layers' costs together.
    fn plus(self, other: LayerEstimate) -> Self {
        LayerEstimate {
            setup_bytes: self.setup_bytes + other.setup_bytes,
            online_bytes: self.online_bytes + other.online_bytes,
            online_rounds: self.online_rounds + other.online_rounds,
            online_waits: [
                self.online_waits[0] + other.online_waits[0],
                self.online_waits[1] + other.online_waits[1],
            ],
        }
    }
}

/// The estimated cost of a model, layer by layer ([`estimate`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// One per node of the model, in order.
    pub layers: Vec<LayerEstimate>,
    /// The truncation [`compile`] chose ([`Compiled::truncation`]).
    pub truncation: Truncation,
    /// The elements it truncates per inference ([`Compiled::truncated`]).
    pub truncated: u64,
    /// How it computes signs ([`Compiled::nonlinear`]).
    pub nonlinear: NonlinearChoice,
}

impl Estimate {
    /// The layers' sum.
    pub fn total(&self) -> LayerEstimate {
        self.layers
            .iter()
            .fold(LayerEstimate::default(), |a, &l| a.plus(l))
    }
}

/// The cost of [`compile`] on `model` in `fixed` as `options` say, from the compiled
/// program's operations ([`Program::costs`]: the lengths their setup and online steps send)
/// with the options' OT; not a run (`tessera nn bench`
/// measures the same, and a test holds the two together). One entry per node: the client's
/// input is counted with the first, the logits' opening with the last; the barrier before
/// the online phase, the hello and the base OTs are left out.
pub fn estimate(model: &Model, fixed: Fixed, options: Options) -> Result<Estimate, Error> {
    let compiled = compile(model, fixed, options)?;
    // A stripped model's weights are zeros: its maps are costed at their widest.
    let known: &[LinearWeights] = if model.has_weights {
        &compiled.weights
    } else {
        &[]
    };
    let costs = compiled.program.costs(compiled.ot, known);
    let mut layers: Vec<LayerEstimate> = compiled
        .layers
        .iter()
        .map(|l| {
            costs[l.ops.clone()]
                .iter()
                .fold(LayerEstimate::default(), LayerEstimate::with)
        })
        .collect();
    // compile's layers: the input, one per node, the output.
    let output = layers.pop().unwrap_or_default();
    let input = if layers.is_empty() {
        LayerEstimate::default()
    } else {
        layers.remove(0)
    };
    if let Some(first) = layers.first_mut() {
        *first = first.plus(input);
    }
    if let Some(last) = layers.last_mut() {
        *last = last.plus(output);
    }
    Ok(Estimate {
        layers,
        truncation: compiled.truncation,
        truncated: compiled.truncated,
        nonlinear: compiled.nonlinear,
    })
}
