//! Circuits on Y values: party 0 garbles the copies side by side (half-gates with the
//! fixed-key hash, free XOR with its OT sender's Δ) on the inputs' zero-labels and sends the
//! tables; party 1 evaluates them on its labels.

use super::{Op, Operation, Program};
use crate::Error;
use crate::hybrid::online::{Run, y_evaluator};
use crate::hybrid::prepare::{Slot, Walk};
use crate::hybrid::{Type, Value};
use sha2::{Digest, Sha256};
use tessera_circuit::Circuit;
use tessera_core::{Backend, Block};
use tessera_garble::{Garbler, Plan, Prp, Scheme, TableReader, XorGates, table_blocks};

/// A circuit for Y values of `n` copies: the plan of its `n` copies side by side
/// ([`tessera_circuit::simd`]; the widened circuit itself is not kept) and its value widths.
#[derive(Clone, Debug)]
pub(in crate::hybrid) struct YCircuit {
    plan: Plan,
    inputs: Vec<u32>,
    outputs: Vec<u32>,
    n: usize,
}

/// Circuit `circuit` of the program's Y circuits on `inputs`, into `outputs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct Garbled {
    circuit: usize,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
}

impl Garbled {
    /// [`Program::circuit`] on Y values of type `t`.
    pub(super) fn add(
        p: &mut Program,
        c: &Circuit,
        inputs: &[Value],
        t: Type,
    ) -> Result<Vec<Value>, Error> {
        let widened = tessera_circuit::simd::simd(c, t.n)?;
        let plan = Plan::default_for(&widened, XorGates::Free);
        // The copies side by side follow from the circuit and their number.
        let mut h = Sha256::new();
        h.update(b"tessera/hybrid/y");
        h.update((t.n as u64).to_le_bytes());
        crate::yao::hash_circuit(&mut h, c);
        p.digests.push(h.finalize().into());
        p.garbled.push(YCircuit {
            plan,
            inputs: c.inputs.clone(),
            outputs: c.outputs.clone(),
            n: t.n,
        });
        let outputs = p.circuit_outputs(c, t);
        p.ops.push(Op::Garbled(Garbled {
            circuit: p.garbled.len() - 1,
            inputs: inputs.iter().map(|v| v.0).collect(),
            outputs: outputs.clone(),
        }));
        Ok(outputs.into_iter().map(Value).collect())
    }
}

impl Operation for Garbled {
    fn uses(&self) -> Vec<usize> {
        [&self.inputs[..], &self.outputs[..]].concat()
    }

    fn name(&self) -> &'static str {
        "garbled circuit"
    }

    /// The garbler garbles on its inputs' zero-labels (fixed in the setup) and its outputs'
    /// zero-labels are the result; the tables go to the evaluator in the setup.
    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        let y = &walk.p.garbled[self.circuit];
        if walk.side != 0 {
            return vec![Slot::TablesToCome(2 * table_blocks::<Prp>(&y.plan))];
        }
        let garbled = (|| -> Result<_, Error> {
            let scheme = Prp::with_backend(Backend::active(), Block::ZERO)?;
            let Some(offset) = Prp::with_offset(walk.delta, &mut walk.prg) else {
                return Err(Error::Input("half-gates takes any offset".into()));
            };
            let mut garbler = Garbler::new(scheme);
            y.gather_into(
                garbler.inputs(&y.plan),
                self.inputs.iter().map(|&v| &walk.masks[v][..]),
            );
            let mut tables: Vec<Block> = Vec::new();
            let out = garbler
                .garble_placed(&y.plan, 0, &offset.secret, &mut tables)?
                .to_vec();
            Ok((out, tables))
        })();
        let (out, tables) = match garbled {
            Ok(done) => done,
            Err(e) => {
                walk.fail(e);
                return Vec::new();
            }
        };
        for (o, v) in self.outputs.iter().zip(y.scatter(&out)) {
            walk.masks[*o] = v;
        }
        vec![Slot::Tables(bytemuck::cast_slice(&tables).to_vec())]
    }

    fn online(&self, run: &mut Run<'_, '_>, m: Vec<Vec<u64>>) -> Result<(), Error> {
        let y = &run.p.garbled[self.circuit];
        if run.first() {
            // The outputs' zero-labels, from the setup.
            for &o in &self.outputs {
                run.data[o] = run.masks[o].clone();
            }
            return Ok(());
        }
        let [tables] = &m[..] else {
            return Err(Error::Input(
                "a garbled circuit's tables are missing".into(),
            ));
        };
        let tables: &[Block] = bytemuck::cast_slice(tables);
        let evaluator = y_evaluator(&mut run.evaluator)?;
        y.gather_into(
            evaluator.inputs(&y.plan),
            self.inputs.iter().map(|&v| &run.data[v][..]),
        );
        let out = evaluator.evaluate_placed(&y.plan, 0, &mut TableReader::new(tables))?;
        for (o, v) in self.outputs.iter().zip(y.scatter(out)) {
            run.data[*o] = v;
        }
        Ok(())
    }
}

impl YCircuit {
    /// The widened circuit's input labels, one per input wire, into `labels` (its engine's
    /// input slots) from its input values' labels (two words per label, wire j copy k at
    /// block j·n + k): copy k of a value of w wires is widened wires start + k·w .. start +
    /// (k + 1)·w.
    fn gather_into<'a>(&self, labels: &mut [Block], values: impl Iterator<Item = &'a [u64]>) {
        let n = self.n;
        let mut at = labels.iter_mut();
        for (v, &w) in values.zip(&self.inputs) {
            let blocks: &[Block] = bytemuck::cast_slice(v);
            for k in 0..n {
                // The range first, so that the zip takes no label past the w-th.
                for (j, label) in (0..w as usize).zip(at.by_ref()) {
                    *label = blocks[j * n + k];
                }
            }
        }
    }

    /// The output values' labels from the widened circuit's output labels.
    fn scatter(&self, out: &[Block]) -> Vec<Vec<u64>> {
        let n = self.n;
        let mut at = 0;
        self.outputs
            .iter()
            .map(|&w| {
                let w = w as usize;
                let mut v = vec![0u64; 2 * w * n];
                for k in 0..n {
                    for j in 0..w {
                        let b = out[at + k * w + j];
                        v[2 * (j * n + k)] = b.low();
                        v[2 * (j * n + k) + 1] = b.high();
                    }
                }
                at += w * n;
                v
            })
            .collect()
    }
}
