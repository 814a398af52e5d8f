//! The garbler's roles (party 0): [`Prep`] for the function-dependent phase, [`Online`] for
//! the online phase.

use super::{
    Carry, Ended, Ending, Material, Opened, Openings, Program, check_inputs, label_commitment,
    masked_inputs, opening_len, out_of_turn, output_masks,
};
use crate::Error;
use crate::checks::{self, Check};
use crate::garbling::{self, Garbled, Slots};
use crate::wire::{
    CONSISTENCY, EXPECTED_LABELS, FLIPS, INPUT_LABELS, Incoming, LABELS_OPENED, MASKED_INPUTS,
    MASKED_VALUES, Message, OPENINGS, OUTPUT_LABELS, OUTPUT_MASKS, TABLES, unpack_bits,
};
use std::borrow::Cow;
use subtle::ConstantTimeEq;
use tessera_core::{Block, Prg};
use tessera_net::role::{self, Next, Outbox, Role};

/// The garbler's function-dependent phase: the openings both ways, then the garbled circuit.
pub struct Prep<'a> {
    program: &'a Program,
    material: Option<Material>,
    openings: Openings,
    prg: Prg,
    carry: Carry,
    started: bool,
}

impl std::fmt::Debug for Prep<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("garbler::Prep")
            .field("started", &self.started)
            .finish_non_exhaustive()
    }
}

/// The garbler's state between the phases: its material, the AND products, the garbled
/// circuit and the slots it leaves (zero labels, masks and flips of every wire).
#[derive(Debug)]
pub struct Prepared {
    material: Material,
    opened: Opened,
    slots: Slots,
    garbled: Garbled,
    /// The zero labels of the fresh input wires.
    zero_inputs: Vec<Block>,
    /// The masked values of the carried input wires.
    carried_masked: Vec<bool>,
}

impl<'a> Prep<'a> {
    /// The garbler of `program` with its `material`, drawing labels from `prg`, and for a
    /// later step of a chain, the state `carry` from the step before.
    pub fn new(
        program: &'a Program,
        mut material: Material,
        prg: Prg,
        carry: Option<Carry>,
    ) -> Self {
        let mut carry = carry.unwrap_or_default();
        material.carry_in(program, std::mem::take(&mut carry.masks));
        Prep {
            openings: Openings::new(program, &material, 0),
            program,
            material: Some(material),
            prg,
            carry,
            started: false,
        }
    }

    /// Garbles once the openings are in.
    fn garble(&mut self, opened: Opened) -> Result<Prepared, Error> {
        let material = self
            .material
            .take()
            .ok_or_else(|| out_of_turn("garbler prep", "done"))?;
        let plan = &self.program.plan;
        let zero_inputs = garbling::zero_labels(self.program.fresh_inputs(), &mut self.prg);
        let mut slots = Slots::new(plan, &material.masks);
        let zero = zero_inputs.iter().chain(&self.carry.labels);
        let flips = std::iter::repeat_n(&false, zero_inputs.len());
        slots.load_inputs(plan, zero, flips.chain(&self.carry.flips));
        let mut garbled = Garbled::default();
        let masks = (&material.masks, &opened.products);
        let keys = (material.ring.delta, material.domain);
        garbling::garble(plan, masks, keys, &mut slots, &mut garbled);
        Ok(Prepared {
            material,
            opened,
            slots,
            garbled,
            zero_inputs,
            carried_masked: std::mem::take(&mut self.carry.masked),
        })
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
        let material = self
            .material
            .as_ref()
            .ok_or_else(|| out_of_turn("garbler prep", "done"))?;
        match (self.started, incoming) {
            (false, None) => {
                let msg = self.openings.message(material)?;
                out.post(&Message::<{ OPENINGS.id }>(Cow::Owned(msg)))?;
                out.flush()?;
                self.started = true;
                Ok(Next::exact(OPENINGS, self.openings.peer_len()))
            }
            (true, Some(m)) => {
                let opened = self.openings.take(material, m.bytes)?;
                let state = self.garble(opened)?;
                let tables = bytemuck::cast_slice(&state.garbled.tables);
                out.post(&Message::<{ TABLES.id }>(Cow::Borrowed(tables)))?;
                let flips = role::pack_bits(state.garbled.flips.iter().copied());
                out.post(&Message::<{ FLIPS.id }>(Cow::Owned(flips)))?;
                out.flush()?;
                Ok(Next::Done(state))
            }
            (started, _) => Err(out_of_turn("garbler prep", started)),
        }
    }
}

/// Where the garbler's online phase stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stage {
    Start,
    Inputs,
    Values,
    Opened,
    Outputs,
}

/// The garbler's online phase: input labels, the checks, the outputs.
pub struct Online<'a> {
    program: &'a Program,
    state: Prepared,
    inputs: Vec<bool>,
    ending: Ending,
    masked: Vec<bool>,
    /// The masked values of the output wires, from the consistency check.
    output_masked: Vec<bool>,
    /// The evaluator's commitment to its label digest, the digest it must open to, and the
    /// digest of the consistency MACs.
    commitment: [u8; 32],
    expected: Block,
    check: Block,
    stage: Stage,
}

impl std::fmt::Debug for Online<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("garbler::Online")
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

impl<'a> Online<'a> {
    /// The online phase of `program` from the prepared `state`, on the garbler's `inputs`,
    /// ending as `ending` says.
    pub fn new(
        program: &'a Program,
        state: Prepared,
        inputs: &[bool],
        ending: Ending,
    ) -> Result<Self, Error> {
        check_inputs(program, 0, inputs)?;
        Ok(Online {
            program,
            state,
            inputs: inputs.to_vec(),
            ending,
            masked: Vec::new(),
            output_masked: Vec::new(),
            commitment: [0; 32],
            expected: Block::ZERO,
            check: Block::ZERO,
            stage: Stage::Start,
        })
    }

    /// The input labels, from the masked values of every input wire.
    fn input_labels(&mut self, theirs: &[u8]) -> Result<Vec<Block>, Error> {
        let p = self.program;
        let m = &self.state.material;
        let own = p.input_range(0);
        self.masked = masked_inputs(m, own, &self.inputs, &self.state.opened.peer_masks);
        self.masked
            .extend(unpack_bits(theirs, p.evaluator_inputs, MASKED_INPUTS.name)?);
        let delta = m.ring.delta;
        let labels = self
            .state
            .zero_inputs
            .iter()
            .zip(&self.masked)
            .map(|(&zero, &z)| zero ^ (delta & Block::mask(z)))
            .collect();
        self.masked.extend(&self.state.carried_masked);
        Ok(labels)
    }

    /// Takes the evaluator's masked AND values and its commitment: works out the digest of the
    /// labels they call for and of the consistency MACs.
    fn consistency(&mut self, bytes: &[u8]) -> Result<(), Error> {
        let n = self.program.ands;
        let (bits, commitment) = bytes.split_at(n.div_ceil(8));
        let masked = unpack_bits(bits, n, MASKED_VALUES.name)?;
        let s = &self.state;
        let (labels, check, outputs) = garbling::garbler_check(
            &self.program.plan,
            (&s.material.masks, &s.opened.products),
            &s.garbled,
            (&self.masked, &masked, bits),
            s.material.ring.delta,
        );
        self.commitment.copy_from_slice(commitment);
        (self.expected, self.check, self.output_masked) = (labels, check, outputs);
        Ok(())
    }

    /// Checks the evaluator's opened label digest: it must open the commitment and be the
    /// digest the masked values call for.
    fn label_check(&self, bytes: &[u8]) -> Result<(), Error> {
        let (digest, nonce) = bytes.split_at(16);
        let nonce = Block::from_bytes(nonce.try_into().unwrap_or_default());
        let opens = label_commitment(digest, nonce).ct_eq(&self.commitment);
        let right = digest.ct_eq(&self.expected.to_bytes());
        checks::require(Check::AndLabels, bool::from(opens & right))
    }

    /// The state the output wires carry into the next step of a chain.
    fn carry_out(&self) -> Carry {
        let masked = self.output_masked.clone();
        Carry::out_of(&self.program.plan, &self.state.slots, Some(masked))
    }

    /// Decodes the outputs from the evaluator's output labels and mask opening.
    fn decode(&self, bytes: &[u8]) -> Result<Vec<bool>, Error> {
        let delta = self.state.material.ring.delta;
        let n = self.program.outputs;
        let (labels, opened) = bytes.split_at(16 * n);
        let slots = &self.state.slots;
        let mine = output_masks(&self.program.plan, slots);
        let theirs = mine.check_opening(delta, opened, (OUTPUT_LABELS.name, Check::OutputMasks))?;
        let mut z = Vec::with_capacity(n);
        for (i, slot) in self.program.plan.output_slots().enumerate() {
            let label = &labels[16 * i..16 * i + 16];
            let zero = slots.label[slot];
            let is_zero = label.ct_eq(&zero.to_bytes());
            let is_one = label.ct_eq(&(zero ^ delta).to_bytes());
            checks::require(Check::OutputLabels, bool::from(is_zero | is_one))?;
            let masked = bool::from(is_one) ^ slots.flip[slot].lsb();
            z.push(masked ^ mine.bit(i) ^ theirs[i]);
        }
        Ok(z)
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
                self.stage = Stage::Inputs;
                Ok(Next::exact(MASKED_INPUTS, p.evaluator_inputs.div_ceil(8)))
            }
            (Stage::Inputs, Some(bytes)) => {
                let labels = self.input_labels(bytes)?;
                let msg = bytemuck::cast_slice(&labels);
                out.post(&Message::<{ INPUT_LABELS.id }>(Cow::Borrowed(msg)))?;
                out.flush()?;
                self.stage = Stage::Values;
                Ok(Next::exact(MASKED_VALUES, p.ands.div_ceil(8) + 32))
            }
            (Stage::Values, Some(bytes)) => {
                self.consistency(bytes)?;
                let msg = self.expected.to_bytes().to_vec();
                out.post(&Message::<{ EXPECTED_LABELS.id }>(Cow::Owned(msg)))?;
                out.flush()?;
                self.stage = Stage::Opened;
                Ok(Next::exact(LABELS_OPENED, 32))
            }
            (Stage::Opened, Some(bytes)) => {
                self.label_check(bytes)?;
                let check = self.check.to_bytes().to_vec();
                out.post(&Message::<{ CONSISTENCY.id }>(Cow::Owned(check)))?;
                let Ending::Decode(outputs) = self.ending else {
                    out.flush()?;
                    return Ok(Next::Done(Ended::Carried(self.carry_out())));
                };
                if outputs.to_evaluator() {
                    let masks = output_masks(&p.plan, &self.state.slots);
                    let msg = masks.opening();
                    out.post(&Message::<{ OUTPUT_MASKS.id }>(Cow::Owned(msg)))?;
                }
                out.flush()?;
                if outputs.to_garbler() {
                    self.stage = Stage::Outputs;
                    Ok(Next::exact(
                        OUTPUT_LABELS,
                        16 * p.outputs + opening_len(p.outputs),
                    ))
                } else {
                    Ok(Next::Done(Ended::Outputs(None)))
                }
            }
            (Stage::Outputs, Some(bytes)) => {
                Ok(Next::Done(Ended::Outputs(Some(self.decode(bytes)?))))
            }
            (stage, _) => Err(out_of_turn("garbler online", stage)),
        }
    }
}
