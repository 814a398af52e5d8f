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
//!    sends the AND outputs' masked values with a digest of their labels (which it cannot forge
//!    without Δ_A); the garbler answers with the digest of its consistency MACs (zero products
//!    c = (ẑ_α ⊕ λ_α)(ẑ_β ⊕ λ_β) ⊕ ẑ_γ ⊕ λ_γ, checked under Δ_B); only then are outputs
//!    decoded: the garbler opens its output masks to the evaluator, and the evaluator sends its
//!    output labels (which the garbler checks are its own) and opens its output masks.
//!
//! Every role here is a state machine without I/O; [`run`] drives them over a session.

use crate::Error;
use crate::abit;
use crate::garbling::{self, Evaluated, Garbled, Slots};
use crate::share::{Keyring, Shares};
use crate::triples::{Generator, Triples};
use crate::wire::{
    CONSISTENCY, FLIPS, INPUT_LABELS, Incoming, MASKED_INPUTS, MASKED_VALUES, Message, OPENINGS,
    OUTPUT_LABELS, OUTPUT_MASKS, TABLES,
};
use std::borrow::Cow;
use subtle::ConstantTimeEq;
use tessera_circuit::Circuit;
use tessera_core::{Block, Prg};
use tessera_garble::{Batching, Plan};
use tessera_net::role::{self, Next, Outbox, Role};
use tessera_protocols::Session;

/// Triples per batch at most: B = 3 from 276 325 triples on, and a batch of 2^19 holds about
/// 150 MB of leaky triples per party.
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
    fn to_evaluator(self) -> bool {
        self != Outputs::Garbler
    }

    fn to_garbler(self) -> bool {
        self != Outputs::Evaluator
    }
}

/// A circuit compiled for two-party authenticated garbling: input value 0 is the garbler's,
/// value 1 (if any) the evaluator's.
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

    fn inputs(&self) -> usize {
        self.garbler_inputs + self.evaluator_inputs
    }
}

/// One party's function-independent material for a program: its keyring, the masks of the
/// input wires then of the AND outputs in plan order, and one AND triple per AND gate.
#[derive(Clone, Debug)]
pub struct Material {
    ring: Keyring,
    masks: Shares,
    triples: Triples,
}

impl Material {
    /// Draws the material for `program` with `peer`, the triples in batches of at most
    /// [`TRIPLE_BATCH`].
    pub fn generate(session: &mut Session, peer: usize, program: &Program) -> Result<Self, Error> {
        let mut generator = Generator::new(session, peer)?;
        let (bits, keys) = abit::random(session, peer, program.inputs() + program.ands)?;
        let ring = Keyring {
            delta: keys.delta(),
            first: session.id() < peer,
        };
        let masks = Shares::from_bits(bits, &keys);
        let mut triples = Triples::default();
        let batches = program.ands.div_ceil(TRIPLE_BATCH);
        let per = program.ands.div_ceil(batches.max(1));
        while triples.len() < program.ands {
            let (t, _) = generator.batch(session, per.min(program.ands - triples.len()))?;
            for (all, part) in [
                (&mut triples.x, t.x),
                (&mut triples.y, t.y),
                (&mut triples.z, t.z),
            ] {
                for k in 0..part.len() {
                    all.push(part.get(k));
                }
            }
        }
        Ok(Material {
            ring,
            masks,
            triples,
        })
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

/// Opens `shares` (this party's), for the peer to check.
fn opening(shares: &Shares, delta: Block) -> Result<Vec<u8>, Error> {
    let (bits, _) = shares.split(delta);
    abit::opening(&bits, 0..bits.len())
}

/// The peer's shares behind `shares` (this party's keys for them), from its opening.
fn checked(
    shares: &Shares,
    delta: Block,
    msg: &[u8],
    check: &'static str,
) -> Result<Vec<bool>, Error> {
    let (_, keys) = shares.split(delta);
    abit::check_opening(&keys, 0..keys.len(), msg).map_err(|e| match e {
        Error::CheckFailed { .. } => Error::CheckFailed { check },
        e => e,
    })
}

/// What both parties work out from the material before garbling: Beaver's differences and,
/// once both halves are open, the AND products of the masks.
#[derive(Clone, Debug)]
struct Beaver {
    differences: Shares,
    products: Shares,
}

impl Beaver {
    fn new(program: &Program, m: &Material) -> Beaver {
        let inputs = garbling::gate_input_masks(&program.plan, &m.masks);
        Beaver {
            differences: garbling::beaver_differences(&inputs, &m.triples),
            products: Shares::default(),
        }
    }

    /// Takes the peer's opened differences.
    fn open(&mut self, m: &Material, msg: &[u8]) -> Result<(), Error> {
        let theirs = checked(
            &self.differences,
            m.ring.delta,
            msg,
            "the Beaver opening's MAC check",
        )?;
        let e_f: Vec<bool> = (0..theirs.len())
            .map(|k| theirs[k] ^ self.differences.bit(k))
            .collect();
        self.products = garbling::products(m.ring, &m.triples, &e_f);
        Ok(())
    }
}

/// Where a party's run stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Start,
    Opened,
    Inputs,
    Labels,
    Tables,
    Garbled,
    Checked,
    Done,
}

fn out_of_turn(stage: Stage) -> Error {
    Error::Usage(format!(
        "two-party garbling: no message expected at {stage:?}"
    ))
}

/// The garbler's role.
pub struct GarblerRole<'a> {
    program: &'a Program,
    material: Material,
    inputs: Vec<bool>,
    outputs: Outputs,
    prg: Prg,
    beaver: Beaver,
    masked_inputs: Vec<bool>,
    slots: Option<Slots>,
    garbled: Garbled,
    stage: Stage,
}

impl std::fmt::Debug for GarblerRole<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GarblerRole")
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

impl<'a> GarblerRole<'a> {
    /// The garbler of `program` on its `inputs`, with its `material`; labels from `prg`.
    pub fn new(
        program: &'a Program,
        material: Material,
        inputs: Vec<bool>,
        outputs: Outputs,
        prg: Prg,
    ) -> Result<Self, Error> {
        check_inputs(program, 0, &inputs)?;
        Ok(GarblerRole {
            beaver: Beaver::new(program, &material),
            program,
            material,
            inputs,
            outputs,
            prg,
            masked_inputs: Vec::new(),
            slots: None,
            garbled: Garbled::default(),
            stage: Stage::Start,
        })
    }

    /// Takes the evaluator's openings: its Beaver differences and its mask shares of the
    /// garbler's input wires.
    fn opened(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let (beaver, masks) = bytes.split_at(opening_len(2 * self.program.ands));
        self.beaver.open(&self.material, beaver)?;
        let mine = self.material.masks.slice(0..self.program.garbler_inputs);
        let theirs = checked(
            &mine,
            self.material.ring.delta,
            masks,
            "the input masks' MAC check",
        )?;
        self.masked_inputs = (0..theirs.len())
            .map(|i| self.inputs[i] ^ mine.bit(i) ^ theirs[i])
            .collect();
        Ok(())
    }

    /// Garbles, from the masked values of every input wire; returns the evaluator's input
    /// labels.
    fn garble(&mut self) -> Vec<Block> {
        let delta = self.material.ring.delta;
        let plan = &self.program.plan;
        let mut slots = Slots::new(plan, &self.material.masks);
        let zero = garbling::zero_labels(self.program.inputs(), &mut self.prg);
        let mut active = Vec::with_capacity(zero.len());
        for (i, slot) in plan.input_slots().enumerate() {
            slots.label[slot] = zero[i];
            active.push(zero[i] ^ (delta & Block::mask(self.masked_inputs[i])));
        }
        let material = (&self.material.masks, &self.beaver.products);
        garbling::garble(plan, material, delta, &mut slots, &mut self.garbled);
        self.slots = Some(slots);
        active
    }

    /// Checks the evaluator's masked AND values and the digest of its labels; returns the
    /// digest of the consistency MACs.
    fn consistency(&self, bytes: &[u8]) -> Result<[u8; 32], Error> {
        let n = self.program.ands;
        let (bits, digest) = bytes.split_at(n.div_ceil(8));
        let masked = unpack(bits, n, "the masked AND values' format")?;
        let material = (&self.material.masks, &self.beaver.products);
        let (labels, check) = garbling::garbler_check(
            &self.program.plan,
            material,
            &self.garbled,
            (&self.masked_inputs, &masked),
            self.material.ring.delta,
        );
        if !bool::from(labels.ct_eq(digest)) {
            return Err(Error::CheckFailed {
                check: "the evaluator's AND labels",
            });
        }
        Ok(check)
    }

    /// This party's mask shares of the output wires.
    fn output_masks(&self) -> Shares {
        output_masks(&self.program.plan, self.slots.as_ref())
    }

    /// Decodes the outputs from the evaluator's output labels and mask opening.
    fn decode(&self, bytes: &[u8]) -> Result<Vec<bool>, Error> {
        let delta = self.material.ring.delta;
        let n = self.program.outputs;
        let (labels, opened) = bytes.split_at(16 * n);
        let mine = self.output_masks();
        let theirs = checked(&mine, delta, opened, "the output masks' MAC check")?;
        let slots = self.slots.as_ref().ok_or_else(|| out_of_turn(self.stage))?;
        let mut z = Vec::with_capacity(n);
        for (i, slot) in self.program.plan.output_slots().enumerate() {
            let label =
                Block::from_bytes(labels[16 * i..16 * i + 16].try_into().unwrap_or_default());
            let zero = slots.label[slot];
            let one = zero ^ delta;
            let is_zero = label.to_bytes().ct_eq(&zero.to_bytes());
            let is_one = label.to_bytes().ct_eq(&one.to_bytes());
            if !bool::from(is_zero | is_one) {
                return Err(Error::CheckFailed {
                    check: "the evaluator's output labels",
                });
            }
            let masked = bool::from(is_one) ^ slots.flip[slot].lsb();
            z.push(masked ^ mine.bit(i) ^ theirs[i]);
        }
        Ok(z)
    }
}

/// This party's mask shares of `plan`'s output wires, from its slots.
fn output_masks(plan: &Plan, slots: Option<&Slots>) -> Shares {
    let mut s = Shares::default();
    if let Some(slots) = slots {
        for slot in plan.output_slots() {
            s.push((slots.mac[slot], slots.key[slot]));
        }
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

impl Role for GarblerRole<'_> {
    type Incoming<'a> = Incoming<'a>;
    type Output = Option<Vec<bool>>;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<Incoming<'_>>,
        out: &mut O,
    ) -> Result<Next<Option<Vec<bool>>>, Error> {
        let p = self.program;
        let delta = self.material.ring.delta;
        match (self.stage, incoming.map(|m| m.bytes)) {
            (Stage::Start, None) => {
                let mut msg = opening(&self.beaver.differences, delta)?;
                let theirs = self.material.masks.slice(p.garbler_inputs..p.inputs());
                msg.extend(opening(&theirs, delta)?);
                out.post(&Message::<{ OPENINGS.id }>(Cow::Owned(msg)))?;
                out.flush()?;
                self.stage = Stage::Opened;
                let len = opening_len(2 * p.ands) + opening_len(p.garbler_inputs);
                Ok(Next::exact(OPENINGS, len))
            }
            (Stage::Opened, Some(bytes)) => {
                self.opened(bytes)?;
                self.stage = Stage::Inputs;
                Ok(Next::exact(MASKED_INPUTS, p.evaluator_inputs.div_ceil(8)))
            }
            (Stage::Inputs, Some(bytes)) => {
                let theirs = unpack(bytes, p.evaluator_inputs, "the masked inputs' format")?;
                self.masked_inputs.extend(theirs);
                let active = self.garble();
                out.post(&Message::<{ INPUT_LABELS.id }>(Cow::Borrowed(
                    bytemuck::cast_slice(&active),
                )))?;
                out.post(&Message::<{ TABLES.id }>(Cow::Borrowed(
                    bytemuck::cast_slice(&self.garbled.tables),
                )))?;
                let flips = role::pack_bits(self.garbled.flips.iter().copied());
                out.post(&Message::<{ FLIPS.id }>(Cow::Owned(flips)))?;
                out.flush()?;
                self.stage = Stage::Garbled;
                Ok(Next::exact(MASKED_VALUES, p.ands.div_ceil(8) + 32))
            }
            (Stage::Garbled, Some(bytes)) => {
                let check = self.consistency(bytes)?;
                out.post(&Message::<{ CONSISTENCY.id }>(Cow::Owned(check.to_vec())))?;
                if self.outputs.to_evaluator() {
                    let msg = opening(&self.output_masks(), delta)?;
                    out.post(&Message::<{ OUTPUT_MASKS.id }>(Cow::Owned(msg)))?;
                }
                out.flush()?;
                if self.outputs.to_garbler() {
                    self.stage = Stage::Checked;
                    Ok(Next::exact(
                        OUTPUT_LABELS,
                        16 * p.outputs + opening_len(p.outputs),
                    ))
                } else {
                    self.stage = Stage::Done;
                    Ok(Next::Done(None))
                }
            }
            (Stage::Checked, Some(bytes)) => {
                let z = self.decode(bytes)?;
                self.stage = Stage::Done;
                Ok(Next::Done(Some(z)))
            }
            (stage, _) => Err(out_of_turn(stage)),
        }
    }
}

/// The evaluator's role.
pub struct EvaluatorRole<'a> {
    program: &'a Program,
    material: Material,
    inputs: Vec<bool>,
    outputs: Outputs,
    beaver: Beaver,
    labels: Vec<Block>,
    tables: Vec<Block>,
    slots: Option<Slots>,
    evaluated: Evaluated,
    stage: Stage,
}

impl std::fmt::Debug for EvaluatorRole<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvaluatorRole")
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

impl<'a> EvaluatorRole<'a> {
    /// The evaluator of `program` on its `inputs`, with its `material`.
    pub fn new(
        program: &'a Program,
        material: Material,
        inputs: Vec<bool>,
        outputs: Outputs,
    ) -> Result<Self, Error> {
        check_inputs(program, 1, &inputs)?;
        Ok(EvaluatorRole {
            beaver: Beaver::new(program, &material),
            program,
            material,
            inputs,
            outputs,
            labels: Vec::new(),
            tables: Vec::new(),
            slots: None,
            evaluated: Evaluated::default(),
            stage: Stage::Start,
        })
    }

    /// Takes the garbler's openings; returns this party's masked inputs.
    fn opened(&mut self, bytes: &[u8]) -> Result<Vec<bool>, Error> {
        let p = self.program;
        let (beaver, masks) = bytes.split_at(opening_len(2 * p.ands));
        self.beaver.open(&self.material, beaver)?;
        let mine = self.material.masks.slice(p.garbler_inputs..p.inputs());
        let theirs = checked(
            &mine,
            self.material.ring.delta,
            masks,
            "the input masks' MAC check",
        )?;
        Ok((0..theirs.len())
            .map(|i| self.inputs[i] ^ mine.bit(i) ^ theirs[i])
            .collect())
    }

    /// Evaluates with the garbler's flips; returns the masked AND values and label digest.
    fn evaluate(&mut self, flips: &[bool]) -> Vec<u8> {
        let plan = &self.program.plan;
        let mut slots = Slots::new(plan, &self.material.masks);
        for (i, slot) in plan.input_slots().enumerate() {
            slots.label[slot] = self.labels[i];
        }
        let material = (&self.material.masks, &self.beaver.products);
        self.evaluated = garbling::evaluate(
            plan,
            material,
            self.material.ring,
            (&self.tables, flips),
            &mut slots,
        );
        self.slots = Some(slots);
        self.tables = Vec::new();
        let mut msg = role::pack_bits(self.evaluated.masked.iter().copied());
        msg.extend_from_slice(&self.evaluated.label_digest);
        msg
    }

    /// This party's output labels and the opening of its output masks.
    fn output_labels(&self) -> Result<Vec<u8>, Error> {
        let mut msg = Vec::new();
        if let Some(slots) = &self.slots {
            for slot in self.program.plan.output_slots() {
                msg.extend_from_slice(&slots.label[slot].to_bytes());
            }
        }
        let masks = output_masks(&self.program.plan, self.slots.as_ref());
        msg.extend(opening(&masks, self.material.ring.delta)?);
        Ok(msg)
    }

    /// Decodes the outputs from the garbler's opening of its output masks.
    fn decode(&self, bytes: &[u8]) -> Result<Vec<bool>, Error> {
        let mine = output_masks(&self.program.plan, self.slots.as_ref());
        let theirs = checked(
            &mine,
            self.material.ring.delta,
            bytes,
            "the output masks' MAC check",
        )?;
        let slots = self.slots.as_ref().ok_or_else(|| out_of_turn(self.stage))?;
        Ok(self
            .program
            .plan
            .output_slots()
            .enumerate()
            .map(|(i, s)| slots.label[s].lsb() ^ slots.flip[s].lsb() ^ mine.bit(i) ^ theirs[i])
            .collect())
    }
}

impl Role for EvaluatorRole<'_> {
    type Incoming<'a> = Incoming<'a>;
    type Output = Option<Vec<bool>>;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<Incoming<'_>>,
        out: &mut O,
    ) -> Result<Next<Option<Vec<bool>>>, Error> {
        let p = self.program;
        let delta = self.material.ring.delta;
        match (self.stage, incoming.map(|m| m.bytes)) {
            (Stage::Start, None) => {
                let mut msg = opening(&self.beaver.differences, delta)?;
                msg.extend(opening(
                    &self.material.masks.slice(0..p.garbler_inputs),
                    delta,
                )?);
                out.post(&Message::<{ OPENINGS.id }>(Cow::Owned(msg)))?;
                out.flush()?;
                self.stage = Stage::Opened;
                let len = opening_len(2 * p.ands) + opening_len(p.evaluator_inputs);
                Ok(Next::exact(OPENINGS, len))
            }
            (Stage::Opened, Some(bytes)) => {
                let masked = self.opened(bytes)?;
                let msg = role::pack_bits(masked.iter().copied());
                out.post(&Message::<{ MASKED_INPUTS.id }>(Cow::Owned(msg)))?;
                out.flush()?;
                self.inputs = masked;
                self.stage = Stage::Labels;
                Ok(Next::exact(INPUT_LABELS, 16 * p.inputs()))
            }
            (Stage::Labels, Some(bytes)) => {
                self.labels = role::blocks(bytes)
                    .map_err(|_| Error::CheckFailed {
                        check: "the input labels' format",
                    })?
                    .into_owned();
                let own = &self.labels[p.garbler_inputs..];
                if own.iter().zip(&self.inputs).any(|(l, &z)| l.lsb() != z) {
                    return Err(Error::CheckFailed {
                        check: "the input labels' low bits",
                    });
                }
                self.stage = Stage::Tables;
                Ok(Next::exact(TABLES, 32 * p.ands))
            }
            (Stage::Tables, Some(bytes)) => {
                self.tables = role::blocks(bytes)
                    .map_err(|_| Error::CheckFailed {
                        check: "the garbled tables' format",
                    })?
                    .into_owned();
                self.stage = Stage::Inputs;
                Ok(Next::exact(FLIPS, p.ands.div_ceil(8)))
            }
            (Stage::Inputs, Some(bytes)) => {
                let flips = unpack(bytes, p.ands, "the label flips' format")?;
                let msg = self.evaluate(&flips);
                out.post(&Message::<{ MASKED_VALUES.id }>(Cow::Owned(msg)))?;
                out.flush()?;
                self.stage = Stage::Garbled;
                Ok(Next::exact(CONSISTENCY, 32))
            }
            (Stage::Garbled, Some(bytes)) => {
                if !bool::from(self.evaluated.check_digest.ct_eq(bytes)) {
                    return Err(Error::CheckFailed {
                        check: "the consistency check",
                    });
                }
                if self.outputs.to_garbler() {
                    let msg = self.output_labels()?;
                    out.post(&Message::<{ OUTPUT_LABELS.id }>(Cow::Owned(msg)))?;
                    out.flush()?;
                }
                if self.outputs.to_evaluator() {
                    self.stage = Stage::Checked;
                    Ok(Next::exact(OUTPUT_MASKS, opening_len(p.outputs)))
                } else {
                    self.stage = Stage::Done;
                    Ok(Next::Done(None))
                }
            }
            (Stage::Checked, Some(bytes)) => {
                let z = self.decode(bytes)?;
                self.stage = Stage::Done;
                Ok(Next::Done(Some(z)))
            }
            (stage, _) => Err(out_of_turn(stage)),
        }
    }
}

/// Runs `program` between the two parties of `session` (party 0 garbles, party 1 evaluates)
/// on this party's `inputs`; returns the outputs if this party learns them. Times the phases
/// "function-independent" and "function-dependent and online" in the session.
pub fn run(
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
    let material = session.phase("function-independent", |s| {
        Material::generate(s, peer, program)
    })?;
    session.phase("function-dependent and online", |s| {
        let space = s.space(peer)?;
        if me == 0 {
            let prg = s.fork_prg();
            let mut role = GarblerRole::new(program, material, inputs.to_vec(), outputs, prg)?;
            role::drive(&mut role, &mut s.channel(peer), space)
        } else {
            let mut role = EvaluatorRole::new(program, material, inputs.to_vec(), outputs)?;
            role::drive(&mut role, &mut s.channel(peer), space)
        }
    })
}
