//! Streamed Yao: a circuit too large to hold, run as a [`Chain`] of one step circuit (SHA-256
//! over a long message: one compression function per block, the chaining value carried),
//! garbled, sent and evaluated step by step. Each party's memory is one step's label slots,
//! one batch's tables and one message, whatever the number of steps.
//!
//! The garbler holds every input (the initial state and each step's fresh bits, drawn by a
//! generator as the stream goes, so even the input is never held whole); both parties learn
//! the final state. After the hello of [`crate::yao`] (with a fingerprint of the step
//! circuit and scheme), the garbler sends the number of steps, then one stream of blocks (the
//! state's labels, each step's input labels and tables, [`tessera_garble::ChainGarbler`])
//! cut into messages of at most [`MESSAGE_BLOCKS`] blocks, then the decoding bits; the
//! evaluator evaluates each batch as soon as its tables are in and answers with its output
//! colours. Inputs of the evaluator would need an OT per step and are not offered.
//!
//! Security is semi-honest, as for [`crate::yao`]. Steps are garbled in distinct tweak domains
//! ([`tessera_garble::Garbler::garble_in`]), so no two gates of the stream share a tweak.

use crate::yao::{Bits, COLOURS, DECODING, YaoRole, fingerprint_of, hello, kept};
use crate::{Error, Session};
use std::borrow::Cow;
use tessera_circuit::Circuit;
use tessera_core::{Block, Prg};
use tessera_garble::{
    Chain, ChainEvaluator, ChainGarbler, Evaluator, Garbler, Plan, Scheme, SchemeKind,
    SchemeVisitor, TableBuffer, TableSink, check_steps, decode,
};
use tessera_net::role::{self, Decode, Encode, Next, Outbox, Role};
use tessera_net::{DecodeError, Kind, Len, Phase};

/// The number of steps, garbler to evaluator.
pub const LENGTH: Kind = Kind::new(0x35, "yao stream length");
/// A piece of the garbler's block stream.
pub const STREAM: Kind = Kind::new(0x36, "yao stream blocks");

/// The most blocks one stream message holds (256 KiB).
pub const MESSAGE_BLOCKS: usize = 1 << 14;

/// SHA-256 of what both parties must agree on: the protocol, the scheme, the step circuit.
pub fn fingerprint(step: &Circuit, scheme: SchemeKind) -> [u8; 32] {
    fingerprint_of(b"tessera/yao-stream", scheme, &[], step)
}

/// What a streamed run gives a party.
#[derive(Clone, Debug, PartialEq)]
pub struct StreamOutcome {
    /// The final state's bits.
    pub output: Vec<bool>,
    /// Steps run.
    pub steps: u64,
    /// Gates run, all kinds.
    pub gates: u64,
    /// Time and traffic of each phase.
    pub phases: Vec<Phase>,
}

/// The chain of `step` compiled for `scheme`.
fn compile(step: &Circuit, scheme: SchemeKind) -> Result<Chain, Error> {
    Ok(Chain::new(step, |c| {
        Plan::default_for(c, scheme.xor_gates())
    })?)
}

/// Garbles `steps` steps of the chain of `step` with scheme `scheme`, `peer` evaluating: the
/// state starts as `initial`, and `fresh(k, bits)` fills step k's fresh input bits. A failure
/// stops both parties, the peer told why.
pub fn garble<F: FnMut(u64, &mut [bool])>(
    session: &mut Session,
    peer: usize,
    (step, scheme): (&Circuit, SchemeKind),
    initial: &[bool],
    (steps, fresh): (u64, F),
) -> Result<StreamOutcome, Error> {
    session.run(|s| {
        let (chain, space, block) = open(s, peer, (step, scheme), YaoRole::Garbler)?;
        let output = scheme.visit(GarbleVisit {
            session: s,
            peer: (peer, space),
            chain: &chain,
            initial,
            steps,
            fresh,
            block,
        })?;
        Ok(outcome(s, &chain, output, steps))
    })
}

/// The chain compiled, the stream's space with `peer` and the hello done: the garbler's
/// public random block.
fn open(
    s: &mut Session,
    peer: usize,
    (step, scheme): (&Circuit, SchemeKind),
    role: YaoRole,
) -> Result<(Chain, tessera_net::Space, Block), Error> {
    let chain = compile(step, scheme)?;
    let space = s.space(peer)?;
    let block = hello(s, (peer, space), role, scheme, fingerprint(step, scheme))?;
    Ok((chain, space, block))
}

fn outcome(s: &mut Session, chain: &Chain, output: Vec<bool>, steps: u64) -> StreamOutcome {
    StreamOutcome {
        output,
        steps,
        gates: steps.saturating_mul(chain.gates_per_step()),
        phases: s.take_phases(),
    }
}

/// Evaluates a chain of `step` garbled by `peer` with scheme `scheme`, as many steps as the
/// garbler says. A failure stops both parties, the peer told why.
pub fn evaluate(
    session: &mut Session,
    peer: usize,
    (step, scheme): (&Circuit, SchemeKind),
) -> Result<StreamOutcome, Error> {
    session.run(|s| {
        let (chain, space, block) = open(s, peer, (step, scheme), YaoRole::Evaluator)?;
        let (output, steps) = scheme.visit(EvaluateVisit {
            session: s,
            peer: (peer, space),
            chain: &chain,
            block,
        })?;
        Ok(outcome(s, &chain, output, steps))
    })
}

/// The garbler's run for the scheme chosen at run time.
struct GarbleVisit<'a, F> {
    session: &'a mut Session,
    peer: (usize, tessera_net::Space),
    chain: &'a Chain,
    initial: &'a [bool],
    steps: u64,
    fresh: F,
    block: Block,
}

impl<F: FnMut(u64, &mut [bool])> SchemeVisitor for GarbleVisit<'_, F> {
    type Output = Result<Vec<bool>, Error>;
    fn visit<S: Scheme>(self) -> Self::Output {
        let s = self.session;
        let scheme = S::with_backend(s.backend(), self.block)?;
        let mut core = GarbleCore {
            chain: self.chain,
            garbler: Some(Garbler::new(scheme)),
            prg: s.fork_prg(),
            initial: self.initial,
            steps: self.steps,
            fresh: self.fresh,
            decoding: Vec::new(),
        };
        let (peer, space) = self.peer;
        s.phase("garble", |s| {
            role::drive(&mut core, &mut s.channel(peer), space)
        })
    }
}

/// The evaluator's run for the scheme chosen at run time.
struct EvaluateVisit<'a> {
    session: &'a mut Session,
    peer: (usize, tessera_net::Space),
    chain: &'a Chain,
    block: Block,
}

impl SchemeVisitor for EvaluateVisit<'_> {
    type Output = Result<(Vec<bool>, u64), Error>;
    fn visit<S: Scheme>(self) -> Self::Output {
        let s = self.session;
        let scheme = S::with_backend(s.backend(), self.block)?;
        let mut core = EvaluateCore {
            chain: self.chain,
            evaluator: Some(Evaluator::new(scheme)),
            chained: None,
        };
        let (peer, space) = self.peer;
        s.phase("evaluate", |s| {
            role::drive(&mut core, &mut s.channel(peer), space)
        })
    }
}

/// The number of steps.
struct Length(u64);

/// A piece of the block stream.
struct Piece<'a>(Cow<'a, [Block]>);

impl Encode for Length {
    const KIND: Kind = LENGTH;
    fn encode<'a>(&'a self, scratch: &'a mut Vec<u8>) -> &'a [u8] {
        scratch.clear();
        scratch.extend_from_slice(&self.0.to_le_bytes());
        scratch
    }
}

impl Encode for Piece<'_> {
    const KIND: Kind = STREAM;
    fn encode<'a>(&'a self, _scratch: &'a mut Vec<u8>) -> &'a [u8] {
        bytemuck::cast_slice(&self.0)
    }
}

/// What the evaluator receives.
enum ToEvaluator<'a> {
    Length(u64),
    Piece(Cow<'a, [Block]>),
    Decoding(Cow<'a, [u8]>),
}

impl<'a> Decode<'a> for ToEvaluator<'a> {
    fn decode(id: u8, bytes: &'a [u8]) -> Result<Self, DecodeError> {
        Ok(match id {
            k if k == LENGTH.id => {
                ToEvaluator::Length(u64::from_le_bytes(role::array::<8>(bytes)?))
            }
            k if k == STREAM.id => ToEvaluator::Piece(role::blocks(bytes)?),
            k if k == DECODING.id => ToEvaluator::Decoding(Cow::Borrowed(bytes)),
            _ => {
                return Err(DecodeError(format!(
                    "kind {id:#04x} is not for the evaluator"
                )));
            }
        })
    }
}

/// What the garbler receives: the evaluator's output colours.
struct ToGarbler<'a>(Cow<'a, [u8]>);

impl<'a> Decode<'a> for ToGarbler<'a> {
    fn decode(id: u8, bytes: &'a [u8]) -> Result<Self, DecodeError> {
        match id {
            k if k == COLOURS.id => Ok(ToGarbler(Cow::Borrowed(bytes))),
            _ => Err(DecodeError(format!(
                "kind {id:#04x} is not for the garbler"
            ))),
        }
    }
}

/// Posts the block stream in messages of [`MESSAGE_BLOCKS`] blocks, the garbler writing
/// straight into its buffer; a network error passes whole ([`kept`]).
struct PostStream<'o, O> {
    out: &'o mut O,
    buffer: TableBuffer,
}

impl<O: Outbox> PostStream<'_, O> {
    /// Posts the buffer's first `n` blocks in messages of at most [`MESSAGE_BLOCKS`] blocks.
    fn send(&mut self, n: usize) -> Result<(), tessera_garble::Error> {
        let sent = self.buffer.as_slice()[..n]
            .chunks(MESSAGE_BLOCKS)
            .try_for_each(|blocks| self.out.post(&Piece(Cow::Borrowed(blocks))));
        self.buffer.consume(n);
        kept(sent)
    }
}

impl<O: Outbox> TableSink for PostStream<'_, O> {
    fn reserve(&mut self, n: usize) -> &mut [Block] {
        self.buffer.reserve(n)
    }

    /// Sends the full messages; the rest waits for the next batch.
    fn commit(&mut self) -> Result<(), tessera_garble::Error> {
        self.send(self.buffer.len() / MESSAGE_BLOCKS * MESSAGE_BLOCKS)
    }
}

/// The garbler's core: the whole stream in its first step, then the evaluator's colours.
struct GarbleCore<'a, S: Scheme, F> {
    chain: &'a Chain,
    garbler: Option<Garbler<S>>,
    prg: Prg,
    initial: &'a [bool],
    steps: u64,
    fresh: F,
    decoding: Vec<bool>,
}

impl<S: Scheme, F: FnMut(u64, &mut [bool])> GarbleCore<'_, S, F> {
    /// Garbles every step into `sink`; returns the decoding bits.
    fn stream<O: Outbox>(&mut self, sink: &mut PostStream<'_, O>) -> Result<Vec<bool>, Error> {
        let garbler = self
            .garbler
            .take()
            .ok_or_else(|| Error::Input("a stream garbled twice".into()))?;
        let prg = &mut self.prg;
        let mut g = ChainGarbler::start(self.chain, garbler, prg, self.initial, sink)?;
        let mut bits = vec![false; self.chain.fresh_bits()];
        for k in 0..self.steps {
            (self.fresh)(k, &mut bits);
            g.step(prg, &bits, sink)?;
        }
        sink.send(sink.buffer.len())?;
        Ok(g.decoding())
    }
}

impl<S: Scheme, F: FnMut(u64, &mut [bool])> Role for GarbleCore<'_, S, F> {
    type Incoming<'m> = ToGarbler<'m>;
    type Output = Vec<bool>;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToGarbler<'_>>,
        out: &mut O,
    ) -> Result<Next<Vec<bool>>, Error> {
        if let Some(ToGarbler(colours)) = incoming {
            let bits = self.decoding.iter().enumerate();
            let output = bits.map(|(k, &d)| role::packed_bit(&colours, k) ^ d);
            return Ok(Next::Done(output.collect()));
        }
        check_steps(self.steps)?;
        out.post(&Length(self.steps))?;
        let mut sink = PostStream {
            out,
            buffer: TableBuffer::new(),
        };
        self.decoding = self.stream(&mut sink)?;
        let packed = role::pack_bits(self.decoding.iter().copied());
        out.post(&Bits::<{ DECODING.id }>(Cow::Owned(packed)))?;
        Ok(Next::exact(COLOURS, self.decoding.len().div_ceil(8)))
    }
}

/// The evaluator's core: the length, the stream piece by piece, the decoding bits.
struct EvaluateCore<'a, S: Scheme> {
    chain: &'a Chain,
    evaluator: Option<Evaluator<S>>,
    chained: Option<ChainEvaluator<'a, S>>,
}

impl<S: Scheme> Role for EvaluateCore<'_, S> {
    type Incoming<'m> = ToEvaluator<'m>;
    type Output = (Vec<bool>, u64);
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<ToEvaluator<'_>>,
        out: &mut O,
    ) -> Result<Next<Self::Output>, Error> {
        let piece = Next::Expect(role::Expect {
            kind: STREAM,
            len: Len::AtMost(16 * MESSAGE_BLOCKS),
        });
        let state = self.chain.state_bits();
        match (incoming, self.chained.as_mut()) {
            (None, _) => Ok(Next::exact(LENGTH, 8)),
            (Some(ToEvaluator::Length(steps)), None) => {
                let evaluator = self
                    .evaluator
                    .take()
                    .ok_or_else(|| Error::Input("a stream evaluated twice".into()))?;
                self.chained = Some(ChainEvaluator::new(self.chain, evaluator, steps)?);
                Ok(piece)
            }
            (Some(ToEvaluator::Piece(blocks)), Some(c)) if !c.is_done() => {
                c.feed(&blocks)?;
                Ok(if c.is_done() {
                    Next::exact(DECODING, state.div_ceil(8))
                } else {
                    piece
                })
            }
            (Some(ToEvaluator::Decoding(d)), Some(c)) if c.is_done() => {
                let decoding: Vec<bool> = (0..state).map(|k| role::packed_bit(&d, k)).collect();
                let output = decode(c.state(), &decoding);
                let colours = role::pack_bits(c.state().iter().map(|l| l.lsb()));
                out.post(&Bits::<{ COLOURS.id }>(Cow::Owned(colours)))?;
                Ok(Next::Done((output, c.steps_done())))
            }
            _ => Err(Error::Input("a stream message out of turn".into())),
        }
    }
}
