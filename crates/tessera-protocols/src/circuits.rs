//! One party of a two-input Boolean circuit between two parties, in Yao (garbled in the setup
//! by party 0, as a hybrid program of the circuit), GMW's B or ABY2.0's β: party `me` holds
//! input value `me`. The one driver behind `tessera mpc run` and the Python package's
//! `Circuit.run` and `Circuit.simulate`, so that they interoperate.

use crate::boolean::{BoolCircuit, BoolSharing, Reveal};
use crate::hybrid::{Plain, Program, Sharing};
use crate::{Error, Session};
use tessera_circuit::Circuit;

/// The protocol of a two-party circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CircuitProtocol {
    /// Yao's garbled circuits, garbled by party 0 in the setup.
    Y,
    /// Boolean GMW.
    B,
    /// ABY2.0's Boolean sharing.
    Beta,
}

impl CircuitProtocol {
    /// Every protocol, by the names of the command line ("y", "b", "beta").
    pub const ALL: [CircuitProtocol; 3] = [
        CircuitProtocol::Y,
        CircuitProtocol::B,
        CircuitProtocol::Beta,
    ];

    /// The name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            CircuitProtocol::Y => "y",
            CircuitProtocol::B => "b",
            CircuitProtocol::Beta => "beta",
        }
    }
}

/// Party `me` (0 or 1) of `circuit` with `peer` on its input value's `bits`: the setup and the
/// online phase (each a phase of the session), aborting through [`Session::run`]. Returns the
/// output values if this party learns them.
pub fn run(
    s: &mut Session,
    (me, peer): (usize, usize),
    circuit: &Circuit,
    protocol: CircuitProtocol,
    bits: Vec<bool>,
    reveal: Reveal,
) -> Result<Option<Vec<Vec<bool>>>, Error> {
    if circuit.inputs.len() != 2 || me > 1 {
        return Err(Error::Input(format!(
            "a two-party circuit needs two input values and a party 0 or 1; this one has {} values",
            circuit.inputs.len()
        )));
    }
    s.run(|s| match protocol {
        CircuitProtocol::Y => {
            let (p, inputs) = Program::of_circuit(circuit, Sharing::Y, 1, reveal)?;
            let prepared = s.phase("setup", |s| p.setup(s, peer))?;
            let mine = [(inputs[me], Plain::Bits(vec![bits]))];
            let out = s.phase("online", |s| p.online(s, peer, prepared, &mine))?;
            Ok(out
                .into_iter()
                .map(|v| match v {
                    Some(Plain::Bits(mut copies)) => copies.pop(),
                    _ => None,
                })
                .collect())
        }
        CircuitProtocol::B | CircuitProtocol::Beta => {
            let sharing = if protocol == CircuitProtocol::B {
                BoolSharing::Gmw
            } else {
                BoolSharing::Aby2
            };
            let bc = BoolCircuit::new(circuit.clone(), sharing, 1)?;
            let prepared = s.phase("setup", |s| bc.setup(s, peer, reveal))?;
            let inputs = [vec![bits]];
            let out = s.phase("online", |s| bc.online(s, peer, prepared, &inputs, reveal))?;
            Ok(out.and_then(|mut copies| copies.pop()))
        }
    })
}
