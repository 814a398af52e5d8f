//! Circuit files too large to hold, garbled and evaluated window by window as
//! [`Streamed`] reads them (two passes: liveness, then windows of consecutive gates). Each
//! window is compiled on its own and run in its own tweak domain (its index), like the steps
//! of a [`crate::Chain`]; the labels of wires that live across windows wait in a store indexed
//! by the reader's positions, which grows with the live wires. Memory is the store, one
//! window's plan and slots and one batch's tables, whatever the file's size.

use crate::engine::Cursor;
use crate::{Error, Evaluator, Garbler, Plan, Scheme, TableSink, TableSource};
use tessera_circuit::Circuit;
use tessera_circuit::bristol::stream::{Streamed, Window};
use tessera_core::Block;

/// The labels of the wires live across windows, by the reader's positions.
struct Store<L>(Vec<L>);

impl<L: Copy + Default> Store<L> {
    /// A store holding the labels of `file`'s input wires (positions 0, 1, ...).
    fn new(file: &Streamed, inputs: &[L]) -> Result<Self, Error> {
        let width: u32 = file.inputs().iter().sum();
        if inputs.len() != width as usize {
            return Err(Error::Inputs(format!(
                "the circuit has {width} input wires, got {} labels",
                inputs.len()
            )));
        }
        Ok(Store(inputs.to_vec()))
    }

    /// Places the labels of window `w`'s inputs in the input slots of its plan, `slots`, and
    /// grows the store to hold every position so far.
    fn place(&mut self, w: &Window<'_>, slots: &mut [L]) -> Result<(), Error> {
        if slots.len() != w.inputs.len() {
            return Err(Error::Inputs("a window's plan and inputs differ".into()));
        }
        for (slot, &p) in slots.iter_mut().zip(w.inputs) {
            *slot = self.0[p as usize];
        }
        self.0.resize(w.positions, L::default());
        Ok(())
    }

    /// Keeps a window's output labels at its output `positions`.
    fn keep(&mut self, positions: &[u32], labels: &[L]) {
        for (&p, &l) in positions.iter().zip(labels) {
            self.0[p as usize] = l;
        }
    }

    /// The labels of `file`'s output wires, once every window is run.
    fn outputs(&self, file: &Streamed) -> Result<Vec<L>, Error> {
        let positions = file.output_positions()?;
        Ok(positions.iter().map(|&p| self.0[p as usize]).collect())
    }
}

/// Garbles the circuit file `file` window by window, each compiled by `compile` (for a
/// scheme of `S`'s kind of XOR gates) and garbled in tweak domain = its index under one
/// `secret`, the tables written to `sink` batch by batch. `inputs` are the wires of the
/// circuit's input wires, in order; returns its output wires.
pub fn garble_streamed<S: Scheme>(
    file: &mut Streamed,
    mut compile: impl FnMut(&Circuit) -> Plan,
    garbler: &mut Garbler<S>,
    (secret, inputs): (&S::Secret, &[S::Wire]),
    sink: &mut impl TableSink,
) -> Result<Vec<S::Wire>, Error> {
    let mut store = Store::new(file, inputs)?;
    while let Some(w) = file.next_window()? {
        let plan = compile(w.circuit);
        store.place(&w, garbler.inputs(&plan))?;
        let out = garbler.garble_placed(&plan, w.index, secret, sink)?;
        store.keep(w.outputs, out);
    }
    store.outputs(file)
}

/// Evaluates a circuit file garbled by [`garble_streamed`] with the same `compile`, one batch
/// at a time as its tables arrive ([`StreamedEvaluator::next_tables`],
/// [`StreamedEvaluator::feed`]), each window compiled when the last one is done.
pub struct StreamedEvaluator<S: Scheme, C> {
    file: Streamed,
    compile: C,
    evaluator: Evaluator<S>,
    store: Store<Block>,
    /// The window being evaluated, and the positions of its outputs.
    current: Option<(Plan, Cursor)>,
    keeps: Vec<u32>,
    done: bool,
}

impl<S: Scheme, C: FnMut(&Circuit) -> Plan> StreamedEvaluator<S, C> {
    /// Starts evaluating `file` with `evaluator` on the active labels `inputs` of its input
    /// wires.
    pub fn new(
        file: Streamed,
        compile: C,
        evaluator: Evaluator<S>,
        inputs: &[Block],
    ) -> Result<Self, Error> {
        Ok(StreamedEvaluator {
            store: Store::new(&file, inputs)?,
            file,
            compile,
            evaluator,
            current: None,
            keeps: Vec::new(),
            done: false,
        })
    }

    /// Runs free gates (and opens windows) up to the next batch and returns how many table
    /// blocks it needs, or `None` when the whole file is evaluated.
    pub fn next_tables(&mut self) -> Result<Option<usize>, Error> {
        loop {
            if let Some((plan, cursor)) = &mut self.current {
                if let Some(n) = self.evaluator.next_tables_at(plan, cursor) {
                    return Ok(Some(n));
                }
                self.store
                    .keep(&self.keeps, self.evaluator.outputs_of(plan));
                self.current = None;
            }
            if self.done {
                return Ok(None);
            }
            let Some(w) = self.file.next_window()? else {
                self.done = true;
                return Ok(None);
            };
            let plan = (self.compile)(w.circuit);
            self.store.place(&w, self.evaluator.inputs(&plan))?;
            self.keeps.clear();
            self.keeps.extend_from_slice(w.outputs);
            let cursor = self.evaluator.start_cursor(&plan, w.index)?;
            self.current = Some((plan, cursor));
        }
    }

    /// Evaluates the waiting batch with its tables (as many blocks as
    /// [`StreamedEvaluator::next_tables`] said).
    pub fn feed(&mut self, table: &[Block]) -> Result<(), Error> {
        let Some((plan, cursor)) = &mut self.current else {
            return Err(Error::Inputs("tables fed with no batch waiting".into()));
        };
        self.evaluator.feed_at(plan, cursor, table)
    }

    /// The active labels of the circuit's output wires, once every window is evaluated.
    pub fn outputs(&self) -> Result<Vec<Block>, Error> {
        if !self.done {
            return Err(Error::Inputs(
                "the outputs come after the last window".into(),
            ));
        }
        self.store.outputs(&self.file)
    }
}

/// Evaluates the circuit file `file` garbled by [`garble_streamed`] with the same `compile`,
/// on the active labels `inputs` of its input wires, reading the tables from `source` (which
/// must then be exhausted). Returns the active labels of its output wires.
pub fn evaluate_streamed<S: Scheme>(
    file: Streamed,
    compile: impl FnMut(&Circuit) -> Plan,
    evaluator: Evaluator<S>,
    inputs: &[Block],
    source: &mut impl TableSource,
) -> Result<Vec<Block>, Error> {
    let mut e = StreamedEvaluator::new(file, compile, evaluator, inputs)?;
    while let Some(n) = e.next_tables()? {
        e.feed(source.take(n)?)?;
    }
    source.finish()?;
    e.outputs()
}
