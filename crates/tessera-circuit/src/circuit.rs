//! The circuit representation: plain data, a flat list of gates in topological order.

use crate::Error;

/// A wire index.
pub type Wire = u32;

/// Why a circuit's declared shape (wires, input and output widths, gate count) is refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ShapeError {
    /// More wires than the inputs and gates can define (each wire is one or the other).
    Wires {
        /// Declared wires.
        wires: u64,
        /// Input wires plus gates.
        defined: u64,
    },
    /// More input wires than the gates can read (two each).
    Inputs {
        /// Declared input wires.
        inputs: u64,
        /// Gates.
        gates: u64,
    },
    /// Input and output wires overlap (outputs must be written by gates).
    Overlap {
        /// Input wires.
        inputs: u64,
        /// Output wires.
        outputs: u64,
        /// Declared wires.
        wires: u64,
    },
}

impl ShapeError {
    /// The reason, for an error message.
    pub fn message(self) -> String {
        match self {
            ShapeError::Wires { wires, defined } => {
                format!("declares {wires} wires, but inputs and gates define at most {defined}")
            }
            ShapeError::Inputs { inputs, gates } => format!(
                "declares {inputs} input wires, but its {gates} gates can read at most {} of them",
                2 * gates
            ),
            ShapeError::Overlap {
                inputs,
                outputs,
                wires,
            } => format!(
                "{inputs} input and {outputs} output wires overlap in {wires} wires \
                 (outputs must be written by gates)"
            ),
        }
    }
}

/// The shape rules that bound everything a circuit's analyses allocate by its gate count,
/// which a file can only declare by listing the gates: every wire is an input or a gate's
/// output (wires ≤ inputs + gates), every input wire could be read (inputs ≤ 2 · gates), and
/// outputs are gates' outputs, apart from the inputs (inputs + outputs ≤ wires). Hence
/// wires ≤ 3 · gates. Checked before anything is allocated for the wires.
pub fn check_shape(
    wires: u32,
    inputs: &[u32],
    outputs: &[u32],
    gates: u64,
) -> Result<(), ShapeError> {
    let total = |v: &[u32]| v.iter().map(|&w| u64::from(w)).sum::<u64>();
    let (wires, ins, outs) = (u64::from(wires), total(inputs), total(outputs));
    if wires > ins + gates {
        return Err(ShapeError::Wires {
            wires,
            defined: ins + gates,
        });
    }
    if ins > 2 * gates {
        return Err(ShapeError::Inputs { inputs: ins, gates });
    }
    if ins + outs > wires {
        return Err(ShapeError::Overlap {
            inputs: ins,
            outputs: outs,
            wires,
        });
    }
    Ok(())
}

/// What a gate computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GateKind {
    /// out = a ⊕ b (free with free-XOR).
    Xor,
    /// out = a ∧ b (the gate garbling pays for).
    And,
    /// out = ¬a.
    Inv,
    /// out = a (Bristol Fashion `EQW`).
    Eqw,
    /// out = a constant: the constant is `a` (0 or 1) (Bristol Fashion `EQ`).
    Eq,
}

/// One gate. `b` is unused (0) for one-input gates; for [`GateKind::Eq`], `a` is the constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Gate {
    /// The operation.
    pub kind: GateKind,
    /// First input wire (or constant for `Eq`).
    pub a: Wire,
    /// Second input wire (binary gates only).
    pub b: Wire,
    /// The wire written.
    pub out: Wire,
}

impl Gate {
    /// The input wires this gate reads.
    pub fn inputs(&self) -> &'static [usize] {
        match self.kind {
            GateKind::Xor | GateKind::And => &[0, 1],
            GateKind::Inv | GateKind::Eqw => &[0],
            GateKind::Eq => &[],
        }
    }

    /// Input wire `k` of [`Gate::inputs`].
    pub fn input(&self, k: usize) -> Wire {
        if k == 0 { self.a } else { self.b }
    }
}

/// What is wrong with one gate of a circuit: the reasons of [`Circuit::validate`], which the
/// streamed Bristol reader gives too.
pub(crate) enum GateFault {
    /// It reads a wire beyond the circuit's.
    ReadsBeyond { wire: Wire, wires: u32 },
    /// It reads a wire no input or earlier gate wrote.
    ReadsUnwritten(Wire),
    /// An EQ gate's constant is not 0 or 1.
    EqConstant(u32),
    /// It writes a wire beyond the circuit's.
    WritesBeyond { wire: Wire, wires: u32 },
    /// It writes an input or a wire already written.
    WritesAgain(Wire),
}

impl GateFault {
    /// The reason, for an error message.
    pub(crate) fn message(&self) -> String {
        match *self {
            GateFault::ReadsBeyond { wire, wires } => {
                format!("reads wire {wire}, but the circuit has {wires} wires")
            }
            GateFault::ReadsUnwritten(w) => format!("reads wire {w} before any gate writes it"),
            GateFault::EqConstant(c) => format!("EQ constant must be 0 or 1, got {c}"),
            GateFault::WritesBeyond { wire, wires } => {
                format!("writes wire {wire}, but the circuit has {wires} wires")
            }
            GateFault::WritesAgain(w) => {
                format!("writes wire {w}, which is already an input or written")
            }
        }
    }
}

/// A Boolean circuit in Bristol Fashion's layout: input values occupy wires `0..` in order, the
/// output values are the last wires, and gates are listed so that every wire is written before
/// it is read and written once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Circuit {
    /// Total number of wires.
    pub num_wires: u32,
    /// Width in bits of each input value (value 0 is the garbler's in 2PC, value 1 the
    /// evaluator's).
    pub inputs: Vec<u32>,
    /// Width in bits of each output value.
    pub outputs: Vec<u32>,
    /// The gates in evaluation order.
    pub gates: Vec<Gate>,
}

/// Gates serialised at a time by [`Circuit::digest`].
const GATES_HASHED: usize = 1 << 16;

impl Circuit {
    /// SHA-256 of everything that defines the circuit: its wires, input and output widths and
    /// gates (kind and wires each). Two parties that are to run one circuit compare it.
    pub fn digest(&self) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"tessera/circuit");
        h.update(self.num_wires.to_le_bytes());
        for list in [&self.inputs, &self.outputs] {
            h.update((list.len() as u64).to_le_bytes());
            for w in list {
                h.update(w.to_le_bytes());
            }
        }
        let mut gates = Vec::with_capacity(13 * GATES_HASHED);
        for chunk in self.gates.chunks(GATES_HASHED) {
            gates.clear();
            for g in chunk {
                gates.push(match g.kind {
                    GateKind::Xor => 0u8,
                    GateKind::And => 1,
                    GateKind::Inv => 2,
                    GateKind::Eqw => 3,
                    GateKind::Eq => 4,
                });
                for w in [g.a, g.b, g.out] {
                    gates.extend_from_slice(&w.to_le_bytes());
                }
            }
            h.update(&gates);
        }
        h.finalize().into()
    }

    /// Number of input wires.
    pub fn num_input_wires(&self) -> u32 {
        self.inputs.iter().sum()
    }

    /// Number of output wires.
    pub fn num_output_wires(&self) -> u32 {
        self.outputs.iter().sum()
    }

    /// The first wire of input value `v`.
    pub fn input_start(&self, v: usize) -> u32 {
        self.inputs[..v].iter().sum()
    }

    /// The first output wire (outputs are the last wires, value after value).
    pub fn output_start(&self) -> u32 {
        self.num_wires - self.num_output_wires()
    }

    /// Checks the invariants: the shape rules of [`check_shape`], wires in range, each written
    /// once, read only after being written, every output written by a gate, constants 0 or 1.
    /// Returns the index of the first offending gate with the reason. Nothing is allocated
    /// before the shape is known to be bounded by the gate count.
    pub fn validate(&self) -> Result<(), (Option<usize>, String)> {
        check_shape(
            self.num_wires,
            &self.inputs,
            &self.outputs,
            self.gates.len() as u64,
        )
        .map_err(|e| (None, e.message()))?;
        let n = self.num_wires as usize;
        let total = |v: &[u32]| v.iter().map(|&w| w as usize).sum::<usize>();
        let (num_in, num_out) = (total(&self.inputs), total(&self.outputs));
        let mut written = vec![false; n];
        written[..num_in].fill(true);
        let wires = self.num_wires;
        for (i, g) in self.gates.iter().enumerate() {
            let fault = |f: GateFault| Err((Some(i), f.message()));
            for &k in g.inputs() {
                let wire = g.input(k);
                if wire >= wires {
                    return fault(GateFault::ReadsBeyond { wire, wires });
                }
                if !written[wire as usize] {
                    return fault(GateFault::ReadsUnwritten(wire));
                }
            }
            if g.kind == GateKind::Eq && g.a > 1 {
                return fault(GateFault::EqConstant(g.a));
            }
            let wire = g.out;
            if wire >= wires {
                return fault(GateFault::WritesBeyond { wire, wires });
            }
            if written[wire as usize] {
                return fault(GateFault::WritesAgain(wire));
            }
            written[wire as usize] = true;
        }
        if let Some(w) = (n - num_out..n).find(|&w| !written[w]) {
            return Err((None, format!("output wire {w} is never written")));
        }
        Ok(())
    }

    /// [`Circuit::validate`] as an [`Error::Invalid`].
    pub fn check(&self) -> Result<(), Error> {
        self.validate().map_err(|(gate, msg)| match gate {
            Some(i) => Error::Invalid(format!("gate {i}: {msg}")),
            None => Error::Invalid(msg),
        })
    }
}
