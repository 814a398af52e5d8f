//! Circuit files too large to hold, garbled and evaluated window by window as
//! [`Streamed`] reads them (two passes: liveness, then windows of consecutive gates). Each
//! window is compiled on its own and run in its own tweak domain (its index), like the steps
//! of a [`crate::Chain`]; the labels of wires that live across windows wait in a store indexed
//! by the reader's positions, which grows with the live wires. Memory is the store, one
//! window's plan and slots and one batch's tables, whatever the file's size.

use crate::engine::DOMAINS;
use crate::{Error, Evaluator, Garbler, Plan, Scheme, TableSink, TableSource};
use tessera_circuit::Circuit;
use tessera_circuit::bristol::stream::Streamed;
use tessera_core::Block;

/// One party's engine as the windows run through it.
trait WindowEngine {
    type Label: Copy + Default;
    /// Runs `plan` in tweak domain `domain` on `inputs`; returns the output labels.
    fn window(
        &mut self,
        plan: &Plan,
        domain: u64,
        inputs: &[Self::Label],
    ) -> Result<&[Self::Label], Error>;
}

struct Garbling<'a, S: Scheme, K> {
    garbler: &'a mut Garbler<S>,
    secret: &'a S::Secret,
    sink: &'a mut K,
}

impl<S: Scheme, K: TableSink> WindowEngine for Garbling<'_, S, K> {
    type Label = S::Wire;
    fn window(
        &mut self,
        plan: &Plan,
        domain: u64,
        inputs: &[S::Wire],
    ) -> Result<&[S::Wire], Error> {
        self.garbler
            .garble_in(plan, domain, self.secret, inputs, self.sink)
    }
}

struct Evaluating<'a, S: Scheme, R> {
    evaluator: &'a mut Evaluator<S>,
    source: &'a mut R,
}

impl<S: Scheme, R: TableSource> WindowEngine for Evaluating<'_, S, R> {
    type Label = Block;
    fn window(&mut self, plan: &Plan, domain: u64, inputs: &[Block]) -> Result<&[Block], Error> {
        let slots = self.evaluator.inputs(plan);
        if slots.len() != inputs.len() {
            return Err(Error::Inputs(format!(
                "a window has {} input wires, got {} labels",
                slots.len(),
                inputs.len()
            )));
        }
        slots.copy_from_slice(inputs);
        self.evaluator.evaluate_part(plan, domain, self.source)
    }
}

/// Runs every window of `file` through `engine`, the circuit's input wires' labels `inputs`;
/// returns the labels of its output wires.
fn run<E: WindowEngine>(
    file: &mut Streamed,
    mut compile: impl FnMut(&Circuit) -> Plan,
    inputs: &[E::Label],
    engine: &mut E,
) -> Result<Vec<E::Label>, Error> {
    let width: u32 = file.inputs().iter().sum();
    if inputs.len() != width as usize {
        return Err(Error::Inputs(format!(
            "the circuit has {width} input wires, got {} labels",
            inputs.len()
        )));
    }
    let mut store = inputs.to_vec();
    let mut gathered = Vec::new();
    while let Some(w) = file.next_window()? {
        if w.index >= DOMAINS {
            return Err(Error::Inputs("more than 2^62 windows".into()));
        }
        let plan = compile(w.circuit);
        gathered.clear();
        gathered.extend(w.inputs.iter().map(|&p| store[p as usize]));
        let out = engine.window(&plan, w.index, &gathered)?;
        store.resize(w.positions, E::Label::default());
        for (&p, &l) in w.outputs.iter().zip(out) {
            store[p as usize] = l;
        }
    }
    let outputs = file.output_positions()?;
    Ok(outputs.iter().map(|&p| store[p as usize]).collect())
}

/// Garbles the circuit file `file` window by window, each compiled by `compile` (for a
/// scheme of `S`'s kind of XOR gates) and garbled in tweak domain = its index under one
/// `secret`, the tables written to `sink` batch by batch. `inputs` are the wires of the
/// circuit's input wires, in order; returns its output wires.
pub fn garble_streamed<S: Scheme>(
    file: &mut Streamed,
    compile: impl FnMut(&Circuit) -> Plan,
    garbler: &mut Garbler<S>,
    (secret, inputs): (&S::Secret, &[S::Wire]),
    sink: &mut impl TableSink,
) -> Result<Vec<S::Wire>, Error> {
    let mut engine = Garbling {
        garbler,
        secret,
        sink,
    };
    run(file, compile, inputs, &mut engine)
}

/// Evaluates the circuit file `file` garbled by [`garble_streamed`] with the same `compile`,
/// on the active labels `inputs` of its input wires, reading the tables from `source` (which
/// must then be exhausted). Returns the active labels of its output wires.
pub fn evaluate_streamed<S: Scheme>(
    file: &mut Streamed,
    compile: impl FnMut(&Circuit) -> Plan,
    evaluator: &mut Evaluator<S>,
    inputs: &[Block],
    source: &mut impl TableSource,
) -> Result<Vec<Block>, Error> {
    let mut engine = Evaluating { evaluator, source };
    let out = run(file, compile, inputs, &mut engine)?;
    engine.source.finish()?;
    Ok(out)
}
