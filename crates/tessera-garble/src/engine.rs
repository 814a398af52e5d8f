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

/// One party's side of a run: what it keeps per wire and how it treats each kind of step.
trait Party {
    type Label: Copy + Default;
    fn xor(a: Self::Label, b: Self::Label) -> Self::Label;
    fn not(&self, a: Self::Label) -> Self::Label;
    fn constant(&mut self, value: bool) -> Self::Label;
    /// Gates `gates` (all XOR if `xor`, else all AND) through the scheme.
    fn batch(
        &mut self,
        labels: &mut [Self::Label],
        xor: bool,
        gates: &[BatchGate],
    ) -> Result<(), Error>;
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

/// Runs `plan` from the input labels; returns the output labels.
fn run<P: Party>(
    plan: &Plan,
    labels: &mut Vec<P::Label>,
    inputs: &[P::Label],
    party: &mut P,
) -> Result<Vec<P::Label>, Error> {
    labels.clear();
    labels.resize(plan.num_slots, P::Label::default());
    for (&s, &l) in plan.input_slots.iter().zip(inputs) {
        labels[s as usize] = l;
    }
    for step in &plan.steps {
        match *step {
            Step::Xor { a, b, out } => {
                labels[out as usize] = P::xor(labels[a as usize], labels[b as usize])
            }
            Step::Inv { a, out } => labels[out as usize] = party.not(labels[a as usize]),
            Step::Copy { a, out } => labels[out as usize] = labels[a as usize],
            Step::Const { value, out } => labels[out as usize] = party.constant(value),
            Step::Batch { xor, start, end } => {
                party.batch(labels, xor, &plan.batched[start as usize..end as usize])?
            }
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
pub struct Garbler<S: Scheme> {
    scheme: S,
    labels: Vec<S::Wire>,
    buf: Gathered<S::Wire>,
}

struct Garbling<'a, S: Scheme, K> {
    scheme: &'a mut S,
    secret: &'a mut S::Secret,
    buf: &'a mut Gathered<S::Wire>,
    sink: &'a mut K,
}

impl<S: Scheme, K: TableSink> Party for Garbling<'_, S, K> {
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
    fn batch(
        &mut self,
        labels: &mut [S::Wire],
        xor: bool,
        gates: &[BatchGate],
    ) -> Result<(), Error> {
        let buf = &mut *self.buf;
        buf.load(labels, gates, batch_table_blocks::<S>(xor, gates.len()));
        let garble = if xor { S::garble_xor } else { S::garble_and };
        garble(
            self.scheme,
            self.secret,
            &buf.a,
            &buf.b,
            &buf.ids,
            &mut buf.out,
            &mut buf.table,
        );
        self.sink.put(&buf.table)?;
        buf.store(labels, gates);
        Ok(())
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
    /// `secret`, writing the tables to `sink`. Returns the output wires.
    pub fn garble(
        &mut self,
        plan: &Plan,
        secret: &mut S::Secret,
        inputs: &[S::Wire],
        sink: &mut impl TableSink,
    ) -> Result<Vec<S::Wire>, Error> {
        check::<S>(plan, inputs.len())?;
        let mut party = Garbling {
            scheme: &mut self.scheme,
            secret,
            buf: &mut self.buf,
            sink,
        };
        run(plan, &mut self.labels, inputs, &mut party)
    }
}

/// Evaluates circuits garbled with scheme `S`.
#[derive(Clone, Debug)]
pub struct Evaluator<S> {
    scheme: S,
    labels: Vec<Block>,
    buf: Gathered<Block>,
}

struct Evaluating<'a, S, R> {
    scheme: &'a mut S,
    buf: &'a mut Gathered<Block>,
    source: &'a mut R,
}

impl<S: Scheme, R: TableSource> Party for Evaluating<'_, S, R> {
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
    fn batch(&mut self, labels: &mut [Block], xor: bool, gates: &[BatchGate]) -> Result<(), Error> {
        let buf = &mut *self.buf;
        buf.load(labels, gates, 0);
        let table = self
            .source
            .take(batch_table_blocks::<S>(xor, gates.len()))?;
        let evaluate = if xor {
            S::evaluate_xor
        } else {
            S::evaluate_and
        };
        evaluate(self.scheme, &buf.a, &buf.b, &buf.ids, table, &mut buf.out);
        buf.store(labels, gates);
        Ok(())
    }
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
        check::<S>(plan, inputs.len())?;
        let mut party = Evaluating {
            scheme: &mut self.scheme,
            buf: &mut self.buf,
            source,
        };
        let out = run(plan, &mut self.labels, inputs, &mut party)?;
        source.finish()?;
        Ok(out)
    }
}
