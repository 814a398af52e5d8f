//! Running a [`Plan`]: free gates in place, batches gathered, hashed through the scheme in
//! cache-sized chunks, and scattered (VASA §4.2.1 steps 1-5: gather inputs, prepare, AES,
//! finish, store).

use crate::Error;
use crate::plan::{BatchGate, Plan, Step};
use crate::scheme::Scheme;
use crate::tables::{TableSink, TableSource};
use tessera_core::Block;

/// Buffers for one chunk, reused across chunks and runs.
#[derive(Clone, Debug, Default)]
struct Gathered<T> {
    a: Vec<T>,
    b: Vec<T>,
    ids: Vec<u32>,
    out: Vec<T>,
    table: Vec<Block>,
}

impl<T: Copy + Default> Gathered<T> {
    fn load(&mut self, labels: &[T], gates: &[BatchGate], table_blocks: usize) {
        let n = gates.len();
        self.a.resize(n, T::default());
        self.b.resize(n, T::default());
        self.ids.resize(n, 0);
        self.out.resize(n, T::default());
        self.table.resize(table_blocks, Block::ZERO);
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

    fn store(&self, labels: &mut [T], gates: &[BatchGate]) {
        for (g, &l) in gates.iter().zip(&self.out) {
            labels[g.out as usize] = l;
        }
    }
}

/// One party's side of a run: what it keeps per wire and how it treats the free steps.
trait Party {
    type Label: Copy + Default;
    fn xor(a: Self::Label, b: Self::Label) -> Self::Label;
    fn not(&self, a: Self::Label) -> Self::Label;
    fn constant(&mut self, value: bool) -> Self::Label;
}

/// Table blocks of one batch of `gates` gates, XOR gates if `xor`.
fn batch_table_blocks<S: Scheme>(xor: bool, gates: usize) -> usize {
    if xor {
        S::xor_table_blocks(gates)
    } else {
        S::and_table_blocks(gates)
    }
}

/// Table blocks a garbling of `plan` with scheme `S` writes.
pub fn table_blocks<S: Scheme>(plan: &Plan) -> usize {
    let batch = |s: &Step| match *s {
        Step::Batch { xor, start, end } => batch_table_blocks::<S>(xor, (end - start) as usize),
        _ => 0,
    };
    plan.steps.iter().map(batch).sum()
}

fn check<S: Scheme>(plan: &Plan, inputs: usize) -> Result<(), Error> {
    if plan.xor_gates() != S::XOR_GATES {
        return Err(Error::WrongPlan {
            scheme: S::NAME,
            plan: plan.xor_gates(),
        });
    }
    if inputs != plan.num_inputs() {
        return Err(Error::Inputs(format!(
            "the circuit has {} input wires, got {} labels",
            plan.num_inputs(),
            inputs
        )));
    }
    Ok(())
}

/// Places the input labels in their slots.
fn load_inputs<L: Copy + Default>(plan: &Plan, labels: &mut Vec<L>, inputs: &[L]) {
    labels.clear();
    labels.resize(plan.num_slots, L::default());
    for (&s, &l) in plan.input_slots.iter().zip(inputs) {
        labels[s as usize] = l;
    }
}

/// Runs the free steps of `plan` from step `at` until the next batch; returns that batch
/// (all XOR if the flag says so, else all AND) and moves `at` past it, or `None` at the end.
fn advance<'p, P: Party>(
    plan: &'p Plan,
    labels: &mut [P::Label],
    party: &mut P,
    at: &mut usize,
) -> Option<(bool, &'p [BatchGate])> {
    while let Some(step) = plan.steps.get(*at) {
        *at += 1;
        match *step {
            Step::Xor { a, b, out } => {
                labels[out as usize] = P::xor(labels[a as usize], labels[b as usize])
            }
            Step::Inv { a, out } => labels[out as usize] = party.not(labels[a as usize]),
            Step::Copy { a, out } => labels[out as usize] = labels[a as usize],
            Step::Const { value, out } => labels[out as usize] = party.constant(value),
            Step::Batch { xor, start, end } => {
                return Some((xor, &plan.batched[start as usize..end as usize]));
            }
        }
    }
    None
}

fn outputs<L: Copy>(plan: &Plan, labels: &[L]) -> Vec<L> {
    plan.output_slots
        .iter()
        .map(|&s| labels[s as usize])
        .collect()
}

/// Garbles circuits with scheme `S`.
#[derive(Clone, Debug)]
pub struct Garbler<S: Scheme> {
    scheme: S,
    labels: Vec<S::Wire>,
    buf: Gathered<S::Wire>,
}

struct Garbling<'a, S: Scheme> {
    secret: &'a mut S::Secret,
}

impl<S: Scheme> Party for Garbling<'_, S> {
    type Label = S::Wire;
    fn xor(a: S::Wire, b: S::Wire) -> S::Wire {
        S::free_xor(a, b)
    }
    fn not(&self, a: S::Wire) -> S::Wire {
        S::not(self.secret, a)
    }
    fn constant(&mut self, value: bool) -> S::Wire {
        S::constant(self.secret, value)
    }
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

    /// Garbles `plan` with the input wires `inputs` (one per input wire) and the circuit's
    /// `secret`, writing each batch's tables to `sink` as soon as they exist. Returns the
    /// output wires.
    pub fn garble(
        &mut self,
        plan: &Plan,
        secret: &mut S::Secret,
        inputs: &[S::Wire],
        sink: &mut impl TableSink,
    ) -> Result<Vec<S::Wire>, Error> {
        check::<S>(plan, inputs.len())?;
        load_inputs(plan, &mut self.labels, inputs);
        let mut party = Garbling::<S> { secret };
        let mut at = 0;
        while let Some((xor, gates)) = advance(plan, &mut self.labels, &mut party, &mut at) {
            let buf = &mut self.buf;
            buf.load(
                &self.labels,
                gates,
                batch_table_blocks::<S>(xor, gates.len()),
            );
            let garble = if xor { S::garble_xor } else { S::garble_and };
            garble(
                &mut self.scheme,
                party.secret,
                &buf.a,
                &buf.b,
                &buf.ids,
                &mut buf.out,
                &mut buf.table,
            );
            sink.put(&buf.table)?;
            buf.store(&mut self.labels, gates);
        }
        Ok(outputs(plan, &self.labels))
    }
}

/// Evaluates circuits garbled with scheme `S`.
#[derive(Clone, Debug)]
pub struct Evaluator<S> {
    scheme: S,
    labels: Vec<Block>,
    buf: Gathered<Block>,
}

/// The evaluator's free steps: XOR labels, keep them through NOT, zero for constants.
struct Evaluating;

impl Party for Evaluating {
    type Label = Block;
    fn xor(a: Block, b: Block) -> Block {
        a ^ b
    }
    fn not(&self, a: Block) -> Block {
        a
    }
    fn constant(&mut self, _value: bool) -> Block {
        Block::ZERO
    }
}

/// Where an evaluation stands: the next step of its plan, and the batch waiting for its
/// tables. Made by [`Evaluator::start`], moved on by [`Evaluator::next_tables`] and
/// [`Evaluator::feed`], so an evaluation can wait for each batch's tables (from a peer, one
/// message at a time).
#[derive(Debug)]
pub struct Evaluation<'p> {
    plan: &'p Plan,
    at: usize,
    pending: Option<(bool, &'p [BatchGate])>,
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

    /// Starts evaluating `plan` on the active input labels `inputs`.
    pub fn start<'p>(&mut self, plan: &'p Plan, inputs: &[Block]) -> Result<Evaluation<'p>, Error> {
        check::<S>(plan, inputs.len())?;
        load_inputs(plan, &mut self.labels, inputs);
        Ok(Evaluation {
            plan,
            at: 0,
            pending: None,
        })
    }

    /// Runs the free steps up to the next batch and returns how many table blocks it needs,
    /// or `None` when the circuit is done.
    pub fn next_tables(&mut self, ev: &mut Evaluation<'_>) -> Option<usize> {
        if ev.pending.is_none() {
            ev.pending = advance(ev.plan, &mut self.labels, &mut Evaluating, &mut ev.at);
        }
        ev.pending
            .map(|(xor, gates)| batch_table_blocks::<S>(xor, gates.len()))
    }

    /// Evaluates the waiting batch with its tables (as many blocks as
    /// [`Evaluator::next_tables`] said).
    pub fn feed(&mut self, ev: &mut Evaluation<'_>, table: &[Block]) -> Result<(), Error> {
        let (xor, gates) = ev
            .pending
            .take()
            .ok_or_else(|| Error::Inputs("tables fed with no batch waiting".into()))?;
        let need = batch_table_blocks::<S>(xor, gates.len());
        if table.len() != need {
            return Err(Error::Truncated {
                needed: need,
                available: table.len(),
            });
        }
        let buf = &mut self.buf;
        buf.load(&self.labels, gates, 0);
        let evaluate = if xor {
            S::evaluate_xor
        } else {
            S::evaluate_and
        };
        evaluate(
            &mut self.scheme,
            &buf.a,
            &buf.b,
            &buf.ids,
            table,
            &mut buf.out,
        );
        buf.store(&mut self.labels, gates);
        Ok(())
    }

    /// The active output labels of a finished evaluation.
    pub fn outputs(&self, ev: &Evaluation<'_>) -> Vec<Block> {
        outputs(ev.plan, &self.labels)
    }

    /// Evaluates `plan` on the active input labels `inputs`, reading tables from `source`
    /// (which must then be exhausted). Returns the active output labels.
    pub fn evaluate(
        &mut self,
        plan: &Plan,
        inputs: &[Block],
        source: &mut impl TableSource,
    ) -> Result<Vec<Block>, Error> {
        let mut ev = self.start(plan, inputs)?;
        while let Some(n) = self.next_tables(&mut ev) {
            let table = source.take(n)?;
            self.feed(&mut ev, table)?;
        }
        source.finish()?;
        Ok(self.outputs(&ev))
    }
}
