//! Semi-honest Yao two-party computation (Yao, FOCS 1986; Lindell and Pinkas, J. Cryptology
//! 2009) on Tessera's batched garbling, with any of its schemes ([`SchemeKind`]).
//!
//! Roles: the garbler holds the circuit's input value 0, the evaluator value 1. A session is
//! set up once ([`YaoGarbler::setup`], [`YaoEvaluator::setup`]): the parties exchange a
//! fingerprint of what they are about to run (protocol version, scheme, who learns the output,
//! SHA-256 of the circuit), so different circuits, schemes or versions stop both sides with a
//! clear message, and then run the 128 base OTs of the IKNP extension. The garbler's
//! fingerprint message also carries a fresh public random block, the MI scheme's key offset.
//! Each execution then:
//!
//! 1. evaluator inputs by OT (IKNP with ALSZ's optimisations, VASA §4.3.2). For the free-XOR
//!    schemes it is correlated OT whose global offset is the free-XOR Δ, so the sender's q_j
//!    *is* the zero-label of evaluator input wire j and the receiver's output is the label of
//!    its bit; the PRF-based scheme, whose labels are independent, sends both labels by
//!    chosen-message OT;
//! 2. the garbler sends the labels of its own input bits;
//! 3. the garbler garbles batch by batch and streams each batch's tables as one message while
//!    the evaluator evaluates them: neither side holds the whole garbled circuit;
//! 4. outputs: the garbler sends the output decoding bits (the evaluator learns the output),
//!    and/or the evaluator sends its output labels' colour bits (the garbler learns it).
//!
//! Security is semi-honest (passive): a malicious garbler could garble another function. A
//! malformed or missing message still ends in an error, never a panic or a hang, and the party
//! that stops tells its peer why.

use crate::Error;
use serde::Serialize;
use sha2::{Digest, Sha256};
use tessera_circuit::{Circuit, GateKind};
use tessera_core::{Backend, Block, Prg};
use tessera_garble::{
    Batching, Circ, Delta, Evaluator, Garbler, HalfGates, HalfGatesHash, InputEncoding, Mi, Plan,
    Prf, Prp, Scheme, SchemeKind, TableSink, TableSource, ThreeHalves, ThreeHalvesSecret, decode,
    decoding_bits,
};
use tessera_net::{Channel, Phase, PhaseTimer, Tag};
use tessera_ot::{OtReceiver, OtSender, Security};

/// The version of this protocol's messages; parties of different versions refuse each other.
pub const PROTOCOL_VERSION: u8 = 2;

const HELLO: Tag = Tag::new(0x30, "yao fingerprint");
const GARBLER_LABELS: Tag = Tag::new(0x31, "yao garbler input labels");
const TABLES: Tag = Tag::new(0x32, "yao garbled tables");
const DECODING: Tag = Tag::new(0x33, "yao output decoding bits");
const COLOURS: Tag = Tag::new(0x34, "yao evaluator output colours");

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

/// The result of one execution.
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The output bits, one vector per output value, if this party learns them.
    pub output: Option<Vec<Vec<bool>>>,
    /// Time and traffic of each phase.
    pub phases: Vec<Phase>,
}

/// SHA-256 of everything both parties must agree on: version, scheme, output mode, circuit.
pub fn fingerprint(circuit: &Circuit, scheme: SchemeKind, outputs: OutputTo) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(b"tessera/yao");
    h.update([PROTOCOL_VERSION]);
    h.update(scheme.name().as_bytes());
    h.update(outputs.name().as_bytes());
    h.update(circuit.num_wires.to_le_bytes());
    for list in [&circuit.inputs, &circuit.outputs] {
        h.update((list.len() as u64).to_le_bytes());
        for w in list {
            h.update(w.to_le_bytes());
        }
    }
    let mut gates = Vec::with_capacity(13 * circuit.gates.len());
    for g in &circuit.gates {
        gates.push(match g.kind {
            GateKind::Xor => 0u8,
            GateKind::And => 1,
            GateKind::Inv => 2,
            GateKind::Eqw => 3,
            GateKind::Eq => 4,
        });
        for w in [g.a, g.b, g.out] {
            gates.extend_from_slice(&w.to_le_bytes());
        }
    }
    h.update(&gates);
    h.finalize().into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

const ROLE_GARBLER: u8 = 0;
const ROLE_EVALUATOR: u8 = 1;

/// What a session agrees on.
#[derive(Clone, Copy)]
struct Agreement<'a> {
    circuit: &'a Circuit,
    scheme: SchemeKind,
    outputs: OutputTo,
}

/// Sends our fingerprint (and `session`, the garbler's public random block) and checks the
/// peer's: same version, opposite role, same scheme, same fingerprint. Returns the garbler's
/// session block.
fn hello<C: Channel + ?Sized>(
    channel: &mut C,
    role: u8,
    agreed: Agreement<'_>,
    session: Block,
) -> Result<Block, Error> {
    let ours = fingerprint(agreed.circuit, agreed.scheme, agreed.outputs);
    let mut msg = vec![PROTOCOL_VERSION, role, agreed.scheme.code()];
    msg.extend_from_slice(&ours);
    msg.extend_from_slice(&session.to_bytes());
    channel.send(HELLO, &msg)?;
    let mut theirs = [0u8; 3 + 32 + 16];
    channel.recv_into(HELLO, &mut theirs)?;
    let role_name = |r: u8| {
        if r == ROLE_GARBLER {
            "garbler"
        } else {
            "evaluator"
        }
    };
    let problem = if theirs[0] != PROTOCOL_VERSION {
        Some(format!(
            "the peer speaks Yao protocol version {}, this party version {PROTOCOL_VERSION}",
            theirs[0]
        ))
    } else if theirs[1] == role {
        Some(format!("both parties are the {}", role_name(role)))
    } else if theirs[2] != agreed.scheme.code() {
        let peer = SchemeKind::from_code(theirs[2]).map_or("an unknown scheme", SchemeKind::name);
        Some(format!(
            "garbling scheme {} here, {peer} at the peer",
            agreed.scheme
        ))
    } else if theirs[3..35] != ours {
        Some(format!(
            "circuit fingerprint {} here, {} at the peer: a different circuit, output mode or version",
            &hex(&ours)[..16],
            &hex(&theirs[3..35])[..16]
        ))
    } else {
        None
    };
    match problem {
        Some(p) => {
            channel.abort(&p);
            Err(Error::Mismatch(p))
        }
        None if role == ROLE_GARBLER => Ok(session),
        None => {
            let mut bytes = [0u8; 16];
            bytes.copy_from_slice(&theirs[35..]);
            Ok(Block::from_bytes(bytes))
        }
    }
}

/// Checks that the circuit has the two input values of a two-party run.
fn check_circuit(circuit: &Circuit) -> Result<(), Error> {
    circuit.check()?;
    if circuit.inputs.len() != 2 {
        return Err(Error::Input(format!(
            "a two-party circuit has two input values (garbler's, evaluator's); this one has {}",
            circuit.inputs.len()
        )));
    }
    Ok(())
}

fn check_input(what: &str, bits: &[bool], width: u32) -> Result<(), Error> {
    if bits.len() == width as usize {
        Ok(())
    } else {
        Err(Error::Input(format!(
            "the {what}'s input has {} bits, the circuit's value has {width}",
            bits.len()
        )))
    }
}

/// Splits output bits into the circuit's output values.
fn split_outputs(circuit: &Circuit, bits: &[bool]) -> Vec<Vec<bool>> {
    let mut at = 0;
    circuit
        .outputs
        .iter()
        .map(|&w| {
            let v = bits[at..at + w as usize].to_vec();
            at += w as usize;
            v
        })
        .collect()
}

fn pack(bits: &[bool]) -> Vec<u8> {
    bits.chunks(8)
        .map(|c| {
            c.iter()
                .enumerate()
                .fold(0u8, |a, (k, &b)| a | (u8::from(b) << k))
        })
        .collect()
}

fn unpack(bytes: &[u8], n: usize) -> Vec<bool> {
    (0..n).map(|k| (bytes[k / 8] >> (k % 8)) & 1 == 1).collect()
}

/// Runs `f`; on error, tells the peer why before returning it.
fn telling_peer<C: Channel + ?Sized, T>(
    channel: &mut C,
    f: impl FnOnce(&mut C) -> Result<T, Error>,
) -> Result<T, Error> {
    f(channel).inspect_err(|e| {
        if !matches!(e, Error::Net(tessera_net::Error::PeerAborted(_))) {
            channel.abort(&e.to_string());
        }
    })
}

/// Streams garbled tables as messages, one per batch.
struct ChannelSink<'a, C: ?Sized>(&'a mut C);

impl<C: Channel + ?Sized> TableSink for ChannelSink<'_, C> {
    fn put(&mut self, blocks: &[Block]) -> Result<(), tessera_garble::Error> {
        self.0
            .send_blocks(TABLES, blocks)
            .map_err(|e| tessera_garble::Error::Stream(e.to_string()))
    }
}

/// Receives garbled tables batch by batch; each message must be exactly one batch.
struct ChannelSource<'a, C: ?Sized> {
    channel: &'a mut C,
    buffer: &'a mut Vec<Block>,
}

impl<C: Channel + ?Sized> TableSource for ChannelSource<'_, C> {
    fn take(&mut self, n: usize) -> Result<&[Block], tessera_garble::Error> {
        self.buffer.resize(n, Block::ZERO);
        self.channel
            .recv_blocks(TABLES, self.buffer)
            .map_err(|e| tessera_garble::Error::Stream(e.to_string()))?;
        Ok(self.buffer)
    }

    fn finish(&mut self) -> Result<(), tessera_garble::Error> {
        // Extra tables would arrive where the next message is expected and be refused there.
        Ok(())
    }
}

/// A session's set-up, the same for both roles: checks the circuit, exchanges fingerprints,
/// then runs `base_ot` while another thread compiles the plan both parties use (the default
/// batching for the circuit; the base OTs spend much of their time waiting for the peer).
/// Returns the OT state, the plan and the two phases.
fn set_up<C: Channel + ?Sized, T: Send>(
    channel: &mut C,
    agreed: Agreement<'_>,
    role: u8,
    session: Block,
    base_ot: impl FnOnce(&mut C) -> Result<T, tessera_ot::Error>,
) -> Result<(T, Plan, Block, Vec<Phase>), Error> {
    let circuit = agreed.circuit;
    telling_peer(channel, |channel| {
        check_circuit(circuit)?;
        let timer = PhaseTimer::start("fingerprint", channel);
        let session = hello(channel, role, agreed, session)?;
        let hello_phase = timer.stop(channel);
        let timer = PhaseTimer::start("base-ot+plan", channel);
        let (ot, plan) = std::thread::scope(|scope| {
            let plan = scope.spawn(|| {
                let batching = Batching::default_for(circuit);
                Plan::with_xor(circuit, batching, agreed.scheme.xor_gates())
            });
            let ot = base_ot(&mut *channel).map_err(Error::from).and_then(|ot| {
                channel.flush()?;
                Ok(ot)
            });
            // A panic in the planner is a bug in this crate, not the peer's doing.
            let plan = plan.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
            ot.map(|ot| (ot, plan))
        })?;
        Ok((ot, plan, session, vec![hello_phase, timer.stop(channel)]))
    })
}

/// How a scheme's input labels travel.
trait YaoScheme: Scheme + Sized {
    /// The circuit's input encoding (`g` wires of the garbler's, then `e` of the evaluator's),
    /// the evaluator's labels sent by OT.
    fn send_inputs<C: Channel + ?Sized>(
        ot: &mut OtSender,
        channel: &mut C,
        prg: &mut Prg,
        g: usize,
        e: usize,
    ) -> Result<InputEncoding<Self>, Error>;
    /// The labels of the evaluator's input `bits`, by OT.
    fn receive_inputs<C: Channel + ?Sized>(
        ot: &mut OtReceiver,
        channel: &mut C,
        bits: &[bool],
        out: &mut [Block],
    ) -> Result<(), Error>;
}

/// Free-XOR inputs: Δ is the OT's offset; the evaluator's zero-labels come from correlated OT.
/// Returns Δ and the `g + e` zero-labels.
fn correlated_inputs<C: Channel + ?Sized>(
    ot: &mut OtSender,
    channel: &mut C,
    prg: &mut Prg,
    g: usize,
    e: usize,
) -> Result<(Delta, Vec<Block>), Error> {
    let mut wires = vec![Block::ZERO; g + e];
    prg.fill_blocks(&mut wires[..g]);
    ot.correlated(channel, &mut wires[g..])?;
    Ok((Delta::new(ot.delta()), wires))
}

impl<H: HalfGatesHash> YaoScheme for HalfGates<H> {
    fn send_inputs<C: Channel + ?Sized>(
        ot: &mut OtSender,
        channel: &mut C,
        prg: &mut Prg,
        g: usize,
        e: usize,
    ) -> Result<InputEncoding<Self>, Error> {
        let (secret, wires) = correlated_inputs(ot, channel, prg, g, e)?;
        Ok(InputEncoding { secret, wires })
    }

    fn receive_inputs<C: Channel + ?Sized>(
        ot: &mut OtReceiver,
        channel: &mut C,
        bits: &[bool],
        out: &mut [Block],
    ) -> Result<(), Error> {
        Ok(ot.correlated(channel, bits, out)?)
    }
}

/// As half-gates, with the dicing coins drawn from the garbler's PRG.
impl YaoScheme for ThreeHalves {
    fn send_inputs<C: Channel + ?Sized>(
        ot: &mut OtSender,
        channel: &mut C,
        prg: &mut Prg,
        g: usize,
        e: usize,
    ) -> Result<InputEncoding<Self>, Error> {
        let (delta, wires) = correlated_inputs(ot, channel, prg, g, e)?;
        let coins = Prg::from_seed_block(prg.random_block());
        Ok(InputEncoding {
            secret: ThreeHalvesSecret::new(delta, coins),
            wires,
        })
    }

    fn receive_inputs<C: Channel + ?Sized>(
        ot: &mut OtReceiver,
        channel: &mut C,
        bits: &[bool],
        out: &mut [Block],
    ) -> Result<(), Error> {
        Ok(ot.correlated(channel, bits, out)?)
    }
}

/// Independent labels: both of each evaluator wire by chosen-message OT.
impl YaoScheme for Prf {
    fn send_inputs<C: Channel + ?Sized>(
        ot: &mut OtSender,
        channel: &mut C,
        prg: &mut Prg,
        g: usize,
        e: usize,
    ) -> Result<InputEncoding<Self>, Error> {
        let enc = InputEncoding::<Prf>::random(prg, g + e);
        let pairs: Vec<(Block, Block)> = enc.wires[g..]
            .iter()
            .map(|w| {
                let l = |b| Prf::encode(&enc.secret, w, b);
                (l(false), l(true))
            })
            .collect();
        ot.send(channel, &pairs)?;
        Ok(enc)
    }

    fn receive_inputs<C: Channel + ?Sized>(
        ot: &mut OtReceiver,
        channel: &mut C,
        bits: &[bool],
        out: &mut [Block],
    ) -> Result<(), Error> {
        Ok(ot.receive(channel, bits, out)?)
    }
}

/// One value per scheme: `$T<Prp>`, ... (the engines of a session chosen at run time).
macro_rules! per_scheme {
    ($(#[$m:meta])* $name:ident, $T:ident) => {
        $(#[$m])*
        enum $name {
            Prp($T<Prp>),
            Mi($T<Mi>),
            Circ($T<Circ>),
            Prf($T<Prf>),
            ThreeHalves($T<ThreeHalves>),
        }

        impl $name {
            fn new(scheme: SchemeKind, session: Block) -> Result<Self, Error> {
                let b = Backend::active();
                Ok(match scheme {
                    SchemeKind::Prp => $name::Prp($T::new(Prp::with_backend(b, session)?)),
                    SchemeKind::Mi => $name::Mi($T::new(Mi::with_backend(b, session)?)),
                    SchemeKind::Circ => $name::Circ($T::new(Circ::with_backend(b, session)?)),
                    SchemeKind::Prf => $name::Prf($T::new(Prf::with_backend(b, session)?)),
                    SchemeKind::ThreeHalves => {
                        $name::ThreeHalves($T::new(ThreeHalves::with_backend(b, session)?))
                    }
                })
            }
        }
    };
}

/// Calls `$f(engine, $args...)` on whichever scheme's engine `$e` holds.
macro_rules! dispatch {
    ($name:ident, $e:expr, $f:ident($($arg:expr),*)) => {
        match $e {
            $name::Prp(x) => $f(x, $($arg),*),
            $name::Mi(x) => $f(x, $($arg),*),
            $name::Circ(x) => $f(x, $($arg),*),
            $name::Prf(x) => $f(x, $($arg),*),
            $name::ThreeHalves(x) => $f(x, $($arg),*),
        }
    };
}

per_scheme!(
    /// The garbling engine of the session's scheme.
    GarblerEngine,
    Garbler
);
per_scheme!(
    /// The evaluation engine of the session's scheme.
    EvaluatorEngine,
    Evaluator
);

/// What a garbler's execution reads besides its engine.
struct GarblerSession<'a> {
    circuit: &'a Circuit,
    plan: &'a Plan,
    outputs: OutputTo,
    ot: &'a mut OtSender,
    prg: &'a mut Prg,
}

/// The garbler's side of a Yao session.
pub struct YaoGarbler {
    circuit: Circuit,
    plan: Plan,
    outputs: OutputTo,
    ot: OtSender,
    engine: GarblerEngine,
    prg: Prg,
    setup: Vec<Phase>,
}

impl std::fmt::Debug for YaoGarbler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("YaoGarbler")
            .field("outputs", &self.outputs)
            .finish_non_exhaustive()
    }
}

impl YaoGarbler {
    /// Agrees on the computation and garbling scheme with the peer and runs the base OTs.
    pub fn setup<C: Channel + ?Sized>(
        channel: &mut C,
        circuit: Circuit,
        scheme: SchemeKind,
        outputs: OutputTo,
        mut prg: Prg,
    ) -> Result<Self, Error> {
        let ot_prg = Prg::from_seed_block(prg.random_block());
        let agreed = Agreement {
            circuit: &circuit,
            scheme,
            outputs,
        };
        let session = prg.random_block();
        let (ot, plan, session, setup) = set_up(channel, agreed, ROLE_GARBLER, session, |ch| {
            OtSender::setup(ch, Security::SemiHonest, ot_prg)
        })?;
        Ok(YaoGarbler {
            plan,
            circuit,
            outputs,
            ot,
            engine: GarblerEngine::new(scheme, session)?,
            prg,
            setup,
        })
    }

    /// The set-up phases' times and traffic.
    pub fn setup_phases(&self) -> &[Phase] {
        &self.setup
    }

    /// One execution with the garbler's input bits (the circuit's input value 0).
    pub fn run<C: Channel + ?Sized>(
        &mut self,
        channel: &mut C,
        input: &[bool],
    ) -> Result<Outcome, Error> {
        let mut session = GarblerSession {
            circuit: &self.circuit,
            plan: &self.plan,
            outputs: self.outputs,
            ot: &mut self.ot,
            prg: &mut self.prg,
        };
        telling_peer(channel, |channel| {
            dispatch!(
                GarblerEngine,
                &mut self.engine,
                garble_once(&mut session, channel, input)
            )
        })
    }
}

fn garble_once<S: YaoScheme, C: Channel + ?Sized>(
    garbler: &mut Garbler<S>,
    s: &mut GarblerSession<'_>,
    channel: &mut C,
    input: &[bool],
) -> Result<Outcome, Error> {
    let (g, e) = (s.circuit.inputs[0] as usize, s.circuit.inputs[1] as usize);
    check_input("garbler", input, s.circuit.inputs[0])?;
    let mut phases = Vec::new();

    let timer = PhaseTimer::start("input-ot", channel);
    let mut enc = S::send_inputs(s.ot, channel, s.prg, g, e)?;
    phases.push(timer.stop(channel));

    let timer = PhaseTimer::start("garble", channel);
    channel.send_blocks(GARBLER_LABELS, &enc.encode(0, input))?;
    let sink = &mut ChannelSink(&mut *channel);
    let out = garbler.garble(s.plan, &mut enc.secret, &enc.wires, sink)?;
    phases.push(timer.stop(channel));

    let timer = PhaseTimer::start("output", channel);
    let decoding = decoding_bits::<S>(&out);
    if s.outputs.evaluator_learns() {
        channel.send(DECODING, &pack(&decoding))?;
    }
    channel.flush()?;
    let output = if s.outputs.garbler_learns() {
        let n = decoding.len();
        let mut colours = vec![0u8; n.div_ceil(8)];
        channel.recv_into(COLOURS, &mut colours)?;
        let bits: Vec<bool> = unpack(&colours, n)
            .iter()
            .zip(&decoding)
            .map(|(&c, &d)| c ^ d)
            .collect();
        Some(split_outputs(s.circuit, &bits))
    } else {
        None
    };
    phases.push(timer.stop(channel));
    Ok(Outcome { output, phases })
}

/// What an evaluator's execution reads besides its engine.
struct EvaluatorSession<'a> {
    circuit: &'a Circuit,
    plan: &'a Plan,
    outputs: OutputTo,
    ot: &'a mut OtReceiver,
    buffer: &'a mut Vec<Block>,
}

/// The evaluator's side of a Yao session.
pub struct YaoEvaluator {
    circuit: Circuit,
    plan: Plan,
    outputs: OutputTo,
    ot: OtReceiver,
    engine: EvaluatorEngine,
    buffer: Vec<Block>,
    setup: Vec<Phase>,
}

impl std::fmt::Debug for YaoEvaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("YaoEvaluator")
            .field("outputs", &self.outputs)
            .finish_non_exhaustive()
    }
}

impl YaoEvaluator {
    /// Agrees on the computation and garbling scheme with the peer and runs the base OTs.
    pub fn setup<C: Channel + ?Sized>(
        channel: &mut C,
        circuit: Circuit,
        scheme: SchemeKind,
        outputs: OutputTo,
        prg: Prg,
    ) -> Result<Self, Error> {
        let agreed = Agreement {
            circuit: &circuit,
            scheme,
            outputs,
        };
        let (ot, plan, session, setup) =
            set_up(channel, agreed, ROLE_EVALUATOR, Block::ZERO, |ch| {
                OtReceiver::setup(ch, Security::SemiHonest, prg)
            })?;
        Ok(YaoEvaluator {
            plan,
            circuit,
            outputs,
            ot,
            engine: EvaluatorEngine::new(scheme, session)?,
            buffer: Vec::new(),
            setup,
        })
    }

    /// The set-up phases' times and traffic.
    pub fn setup_phases(&self) -> &[Phase] {
        &self.setup
    }

    /// One execution with the evaluator's input bits (the circuit's input value 1).
    pub fn run<C: Channel + ?Sized>(
        &mut self,
        channel: &mut C,
        input: &[bool],
    ) -> Result<Outcome, Error> {
        let mut session = EvaluatorSession {
            circuit: &self.circuit,
            plan: &self.plan,
            outputs: self.outputs,
            ot: &mut self.ot,
            buffer: &mut self.buffer,
        };
        telling_peer(channel, |channel| {
            dispatch!(
                EvaluatorEngine,
                &mut self.engine,
                evaluate_once(&mut session, channel, input)
            )
        })
    }
}

fn evaluate_once<S: YaoScheme, C: Channel + ?Sized>(
    evaluator: &mut Evaluator<S>,
    s: &mut EvaluatorSession<'_>,
    channel: &mut C,
    input: &[bool],
) -> Result<Outcome, Error> {
    let (g, e) = (s.circuit.inputs[0] as usize, s.circuit.inputs[1] as usize);
    check_input("evaluator", input, s.circuit.inputs[1])?;
    let mut phases = Vec::new();

    let timer = PhaseTimer::start("input-ot", channel);
    let mut labels = vec![Block::ZERO; g + e];
    S::receive_inputs(s.ot, channel, input, &mut labels[g..])?;
    phases.push(timer.stop(channel));

    let timer = PhaseTimer::start("evaluate", channel);
    channel.recv_blocks(GARBLER_LABELS, &mut labels[..g])?;
    let out = evaluator.evaluate(
        s.plan,
        &labels,
        &mut ChannelSource {
            channel: &mut *channel,
            buffer: &mut *s.buffer,
        },
    )?;
    phases.push(timer.stop(channel));

    let timer = PhaseTimer::start("output", channel);
    let output = if s.outputs.evaluator_learns() {
        let mut packed = vec![0u8; out.len().div_ceil(8)];
        channel.recv_into(DECODING, &mut packed)?;
        let bits = decode(&out, &unpack(&packed, out.len()));
        Some(split_outputs(s.circuit, &bits))
    } else {
        None
    };
    if s.outputs.garbler_learns() {
        let colours: Vec<bool> = out.iter().map(|l| l.lsb()).collect();
        channel.send(COLOURS, &pack(&colours))?;
    }
    channel.flush()?;
    phases.push(timer.stop(channel));
    Ok(Outcome { output, phases })
}
