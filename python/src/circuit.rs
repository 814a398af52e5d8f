//! `tessera.Circuit`: a Boolean circuit from the library or a Bristol file, its plaintext
//! evaluation, and two-party runs with both parties in this process: Yao (party 0 garbles and
//! holds the first input, party 1 evaluates and holds the second), or GMW's B and ABY2.0's β
//! (party v mod 2 holds input v). Inputs and outputs are bytes in the command line's hex order
//! (`tessera_circuit::eval::bits_from_hex`), or hex strings.

use crate::errors::{self, invalid};
use crate::interrupt::{Stoppers, interruptible};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use tessera_circuit::eval::{bits_from_hex, bits_to_hex, evaluate};
use tessera_circuit::{Circuit as Inner, GateKind};
use tessera_garble::SchemeKind;
use tessera_protocols::boolean::{BoolCircuit, BoolSharing, Reveal};
use tessera_protocols::yao::{OutputTo, Yao, YaoRole};
use tessera_protocols::{Error, Session, SessionConfig};

/// A Boolean circuit.
#[pyclass(module = "tessera._tessera", frozen)]
pub struct Circuit {
    circuit: Inner,
    name: String,
}

/// The input values' bits from bytes or hex strings, each checked against its width.
fn input_bits(c: &Inner, inputs: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<bool>>> {
    let items: Vec<Bound<'_, PyAny>> = inputs
        .try_iter()
        .map_err(|_| invalid("inputs: a list of bytes or hex strings, one per input value"))?
        .collect::<PyResult<_>>()?;
    if items.len() != c.inputs.len() {
        return Err(invalid(format!(
            "{} inputs for a circuit of {} input values",
            items.len(),
            c.inputs.len()
        )));
    }
    items
        .iter()
        .zip(&c.inputs)
        .enumerate()
        .map(|(k, (item, &width))| {
            let hex = if let Ok(b) = item.cast::<PyBytes>() {
                b.as_bytes().iter().map(|x| format!("{x:02x}")).collect()
            } else if let Ok(s) = item.extract::<String>() {
                s
            } else {
                return Err(invalid(format!("input {k}: bytes or a hex string")));
            };
            bits_from_hex(&hex, width).map_err(|e| invalid(format!("input {k}: {e}")))
        })
        .collect()
}

/// An output value as bytes when its width is whole bytes, else as hex.
fn output_value(py: Python<'_>, bits: &[bool]) -> PyResult<Py<PyAny>> {
    let hex = bits_to_hex(bits);
    if bits.len().is_multiple_of(8) {
        let bytes: Vec<u8> = (0..hex.len() / 2)
            .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or(0))
            .collect();
        Ok(PyBytes::new(py, &bytes).into_any().unbind())
    } else {
        Ok(PyString::new(py, &hex).into_any().unbind())
    }
}

/// One party of a Yao run: `input` its value's bits; the outputs (both learn them).
fn yao_party(
    net: tessera_net::Network,
    c: Inner,
    input: Vec<bool>,
) -> Result<Vec<Vec<bool>>, Error> {
    let me = net.id();
    let mut s = Session::new(net, SessionConfig::default())?;
    let role = if me == 0 {
        YaoRole::Garbler
    } else {
        YaoRole::Evaluator
    };
    let mut yao = Yao::setup(&mut s, 1 - me, role, c, SchemeKind::Prp, OutputTo::Both)?;
    let outcome = yao.run(&mut s, &input)?;
    outcome
        .output
        .ok_or_else(|| Error::Input("no output was learned".to_owned()))
}

/// One party of a B or β run: `inputs` its values (v mod 2 = its id) in order.
fn shared_party(
    net: tessera_net::Network,
    c: Inner,
    sharing: BoolSharing,
    inputs: Vec<Vec<bool>>,
) -> Result<Vec<Vec<bool>>, Error> {
    let peer = 1 - net.id();
    let bc = BoolCircuit::new(c, sharing, 1)?;
    let mut s = Session::new(net, SessionConfig::default())?;
    let prepared = bc.setup(&mut s, peer, Reveal::Both)?;
    let out = bc.online(&mut s, peer, prepared, &[inputs], Reveal::Both)?;
    out.and_then(|copies| copies.into_iter().next())
        .ok_or_else(|| Error::Input("no output was learned".to_owned()))
}

/// Both parties on their own threads over `networks`; party 0's outputs.
fn both(
    (zero, one): (tessera_net::Network, tessera_net::Network),
    run: impl Fn(tessera_net::Network) -> Result<Vec<Vec<bool>>, Error> + Sync,
) -> Result<Vec<Vec<bool>>, Error> {
    std::thread::scope(|scope| {
        let run = &run;
        let other = scope.spawn(move || run(one));
        let mine = run(zero);
        let theirs = other
            .join()
            .map_err(|_| Error::Input("a party's thread stopped".to_owned()))?;
        let (mine, theirs) = (mine?, theirs?);
        if mine != theirs {
            return Err(Error::Input(
                "the parties learned different outputs".to_owned(),
            ));
        }
        Ok(mine)
    })
}

#[pymethods]
impl Circuit {
    /// A circuit of the library by name ("aes128", "sha256", ...) or a Bristol file by path.
    #[staticmethod]
    fn load(spec: &Bound<'_, PyAny>) -> PyResult<Circuit> {
        let text: String = spec
            .str()
            .and_then(|s| s.extract())
            .map_err(|_| invalid("load takes a circuit's name or a path"))?;
        if spec.is_instance_of::<PyString>()
            && let Some(found) = tessera_circuit::library::builtin(&text)
        {
            let circuit = found.map_err(|e| errors::raise(&e))?;
            return Ok(Circuit {
                circuit,
                name: text,
            });
        }
        let (circuit, _) = tessera_circuit::bristol::read_file(std::path::Path::new(&text))
            .map_err(|e| errors::raise(&e))?;
        Ok(Circuit {
            circuit,
            name: text,
        })
    }

    /// The circuit's name or path, its input and output widths, and its gates by kind.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = &self.circuit;
        let count = |k: GateKind| c.gates.iter().filter(|g| g.kind == k).count();
        let info = PyDict::new(py);
        info.set_item("name", &self.name)?;
        info.set_item("inputs", c.inputs.clone())?;
        info.set_item("outputs", c.outputs.clone())?;
        info.set_item("wires", c.num_wires)?;
        info.set_item("and", count(GateKind::And))?;
        info.set_item("xor", count(GateKind::Xor))?;
        info.set_item("inv", count(GateKind::Inv))?;
        info.set_item("gates", c.gates.len())?;
        Ok(info)
    }

    /// The outputs of `inputs` in plaintext.
    fn eval(&self, py: Python<'_>, inputs: &Bound<'_, PyAny>) -> PyResult<Vec<Py<PyAny>>> {
        let bits = input_bits(&self.circuit, inputs)?;
        let out = evaluate(&self.circuit, &bits).map_err(|e| errors::raise(&e))?;
        out.iter().map(|o| output_value(py, o)).collect()
    }

    /// The outputs of `inputs` computed by two parties in this process, each on its own
    /// thread: `protocol` "yao" (two input values: party 0 garbles and holds the first),
    /// "b" (GMW) or "beta" (ABY2.0), party v mod 2 holding input v; both learn the outputs.
    #[pyo3(signature = (inputs, protocol = "yao"))]
    fn simulate(
        &self,
        py: Python<'_>,
        inputs: &Bound<'_, PyAny>,
        protocol: &str,
    ) -> PyResult<Vec<Py<PyAny>>> {
        let bits = input_bits(&self.circuit, inputs)?;
        let c = &self.circuit;
        let networks = tessera_net::memory::pair().map_err(|e| errors::raise(&e))?;
        let stoppers = Stoppers::of(vec![networks.0.stopper(), networks.1.stopper()]);
        let out = match protocol {
            "yao" => {
                if bits.len() != 2 {
                    return Err(invalid(format!(
                        "yao runs circuits of two input values (the garbler's, the evaluator's); this one has {}",
                        bits.len()
                    )));
                }
                interruptible(py, &stoppers, || {
                    both(networks, |net| {
                        let mine = bits[net.id()].clone();
                        yao_party(net, c.clone(), mine)
                    })
                })?
            }
            "b" | "beta" => {
                let sharing = if protocol == "b" {
                    BoolSharing::Gmw
                } else {
                    BoolSharing::Aby2
                };
                interruptible(py, &stoppers, || {
                    both(networks, |net| {
                        let mine = bits.iter().skip(net.id()).step_by(2).cloned().collect();
                        shared_party(net, c.clone(), sharing, mine)
                    })
                })?
            }
            _ => {
                return Err(invalid(format!(
                    "protocol={protocol:?}: \"yao\", \"b\" or \"beta\""
                )));
            }
        };
        let out = out.map_err(|e| errors::raise(&e))?;
        out.iter().map(|o| output_value(py, o)).collect()
    }

    fn __repr__(&self) -> String {
        format!("Circuit({:?})", self.name)
    }
}
