//! Running a [`Plan`]: free gates in place, AND batches gathered, hashed through the scheme in
//! cache-sized chunks, and scattered (VASA §4.2.1 steps 1-5: gather inputs, prepare, AES,
//! finish, store).

use crate::Error;
use crate::encoding::Delta;
use crate::plan::{AndGate, Plan, Step};
use crate::scheme::Scheme;
use crate::tables::{TableSink, TableSource};
use tessera_core::Block;

/// Buffers for one chunk, reused across chunks and runs.
#[derive(Clone, Debug, Default)]
struct Gathered {
    a: Vec<Block>,
    b: Vec<Block>,
    ids: Vec<u32>,
    out: Vec<Block>,
    table: Vec<Block>,
}

impl Gathered {
    fn load(&mut self, labels: &[Block], gates: &[AndGate], table_blocks: usize) {
        let n = gates.len();
        self.a.resize(n, Block::ZERO);
        self.b.resize(n, Block::ZERO);
        self.ids.resize(n, 0);
        self.out.resize(n, Block::ZERO);
        self.table.resize(n * table_blocks, Block::ZERO);
        let dst = self
            .a
            .iter_mut()
            .zip(self.b.iter_mut())
            .zip(self.ids.iter_mut());
        for (((a, b), id), g) in dst.zip(gates) {
            *a = labels[g.a as usize];
            *b = labels[g.b as usize];
            *id = g.id;
        }
    }

    fn store(&self, labels: &mut [Block], gates: &[AndGate]) {
        for (g, &l) in gates.iter().zip(&self.out) {
            labels[g.out as usize] = l;
        }
    }
}

fn check_inputs(plan: &Plan, inputs: &[Block]) -> Result<(), Error> {
    if inputs.len() != plan.num_inputs() {
        return Err(Error::Inputs(format!(
            "the circuit has {} input wires, got {} labels",
            plan.num_inputs(),
            inputs.len()
        )));
    }
    Ok(())
}

/// Runs `plan` from the input labels: free gates in place (`inv_offset` is what an inverter XORs in,
/// `const_one` the label of a constant 1) and each AND chunk through `and`. Returns the output labels.
fn run<F>(
    plan: &Plan,
    labels: &mut Vec<Block>,
    inputs: &[Block],
    inv_offset: Block,
    const_one: Block,
    mut and: F,
) -> Result<Vec<Block>, Error>
where
    F: FnMut(&mut [Block], &[AndGate]) -> Result<(), Error>,
{
    check_inputs(plan, inputs)?;
    labels.clear();
    labels.resize(plan.num_slots, Block::ZERO);
    for (&s, &l) in plan.input_slots.iter().zip(inputs) {
        labels[s as usize] = l;
    }
    for step in &plan.steps {
        match *step {
            Step::Xor { a, b, out } => {
                labels[out as usize] = labels[a as usize] ^ labels[b as usize]
            }
            Step::Inv { a, out } => labels[out as usize] = labels[a as usize] ^ inv_offset,
            Step::Copy { a, out } => labels[out as usize] = labels[a as usize],
            Step::Const { value, out } => labels[out as usize] = Block::mask(value) & const_one,
            Step::And { start, end } => and(labels, &plan.ands[start as usize..end as usize])?,
        }
    }
    Ok(plan
        .output_slots
        .iter()
        .map(|&s| labels[s as usize])
        .collect())
}

/// Garbles circuits with scheme `S`.
#[derive(Clone, Debug)]
pub struct Garbler<S> {
    scheme: S,
    labels: Vec<Block>,
    buf: Gathered,
}

impl<S: Scheme> Garbler<S> {
    /// A garbler using `scheme`.
    pub fn new(scheme: S) -> Self {
        Garbler {
            scheme,
            labels: Vec::new(),
            buf: Gathered::default(),
        }
    }

    /// Garbles `plan` with input zero-labels `inputs` (one per input wire) and offset `delta`,
    /// writing the tables to `sink`. Returns the output wires' zero-labels.
    pub fn garble(
        &mut self,
        plan: &Plan,
        delta: Delta,
        inputs: &[Block],
        sink: &mut impl TableSink,
    ) -> Result<Vec<Block>, Error> {
        let (scheme, buf) = (&mut self.scheme, &mut self.buf);
        // An inverter flips the meaning of the labels; a constant 1 has zero-label Δ, so the
        // evaluator's label for it, like for 0, is the public zero block.
        run(
            plan,
            &mut self.labels,
            inputs,
            delta.block(),
            delta.block(),
            |labels, gates| {
                buf.load(labels, gates, S::TABLE_BLOCKS);
                scheme.garble_and(
                    delta,
                    &buf.a,
                    &buf.b,
                    &buf.ids,
                    &mut buf.out,
                    &mut buf.table,
                );
                sink.put(&buf.table)?;
                buf.store(labels, gates);
                Ok(())
            },
        )
    }
}

/// Evaluates circuits garbled with scheme `S`.
#[derive(Clone, Debug)]
pub struct Evaluator<S> {
    scheme: S,
    labels: Vec<Block>,
    buf: Gathered,
}

impl<S: Scheme> Evaluator<S> {
    /// An evaluator using `scheme`.
    pub fn new(scheme: S) -> Self {
        Evaluator {
            scheme,
            labels: Vec::new(),
            buf: Gathered::default(),
        }
    }

    /// Evaluates `plan` on the active input labels `inputs`, reading tables from `source`
    /// (which must then be exhausted). Returns the active output labels.
    pub fn evaluate(
        &mut self,
        plan: &Plan,
        inputs: &[Block],
        source: &mut impl TableSource,
    ) -> Result<Vec<Block>, Error> {
        let (scheme, buf) = (&mut self.scheme, &mut self.buf);
        let out = run(
            plan,
            &mut self.labels,
            inputs,
            Block::ZERO,
            Block::ZERO,
            |labels, gates| {
                buf.load(labels, gates, 0);
                let table = source.take(gates.len() * S::TABLE_BLOCKS)?;
                scheme.eval_and(&buf.a, &buf.b, &buf.ids, table, &mut buf.out);
                buf.store(labels, gates);
                Ok(())
            },
        )?;
        source.finish()?;
        Ok(out)
    }
}
