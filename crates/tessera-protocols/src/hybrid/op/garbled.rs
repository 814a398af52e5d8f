//! Circuits on Y values: party 0 garbles the copies side by side (half-gates with the
//! fixed-key hash, free XOR with its OT sender's Δ) on the inputs' zero-labels and sends the
//! tables; party 1 evaluates them on its labels.

use super::{OnlineCost, Op, Operation, Program};
use crate::Error;
use crate::hybrid::online::Run;
use crate::hybrid::{Type, Value};
use tessera_circuit::Circuit;
use tessera_core::{Backend, Block};
use tessera_garble::{Evaluator, Garbler, Plan, Prp, Scheme, TableReader, XorGates, table_blocks};

/// A circuit for Y values of `n` copies: its `n` copies side by side
/// ([`tessera_circuit::simd`]) and their plan.
#[derive(Clone, Debug)]
pub(in crate::hybrid) struct YCircuit {
    pub(in crate::hybrid) widened: Circuit,
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
        p.garbled.push(YCircuit {
            widened,
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
    fn name(&self) -> &'static str {
        "garbled circuit"
    }

    fn traffic(&self, p: &Program) -> OnlineCost {
        OnlineCost::one_way(0, 16 * table_blocks::<Prp>(&p.garbled[self.circuit].plan))
    }

    fn online(&self, run: &mut Run<'_, '_>, _: Vec<Vec<u64>>) -> Result<(), Error> {
        let y = &run.p.garbled[self.circuit];
        let n = y.n;
        let scheme = Prp::with_backend(Backend::active(), Block::ZERO)?;
        // The copies side by side: wire j of copy k of value v is widened wire
        // start_v + k·w_v + j.
        let mut labels = Vec::with_capacity(y.widened.num_input_wires() as usize);
        for (&v, &w) in self.inputs.iter().zip(&y.inputs) {
            let blocks: &[Block] = bytemuck::cast_slice(&run.data[v]);
            for k in 0..n {
                labels.extend((0..w as usize).map(|j| blocks[j * n + k]));
            }
        }
        let out_labels = if run.first() {
            let Some(secret) = Prp::with_offset(run.delta, &mut run.prg).map(|o| o.secret) else {
                return Err(Error::Input("half-gates takes any offset".into()));
            };
            let mut tables: Vec<Block> = Vec::new();
            let out = Garbler::new(scheme)
                .garble(&y.plan, &secret, &labels, &mut tables)?
                .to_vec();
            run.link.send(bytemuck::cast_slice(&tables))?;
            out
        } else {
            let bytes = run.link.recv(16 * table_blocks::<Prp>(&y.plan))?;
            let tables: Vec<Block> = bytes
                .chunks_exact(16)
                .map(|b| Block::from_bytes(b.try_into().unwrap_or_default()))
                .collect();
            Evaluator::new(scheme)
                .evaluate(&y.plan, &labels, &mut TableReader::new(&tables))?
                .to_vec()
        };
        let mut at = 0;
        for (&o, &w) in self.outputs.iter().zip(&y.outputs) {
            let w = w as usize;
            let mut v = vec![0u64; 2 * w * n];
            for k in 0..n {
                for j in 0..w {
                    let b = out_labels[at + k * w + j];
                    v[2 * (j * n + k)] = b.low();
                    v[2 * (j * n + k) + 1] = b.high();
                }
            }
            at += w * n;
            run.data[o] = v;
        }
        Ok(())
    }
}
