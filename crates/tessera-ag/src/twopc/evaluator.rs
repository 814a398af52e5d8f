//! The evaluator's roles (party 1): [`Prep`] for the function-dependent phase, [`Online`]
//! for the online phase.

use super::{
    Carry, Ended, Ending, Material, Opened, Openings, Program, check_inputs, label_commitment,
    masked_inputs, opening_len, out_of_turn, output_masks,
};
use crate::Error;
use crate::checks::{self, Check};
use crate::garbling::{self, Evaluated, Slots};
use crate::wire::{
    CONSISTENCY, EXPECTED_LABELS, FLIPS, INPUT_LABELS, Incoming, LABELS_OPENED, MASKED_INPUTS,
    MASKED_VALUES, Message, OPENINGS, OUTPUT_LABELS, OUTPUT_MASKS, TABLES, blocks, unpack_bits,
};
use std::borrow::Cow;
use subtle::ConstantTimeEq;
use tessera_core::{Block, Prg};
use tessera_net::role::{self, Next, Outbox, Role};

/// Where the evaluator's function-dependent phase stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum PrepStage {
    Start,
    Openings,
    Tables,
    Flips,
}

/// The evaluator's function-dependent phase: the openings both ways, then the garbled circuit
/// received.
pub struct Prep<'a> {
    program: &'a Program,
    material: Option<Material>,
    openings: Openings,
    opened: Option<Opened>,
    tables: Vec<Block>,
    carry: Carry,
    stage: PrepStage,
}

impl std::fmt::Debug for Prep<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("evaluator::Prep")
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

/// The evaluator's state between the phases: its material, the AND products, the garbled
/// tables and flips, and what the step before carried.
#[derive(Debug)]
pub struct Prepared {
    material: Material,
    opened: Opened,
    tables: Vec<Block>,
    flips: Vec<bool>,
    carry: Carry,
}

impl<'a> Prep<'a> {
    /// The evaluator of `program` with its `material`, and for a later step of a chain, the
    /// state `carry` from the step before.
    pub fn new(program: &'a Program, mut material: Material, carry: Option<Carry>) -> Self {
        let mut carry = carry.unwrap_or_default();
        material.carry_in(program, std::mem::take(&mut carry.masks));
        Prep {
            openings: Openings::new(program, &material, 1),
            program,
            material: Some(material),
            opened: None,
            tables: Vec::new(),
            carry,
            stage: PrepStage::Start,
        }
    }

    /// The state once the flips are in.
    fn finish(&mut self, flips: Vec<bool>) -> Result<Prepared, Error> {
        match (self.material.take(), self.opened.take()) {
            (Some(material), Some(opened)) => Ok(Prepared {
                material,
                opened,
                tables: std::mem::take(&mut self.tables),
                flips,
                carry: std::mem::take(&mut self.carry),
            }),
            _ => Err(out_of_turn("evaluator prep", self.stage)),
        }
    }
}

impl Role for Prep<'_> {
    type Incoming<'a> = Incoming<'a>;
    type Output = Prepared;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<Incoming<'_>>,
        out: &mut O,
    ) -> Result<Next<Prepared>, Error> {
        let p = self.program;
        let material = self
            .material
            .as_ref()
            .ok_or_else(|| out_of_turn("evaluator prep", self.stage))?;
        match (self.stage, incoming.map(|m| m.bytes)) {
            (PrepStage::Start, None) => {
                let msg = self.openings.message(material)?;
                out.post(&Message::<{ OPENINGS.id }>(Cow::Owned(msg)))?;
                out.flush()?;
                self.stage = PrepStage::Openings;
                Ok(Next::exact(OPENINGS, self.openings.peer_len()))
            }
            (PrepStage::Openings, Some(bytes)) => {
                self.opened = Some(self.openings.take(material, bytes)?);
                self.stage = PrepStage::Tables;
                Ok(Next::exact(TABLES, 32 * p.ands))
            }
            (PrepStage::Tables, Some(bytes)) => {
                self.tables = blocks(bytes, TABLES.name)?.into_owned();
                self.stage = PrepStage::Flips;
                Ok(Next::exact(FLIPS, p.ands.div_ceil(8)))
            }
            (PrepStage::Flips, Some(bytes)) => {
                let flips = unpack_bits(bytes, p.ands, FLIPS.name)?;
                Ok(Next::Done(self.finish(flips)?))
            }
            (stage, _) => Err(out_of_turn("evaluator prep", stage)),
        }
    }
}

/// Where the evaluator's online phase stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Start,
    Labels,
    Expected,
    Consistency,
    Outputs,
}

/// The evaluator's online phase: masked inputs, evaluation, the checks, the outputs.
pub struct Online<'a> {
    program: &'a Program,
    state: Prepared,
    inputs: Vec<bool>,
    ending: Ending,
    masked: Vec<bool>,
    slots: Option<Slots>,
    evaluated: Evaluated,
    /// The nonce of the commitment to the label digest.
    nonce: Block,
    stage: Stage,
}

impl std::fmt::Debug for Online<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("evaluator::Online")
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

impl<'a> Online<'a> {
    /// The online phase of `program` from the prepared `state`, on the evaluator's `inputs`,
    /// ending as `ending` says; the commitment's nonce drawn from `prg`.
    pub fn new(
        program: &'a Program,
        state: Prepared,
        inputs: &[bool],
        ending: Ending,
        mut prg: Prg,
    ) -> Result<Self, Error> {
        check_inputs(program, 1, inputs)?;
        Ok(Online {
            program,
            state,
            inputs: inputs.to_vec(),
            ending,
            masked: Vec::new(),
            slots: None,
            evaluated: Evaluated::default(),
            nonce: prg.random_block(),
            stage: Stage::Start,
        })
    }

    /// Evaluates from the garbler's input labels; returns the masked AND values and the digest
    /// of their labels.
    fn evaluate(&mut self, bytes: &[u8]) -> Result<Vec<u8>, Error> {
        let p = self.program;
        let labels = blocks(bytes, INPUT_LABELS.name)?;
        let own = &labels[p.garbler_inputs..];
        let right = own.iter().zip(&self.masked).all(|(l, &z)| l.lsb() == z);
        checks::require(Check::InputLabels, right)?;
        let s = &mut self.state;
        let mut slots = Slots::new(&p.plan, &s.material.masks);
        let flips = std::iter::repeat_n(&false, labels.len());
        let all = labels.iter().chain(&s.carry.labels);
        slots.load_inputs(&p.plan, all, flips.chain(&s.carry.flips));
        self.evaluated = garbling::evaluate(
            &p.plan,
            (&s.material.masks, &s.opened.products),
            (s.material.ring, s.material.domain),
            (&s.tables, &s.flips),
            &mut slots,
        );
        self.slots = Some(slots);
        s.tables = Vec::new();
        let mut msg = self.evaluated.masked.clone();
        let digest = self.evaluated.label_digest.to_bytes();
        msg.extend_from_slice(&label_commitment(&digest, self.nonce));
        Ok(msg)
    }

    /// This party's output labels and the opening of its output masks.
    fn output_labels(&self, slots: &Slots) -> Result<Vec<u8>, Error> {
        let mut msg = Vec::new();
        for slot in self.program.plan.output_slots() {
            msg.extend_from_slice(&slots.label[slot].to_bytes());
        }
        let masks = output_masks(&self.program.plan, slots);
        msg.extend(masks.opening());
        Ok(msg)
    }

    /// Decodes the outputs from the garbler's opening of its output masks.
    fn decode(&self, slots: &Slots, bytes: &[u8]) -> Result<Vec<bool>, Error> {
        let plan = &self.program.plan;
        let mine = output_masks(plan, slots);
        let delta = self.state.material.ring.delta;
        let theirs = mine.check_opening(delta, bytes, (OUTPUT_MASKS.name, Check::OutputMasks))?;
        Ok(plan
            .output_slots()
            .enumerate()
            .map(|(i, s)| slots.label[s].lsb() ^ slots.flip[s].lsb() ^ mine.bit(i) ^ theirs[i])
            .collect())
    }

    /// The state the output wires carry into the next step of a chain.
    fn carry_out(&self) -> Result<Carry, Error> {
        Ok(Carry::out_of(&self.program.plan, self.slots()?, None))
    }

    /// The slots, once evaluated.
    fn slots(&self) -> Result<&Slots, Error> {
        self.slots
            .as_ref()
            .ok_or_else(|| out_of_turn("evaluator online", self.stage))
    }
}

impl Role for Online<'_> {
    type Incoming<'a> = Incoming<'a>;
    type Output = Ended;
    type Error = Error;

    fn step<O: Outbox>(
        &mut self,
        incoming: Option<Incoming<'_>>,
        out: &mut O,
    ) -> Result<Next<Ended>, Error> {
        let p = self.program;
        match (self.stage, incoming.map(|m| m.bytes)) {
            (Stage::Start, None) => {
                let (m, peer) = (&self.state.material, &self.state.opened.peer_masks);
                self.masked = masked_inputs(m, p.input_range(1), &self.inputs, peer);
                let msg = role::pack_bits(self.masked.iter().copied());
                out.post(&Message::<{ MASKED_INPUTS.id }>(Cow::Owned(msg)))?;
                out.flush()?;
                self.stage = Stage::Labels;
                Ok(Next::exact(INPUT_LABELS, 16 * p.fresh_inputs()))
            }
            (Stage::Labels, Some(bytes)) => {
                let msg = self.evaluate(bytes)?;
                out.post(&Message::<{ MASKED_VALUES.id }>(Cow::Owned(msg)))?;
                out.flush()?;
                self.stage = Stage::Expected;
                Ok(Next::exact(EXPECTED_LABELS, 16))
            }
            (Stage::Expected, Some(bytes)) => {
                // The label check: only labels the garbler already knows are shown.
                let digest = self.evaluated.label_digest.to_bytes();
                checks::require(Check::ExpectedLabels, bool::from(digest.ct_eq(bytes)))?;
                let mut msg = digest.to_vec();
                msg.extend_from_slice(&self.nonce.to_bytes());
                out.post(&Message::<{ LABELS_OPENED.id }>(Cow::Owned(msg)))?;
                out.flush()?;
                self.stage = Stage::Consistency;
                Ok(Next::exact(CONSISTENCY, 16))
            }
            (Stage::Consistency, Some(bytes)) => {
                let digest = self.evaluated.check_digest.to_bytes();
                checks::require(Check::Consistency, bool::from(digest.ct_eq(bytes)))?;
                let Ending::Decode(outputs) = self.ending else {
                    return Ok(Next::Done(Ended::Carried(self.carry_out()?)));
                };
                if outputs.to_garbler() {
                    let msg = self.output_labels(self.slots()?)?;
                    out.post(&Message::<{ OUTPUT_LABELS.id }>(Cow::Owned(msg)))?;
                    out.flush()?;
                }
                if outputs.to_evaluator() {
                    self.stage = Stage::Outputs;
                    Ok(Next::exact(OUTPUT_MASKS, opening_len(p.outputs)))
                } else {
                    Ok(Next::Done(Ended::Outputs(None)))
                }
            }
            (Stage::Outputs, Some(bytes)) => {
                let z = self.decode(self.slots()?, bytes)?;
                Ok(Next::Done(Ended::Outputs(Some(z))))
            }
            (stage, _) => Err(out_of_turn("evaluator online", stage)),
        }
    }
}
