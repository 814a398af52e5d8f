//! `tessera.Circuit`: a Boolean circuit from the library or a Bristol file, its plaintext
//! evaluation, and two-party runs (`tessera_protocols::circuits`: Yao garbled in the setup by
//! party 0, GMW's B or ABY2.0's β; party v holds input value v) with both parties in this
//! process or with a peer elsewhere, interoperable with `tessera mpc run`. Inputs and outputs are bytes in the command line's hex order
//! (`tessera_circuit::eval::bits_from_hex`), or hex strings.

use crate::errors::{self, invalid};
use crate::interrupt::{Stoppers, interruptible};
use crate::remote::{Link, Tls};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString};
use tessera_circuit::eval::{bits_from_hex, bits_of_value, bits_to_hex, bytes_from_bits, evaluate};
use tessera_circuit::{Circuit as Inner, GateKind};
use tessera_net::Network;
use tessera_protocols::boolean::Reveal;
use tessera_protocols::circuits::{self, CircuitProtocol};
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
        .map(|(k, (item, &width))| value_bits(item, width, &format!("input {k}")))
        .collect()
}

/// One value's bits from bytes, a hex string, or a numpy array of `width` bits (bool or
/// 0/1 integers, bit k of the value at index k); `what` names it.
fn value_bits(item: &Bound<'_, PyAny>, width: u32, what: &str) -> PyResult<Vec<bool>> {
    if let Ok(a) = item.extract::<numpy::PyReadonlyArray1<'_, bool>>() {
        return sized(a.as_array().to_vec(), width, what);
    }
    if let Ok(a) = item.extract::<numpy::PyReadonlyArray1<'_, u8>>() {
        let bits: Option<Vec<bool>> = a
            .as_array()
            .iter()
            .map(|&b| match b {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            })
            .collect();
        let bits = bits.ok_or_else(|| invalid(format!("{what}: bits must be 0 or 1")))?;
        return sized(bits, width, what);
    }
    let bits = if let Ok(b) = item.cast::<PyBytes>() {
        bits_of_value(b.as_bytes(), width)
    } else if let Ok(hex) = item.extract::<String>() {
        bits_from_hex(&hex, width)
    } else {
        return Err(invalid(format!("{what}: bytes or a hex string")));
    };
    bits.map_err(|e| invalid(format!("{what}: {e}")))
}

/// `bits` if there are `width` of them.
fn sized(bits: Vec<bool>, width: u32, what: &str) -> PyResult<Vec<bool>> {
    if bits.len() == width as usize {
        Ok(bits)
    } else {
        Err(invalid(format!(
            "{what}: {} bits for a value of {width}",
            bits.len()
        )))
    }
}

/// An output value as bytes when its width is whole bytes, else as hex.
fn output_value(py: Python<'_>, bits: &[bool]) -> PyResult<Py<PyAny>> {
    if bits.len().is_multiple_of(8) {
        Ok(PyBytes::new(py, &bytes_from_bits(bits)).into_any().unbind())
    } else {
        Ok(PyString::new(py, &bits_to_hex(bits)).into_any().unbind())
    }
}

/// The protocol called `name`.
fn protocol(name: &str) -> PyResult<CircuitProtocol> {
    match name {
        "yao" | "y" => Ok(CircuitProtocol::Y),
        "b" => Ok(CircuitProtocol::B),
        "beta" => Ok(CircuitProtocol::Beta),
        _ => Err(invalid(format!(
            "protocol={name:?}: \"yao\", \"b\" or \"beta\""
        ))),
    }
}

/// Who learns the outputs, by the command line's names.
fn reveal(name: &str) -> PyResult<Reveal> {
    match name {
        "both" => Ok(Reveal::Both),
        "listener" => Ok(Reveal::To(0)),
        "connector" => Ok(Reveal::To(1)),
        _ => Err(invalid(format!(
            "reveal={name:?}: \"both\", \"listener\" or \"connector\""
        ))),
    }
}

/// One party over `net` with its input value's `bits`.
fn one_party(
    net: Network,
    c: &Inner,
    protocol: CircuitProtocol,
    bits: Vec<bool>,
    reveal: Reveal,
) -> Result<Option<Vec<Vec<bool>>>, Error> {
    let me = net.id();
    let mut s = Session::new(net, SessionConfig::default())?;
    circuits::run(&mut s, (me, 1 - me), c, protocol, bits, reveal)
}

/// Both parties on their own threads over `networks`; the outputs both learned.
fn both(
    (zero, one): (Network, Network),
    c: &Inner,
    protocol: CircuitProtocol,
    mut bits: Vec<Vec<bool>>,
) -> Result<Vec<Vec<bool>>, Error> {
    let theirs = bits.pop().unwrap_or_default();
    let mine = bits.pop().unwrap_or_default();
    std::thread::scope(|scope| {
        let other = scope.spawn(move || one_party(one, c, protocol, theirs, Reveal::Both));
        let mine = one_party(zero, c, protocol, mine, Reveal::Both);
        let theirs = other
            .join()
            .map_err(|_| Error::Input("a party's thread stopped".to_owned()))?;
        match (mine?, theirs?) {
            (Some(a), Some(b)) if a == b => Ok(a),
            _ => Err(Error::Input(
                "the parties learned different outputs".to_owned(),
            )),
        }
    })
}

/// Where a party of a run across processes is: its id and every party's address.
struct Place {
    me: usize,
    addresses: Vec<String>,
}

/// What authenticated garbling runs among `n` parties: KRRW18's program between two, the
/// circuit among more (`tessera ag run`'s choice).
enum Authenticated<'c> {
    Two(Box<tessera_ag::twopc::Program>),
    Many(&'c Inner),
}

impl<'c> Authenticated<'c> {
    fn of(c: &'c Inner, n: usize) -> PyResult<Self> {
        if !(2..=16).contains(&n) {
            return Err(invalid(format!("parties={n}: from 2 to 16")));
        }
        if c.inputs.len() > n {
            return Err(invalid(format!(
                "{} input values for {n} parties",
                c.inputs.len()
            )));
        }
        Ok(if n == 2 {
            Authenticated::Two(Box::new(
                tessera_ag::twopc::Program::new(c).map_err(|e| errors::raise(&e))?,
            ))
        } else {
            Authenticated::Many(c)
        })
    }

    fn job(&self) -> tessera_ag::Job<'_> {
        match self {
            Authenticated::Two(p) => tessera_ag::Job::Two(p),
            Authenticated::Many(c) => tessera_ag::Job::Many(c),
        }
    }
}

/// Who learns the outputs of authenticated garbling, by the two-party runs' names ("all" too).
fn ag_outputs(name: &str) -> PyResult<tessera_ag::twopc::Outputs> {
    use tessera_ag::twopc::Outputs;
    match name {
        "both" | "all" => Ok(Outputs::All),
        "listener" => Ok(Outputs::Garbler),
        "connector" => Ok(Outputs::Evaluator),
        _ => Err(invalid(format!(
            "reveal={name:?}: \"both\" (or \"all\"), \"listener\" (party 0) or \"connector\" (party 1)"
        ))),
    }
}

/// Authenticated garbling among `n` parties in this process over memory (party v holds input
/// value v): the output values every party learned alike.
fn authenticated(
    py: Python<'_>,
    c: &Inner,
    n: usize,
    bits: Vec<Vec<bool>>,
) -> PyResult<Vec<Vec<bool>>> {
    let what = Authenticated::of(c, n)?;
    let job = what.job();
    let ot = tessera_ag::cot("softspoken").map_err(|e| errors::raise(&e))?;
    let networks = tessera_net::memory::mesh(n, tessera_net::NetConfig::default())
        .map_err(|e| errors::raise(&e))?;
    let stoppers = Stoppers::of(networks.iter().map(Network::stopper).collect());
    let all = tessera_ag::twopc::Outputs::All;
    let runs = interruptible(py, &stoppers, || {
        std::thread::scope(|scope| {
            let handles: Vec<_> = networks
                .into_iter()
                .map(|net| {
                    let mine = bits.get(net.id()).cloned().unwrap_or_default();
                    scope.spawn(move || -> Result<Option<Vec<bool>>, tessera_ag::Error> {
                        let mut s = Session::new(net, SessionConfig::with_ot(ot))?;
                        job.run(&mut s, &mine, all)
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().map_err(|_| invalid("a party's thread stopped")))
                .collect::<Vec<_>>()
        })
    })?;
    let mut outputs: Option<Vec<bool>> = None;
    for run in runs {
        let out = run?.map_err(|e| errors::raise(&e))?.unwrap_or_default();
        if outputs.as_ref().is_some_and(|o| *o != out) {
            return Err(errors::ProtocolError::new_err(
                "the parties learned different outputs",
            ));
        }
        outputs = Some(out);
    }
    Ok(tessera_circuit::eval::split_values(
        &c.outputs,
        &outputs.unwrap_or_default(),
    ))
}

impl Circuit {
    /// This party of an authenticated garbling run across processes (see `run`), `(reveal,
    /// cot)` as named there: the outputs as bits, if it learns them.
    fn authenticated_party(
        &self,
        py: Python<'_>,
        input: Option<&Bound<'_, PyAny>>,
        place: &Place,
        link: &Link,
        (reveal, cot): (&str, &str),
    ) -> PyResult<Option<Vec<Vec<bool>>>> {
        let c = &self.circuit;
        let n = place.addresses.len();
        if place.me >= n {
            return Err(invalid(format!("party={}: of {n} parties", place.me)));
        }
        let what = Authenticated::of(c, n)?;
        let outputs = ag_outputs(reveal)?;
        let ot = tessera_ag::cot(cot).map_err(|e| errors::raise(&e))?;
        let bits = match (c.inputs.get(place.me), input) {
            (Some(&w), Some(v)) => value_bits(v, w, "input")?,
            (Some(_), None) => return Err(invalid("input: this party's value")),
            (None, None) => Vec::new(),
            (None, Some(v)) if v.len().is_ok_and(|l| l == 0) => Vec::new(),
            (None, Some(_)) => {
                return Err(invalid(format!(
                    "party {} gives no input to a circuit of {} input values: input=None",
                    place.me,
                    c.inputs.len()
                )));
            }
        };
        let listener = match place.addresses.get(place.me).filter(|_| place.me + 1 < n) {
            Some(addr) => Some(tessera_net::tcp::listen(addr).map_err(|e| errors::raise(&e))?),
            None => None,
        };
        let stoppers = Stoppers::default();
        let job = what.job();
        let out = interruptible(py, &stoppers, || -> PyResult<Option<Vec<bool>>> {
            let net = link
                .open_mesh(listener.as_ref(), &place.addresses, &stoppers)
                .map_err(|e| errors::raise(&e))?;
            let mut s =
                Session::new(net, SessionConfig::with_ot(ot)).map_err(|e| errors::raise(&e))?;
            job.run(&mut s, &bits, outputs)
                .map_err(|e| errors::raise(&e))
        })??;
        Ok(out.map(|bits| tessera_circuit::eval::split_values(&c.outputs, &bits)))
    }
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

    /// The outputs of `inputs` computed by parties in this process, each on its own thread:
    /// `protocol` "yao" (party 0 garbles, in the setup), "b" (GMW) or "beta" (ABY2.0) between
    /// two parties, party v holding input value v; or "ag", authenticated garbling among
    /// `parties` (at least 2 and at least the circuit's input values; WRK17b, secure against
    /// all but one party being malicious), party v holding input value v and the rest none.
    /// Every party learns the outputs.
    #[pyo3(signature = (inputs, protocol = "yao", parties = None))]
    fn simulate(
        &self,
        py: Python<'_>,
        inputs: &Bound<'_, PyAny>,
        protocol: &str,
        parties: Option<usize>,
    ) -> PyResult<Vec<Py<PyAny>>> {
        if protocol == "ag" {
            let bits = input_bits(&self.circuit, inputs)?;
            let n = parties.unwrap_or(bits.len()).max(bits.len());
            let out = authenticated(py, &self.circuit, n, bits)?;
            return out.iter().map(|o| output_value(py, o)).collect();
        }
        if parties.is_some_and(|n| n != 2) {
            return Err(invalid(format!(
                "protocol={protocol:?} runs between two parties"
            )));
        }
        let protocol = self::protocol(protocol)?;
        let bits = input_bits(&self.circuit, inputs)?;
        if bits.len() != 2 {
            return Err(invalid(format!(
                "a two-party circuit needs two input values; this one has {}",
                bits.len()
            )));
        }
        let networks = tessera_net::memory::pair().map_err(|e| errors::raise(&e))?;
        let stoppers = Stoppers::of(vec![networks.0.stopper(), networks.1.stopper()]);
        let c = &self.circuit;
        let out = interruptible(py, &stoppers, || both(networks, c, protocol, bits))?
            .map_err(|e| errors::raise(&e))?;
        out.iter().map(|o| output_value(py, o)).collect()
    }

    /// One party of the circuit with peers in other processes or machines. Yao, B or β,
    /// interoperable with `tessera mpc run`: the listening party (`listen`) is party 0 and
    /// holds input value 0, the connecting one (`connect`) party 1 and value 1. Authenticated
    /// garbling (`protocol="ag"`), interoperable with `tessera ag run`: this is party `party`
    /// of every party at `parties` (addresses in party order; it listens on its own unless it
    /// is the last), KRRW18 between two, WRK17b among more, its correlated OT `cot`
    /// ("softspoken", "ferret" or "kos"). `input` is this party's value (`None` past the
    /// circuit's values). Returns the outputs, or `None` where this party does not learn them.
    #[pyo3(signature = (input, listen = None, connect = None, protocol = "yao", reveal = "both",
                        tls = None, timeout = 30.0, deadline = 3600.0, party = None,
                        parties = None, cot = "softspoken"))]
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        py: Python<'_>,
        input: Option<&Bound<'_, PyAny>>,
        listen: Option<&str>,
        connect: Option<&str>,
        protocol: &str,
        reveal: &str,
        tls: Option<PyRef<'_, Tls>>,
        timeout: f64,
        deadline: f64,
        party: Option<usize>,
        parties: Option<Vec<String>>,
        cot: &str,
    ) -> PyResult<Option<Vec<Py<PyAny>>>> {
        if protocol == "ag" {
            if listen.is_some() || connect.is_some() {
                return Err(invalid(
                    "protocol=\"ag\" takes party= and parties= (every party's address), not listen= or connect=",
                ));
            }
            let (Some(me), Some(addresses)) = (party, parties) else {
                return Err(invalid(
                    "protocol=\"ag\" needs party= (this party's id) and parties= (every party's address)",
                ));
            };
            let place = Place { me, addresses };
            let link = Link::new(
                tls.as_deref(),
                (me, place.addresses.len()),
                timeout,
                deadline,
            )?;
            let out = self.authenticated_party(py, input, &place, &link, (reveal, cot))?;
            return out
                .map(|values| values.iter().map(|o| output_value(py, o)).collect())
                .transpose();
        }
        if party.is_some() || parties.is_some() {
            return Err(invalid(format!(
                "party= and parties= are for protocol=\"ag\"; {protocol:?} takes listen= or connect="
            )));
        }
        let input = input.ok_or_else(|| invalid("input: this party's value"))?;
        let (protocol, reveal) = (self::protocol(protocol)?, self::reveal(reveal)?);
        let me = match (listen, connect) {
            (Some(_), None) => 0,
            (None, Some(_)) => 1,
            _ => {
                return Err(invalid(
                    "give one of listen= (party 0) and connect= (party 1)",
                ));
            }
        };
        if self.circuit.inputs.len() != 2 {
            return Err(invalid(format!(
                "a two-party circuit needs two input values; this one has {}",
                self.circuit.inputs.len()
            )));
        }
        let bits = value_bits(input, self.circuit.inputs[me], "input")?;
        let link = Link::new(tls.as_deref(), (me, 2), timeout, deadline)?;
        let listener = match listen {
            Some(addr) => Some(tessera_net::tcp::listen(addr).map_err(|e| errors::raise(&e))?),
            None => None,
        };
        let connect: Vec<String> = connect.iter().map(|a| a.to_string()).collect();
        let stoppers = Stoppers::default();
        let c = &self.circuit;
        let out = interruptible(py, &stoppers, || -> Result<_, PyErr> {
            let net = link
                .open(listener.as_ref(), &connect, &stoppers)
                .map_err(|e| errors::raise(&e))?;
            one_party(net, c, protocol, bits, reveal).map_err(|e| errors::raise(&e))
        })??;
        out.map(|values| values.iter().map(|o| output_value(py, o)).collect())
            .transpose()
    }

    fn __repr__(&self) -> String {
        format!("Circuit({:?})", self.name)
    }
}
