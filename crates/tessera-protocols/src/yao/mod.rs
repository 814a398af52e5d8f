//! Semi-honest Yao two-party computation (Yao, FOCS 1986; Lindell and Pinkas, J. Cryptology
//! 2009) on Tessera's batched garbling, with any scheme of the registry ([`SchemeKind`]), on a
//! [`Session`].
//!
//! Roles: the garbler holds the circuit's input value 0, the evaluator value 1. Set-up
//! ([`Yao::setup`]): the parties exchange a hello with the protocol version, their roles, the
//! scheme's wire code and SHA-256 of what they are about to run (version, scheme, who learns
//! the output, circuit), so different circuits, schemes or versions stop both sides with a
//! clear message; the garbler's hello also carries a fresh public random block, the MI
//! scheme's key offset. The OT providers with the peer are set up by the session (the 128
//! base OTs) while another thread compiles the plan. Each execution ([`Yao::run`]) then:
//!
//! 1. evaluator inputs by OT (VASA §4.3.2). For the free-XOR schemes it is correlated OT whose
//!    global offset is the free-XOR Δ, so the sender's q_j *is* the zero-label of evaluator
//!    input wire j and the receiver's output is the label of its bit; the PRF-based scheme,
//!    whose labels are independent, sends both labels by chosen-message OT;
//! 2. the garbler sends the labels of its own input bits;
//! 3. the garbler garbles batch by batch and streams each batch's tables as one message while
//!    the evaluator evaluates them: neither side holds the whole garbled circuit (on one
//!    thread each; with more, or coarse-grained, see [`crate::yao::threads`]);
//! 4. outputs: the garbler sends the output decoding bits (the evaluator learns the output),
//!    and/or the evaluator sends its output labels' colour bits (the garbler learns it).
//!
//! Steps 2-4 are two roles without I/O (`GarbleCore`, `EvaluateCore`, their messages
//! [`ToGarbler`] and [`ToEvaluator`]); one driver, generic over the party's side, runs both.
//!
//! Security is semi-honest (passive): a malicious garbler could garble another function. A
//! malformed or missing message still ends in an error, never a panic or a hang, and the
//! session tells the peer why.

pub mod chain;
pub mod file;
pub mod ipp;
pub mod threads;

use crate::hello::{self, Hello, Names, Variants};
use crate::yao::threads::{Compiled, EvaluateEngine, Evaluating, GarbleEngine, Garbling};
pub use crate::yao::threads::{Parallel, Strategy};
use crate::{Error, Session};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::borrow::Cow;
use tessera_circuit::Circuit;
use tessera_circuit::eval::split_values;
use tessera_core::{Block, Prg};
use tessera_garble::{
    InputEncoding, Scheme, SchemeKind, SchemeVisitor, TableBuffer, TableSink, XorGates, decode,
    decoding_bits,
};
use tessera_net::role::{self, Decode, Encode, Next, Outbox, Role};
use tessera_net::{DecodeError, Kind, Phase, Space};

/// The version of this protocol's messages; parties of different versions refuse each other.
/// Version 4: the fingerprint hashes the circuit's [`Circuit::digest`]; version 5: a streamed
/// file's digest is BLAKE3 ([`tessera_circuit::bristol::stream::DIGEST_CONTEXT`]).
pub const PROTOCOL_VERSION: u8 = 5;

/// The hello ([`crate::hello`]): version, role, scheme, fingerprint, the garbler's public
/// random block.
pub use crate::hello::HELLO;
/// The garbler's input labels.
pub const LABELS: Kind = Kind::new(0x31, "yao garbler input labels");
/// One batch of garbled tables.
pub const TABLES: Kind = Kind::new(0x32, "yao garbled tables");
/// The output decoding bits.
pub const DECODING: Kind = Kind::new(0x33, "yao output decoding bits");
/// The evaluator's output colour bits.
pub const COLOURS: Kind = Kind::new(0x34, "yao evaluator output colours");

/// Who learns the circuit's output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OutputTo {
    /// Only the evaluator.
    Evaluator,
    /// Only the garbler.
    Garbler,
    /// Both parties.
    Both,
}

impl OutputTo {
    fn evaluator_learns(self) -> bool {
        matches!(self, OutputTo::Evaluator | OutputTo::Both)
    }
    fn garbler_learns(self) -> bool {
        matches!(self, OutputTo::Garbler | OutputTo::Both)
    }
    /// The mode's name.
    pub fn name(self) -> &'static str {
        match self {
            OutputTo::Evaluator => "evaluator",
            OutputTo::Garbler => "garbler",
            OutputTo::Both => "both",
        }
    }
}

/// A party's role in Yao.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum YaoRole {
    /// Holds input value 0, garbles, sends the OT.
    Garbler,
    /// Holds input value 1, evaluates, receives the OT.
    Evaluator,
}

impl YaoRole {
    fn code(self) -> u8 {
        match self {
            YaoRole::Garbler => 0,
            YaoRole::Evaluator => 1,
        }
    }
    /// The role's name.
    pub fn name(self) -> &'static str {
        match self {
            YaoRole::Garbler => "garbler",
            YaoRole::Evaluator => "evaluator",
        }
    }
}

/// The result of one execution.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The output bits, one vector per output value, if this party learns them.
    pub output: Option<Vec<Vec<bool>>>,
    /// Time and traffic of each phase.
    pub phases: Vec<Phase>,
}

/// SHA-256 of everything both parties must agree on: version, scheme, output mode, strategy
/// (what each compiles and how the tables are cut into messages), circuit.
pub fn fingerprint(
    circuit: &Circuit,
    scheme: SchemeKind,
    outputs: OutputTo,
    strategy: Strategy,
) -> [u8; 32] {
    let extra = format!("{}/{}", outputs.name(), strategy.name());
    fingerprint_of(b"tessera/yao", scheme, extra.as_bytes(), circuit)
}

/// SHA-256 of a protocol's name, [`PROTOCOL_VERSION`], `scheme`, protocol-specific `extra`
/// bytes and `circuit`: the fingerprint of Yao and of its streamed and inter-party variants.
pub(crate) fn fingerprint_of(
    protocol: &[u8],
    scheme: SchemeKind,
    extra: &[u8],
    circuit: &Circuit,
) -> [u8; 32] {
    hello::fingerprint(protocol, |h| {
        h.update([PROTOCOL_VERSION, scheme.code()]);
        h.update(extra);
        hash_circuit(h, circuit);
    })
}

/// Feeds everything that defines `circuit` to `h` ([`Circuit::digest`]).
pub(crate) fn hash_circuit(h: &mut Sha256, circuit: &Circuit) {
    h.update(circuit.digest());
}

/// How Yao's hello names its fields.
const NAMES: Names = Names {
    protocol: "Yao",
    variant: Some(Variants {
        what: "garbling scheme",
        name: |code| SchemeKind::from_code(code).map_or("an unknown scheme", SchemeKind::name),
    }),
    side: |code| {
        if code == YaoRole::Garbler.code() {
            "the garbler"
        } else {
            "the evaluator"
        }
    },
    fingerprint: "a different circuit, output mode, strategy or version",
};

/// The hello with `peer` in `space` (phase "hello", [`crate::hello`]): both parties' version,
/// role, scheme and `fingerprint` checked; returns the garbler's public random block.
pub(crate) fn hello(
    s: &mut Session,
    (peer, space): (usize, Space),
    role: YaoRole,
    scheme: SchemeKind,
    fingerprint: [u8; 32],
) -> Result<Block, Error> {
    let (garbler, random) = (role == YaoRole::Garbler, s.random_block());
    let ours = Hello {
        version: PROTOCOL_VERSION,
        variant: scheme.code(),
        side: role.code(),
        fingerprint,
        nonce: if garbler { random } else { Block::ZERO },
    };
    let theirs = s.phase("hello", |s| hello::exchange(s, (peer, space), ours, NAMES))?;
    Ok(if garbler { ours.nonce } else { theirs.nonce })
}

/// A payload of blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocks<'a, const K: u8>(pub Cow<'a, [Block]>);
/// A payload of packed bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bits<'a, const K: u8>(pub Cow<'a, [u8]>);

/// The message kind of `id`.
const fn kind(id: u8) -> Kind {
    let all = [HELLO, LABELS, TABLES, DECODING, COLOURS];
    let mut i = 0;
    while i < all.len() {
        if all[i].id == id {
            return all[i];
        }
        i += 1;
    }
    Kind::new(id, "yao message")
}

impl<const K: u8> Encode for Blocks<'_, K> {
    const KIND: Kind = kind(K);
    fn encode<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> &'a [u8] {
        bytemuck::cast_slice(&self.0)
    }
}

impl<const K: u8> Encode for Bits<'_, K> {
    const KIND: Kind = kind(K);
    fn encode<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> &'a [u8] {
        &self.0
    }
}

/// What the garbler receives during an execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToGarbler<'a> {
    /// The evaluator's output colours.
    Colours(Bits<'a, { COLOURS.id }>),
}

impl<'a> Decode<'a> for ToGarbler<'a> {
    fn decode(id: u8, bytes: &'a [u8]) -> Result<Self, DecodeError> {
        match id {
            k if k == COLOURS.id => Ok(ToGarbler::Colours(Bits(Cow::Borrowed(bytes)))),
            _ => Err(DecodeError(format!(
                "'{}' is not for the garbler",
                kind(id).name
            ))),
        }
    }
}

/// What the evaluator receives during an execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ToEvaluator<'a> {
    /// The garbler's input labels.
    Labels(Blocks<'a, { LABELS.id }>),
    /// One batch of tables.
    Tables(Blocks<'a, { TABLES.id }>),
    /// The decoding bits.
    Decoding(Bits<'a, { DECODING.id }>),
}

impl<'a> Decode<'a> for ToEvaluator<'a> {
    fn decode(id: u8, bytes: &'a [u8]) -> Result<Self, DecodeError> {
        Ok(match id {
            k if k == LABELS.id => ToEvaluator::Labels(Blocks(role::blocks(bytes)?)),
            k if k == TABLES.id => ToEvaluator::Tables(Blocks(role::blocks(bytes)?)),
            k if k == DECODING.id => ToEvaluator::Decoding(Bits(Cow::Borrowed(bytes))),
            _ => {
                return Err(DecodeError(format!(
                    "'{}' is not for the evaluator",
                    kind(id).name
                )));
            }
        })
    }
}

/// What both parties' executions read: the circuit, what it compiled to, the output mode.
struct Shape {
    circuit: Circuit,
    compiled: Compiled,
    outputs: OutputTo,
}

impl Shape {
    fn widths(&self) -> (usize, usize) {
        (
            self.circuit.inputs[0] as usize,
            self.circuit.inputs[1] as usize,
        )
    }
}

/// Posts each batch's tables, which the garbler writes straight into its buffer; a network
/// error passes whole ([`kept`]).
struct PostTables<'o, O> {
    out: &'o mut O,
    buffer: TableBuffer,
}

impl<O: Outbox> TableSink for PostTables<'_, O> {
    fn reserve(&mut self, n: usize) -> &mut [Block] {
        self.buffer.reserve(n)
    }

    fn commit(&mut self) -> Result<(), tessera_garble::Error> {
        let sent = self.out.post(&Blocks::<{ TABLES.id }>(Cow::Borrowed(
            self.buffer.as_slice(),
        )));
        self.buffer.clear();
        kept(sent)
    }
}

/// A table sink's network result as the engine's error, the network error inside it whole
/// (a peer's abort must stay recognisable: [`Error`]'s conversion takes it back out).
pub(crate) fn kept(sent: Result<(), tessera_net::Error>) -> Result<(), tessera_garble::Error> {
    sent.map_err(|e| tessera_garble::Error::Stream(tessera_garble::StreamError::new(e)))
}

/// The garbler's side: its engine, its PRG, and this execution's input encoding.
struct GarblerSide<S: Scheme> {
    engine: GarbleEngine<S>,
    prg: Prg,
    encoding: Option<InputEncoding<S>>,
    /// The tables' buffer, kept from one execution to the next.
    tables: TableBuffer,
}

/// How the garbler's core garbles the circuit, with its engine: a compiled plan or
/// partitions ([`crate::yao::threads`]), a file window by window ([`crate::yao::file`]).
pub(crate) trait GarbleBody<S: Scheme> {
    /// Garbles with the input encoding `enc`, the tables into `sink`; returns the output
    /// wires.
    fn garble(
        &mut self,
        enc: &InputEncoding<S>,
        sink: &mut impl TableSink,
    ) -> Result<Vec<S::Wire>, Error>;
}

/// The garbler's execution after the input OT: labels, streamed tables, outputs.
pub(crate) struct GarbleCore<'a, S: Scheme, B> {
    pub encoding: Option<&'a InputEncoding<S>>,
    /// The tables' buffer, kept from one execution to the next.
    pub tables: &'a mut TableBuffer,
    pub body: B,
    pub outputs: OutputTo,
    pub input: &'a [bool],
    pub decoding: Vec<bool>,
}

impl<S: Scheme, B: GarbleBody<S>> Role for GarbleCore<'_, S, B> {
    type Incoming<'m> = ToGarbler<'m>;
    type Output = Option<Vec<bool>>;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToGarbler<'_>>,
        out: &mut O,
    ) -> Result<Next<Self::Output>, Error> {
        if let Some(ToGarbler::Colours(Bits(colours))) = incoming {
            let n = self.decoding.len();
            let bits = (0..n)
                .zip(&self.decoding)
                .map(|(k, &d)| role::packed_bit(&colours, k) ^ d)
                .collect();
            return Ok(Next::Done(Some(bits)));
        }
        let enc = self
            .encoding
            .ok_or_else(|| Error::Input("garbling before the input OT".into()))?;
        out.post(&Blocks::<{ LABELS.id }>(Cow::Owned(
            enc.encode(0, self.input),
        )))?;
        let mut sink = PostTables {
            out,
            buffer: std::mem::take(self.tables),
        };
        let garbled = self.body.garble(enc, &mut sink);
        *self.tables = sink.buffer;
        let out_wires = garbled?;
        self.decoding = decoding_bits::<S>(&out_wires);
        if self.outputs.evaluator_learns() {
            out.post(&Bits::<{ DECODING.id }>(Cow::Owned(role::pack_bits(
                self.decoding.iter().copied(),
            ))))?;
        }
        Ok(if self.outputs.garbler_learns() {
            Next::exact(COLOURS, self.decoding.len().div_ceil(8))
        } else {
            Next::Done(None)
        })
    }
}

/// The evaluator's side: its engine, its input labels, the tables it collects (FGP on more
/// than one thread).
struct EvaluatorSide<S: Scheme> {
    engine: EvaluateEngine<S>,
    labels: Vec<Block>,
    tables: TableBuffer,
}

/// How the evaluator's core evaluates the circuit as the tables arrive: a compiled plan or
/// partitions ([`crate::yao::threads`]), a file window by window ([`crate::yao::file`]).
pub(crate) trait EvaluateBody {
    /// Starts on the active input labels.
    fn start(&mut self, labels: &[Block]) -> Result<(), Error>;
    /// Table blocks of the next batch, or `None` when the circuit is done.
    fn next_tables(&mut self) -> Result<Option<usize>, Error>;
    /// Evaluates the waiting batch.
    fn feed(&mut self, table: &[Block]) -> Result<(), Error>;
    /// The active output labels, once done.
    fn outputs(&mut self) -> Result<Vec<Block>, Error>;
}

/// The evaluator's execution after the input OT: labels, tables batch by batch, outputs.
pub(crate) struct EvaluateCore<'a, B> {
    pub body: B,
    /// The input labels: the evaluator's from the OT, the garbler's filled in here.
    pub labels: &'a mut Vec<Block>,
    /// The garbler's input wires.
    pub garbler_inputs: usize,
    pub outputs: OutputTo,
    pub started: bool,
    /// The output labels, once every batch is evaluated.
    pub out_labels: Option<Vec<Block>>,
}

impl<B: EvaluateBody> EvaluateCore<'_, B> {
    /// The next batch's tables, or the outputs once the circuit is done.
    fn next<O: Outbox>(&mut self, out: &mut O) -> Result<Next<Option<Vec<bool>>>, Error> {
        if let Some(n) = self.body.next_tables()? {
            return Ok(Next::exact(TABLES, 16 * n));
        }
        let labels = self.body.outputs()?;
        let n = labels.len();
        self.out_labels = Some(labels);
        if self.outputs.evaluator_learns() {
            return Ok(Next::exact(DECODING, n.div_ceil(8)));
        }
        self.send_colours(out)?;
        Ok(Next::Done(None))
    }

    fn send_colours<O: Outbox>(&self, out: &mut O) -> Result<(), Error> {
        if let (true, Some(labels)) = (self.outputs.garbler_learns(), &self.out_labels) {
            let colours = role::pack_bits(labels.iter().map(|l| l.lsb()));
            out.post(&Bits::<{ COLOURS.id }>(Cow::Owned(colours)))?;
        }
        Ok(())
    }
}

impl<B: EvaluateBody> Role for EvaluateCore<'_, B> {
    type Incoming<'m> = ToEvaluator<'m>;
    type Output = Option<Vec<bool>>;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToEvaluator<'_>>,
        out: &mut O,
    ) -> Result<Next<Self::Output>, Error> {
        match incoming {
            None => Ok(Next::exact(LABELS, 16 * self.garbler_inputs)),
            Some(ToEvaluator::Labels(Blocks(l))) if !self.started => {
                self.labels[..l.len()].copy_from_slice(&l);
                self.body.start(self.labels)?;
                self.started = true;
                self.next(out)
            }
            Some(ToEvaluator::Tables(Blocks(t))) if self.started => {
                self.body.feed(&t)?;
                self.next(out)
            }
            Some(ToEvaluator::Decoding(Bits(d))) if self.out_labels.is_some() => {
                let labels = self.out_labels.as_deref().unwrap_or_default();
                let decoding: Vec<bool> =
                    (0..labels.len()).map(|k| role::packed_bit(&d, k)).collect();
                let bits = decode(labels, &decoding);
                self.send_colours(out)?;
                Ok(Next::Done(Some(bits)))
            }
            Some(_) => Err(Error::Input("a Yao message out of turn".into())),
        }
    }
}

/// Whether the evaluator's input labels travel by correlated OT (free-XOR schemes, whose global
/// offset is the OT's Δ) or by chosen-message OT (independent labels): both sides ask this.
fn by_correlated_ot<S: Scheme>() -> bool {
    S::XOR_GATES == XorGates::Free
}

/// The garbler's half of the evaluator's input OT with `peer`: an input encoding of `g`
/// garbler and `e` evaluator input wires (VASA §4.3.2), the evaluator's labels of its bits
/// sent by correlated OT whose offset is the free-XOR Δ (free-XOR schemes) or both labels of
/// each wire by chosen-message OT.
pub(crate) fn garbler_input_ot<S: Scheme>(
    session: &mut Session,
    peer: usize,
    prg: &mut Prg,
    (g, e): (usize, usize),
) -> Result<InputEncoding<S>, Error> {
    session.with_ot_sender(peer, |ot, ch| {
        if by_correlated_ot::<S>() {
            // Free XOR: Δ is the OT's offset, and the OT gives the evaluator's zero-labels.
            let offset = S::with_offset(ot.delta(), prg).ok_or_else(|| {
                Error::Input(format!(
                    "scheme {} has free XOR but no global offset",
                    S::NAME
                ))
            })?;
            let mut zero = vec![Block::ZERO; e];
            ot.send_correlated(ch, &mut zero)?;
            let wires = (0..g)
                .map(|_| S::random_wire(&offset.secret, prg))
                .chain(zero.into_iter().map(offset.wire))
                .collect();
            Ok(InputEncoding {
                secret: offset.secret,
                wires,
            })
        } else {
            // Independent labels: both of each evaluator wire by chosen-message OT.
            let enc = InputEncoding::<S>::random(prg, g + e);
            let pairs: Vec<(Block, Block)> = enc.wires[g..]
                .iter()
                .map(|w| {
                    (
                        S::encode(&enc.secret, w, false),
                        S::encode(&enc.secret, w, true),
                    )
                })
                .collect();
            ot.send_chosen(ch, &pairs)?;
            Ok(enc)
        }
    })
}

/// The evaluator's half of [`garbler_input_ot`]: the labels of its `input` bits into `mine`.
pub(crate) fn evaluator_input_ot<S: Scheme>(
    session: &mut Session,
    peer: usize,
    input: &[bool],
    mine: &mut [Block],
) -> Result<(), Error> {
    let input = tessera_ot::ChoiceBits::from_bools(input);
    let input = input.as_choices();
    session.with_ot_receiver(peer, |ot, ch| {
        if by_correlated_ot::<S>() {
            ot.receive_correlated(ch, input, mine)?;
        } else {
            ot.receive_chosen(ch, input, mine)?;
        }
        Ok(())
    })
}

/// What distinguishes the garbler's side of an execution from the evaluator's: its half of
/// the input OT and its core. [`Execution`] drives either.
trait Side: Send + 'static {
    /// The party's core for one execution.
    type Core<'a>: Role<Output = Option<Vec<bool>>, Error = Error>
    where
        Self: 'a;
    /// The name of the core's phase.
    const WORK: &'static str;
    /// This side's half of the OT for the evaluator's inputs.
    fn input_ot(
        &mut self,
        session: &mut Session,
        peer: usize,
        shape: &Shape,
        input: &[bool],
    ) -> Result<(), Error>;
    /// The core, once the input OT is done.
    fn core<'a>(&'a mut self, shape: &'a Shape, input: &'a [bool]) -> Self::Core<'a>;
}

impl<S: Scheme> Side for GarblerSide<S> {
    type Core<'a> = GarbleCore<'a, S, Garbling<'a, S>>;
    const WORK: &'static str = "garble";

    fn input_ot(
        &mut self,
        session: &mut Session,
        peer: usize,
        shape: &Shape,
        _input: &[bool],
    ) -> Result<(), Error> {
        let encoding = garbler_input_ot(session, peer, &mut self.prg, shape.widths())?;
        self.encoding = Some(encoding);
        Ok(())
    }

    fn core<'a>(&'a mut self, shape: &'a Shape, input: &'a [bool]) -> Self::Core<'a> {
        GarbleCore {
            encoding: self.encoding.as_ref(),
            tables: &mut self.tables,
            body: Garbling {
                engine: &mut self.engine,
                compiled: &shape.compiled,
            },
            outputs: shape.outputs,
            input,
            decoding: Vec::new(),
        }
    }
}

impl<S: Scheme> Side for EvaluatorSide<S> {
    type Core<'a> = EvaluateCore<'a, Evaluating<'a, S>>;
    const WORK: &'static str = "evaluate";

    fn input_ot(
        &mut self,
        session: &mut Session,
        peer: usize,
        shape: &Shape,
        input: &[bool],
    ) -> Result<(), Error> {
        let (g, e) = shape.widths();
        self.labels.resize(g + e, Block::ZERO);
        evaluator_input_ot::<S>(session, peer, input, &mut self.labels[g..])
    }

    fn core<'a>(&'a mut self, shape: &'a Shape, _input: &'a [bool]) -> Self::Core<'a> {
        EvaluateCore {
            body: Evaluating::new(&mut self.engine, &shape.compiled, &mut self.tables),
            labels: &mut self.labels,
            garbler_inputs: shape.widths().0,
            outputs: shape.outputs,
            started: false,
            out_labels: None,
        }
    }
}

/// One party's executions: its side, the shape both parties share, the Yao space.
struct Execution<P: Side> {
    side: P,
    shape: Shape,
    peer: usize,
    space: Space,
}

/// An execution of either side, for a scheme chosen at run time.
trait Executes: Send {
    fn execute(
        &mut self,
        session: &mut Session,
        input: &[bool],
    ) -> Result<Option<Vec<bool>>, Error>;
    fn circuit(&self) -> &Circuit;
}

impl<P: Side> Executes for Execution<P> {
    /// The one driver for both sides: the input OT, then the side's core over the channel.
    fn execute(
        &mut self,
        session: &mut Session,
        input: &[bool],
    ) -> Result<Option<Vec<bool>>, Error> {
        let (peer, space, shape) = (self.peer, self.space, &self.shape);
        let side = &mut self.side;
        session.phase("input-ot", |s| side.input_ot(s, peer, shape, input))?;
        session.phase(P::WORK, |s| {
            role::drive(&mut side.core(shape, input), &mut s.channel(peer), space)
        })
    }

    fn circuit(&self) -> &Circuit {
        &self.shape.circuit
    }
}

/// Builds a party's execution for scheme `S`.
struct Build {
    role: YaoRole,
    shape: Shape,
    peer: usize,
    space: Space,
    session_block: Block,
    prg: Prg,
    backend: tessera_core::Backend,
    parallel: Parallel,
}

impl SchemeVisitor for Build {
    type Output = Result<Box<dyn Executes>, Error>;
    fn visit<S: Scheme>(self) -> Self::Output {
        let scheme = S::with_backend(self.backend, self.session_block)?;
        let (shape, peer, space) = (self.shape, self.peer, self.space);
        Ok(match self.role {
            YaoRole::Garbler => Box::new(Execution {
                side: GarblerSide {
                    engine: GarbleEngine::new(scheme, self.parallel),
                    prg: self.prg,
                    encoding: None,
                    tables: TableBuffer::new(),
                },
                shape,
                peer,
                space,
            }),
            YaoRole::Evaluator => Box::new(Execution {
                side: EvaluatorSide {
                    engine: EvaluateEngine::new(scheme, self.parallel),
                    labels: Vec::new(),
                    tables: TableBuffer::new(),
                },
                shape,
                peer,
                space,
            }),
        })
    }
}

/// A Yao session with one peer, either role.
pub struct Yao {
    role: YaoRole,
    execution: Box<dyn Executes>,
    setup: Vec<Phase>,
}

impl std::fmt::Debug for Yao {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Yao")
            .field("role", &self.role)
            .finish_non_exhaustive()
    }
}

/// Checks that the circuit has the two input values of a two-party run.
pub(crate) fn check_circuit(circuit: &Circuit) -> Result<(), Error> {
    circuit.check()?;
    if circuit.inputs.len() != 2 {
        return Err(Error::Input(format!(
            "a two-party circuit has two input values (garbler's, evaluator's); this one has {}",
            circuit.inputs.len()
        )));
    }
    Ok(())
}

impl Yao {
    /// Agrees with `peer` on the computation and the garbling scheme, sets up the OT
    /// providers and compiles the plan, for one thread. A failure stops both parties, the
    /// peer told why.
    pub fn setup(
        session: &mut Session,
        peer: usize,
        role: YaoRole,
        circuit: Circuit,
        scheme: SchemeKind,
        outputs: OutputTo,
    ) -> Result<Yao, Error> {
        let modes = (scheme, outputs, Parallel::default());
        Yao::setup_parallel(session, (peer, role), circuit, modes)
    }

    /// [`Yao::setup`] with this party's threads and the strategy both parties name
    /// ([`crate::yao::threads`]).
    pub fn setup_parallel(
        session: &mut Session,
        (peer, role): (usize, YaoRole),
        circuit: Circuit,
        (scheme, outputs, parallel): (SchemeKind, OutputTo, Parallel),
    ) -> Result<Yao, Error> {
        session.run(|s| {
            check_circuit(&circuit)?;
            let space = s.space(peer)?;
            let print = fingerprint(&circuit, scheme, outputs, parallel.strategy);
            let session_block = hello(s, (peer, space), role, scheme, print)?;
            // The base OTs spend much of their time waiting for the peer: compile meanwhile.
            let compiled = s.phase("base-ot+plan", |s| {
                std::thread::scope(|scope| {
                    let plan =
                        scope.spawn(|| Compiled::new(&circuit, parallel, scheme.xor_gates()));
                    let ot = match role {
                        YaoRole::Garbler => {
                            s.with_ot_sender(peer, |_, ch| Ok(tessera_net::Channel::flush(ch)?))
                        }
                        YaoRole::Evaluator => {
                            s.with_ot_receiver(peer, |_, ch| Ok(tessera_net::Channel::flush(ch)?))
                        }
                    };
                    // A panic in the planner is a bug in this crate, not the peer's doing.
                    let plan = plan.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
                    ot.and(plan)
                })
            })?;
            let build = Build {
                role,
                shape: Shape {
                    circuit,
                    compiled,
                    outputs,
                },
                peer,
                space,
                session_block,
                prg: s.fork_prg(),
                backend: s.backend(),
                parallel,
            };
            let execution = scheme.visit(build)?;
            Ok(Yao {
                role,
                execution,
                setup: s.take_phases(),
            })
        })
    }

    /// The set-up phases' times and traffic.
    pub fn setup_phases(&self) -> &[Phase] {
        &self.setup
    }

    /// One execution with this party's input bits (value 0 for the garbler, 1 for the
    /// evaluator). A failure stops both parties, the peer told why.
    pub fn run(&mut self, session: &mut Session, input: &[bool]) -> Result<Outcome, Error> {
        let value = usize::from(self.role == YaoRole::Evaluator);
        let width = self.execution.circuit().inputs[value];
        let execution = &mut self.execution;
        let role = self.role;
        session.run(|s| {
            if input.len() != width as usize {
                return Err(Error::Input(format!(
                    "the {}'s input has {} bits, the circuit's value has {width}",
                    role.name(),
                    input.len()
                )));
            }
            let bits = execution.execute(s, input)?;
            let output = bits.map(|b| split_values(&execution.circuit().outputs, &b));
            Ok(Outcome {
                output,
                phases: s.take_phases(),
            })
        })
    }
}
