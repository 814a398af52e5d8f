//! Whole circuits on B (GMW, one round per AND layer) and β (ABY2.0's circuits, masks
//! propagated in the setup), on values of one sharing and as many copies; Y circuits are
//! [`super::garbled`]'s.

use super::garbled::Garbled;
use super::{OnlineCost, Op, Operation, Program, bad};
use crate::Error;
use crate::boolean::bits::words;
use crate::boolean::layers::Layers;
use crate::boolean::{BoolCircuit, BoolSharing};
use crate::hybrid::algebra::Field;
use crate::hybrid::online::Run;
use crate::hybrid::prepare::{Slot, Walk};
use crate::hybrid::{Kind, Sharing, Type, Value};
use tessera_circuit::Circuit;

/// Circuit `circuit` of the program's B or β circuits on `inputs`, into `outputs`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(in crate::hybrid) struct RunCircuit {
    circuit: usize,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
}

impl Program {
    /// A circuit of [`tessera_circuit`] on Boolean values of one sharing (Y, B or β) and as
    /// many copies, one per input value of its width; returns one value per output value. B
    /// and β: one round per AND layer, the setup as for whole circuits ([`crate::boolean`]);
    /// Y: garbled by party 0 in the setup, one message of tables there; evaluated online.
    pub fn circuit(&mut self, c: &Circuit, inputs: &[Value]) -> Result<Vec<Value>, Error> {
        let types: Vec<Type> = inputs
            .iter()
            .map(|&v| self.ty(v))
            .collect::<Result<_, _>>()?;
        let Some(&first) = types.first() else {
            return Err(bad("a circuit needs inputs".into()));
        };
        let widths: Vec<u32> = types.iter().map(|t| t.width() as u32).collect();
        if c.inputs != widths
            || types
                .iter()
                .any(|t| t.sharing != first.sharing || t.n != first.n)
        {
            return Err(bad(format!(
                "a circuit with inputs of {:?} bits given values {types:?}",
                c.inputs
            )));
        }
        let sharing = match first.sharing {
            Sharing::B => BoolSharing::Gmw,
            Sharing::Beta => BoolSharing::Aby2,
            Sharing::Y => return Garbled::add(self, c, inputs, first),
            s => return Err(bad(format!("circuits run in Y, B or β, not {}", s.name()))),
        };
        let circuit = BoolCircuit::new(c.clone(), sharing, first.n)?;
        self.digests
            .push(circuit.fingerprint(crate::hybrid::Reveal::Both));
        self.circuits.push(circuit);
        let outputs = self.circuit_outputs(c, first);
        self.ops.push(Op::Circuit(RunCircuit {
            circuit: self.circuits.len() - 1,
            inputs: inputs.iter().map(|v| v.0).collect(),
            outputs: outputs.clone(),
        }));
        Ok(outputs.into_iter().map(Value).collect())
    }

    /// A program of one circuit `c` of two input values (value i party i's) on `n` SIMD
    /// copies in `sharing` (Y, B or β), every output value revealed to `reveal`: a two-party
    /// computation of `c` (in Y: garbled by party 0 in the setup, its tables sent there).
    /// Returns the program and its two input values.
    pub fn of_circuit(
        c: &Circuit,
        sharing: Sharing,
        n: usize,
        reveal: crate::hybrid::Reveal,
    ) -> Result<(Program, [Value; 2]), Error> {
        let &[w0, w1] = &c.inputs[..] else {
            return Err(bad(format!(
                "a two-party circuit takes two input values, not {}",
                c.inputs.len()
            )));
        };
        let mut p = Program::new();
        let ty = |w| Type {
            sharing,
            kind: Kind::Bits(w),
            n,
        };
        let inputs = [p.input(0, ty(w0))?, p.input(1, ty(w1))?];
        for v in p.circuit(c, &inputs)? {
            p.output(v, reveal)?;
        }
        Ok((p, inputs))
    }

    /// New values for the outputs of circuit `c` run on values of type `t`.
    pub(super) fn circuit_outputs(&mut self, c: &Circuit, t: Type) -> Vec<usize> {
        c.outputs
            .iter()
            .map(|&w| {
                self.value(Type {
                    kind: Kind::Bits(w),
                    ..t
                })
            })
            .collect()
    }
}

impl Operation for RunCircuit {
    fn uses(&self) -> Vec<usize> {
        [&self.inputs[..], &self.outputs[..]].concat()
    }

    fn name(&self) -> &'static str {
        "circuit"
    }

    fn traffic(&self, p: &Program) -> OnlineCost {
        // Per AND layer, this party's openings, both at once.
        let c = &p.circuits[self.circuit];
        (1..=c.depth())
            .map(|l| OnlineCost::swap(8 * Layers::opening_words(c, l)))
            .fold(OnlineCost::default(), OnlineCost::then)
    }

    fn setup(&self, walk: &mut Walk<'_>) -> Vec<Slot> {
        if !walk.ty(self.outputs[0]).sharing.is_masked() {
            return vec![Slot::CircuitTriples(self.circuit)];
        }
        let c = &walk.p.circuits[self.circuit];
        let w = words(c.simd());
        let mut delta = vec![0u64; c.circuit().num_wires as usize * w];
        let mut at = 0;
        for &v in &self.inputs {
            let m = &walk.masks[v];
            delta[at..at + m.len()].copy_from_slice(m);
            at += m.len();
        }
        let [x, y, dz] = c.propagate_masks(&mut delta, &mut walk.prg);
        let mut at = c.circuit().output_start() as usize * w;
        for &v in &self.outputs {
            let len = walk.ty(v).field().words();
            walk.masks[v] = delta[at..at + len].to_vec();
            at += len;
        }
        let field = Field::Bits {
            width: 1,
            n: 64 * c.and_words(),
        };
        let (xk, yk) = (
            walk.algebra.known(field, x.clone()),
            walk.algebra.known(field, y.clone()),
        );
        let gamma = walk.gamma(field, x, y, dz);
        vec![Slot::Vector(xk), Slot::Vector(yk), Slot::Vector(gamma)]
    }

    fn online(&self, run: &mut Run<'_, '_>, m: Vec<Vec<u64>>) -> Result<(), Error> {
        let c = &run.p.circuits[self.circuit];
        let side = run.side;
        let w = words(c.simd());
        let mut v = vec![0u64; c.circuit().num_wires as usize * w];
        let mut at = 0;
        for &i in &self.inputs {
            let x = &run.data[i];
            v[at..at + x.len()].copy_from_slice(x);
            at += x.len();
        }
        let and: [Vec<u64>; 3] = m
            .try_into()
            .map_err(|_| Error::Input("a circuit's setup is missing".into()))?;
        let mut layers = Layers::new(c);
        let depth = c.depth();
        for d in 0..=depth {
            Layers::free(c, side, d, &mut v);
            if d == depth {
                break;
            }
            let mine = layers.open(c, side, d + 1, &v, &and);
            let bytes: Vec<u8> = mine.iter().flat_map(|x| x.to_le_bytes()).collect();
            run.link.send(&bytes)?;
            let got = run.link.recv(bytes.len())?;
            for (t, b) in layers.theirs(c, d + 1).iter_mut().zip(got.chunks_exact(8)) {
                *t = u64::from_le_bytes(b.try_into().unwrap_or_default());
            }
            layers.close(c, side, d + 1, &mut v, &and);
        }
        let mut at = c.circuit().output_start() as usize * w;
        for &o in &self.outputs {
            let len = run.ty(o).field().words();
            run.data[o] = v[at..at + len].to_vec();
            at += len;
        }
        Ok(())
    }
}
