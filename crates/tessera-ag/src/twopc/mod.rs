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
use crate::checks::Check;
use crate::garbling::{self, Slots};
use crate::hello::Variant;
use crate::share::{Keyring, Shares, gather, scatter};
use crate::triples::{Generator, Triples};
use crate::wire::OPENINGS;
use sha2::Digest;
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
    /// Its code in the hello's fingerprint.
    fn code(self) -> u8 {
        self as u8
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

/// What a party carries from one program to the next (a chain's state, a file's live wires),
/// wire by wire: its label (the garbler's zero label, the evaluator's active label), this
/// party's mask share, the label's flip and the masked value.
#[derive(Clone, Debug, Default)]
pub struct Carry {
    labels: Vec<Block>,
    masks: Shares,
    flips: Vec<bool>,
    masked: Vec<bool>,
}

impl Carry {
    /// The output wires of `plan` as `slots` leave them, with their masked values (`masked`,
    /// or the labels' low bits ⊕ the flips where the labels are active).
    fn out_of(plan: &Plan, slots: &Slots, masked: Option<Vec<bool>>) -> Carry {
        let outputs = plan.output_slots();
        let flips: Vec<bool> = outputs.clone().map(|s| slots.flip[s].lsb()).collect();
        let labels: Vec<Block> = outputs.map(|s| slots.label[s]).collect();
        let masked = masked.unwrap_or_else(|| {
            labels
                .iter()
                .zip(&flips)
                .map(|(l, &f)| l.lsb() ^ f)
                .collect()
        });
        Carry {
            masks: output_masks(plan, slots),
            labels,
            flips,
            masked,
        }
    }

    /// The state of the wires at `positions`, in order.
    fn select(&self, positions: &[u32]) -> Carry {
        Carry {
            labels: gather(&self.labels, positions),
            masks: self.masks.gather(positions),
            flips: gather(&self.flips, positions),
            masked: gather(&self.masked, positions),
        }
    }

    /// Puts the wires of `from` at `positions`, the store first grown to `size` positions.
    fn place(&mut self, positions: &[u32], from: Carry, size: usize) {
        scatter(&mut self.labels, positions, &from.labels, size);
        self.masks.scatter(positions, &from.masks, size);
        scatter(&mut self.flips, positions, &from.flips, size);
        scatter(&mut self.masked, positions, &from.masked, size);
    }
}

/// What a party's online phase ended with.
#[derive(Debug)]
pub enum Ended {
    /// The outputs, if this party learns them.
    Outputs(Option<Vec<bool>>),
    /// The state for the next program.
    Carried(Carry),
}

impl Ended {
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
    /// The circuit's digest (a chain step's: the step circuit's; a window's: none, the file's
    /// digest stands for it), which the hello compares.
    digest: [u8; 32],
}

impl Program {
    /// `circuit`, checked and compiled.
    pub fn new(circuit: &Circuit) -> Result<Program, Error> {
        let mut p = Program::compile(circuit)?;
        p.digest = circuit.digest();
        Ok(p)
    }

    /// `circuit`, checked and compiled, without its digest.
    fn compile(circuit: &Circuit) -> Result<Program, Error> {
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
            digest: [0; 32],
        })
    }

    /// A window of a circuit file ([`tessera_circuit::bristol::stream`]): every input wire is
    /// carried from an earlier window.
    pub fn window(circuit: &Circuit) -> Result<Program, Error> {
        let mut p = Program::compile(circuit)?;
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
            digest: chain.step_digest(),
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
    /// The program's tweak domain ([`garbling::domain`] of its number in the run).
    domain: u64,
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
        pool.programs += 1;
        Ok(Material {
            ring: pool.ring(),
            masks,
            triples: pool.triples(session, program.ands)?,
            domain: garbling::domain(pool.programs - 1),
        })
    }

    /// The masks of the carried input wires, `carried`, put in place after the fresh ones.
    fn carry_in(&mut self, program: &Program, carried: Shares) {
        self.masks.insert(program.fresh_inputs(), carried);
    }
}

/// Random authenticated masks drawn at a time at most: 2^20, 32 MiB per party.
pub const MASK_BATCH: usize = 1 << 20;

/// Things handed out front first in pieces of any size: masks ([`Shares`]) and [`Triples`].
trait Pieces: Default {
    fn count(&self) -> usize;
    fn piece(&self, range: Range<usize>) -> Self;
    fn join(&mut self, other: Self);
}

impl Pieces for Shares {
    fn count(&self) -> usize {
        self.len()
    }
    fn piece(&self, range: Range<usize>) -> Self {
        self.slice(range)
    }
    fn join(&mut self, other: Self) {
        self.append(other);
    }
}

impl Pieces for Triples {
    fn count(&self) -> usize {
        self.len()
    }
    fn piece(&self, r: Range<usize>) -> Self {
        Triples {
            x: self.x.slice(r.clone()),
            y: self.y.slice(r.clone()),
            z: self.z.slice(r),
        }
    }
    fn join(&mut self, other: Self) {
        self.x.append(other.x);
        self.y.append(other.y);
        self.z.append(other.z);
    }
}

/// A batch being handed out, and how much of it is.
#[derive(Debug, Default)]
struct Stock<T> {
    items: T,
    used: usize,
}

impl<T: Pieces> Stock<T> {
    /// Items not handed out yet.
    fn left(&self) -> usize {
        self.items.count() - self.used
    }

    /// Up to `n` items from the front of what is left: the whole batch moved, not copied, when
    /// it goes at once.
    fn take(&mut self, n: usize) -> T {
        let k = n.min(self.left());
        if self.used == 0 && k == self.items.count() {
            return std::mem::take(&mut self.items);
        }
        let piece = self.items.piece(self.used..self.used + k);
        self.used += k;
        piece
    }

    /// The batch, used up, taken for its buffers.
    fn spent(&mut self) -> T {
        self.used = 0;
        std::mem::take(&mut self.items)
    }

    /// A fresh batch.
    fn refill(&mut self, items: T) {
        (self.items, self.used) = (items, 0);
    }
}

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
    /// Masks and triples still to make, and the triple batch size.
    masks_left: u64,
    triples_left: u64,
    batch: usize,
    masks: Stock<Shares>,
    triples: Stock<Triples>,
    /// Programs drawn for so far.
    programs: u64,
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
            masks: Stock::default(),
            triples: Stock::default(),
            programs: 0,
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
            if self.masks.left() == 0 {
                let size = (self.masks_left.min(MASK_BATCH as u64) as usize).max(n - out.len());
                self.refill_masks(session, size)?;
            }
            out.join(self.masks.take(n - out.len()));
        }
        Ok(out)
    }

    /// Draws `size` masks; with the next triple batch's bits in the same OT call when that
    /// batch is due too (both parties decide alike: on sizes alone). The used-up batches' buffers
    /// are reused.
    fn refill_masks(&mut self, session: &mut Session, size: usize) -> Result<(), Error> {
        if self.triples.left() == 0 && self.triples_left > 0 {
            let batch = self.triples_left.min(self.batch as u64) as usize;
            self.generator.recycle_triples(self.triples.spent());
            self.generator.recycle_masks(self.masks.spent());
            let (triples, ring, masks) = self.generator.batch_and_bits(session, batch, size)?;
            self.triples.refill(triples);
            self.triples_left -= batch as u64;
            self.ring.delta = ring.delta;
            self.masks.refill(masks);
        } else {
            let mut masks = self.masks.spent();
            self.ring.delta = abit::random_into(session, self.peer, size, &mut masks)?;
            self.masks.refill(masks);
        }
        self.masks_left = self.masks_left.saturating_sub(size as u64);
        Ok(())
    }

    /// The next `n` triples.
    pub fn triples(&mut self, session: &mut Session, n: usize) -> Result<Triples, Error> {
        let mut out = Triples::default();
        while out.len() < n {
            if self.triples.left() == 0 {
                let size = (self.triples_left.min(self.batch as u64) as usize).max(n - out.len());
                self.generator.recycle_triples(self.triples.spent());
                self.triples.refill(self.generator.batch(session, size)?.0);
                self.triples_left = self.triples_left.saturating_sub(size as u64);
            }
            out.join(self.triples.take(n - out.len()));
        }
        Ok(out)
    }
}

/// Bytes of an opening of `n` bits.
fn opening_len(n: usize) -> usize {
    n.div_ceil(8) + abit::DIGEST
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
        Openings {
            differences: garbling::beaver_differences(&program.plan, &m.masks, &m.triples),
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
        let theirs = self.differences.check_opening(
            m.ring.delta,
            beaver,
            (OPENINGS.name, Check::BeaverMacs),
        )?;
        let e_f: Vec<bool> = (0..theirs.len())
            .map(|k| theirs[k] ^ self.differences.bit(k))
            .collect();
        let own = m.masks.slice(self.own.clone());
        Ok(Opened {
            products: garbling::products(m.ring, &m.triples, &e_f),
            peer_masks: own.check_opening(
                m.ring.delta,
                masks,
                (OPENINGS.name, Check::InputMaskMacs),
            )?,
        })
    }
}

/// The evaluator's commitment to the digest of its AND labels, under a random nonce.
fn label_commitment(digest: &[u8], nonce: Block) -> [u8; 32] {
    tessera_core::digest::tagged(
        b"tessera-ag AND label commitment",
        &[digest, &nonce.to_bytes()],
    )
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

/// One program, its material and what the program before carried in.
type Run<'a> = (&'a Program, Material, Option<Carry>);

/// One party's side of one program's function-dependent and online phases.
type Side = fn(Parts, &mut Session, Run<'_>, &[bool], Ending) -> Result<Ended, Error>;

impl Parts {
    /// The garbler's function-dependent and online phases of one program, each timed in the
    /// session.
    fn garbler(
        self,
        session: &mut Session,
        (program, material, carry): Run<'_>,
        inputs: &[bool],
        ending: Ending,
    ) -> Result<Ended, Error> {
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
        (program, material, carry): Run<'_>,
        inputs: &[bool],
        ending: Ending,
    ) -> Result<Ended, Error> {
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

/// A run's setting, once the base OTs are done: this party's side, where it talks, and the
/// pool its programs draw from.
struct Runner {
    side: Side,
    parts: Parts,
    pool: Pool,
}

impl Runner {
    /// Checks the session (two parties, an actively secure OT), says hello (both parties must
    /// agree on the OT and on what `agree` hashes: the job and who learns the outputs), runs the
    /// base OTs (the phase "setup") and opens a pool for `needs` (masks, triples) in all.
    fn start(
        session: &mut Session,
        needs: (u64, u64),
        agree: impl FnOnce(&mut sha2::Sha256),
    ) -> Result<Runner, Error> {
        if session.parties() != 2 {
            return Err(Error::Usage(format!(
                "two-party garbling runs between 2 parties, not {}",
                session.parties()
            )));
        }
        let (me, peer) = (session.id(), 1 - session.id());
        abit::check_provider(session.ot_choice())?;
        crate::hello::greet(session, Variant::Krrw18, agree)?;
        session.phase("setup", |s| s.with_ot_pair(peer, |_, _, _| Ok(())))?;
        let pool = Pool::new(session, peer, needs)?;
        let side: Side = if me == 0 {
            Parts::garbler
        } else {
            Parts::evaluator
        };
        let parts = Parts {
            peer,
            space: session.space(peer)?,
        };
        Ok(Runner { side, parts, pool })
    }

    /// One program: its material (the phase "function-independent"), then this party's side;
    /// the session's phases folded into one entry per name after it.
    fn program(
        &mut self,
        session: &mut Session,
        (program, carry): (&Program, Option<Carry>),
        inputs: &[bool],
        ending: Ending,
    ) -> Result<Ended, Error> {
        let pool = &mut self.pool;
        let material =
            session.phase("function-independent", |s| Material::draw(s, pool, program))?;
        let ended = (self.side)(
            self.parts,
            session,
            (program, material, carry),
            inputs,
            ending,
        );
        session.fold_phases();
        ended
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
///         let mut s = Session::new(b, SessionConfig::with_ot(ot)).unwrap();
///         twopc::run(&mut s, &program, &[true], Outputs::All)
///     }
/// });
/// let mut s = Session::new(a, SessionConfig::with_ot(ot))?;
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
    session.run_with(|s| {
        check_inputs(program, s.id(), inputs)?;
        let mut runner = Runner::start(s, program.needs(1), |h| {
            h.update(b"circuit");
            h.update(program.digest);
            h.update([outputs.code()]);
        })?;
        let ending = Ending::Decode(outputs);
        Ok(runner
            .program(s, (program, None), inputs, ending)?
            .outputs())
    })
}

/// Runs `steps` steps of `chain` between the two parties of `session`, party 0 garbling and
/// party 1 evaluating: the garbler gives the initial state (`initial`) and each step's fresh
/// input (`fresh(k)`; the evaluator gives none: empty), the state is carried from step to
/// step without being decoded, and the final state is decoded to whom `outputs` says. Each
/// step is a whole run (masks and triples, the function-dependent phase, evaluation and the
/// checks) whose state stays in its labels and masks, so memory follows one step and one
/// triple batch (at most 2^20 triples), however many steps; the session's phases are folded
/// into one entry per name as the steps go ([`Session::fold_phases`]).
pub fn run_chain(
    session: &mut Session,
    chain: &Chain,
    (steps, initial): (u64, &[bool]),
    mut fresh: impl FnMut(u64) -> Vec<bool>,
    outputs: Outputs,
) -> Result<Option<Vec<bool>>, Error> {
    session.run_with(|s| {
        if steps == 0 {
            return Err(Error::Usage("a chain runs at least one step".into()));
        }
        let [first, later] = [true, false].map(|f| Program::chain_step(chain, f));
        let mut runner = Runner::start(s, later.needs(steps), |h| {
            h.update(b"chain");
            h.update(later.digest);
            h.update(steps.to_le_bytes());
            h.update([outputs.code()]);
        })?;
        let mut carry = None;
        for k in 0..steps {
            let mut inputs = fresh(k);
            if k == 0 {
                inputs.extend_from_slice(initial);
            }
            let program = if k == 0 { &first } else { &later };
            let ending = if k + 1 == steps {
                Ending::Decode(outputs)
            } else {
                Ending::Carry
            };
            match runner.program(s, (program, carry.take()), &inputs, ending)? {
                Ended::Carried(c) => carry = Some(c),
                Ended::Outputs(o) => return Ok(o),
            }
        }
        Err(Error::Usage("the chain ended without its last step".into()))
    })
}

/// A circuit that copies its inputs (input values of widths `widths`) to one output value, in
/// order: a file's inputs going in, and its outputs coming out, as programs of their own.
pub(crate) fn copies(widths: &[u32]) -> Circuit {
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
    session.run_with(|s| stream(s, file, inputs, outputs))
}

/// [`run_file`] without the abort.
fn stream(
    session: &mut Session,
    file: &mut Streamed,
    inputs: &[bool],
    outputs: Outputs,
) -> Result<Option<Vec<bool>>, Error> {
    let widths = file.inputs().to_vec();
    let entry = Program::new(&copies(&widths))?;
    check_inputs(&entry, session.id(), inputs)?;
    let ands = file.and_gates();
    let wires: u64 = widths.iter().map(|&w| u64::from(w)).sum();
    let mut runner = Runner::start(session, (ands + wires, ands), |h| {
        h.update(b"file");
        h.update(file.digest());
        h.update((file.window() as u64).to_le_bytes());
        h.update([outputs.code()]);
    })?;
    let mut store = Carry::default();
    if wires > 0
        && let Ended::Carried(c) = runner.program(session, (&entry, None), inputs, Ending::Carry)?
    {
        store = c;
    }
    // Each window is read and compiled up to READ_AHEAD windows ahead of the protocol, on a
    // thread of its own.
    let positions = file.run_ahead(Program::window, |w| {
        let carry = Some(store.select(&w.inputs));
        let program = (&w.made, carry);
        if let Ended::Carried(c) = runner.program(session, program, &[], Ending::Carry)? {
            store.place(&w.outputs, c, w.positions);
        }
        Ok(())
    })?;
    let exit = Program::window(&copies(&[positions.len() as u32]))?;
    let carry = Some(store.select(&positions));
    let ending = Ending::Decode(outputs);
    Ok(runner
        .program(session, (&exit, carry), &[], ending)?
        .outputs())
}
