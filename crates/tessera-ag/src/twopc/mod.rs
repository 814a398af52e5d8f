//! Actively secure two-party computation by authenticated garbling (KRRW18 §3, Fig. 3), party 0
//! the garbler and party 1 the evaluator:
//!
//! 1. **Function-independent**: authenticated masks for the input wires and AND outputs, and
//!    authenticated AND triples ([`crate::triples`]), batch by batch: [`Material`].
//! 2. **Function-dependent**: each AND gate's mask product λ_α·λ_β from a triple by Beaver's
//!    trick (the differences opened with MACs), and the authenticated half-gates tables
//!    ([`crate::garbling`]).
//! 3. **Online**: inputs go in as masked values ẑ = x ⊕ λ, each party opening its mask shares of
//!    the other's input wires with MACs (no oblivious transfer on inputs, so no selective
//!    failure: what the garbler sends depends only on public ẑ); the evaluator evaluates, then
//!    sends the AND outputs' masked values (each padded by a fresh share of the evaluator's, so
//!    they show nothing even when the tables were corrupted) and a commitment to the digest of
//!    its AND labels. The label check: the garbler answers with the digest of the labels those
//!    values call for, the evaluator compares it with its own (nothing of its labels has left
//!    it) and only then opens its commitment, which the garbler checks: a lie about a masked
//!    value needs the other label, so Δ_A. Then the consistency check: the garbler sends the
//!    digest of its MACs of c = (ẑ_α ⊕ λ_α)(ẑ_β ⊕ λ_β) ⊕ ẑ_γ ⊕ λ_γ per AND gate, which must be
//!    0 and which the evaluator checks under Δ_B. Only then are outputs decoded: the garbler
//!    opens its output masks to the evaluator, and the evaluator sends its output labels
//!    (which the garbler checks are its own) and opens its output masks.
//!
//! Each party's part of phases 2 and 3 is a state machine without I/O ([`garbler`],
//! [`evaluator`]); [`run`] drives them over a session and times the phases.

pub mod evaluator;
pub mod garbler;

use crate::Error;
use crate::abit;
use crate::checks::{self, Check};
use crate::garbling::{self, Slots};
use crate::share::{Keyring, Shares};
use crate::triples::{Generator, Triples};
use std::ops::Range;
use tessera_circuit::Circuit;
use tessera_circuit::bristol::stream::Streamed;
use tessera_core::Block;
use tessera_garble::{Batching, Chain, Plan};
use tessera_net::role;
use tessera_protocols::Session;

/// Triples per batch: a circuit of n AND gates takes ⌊n / 2^19⌋ batches (one if fewer) of
/// equal size, so every batch of a large circuit holds 2^19 to 2^20 triples, well past the
/// 370 728 from which buckets of 3 suffice, and 150 to 300 MB of leaky triples per party.
pub const TRIPLE_BATCH: usize = 1 << 19;

/// Which parties learn the outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outputs {
    /// Both.
    All,
    /// The evaluator only.
    Evaluator,
    /// The garbler only.
    Garbler,
}

impl Outputs {
    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Outputs::All => "all",
            Outputs::Evaluator => "evaluator",
            Outputs::Garbler => "garbler",
        }
    }

    fn to_evaluator(self) -> bool {
        self != Outputs::Garbler
    }

    fn to_garbler(self) -> bool {
        self != Outputs::Evaluator
    }
}

/// How a party's online phase ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending {
    /// The outputs are decoded, to whom this says.
    Decode(Outputs),
    /// A step of a chain: the outputs are the state, carried into the next step as they are.
    Carry,
}

/// A party's state of the wires carried between programs, by position: what a circuit file
/// streamed window by window keeps between its windows ([`run_file`]).
pub trait Carried: Default {
    /// The state of the wires at `positions`, in order.
    fn select(&self, positions: &[u32]) -> Self;
    /// Puts the wires of `from` at `positions`, the store first grown to `size` positions.
    fn place(&mut self, positions: &[u32], from: Self, size: usize);
}

/// What a party's online phase ended with.
#[derive(Debug)]
pub enum Ended<C> {
    /// The outputs, if this party learns them.
    Outputs(Option<Vec<bool>>),
    /// The state for the next step.
    Carried(C),
}

impl<C> Ended<C> {
    /// The outputs (none for a carried state).
    pub fn outputs(self) -> Option<Vec<bool>> {
        match self {
            Ended::Outputs(o) => o,
            Ended::Carried(_) => None,
        }
    }
}

/// A circuit compiled for two-party authenticated garbling: input value 0 is the garbler's,
/// value 1 (if any) the evaluator's. A step of a chain ([`Program::chain_step`]) has a third
/// kind of input wire, the state carried from the step before, last.
#[derive(Clone, Debug)]
pub struct Program {
    plan: Plan,
    garbler_inputs: usize,
    evaluator_inputs: usize,
    ands: usize,
    outputs: usize,
}

impl Program {
    /// `circuit`, checked and compiled.
    pub fn new(circuit: &Circuit) -> Result<Program, Error> {
        circuit
            .check()
            .map_err(|e| Error::Usage(format!("the circuit: {e}")))?;
        if circuit.inputs.len() > 2 {
            return Err(Error::Usage(format!(
                "the circuit has {} input values; two parties give at most two",
                circuit.inputs.len()
            )));
        }
        let plan = Plan::new(circuit, Batching::default_for(circuit));
        let width = |v: usize| circuit.inputs.get(v).map_or(0, |&w| w as usize);
        Ok(Program {
            garbler_inputs: width(0),
            evaluator_inputs: width(1),
            ands: plan.stats().and_gates,
            outputs: plan.output_slots().len(),
            plan,
        })
    }

    /// A window of a circuit file ([`tessera_circuit::bristol::stream`]): every input wire is
    /// carried from an earlier window.
    pub fn window(circuit: &Circuit) -> Result<Program, Error> {
        let mut p = Program::new(circuit)?;
        (p.garbler_inputs, p.evaluator_inputs) = (0, 0);
        Ok(p)
    }

    /// A step of `chain`, whose fresh input is the garbler's: the first step takes the initial
    /// state from the garbler too, every later one carries it from the step before.
    pub fn chain_step(chain: &Chain, first: bool) -> Program {
        let (fresh, state) = (chain.fresh_bits(), chain.state_bits());
        // The state is the last input value: carried (not the garbler's) after the first step.
        let plan = chain.plan().clone();
        Program {
            garbler_inputs: if first { fresh + state } else { fresh },
            evaluator_inputs: 0,
            ands: plan.stats().and_gates,
            outputs: plan.output_slots().len(),
            plan,
        }
    }

    /// AND gates.
    pub fn ands(&self) -> usize {
        self.ands
    }

    /// Input wires of party `p` (0 garbler, 1 evaluator).
    pub fn inputs_of(&self, p: usize) -> usize {
        if p == 0 {
            self.garbler_inputs
        } else {
            self.evaluator_inputs
        }
    }

    /// Output wires.
    pub fn outputs(&self) -> usize {
        self.outputs
    }

    /// Input wires the parties give (all but the carried ones).
    fn fresh_inputs(&self) -> usize {
        self.garbler_inputs + self.evaluator_inputs
    }

    /// The masks and triples `runs` runs of this program take: (masks, triples).
    fn needs(&self, runs: u64) -> (u64, u64) {
        let masks = (self.fresh_inputs() + self.ands) as u64;
        (
            runs.saturating_mul(masks),
            runs.saturating_mul(self.ands as u64),
        )
    }

    /// The input wires of party `p`, as indices into all input wires.
    fn input_range(&self, p: usize) -> Range<usize> {
        if p == 0 {
            0..self.garbler_inputs
        } else {
            self.garbler_inputs..self.fresh_inputs()
        }
    }
}

/// One party's function-independent material for a program: its keyring, the masks of the
/// input wires then of the AND outputs in plan order, and one AND triple per AND gate. The
/// masks of carried input wires come with the state.
#[derive(Clone, Debug)]
pub struct Material {
    ring: Keyring,
    masks: Shares,
    triples: Triples,
}

impl Material {
    /// Draws the material for `program` with `peer`, the triples in batches of about
    /// [`TRIPLE_BATCH`].
    pub fn generate(session: &mut Session, peer: usize, program: &Program) -> Result<Self, Error> {
        let mut pool = Pool::new(session, peer, program.needs(1))?;
        Material::draw(session, &mut pool, program)
    }

    /// Takes the masks and triples for `program` from `pool`.
    pub fn draw(session: &mut Session, pool: &mut Pool, program: &Program) -> Result<Self, Error> {
        let masks = pool.masks(session, program.fresh_inputs() + program.ands)?;
        Ok(Material {
            ring: pool.ring(),
            masks,
            triples: pool.triples(session, program.ands)?,
        })
    }

    /// The masks of the carried input wires, `carried`, put in place after the fresh ones.
    fn carry_in(&mut self, program: &Program, carried: &Shares) {
        let fresh = program.fresh_inputs();
        let mut masks = self.masks.slice(0..fresh);
        masks.append(carried.clone());
        masks.append(self.masks.slice(fresh..self.masks.len()));
        self.masks = masks;
    }
}

/// Random authenticated masks drawn at a time at most: 2^20, 32 MiB per party.
pub const MASK_BATCH: usize = 1 << 20;

/// A party's function-independent material with one peer for a whole run (a circuit, or every
/// step of a chain), made in batches and handed out as programs take it: random authenticated
/// masks, [`MASK_BATCH`] at a time at most, and AND triples. A run of n triples in all makes
/// ⌊n / 2^19⌋ triple batches of equal size (one if fewer), so each batch of a large run holds
/// 2^19 to 2^20 triples and buckets of 3 suffice. At most one batch of each is held at a time.
#[derive(Debug)]
pub struct Pool {
    generator: Generator,
    peer: usize,
    ring: Keyring,
    /// Masks and triples still to make, the triple batch size, and the stocks.
    masks_left: u64,
    triples_left: u64,
    batch: usize,
    mask_stock: Shares,
    masks_used: usize,
    stock: Triples,
    used: usize,
}

impl Pool {
    /// A pool for `(masks, triples)` in all with `peer`.
    pub fn new(
        session: &mut Session,
        peer: usize,
        (masks, triples): (u64, u64),
    ) -> Result<Self, Error> {
        let parts = (triples / TRIPLE_BATCH as u64).max(1);
        Ok(Pool {
            generator: Generator::new(session, peer)?,
            peer,
            ring: Keyring {
                delta: Block::ZERO,
                first: session.id() < peer,
            },
            masks_left: masks,
            triples_left: triples,
            batch: triples.div_ceil(parts).max(1) as usize,
            mask_stock: Shares::default(),
            masks_used: 0,
            stock: Triples::default(),
            used: 0,
        })
    }

    /// This party's keyring (its Δ known once masks are drawn).
    fn ring(&self) -> Keyring {
        self.ring
    }

    /// The next `n` masks.
    pub fn masks(&mut self, session: &mut Session, n: usize) -> Result<Shares, Error> {
        let mut out = Shares::default();
        while out.len() < n {
            if self.masks_used == self.mask_stock.len() {
                let size = (self.masks_left.min(MASK_BATCH as u64) as usize).max(n - out.len());
                self.refill_masks(session, size)?;
            }
            let k = (n - out.len()).min(self.mask_stock.len() - self.masks_used);
            out.append(self.mask_stock.slice(self.masks_used..self.masks_used + k));
            self.masks_used += k;
        }
        Ok(out)
    }

    /// Draws `size` masks; with the next triple batch's bits in the same OT call when that
    /// batch is due too (both parties decide alike: on sizes alone).
    fn refill_masks(&mut self, session: &mut Session, size: usize) -> Result<(), Error> {
        if self.used == self.stock.len() && self.triples_left > 0 {
            let batch = self.triples_left.min(self.batch as u64) as usize;
            let (triples, ring, masks) = self.generator.batch_and_bits(session, batch, size)?;
            (self.stock, self.used) = (triples, 0);
            self.triples_left -= batch as u64;
            (self.ring.delta, self.mask_stock) = (ring.delta, masks);
        } else {
            let (bits, keys) = abit::random(session, self.peer, size)?;
            self.ring.delta = keys.delta();
            self.mask_stock = Shares::from_bits(bits, keys);
        }
        self.masks_used = 0;
        self.masks_left = self.masks_left.saturating_sub(size as u64);
        Ok(())
    }

    /// The next `n` triples.
    pub fn triples(&mut self, session: &mut Session, n: usize) -> Result<Triples, Error> {
        let mut out = Triples::default();
        while out.len() < n {
            if self.used == self.stock.len() {
                let size = (self.triples_left.min(self.batch as u64) as usize).max(n - out.len());
                self.stock = self.generator.batch(session, size)?.0;
                self.used = 0;
                self.triples_left = self.triples_left.saturating_sub(size as u64);
            }
            let k = (n - out.len()).min(self.stock.len() - self.used);
            let range = self.used..self.used + k;
            out.x.append(self.stock.x.slice(range.clone()));
            out.y.append(self.stock.y.slice(range.clone()));
            out.z.append(self.stock.z.slice(range));
            self.used += k;
        }
        Ok(out)
    }
}

/// Bits unpacked from `bytes` (n of them), the padding checked.
fn unpack(bytes: &[u8], n: usize, what: &'static str) -> Result<Vec<bool>, Error> {
    if !n.is_multiple_of(8) && bytes[n / 8] >> (n % 8) != 0 {
        return Err(Error::CheckFailed { check: what });
    }
    Ok((0..n).map(|k| role::packed_bit(bytes, k)).collect())
}

/// Bytes of an opening of `n` bits.
fn opening_len(n: usize) -> usize {
    n.div_ceil(8) + abit::DIGEST
}

/// The peer's shares behind `shares` (this party's keys for them), from its opening.
fn checked(
    shares: &Shares,
    delta: Block,
    msg: &[u8],
    check: &'static str,
) -> Result<Vec<bool>, Error> {
    shares.check_opening(delta, msg).map_err(|e| match e {
        Error::CheckFailed { .. } => Error::CheckFailed { check },
        e => e,
    })
}

/// The exchange that opens the function-dependent phase, the same both ways: each party opens,
/// with MACs, its shares of Beaver's differences (λ_α ⊕ x, λ_β ⊕ y per AND gate) and of the
/// masks of the other party's input wires.
#[derive(Clone, Debug)]
struct Openings {
    differences: Shares,
    /// This party's input wires (indices into all input wires) and the peer's.
    own: Range<usize>,
    peer: Range<usize>,
}

/// What the exchange gives: the AND products of the masks, and the peer's shares of the masks
/// of this party's input wires.
#[derive(Clone, Debug)]
struct Opened {
    products: Shares,
    peer_masks: Vec<bool>,
}

impl Openings {
    /// Party `me`'s side.
    fn new(program: &Program, m: &Material, me: usize) -> Openings {
        let inputs = garbling::gate_input_masks(&program.plan, &m.masks);
        Openings {
            differences: garbling::beaver_differences(&inputs, &m.triples),
            own: program.input_range(me),
            peer: program.input_range(1 - me),
        }
    }

    /// This party's message.
    fn message(&self, m: &Material) -> Result<Vec<u8>, Error> {
        let mut msg = self.differences.opening();
        msg.extend(m.masks.slice(self.peer.clone()).opening());
        Ok(msg)
    }

    /// The length of the peer's message.
    fn peer_len(&self) -> usize {
        opening_len(self.differences.len()) + opening_len(self.own.len())
    }

    /// Checks the peer's message.
    fn take(&self, m: &Material, bytes: &[u8]) -> Result<Opened, Error> {
        let (beaver, masks) = bytes.split_at(opening_len(self.differences.len()));
        let theirs = checked(
            &self.differences,
            m.ring.delta,
            beaver,
            "the Beaver opening's MAC check",
        )?;
        let e_f: Vec<bool> = (0..theirs.len())
            .map(|k| theirs[k] ^ self.differences.bit(k))
            .collect();
        let own = m.masks.slice(self.own.clone());
        Ok(Opened {
            products: garbling::products(m.ring, &m.triples, &e_f),
            peer_masks: checked(&own, m.ring.delta, masks, "the input masks' MAC check")?,
        })
    }
}

/// The peer's output mask shares from its opening, MAC-checked against this party's keys for
/// them ([`Check::Output`]).
fn output_opening(mine: &Shares, delta: Block, msg: &[u8]) -> Result<Vec<bool>, Error> {
    if checks::on(Check::Output) {
        checked(mine, delta, msg, "the output masks' MAC check")
    } else {
        Ok((0..mine.len()).map(|i| role::packed_bit(msg, i)).collect())
    }
}

/// The evaluator's commitment to the digest of its AND labels, under a random nonce.
fn label_commitment(digest: &[u8], nonce: Block) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"tessera-ag AND label commitment");
    h.update(digest);
    h.update(nonce.to_bytes());
    h.finalize().into()
}

/// This party's masked input values ẑ = x ⊕ (its mask share) ⊕ (the peer's, opened).
fn masked_inputs(m: &Material, own: Range<usize>, inputs: &[bool], peer: &[bool]) -> Vec<bool> {
    own.enumerate()
        .map(|(i, w)| inputs[i] ^ m.masks.bit(w) ^ peer[i])
        .collect()
}

/// This party's mask shares of `plan`'s output wires, from its slots.
fn output_masks(plan: &Plan, slots: &Slots) -> Shares {
    let mut s = Shares::default();
    for slot in plan.output_slots() {
        s.push((slots.mac[slot], slots.key[slot]));
    }
    s
}

/// Checks that party `p` gives as many input bits as the program has wires for it.
fn check_inputs(program: &Program, p: usize, inputs: &[bool]) -> Result<(), Error> {
    let want = program.inputs_of(p);
    if inputs.len() == want {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "party {p} gives {} input bits; the circuit takes {want} from it",
            inputs.len()
        )))
    }
}

/// A role stepped out of order (a bug here, not the peer: the driver checks kinds).
fn out_of_turn(role: &str, stage: impl std::fmt::Debug) -> Error {
    Error::Usage(format!("{role}: no message expected at {stage:?}"))
}

/// Where a run's roles talk: the peer and the space of their messages.
#[derive(Clone, Copy, Debug)]
struct Parts {
    peer: usize,
    space: tessera_net::Space,
}

/// One program's garbler, or evaluator: what it takes.
type Run<'a, C> = (&'a Program, Material, Option<C>);

impl Parts {
    /// The garbler's function-dependent and online phases of one program (a circuit, or a step
    /// of a chain carrying `carry` in), each timed in the session.
    fn garbler(
        self,
        session: &mut Session,
        (program, material, carry): Run<'_, garbler::Carry>,
        inputs: &[bool],
        ending: Ending,
    ) -> Result<Ended<garbler::Carry>, Error> {
        let prg = session.fork_prg();
        let mut prep = garbler::Prep::new(program, material, prg, carry);
        let state = session.phase("function-dependent", |s| {
            role::drive(&mut prep, &mut s.channel(self.peer), self.space)
        })?;
        let mut online = garbler::Online::new(program, state, inputs, ending)?;
        session.phase("online", |s| {
            role::drive(&mut online, &mut s.channel(self.peer), self.space)
        })
    }

    /// The evaluator's side of [`Parts::garbler`].
    fn evaluator(
        self,
        session: &mut Session,
        (program, material, carry): Run<'_, evaluator::Carry>,
        inputs: &[bool],
        ending: Ending,
    ) -> Result<Ended<evaluator::Carry>, Error> {
        let mut prep = evaluator::Prep::new(program, material, carry);
        let state = session.phase("function-dependent", |s| {
            role::drive(&mut prep, &mut s.channel(self.peer), self.space)
        })?;
        let prg = session.fork_prg();
        let mut online = evaluator::Online::new(program, state, inputs, ending, prg)?;
        session.phase("online", |s| {
            role::drive(&mut online, &mut s.channel(self.peer), self.space)
        })
    }
}

/// Runs `program` between the two parties of `session` (party 0 garbles, party 1 evaluates)
/// on this party's `inputs`; returns the outputs if this party learns them. Times the phases
/// "setup" (the OT's base OTs), "function-independent", "function-dependent" and "online".
/// If it fails, the peer is told why with an abort code (never this party's text).
///
/// ```
/// use tessera_ag::twopc::{self, Outputs, Program};
/// use tessera_net::{NetConfig, memory};
/// use tessera_ot::{OtChoice, Protocol, Security};
/// use tessera_protocols::{Session, SessionConfig};
///
/// // z = x ∧ y, x the garbler's bit and y the evaluator's.
/// let circuit = tessera_circuit::Circuit {
///     num_wires: 3,
///     inputs: vec![1, 1],
///     outputs: vec![1],
///     gates: vec![tessera_circuit::Gate {
///         kind: tessera_circuit::GateKind::And,
///         a: 0,
///         b: 1,
///         out: 2,
///     }],
/// };
/// let program = Program::new(&circuit)?;
/// let ot = OtChoice::Extension(Protocol::softspoken(8, Security::Malicious)?);
/// let [a, b]: [_; 2] = memory::mesh(2, NetConfig::default())?.try_into().unwrap();
/// let evaluator = std::thread::spawn({
///     let program = program.clone();
///     move || {
///         let mut s = Session::new(b, SessionConfig { ot }).unwrap();
///         twopc::run(&mut s, &program, &[true], Outputs::All)
///     }
/// });
/// let mut s = Session::new(a, SessionConfig { ot })?;
/// let z = twopc::run(&mut s, &program, &[true], Outputs::All)?;
/// assert_eq!(z, Some(vec![true]));
/// assert_eq!(evaluator.join().unwrap()?, Some(vec![true]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run(
    session: &mut Session,
    program: &Program,
    inputs: &[bool],
    outputs: Outputs,
) -> Result<Option<Vec<bool>>, Error> {
    crate::aborting(session, |s| run_phases(s, program, inputs, outputs))
}

/// [`run`] without the abort.
fn run_phases(
    session: &mut Session,
    program: &Program,
    inputs: &[bool],
    outputs: Outputs,
) -> Result<Option<Vec<bool>>, Error> {
    if session.parties() != 2 {
        return Err(Error::Usage(format!(
            "two-party garbling runs between 2 parties, not {}",
            session.parties()
        )));
    }
    let me = session.id();
    check_inputs(program, me, inputs)?;
    let peer = 1 - me;
    abit::check_provider(session.ot_choice())?;
    session.phase("setup", |s| s.with_ot_pair(peer, |_, _, _| Ok(())))?;
    let material = session.phase("function-independent", |s| {
        Material::generate(s, peer, program)
    })?;
    let space = session.space(peer)?;
    let (parts, ending) = (Parts { peer, space }, Ending::Decode(outputs));
    Ok(if me == 0 {
        parts
            .garbler(session, (program, material, None), inputs, ending)?
            .outputs()
    } else {
        parts
            .evaluator(session, (program, material, None), inputs, ending)?
            .outputs()
    })
}

/// Runs `steps` steps of `chain` between the two parties of `session`, party 0 garbling and
/// party 1 evaluating: the garbler gives the initial state (`initial`) and each step's fresh
/// input (`fresh(k)`; the evaluator gives none), the state is carried from step to step
/// without being decoded, and the final state is decoded to whom `outputs` says. Each step is
/// a whole run (masks and triples, the function-dependent phase, evaluation and both checks)
/// whose state stays in its labels and masks, so memory follows one step and one triple batch
/// (at most 2^20 triples), however many steps; the session's phases are folded into one entry
/// per name as the steps go ([`Session::fold_phases`]).
pub fn run_chain(
    session: &mut Session,
    chain: &Chain,
    (steps, initial): (u64, &[bool]),
    mut fresh: impl FnMut(u64) -> Vec<bool>,
    outputs: Outputs,
) -> Result<Option<Vec<bool>>, Error> {
    crate::aborting(session, |s| {
        run_steps(s, chain, (steps, initial), &mut fresh, outputs)
    })
}

/// `outputs`, once the session's phases are folded into one entry per name.
fn folded(session: &mut Session, outputs: Option<Vec<bool>>) -> Option<Vec<bool>> {
    session.fold_phases();
    outputs
}

/// [`run_chain`] without the abort.
fn run_steps(
    session: &mut Session,
    chain: &Chain,
    (steps, initial): (u64, &[bool]),
    fresh: &mut dyn FnMut(u64) -> Vec<bool>,
    outputs: Outputs,
) -> Result<Option<Vec<bool>>, Error> {
    if session.parties() != 2 || steps == 0 {
        return Err(Error::Usage(format!(
            "a chain runs at least one step between 2 parties, not {steps} steps among {}",
            session.parties()
        )));
    }
    let (me, peer) = (session.id(), 1 - session.id());
    let [first, later] = [true, false].map(|f| Program::chain_step(chain, f));
    abit::check_provider(session.ot_choice())?;
    session.phase("setup", |s| s.with_ot_pair(peer, |_, _, _| Ok(())))?;
    let mut pool = Pool::new(session, peer, later.needs(steps))?;
    let parts = Parts {
        peer,
        space: session.space(peer)?,
    };
    let (mut g_carry, mut e_carry) = (None, None);
    for k in 0..steps {
        let program = if k == 0 { &first } else { &later };
        let material = session.phase("function-independent", |s| {
            Material::draw(s, &mut pool, program)
        })?;
        let ending = if k + 1 == steps {
            Ending::Decode(outputs)
        } else {
            Ending::Carry
        };
        session.fold_phases();
        if me == 0 {
            let mut inputs = fresh(k);
            if k == 0 {
                inputs.extend_from_slice(initial);
            }
            let run = (program, material, g_carry.take());
            match parts.garbler(session, run, &inputs, ending)? {
                Ended::Carried(c) => g_carry = Some(c),
                Ended::Outputs(o) => return Ok(folded(session, o)),
            }
        } else {
            let run = (program, material, e_carry.take());
            match parts.evaluator(session, run, &[], ending)? {
                Ended::Carried(c) => e_carry = Some(c),
                Ended::Outputs(o) => return Ok(folded(session, o)),
            }
        }
    }
    Err(Error::Usage("the chain ended without its last step".into()))
}

/// A circuit that copies its inputs (input values of widths `widths`) to one output value, in
/// order: a file's inputs going in, and its outputs coming out, as programs of their own.
fn copies(widths: &[u32]) -> Circuit {
    let n: u32 = widths.iter().sum();
    Circuit {
        num_wires: 2 * n,
        inputs: widths.to_vec(),
        outputs: vec![n],
        gates: (0..n)
            .map(|i| tessera_circuit::Gate {
                kind: tessera_circuit::GateKind::Eqw,
                a: i,
                b: 0,
                out: n + i,
            })
            .collect(),
    }
}

/// Runs a circuit file between the two parties of `session`, window by window as `file`
/// gives them ([`tessera_circuit::bristol::stream`]): party 0 garbles and gives input value 0,
/// party 1 evaluates and gives value 1 (`inputs`, this party's), and the outputs are decoded to
/// whom `outputs` says. The inputs go in as a program of their own; each window is then a run
/// whose input wires are all carried, by position, from the windows before (labels, masks,
/// flips and masked values kept in a store that grows with the live wires, not the file); the
/// outputs come out as a last program. Memory follows one window, the live wires and one
/// triple batch.
pub fn run_file(
    session: &mut Session,
    file: &mut Streamed,
    inputs: &[bool],
    outputs: Outputs,
) -> Result<Option<Vec<bool>>, Error> {
    crate::aborting(session, |s| run_windows(s, file, inputs, outputs))
}

/// [`run_file`] without the abort.
fn run_windows(
    session: &mut Session,
    file: &mut Streamed,
    inputs: &[bool],
    outputs: Outputs,
) -> Result<Option<Vec<bool>>, Error> {
    if session.parties() != 2 || file.inputs().len() > 2 {
        return Err(Error::Usage(format!(
            "a file of {} input values between {} parties: two-party garbling takes at most two \
             values, one a party",
            file.inputs().len(),
            session.parties()
        )));
    }
    let (me, peer) = (session.id(), 1 - session.id());
    abit::check_provider(session.ot_choice())?;
    session.phase("setup", |s| s.with_ot_pair(peer, |_, _, _| Ok(())))?;
    let gates = u64::from(file.num_gates());
    let wires: u64 = file.inputs().iter().map(|&w| u64::from(w)).sum();
    let mut pool = Pool::new(session, peer, (gates + wires, gates))?;
    let parts = Parts {
        peer,
        space: session.space(peer)?,
    };
    let run = (inputs, outputs);
    if me == 0 {
        stream(session, file, (&mut pool, parts), run, Parts::garbler)
    } else {
        stream(session, file, (&mut pool, parts), run, Parts::evaluator)
    }
}

/// One party's part of [`run_file`], `role` its side of one program.
fn stream<C: Carried>(
    session: &mut Session,
    file: &mut Streamed,
    (pool, parts): (&mut Pool, Parts),
    (inputs, outputs): (&[bool], Outputs),
    role: impl Fn(Parts, &mut Session, Run<'_, C>, &[bool], Ending) -> Result<Ended<C>, Error>,
) -> Result<Option<Vec<bool>>, Error> {
    let mut step = |session: &mut Session, program: &Program, carry, inputs: &[bool], ending| {
        let material =
            session.phase("function-independent", |s| Material::draw(s, pool, program))?;
        let ended = role(parts, session, (program, material, carry), inputs, ending);
        session.fold_phases();
        ended
    };
    let mut store = C::default();
    let widths = file.inputs().to_vec();
    if widths.iter().any(|&w| w > 0) {
        let entry = Program::new(&copies(&widths))?;
        if let Ended::Carried(c) = step(session, &entry, None, inputs, Ending::Carry)? {
            store = c;
        }
    } else {
        check_inputs(&Program::new(&copies(&widths))?, session.id(), inputs)?;
    }
    while let Some(w) = file.next_window()? {
        let program = Program::window(w.circuit)?;
        let carry = store.select(w.inputs);
        if let Ended::Carried(c) = step(session, &program, Some(carry), &[], Ending::Carry)? {
            store.place(w.outputs, c, w.positions);
        }
    }
    let positions = file.output_positions()?;
    let exit = Program::window(&copies(&[positions.len() as u32]))?;
    let carry = store.select(&positions);
    let ended = step(session, &exit, Some(carry), &[], Ending::Decode(outputs))?;
    Ok(ended.outputs())
}
