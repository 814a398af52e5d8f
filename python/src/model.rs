//! `tessera.Model`: an ONNX model, its plaintext references (float and the fixed point the
//! secure protocols compute exactly), its cost estimates, the architecture without weights,
//! and private inference with both parties in this process (`simulate`).

use crate::errors::{self, invalid};
use crate::interrupt::{Stoppers, interruptible};
use crate::progress::{Raised, Watch};
use numpy::{PyArray1, PyArrayMethods, PyReadonlyArrayDyn};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use tessera_nn::data::Normalise;
use tessera_nn::eval::Plain;
use tessera_nn::fixed::{Arith, Fixed, Float};
use tessera_nn::infer::{Local, Report};
use tessera_nn::secure::{self, Options, Output, Protocol};

/// An ONNX model loaded for private inference.
#[pyclass(module = "tessera._tessera", frozen)]
pub struct Model {
    pub(crate) model: tessera_nn::model::Model,
    /// The file's bytes, for `strip` and the normalisation it names.
    bytes: Vec<u8>,
    /// Where it came from, for messages.
    name: String,
    /// The parties of the last `simulate`, kept for the next with the same options: their
    /// sessions' OT set-up is made once, as `tessera nn bench` makes it once for its samples.
    local: std::sync::Mutex<Option<Kept>>,
}

/// The two parties of a `simulate`, with the options they run and their networks' stoppers.
struct Kept {
    fixed: Fixed,
    options: Options,
    local: Local,
    stoppers: Stoppers,
}

/// The options every secure or fixed-point run takes.
pub(crate) struct Numbers {
    pub(crate) fixed: Fixed,
}

impl Numbers {
    pub(crate) fn new(bits: u32, frac: u32) -> PyResult<Self> {
        Fixed::new(bits, frac)
            .map(|fixed| Numbers { fixed })
            .ok_or_else(|| {
                invalid(format!(
                    "bits={bits}, frac={frac}: bits must be 32 or 64 and frac below bits/2"
                ))
            })
    }
}

pub(crate) fn protocol(name: &str) -> PyResult<Protocol> {
    Protocol::ALL
        .into_iter()
        .find(|p| p.name() == name)
        .ok_or_else(|| {
            let names: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
            invalid(format!("protocol={name:?}: one of {}", names.join(", ")))
        })
}

/// The setup's OT by name: "softspoken" (the default) or "ferret".
pub(crate) fn ot(name: &str) -> PyResult<tessera_ot::OtChoice> {
    match name {
        "softspoken" => Ok(tessera_nn::infer::default_ot()),
        "ferret" => Ok(tessera_nn::infer::ferret_ot()),
        _ => Err(invalid(format!(
            "ot={name:?}: \"softspoken\" or \"ferret\""
        ))),
    }
}

/// The options of a private inference, checked: `protocol`, `reveal` ("logits" or
/// "class"), inputs per inference, the setup's OT, this party's threads, the truncation
/// ("auto", "local" or "exact": `secure::Truncation`), the linear layers' method ("auto",
/// "he" or "ot": `secure::LinearChoice`) and the signs' ("auto", "millionaire" or "circuit":
/// `secure::NonlinearChoice`).
pub(crate) struct Chosen<'a> {
    pub(crate) protocol: &'a str,
    pub(crate) reveal: &'a str,
    pub(crate) batch: usize,
    pub(crate) ot: &'a str,
    pub(crate) threads: usize,
    pub(crate) truncation: &'a str,
    pub(crate) linear: &'a str,
    pub(crate) nonlinear: &'a str,
}

impl Chosen<'_> {
    pub(crate) fn options(&self) -> PyResult<Options> {
        if self.batch == 0 {
            return Err(invalid("batch=0: at least one input per inference"));
        }
        Ok(Options {
            output: output(self.reveal)?,
            batch: self.batch,
            ot: ot(self.ot)?,
            threads: self.threads,
            truncation: self
                .truncation
                .parse()
                .map_err(|e| invalid(format!("truncation={:?}: {e}", self.truncation)))?,
            linear: self
                .linear
                .parse()
                .map_err(|e| invalid(format!("linear={:?}: {e}", self.linear)))?,
            nonlinear: self
                .nonlinear
                .parse()
                .map_err(|e| invalid(format!("nonlinear={:?}: {e}", self.nonlinear)))?,
            ..Options::new(protocol(self.protocol)?)
        })
    }
}

pub(crate) fn output(reveal: &str) -> PyResult<Output> {
    match reveal {
        "logits" => Ok(Output::Logits),
        "class" => Ok(Output::Class),
        _ => Err(invalid(format!(
            "reveal={reveal:?}: \"logits\" or \"class\""
        ))),
    }
}

impl Model {
    fn new(model: tessera_nn::model::Model, bytes: Vec<u8>, name: String) -> Self {
        Model {
            model,
            bytes,
            name,
            local: std::sync::Mutex::new(None),
        }
    }

    /// The kept parties if they run `fixed` and `options`, else new ones.
    fn parties(&self, fixed: Fixed, options: Options) -> PyResult<Kept> {
        let kept = self
            .local
            .lock()
            .map_err(|_| invalid("an earlier run panicked"))?
            .take();
        match kept {
            Some(k) if k.fixed == fixed && k.options == options => Ok(k),
            _ => {
                let compiled = secure::compile(&self.model, fixed, options)
                    .map_err(|e| errors::raise_nn(&e))?;
                let networks = tessera_net::memory::pair().map_err(|e| errors::raise(&e))?;
                let stoppers = Stoppers::of(vec![networks.0.stopper(), networks.1.stopper()]);
                let local = Local::new(networks, compiled).map_err(|e| errors::raise(&e))?;
                Ok(Kept {
                    fixed,
                    options,
                    local,
                    stoppers,
                })
            }
        }
    }

    /// `x` as the model's inputs, one after another: float arrays as they are, uint8 images
    /// normalised by `normalise` (or the model's own, or MNIST's); for a model that starts
    /// with the client's embedding lookup, token ids (integers) looked up.
    pub(crate) fn inputs(
        &self,
        x: &Bound<'_, PyAny>,
        normalise: Option<&str>,
    ) -> PyResult<(Vec<f32>, usize)> {
        let (values, batch) = self.samples(x, normalise)?;
        if self.model.lookup.is_none() {
            return Ok((values, batch));
        }
        let per: usize = self.model.sample_shape().iter().product();
        let mut embedded = Vec::new();
        for ids in values.chunks(per.max(1)) {
            embedded.extend(self.model.embed(ids).map_err(|e| errors::raise_nn(&e))?);
        }
        Ok((embedded, batch))
    }

    /// `x` as what the client gives per sample ([`tessera_nn::model::Model::sample_shape`]),
    /// one after another, and how many.
    fn samples(
        &self,
        x: &Bound<'_, PyAny>,
        normalise: Option<&str>,
    ) -> PyResult<(Vec<f32>, usize)> {
        let ids = self.model.lookup.is_some();
        let (values, shape) = if let Some(a) = ids
            .then(|| x.extract::<PyReadonlyArrayDyn<'_, i64>>().ok())
            .flatten()
        {
            let ids = a.as_array().iter().map(|&v| v as f32).collect();
            (ids, a.as_array().shape().to_vec())
        } else if let Some(a) = ids
            .then(|| x.extract::<PyReadonlyArrayDyn<'_, i32>>().ok())
            .flatten()
        {
            let ids = a.as_array().iter().map(|&v| v as f32).collect();
            (ids, a.as_array().shape().to_vec())
        } else if let Ok(a) = x.extract::<PyReadonlyArrayDyn<'_, u8>>() {
            let normalise = match normalise {
                Some(n) => Normalise::parse(n).ok_or_else(|| {
                    invalid(format!(
                        "normalise={n:?}: mnist, half, unit or \"MEAN,STD\" with STD non-zero"
                    ))
                })?,
                None => Normalise::from_model(&self.bytes, &self.name)
                    .map_err(|e| errors::raise_nn(&e))?
                    .unwrap_or(Normalise::MNIST),
            };
            let pixels: Vec<u8> = a.as_array().iter().copied().collect();
            (normalise.apply(&pixels), a.as_array().shape().to_vec())
        } else if let Ok(a) = x.extract::<PyReadonlyArrayDyn<'_, f32>>() {
            (
                a.as_array().iter().copied().collect(),
                a.as_array().shape().to_vec(),
            )
        } else if let Ok(a) = x.extract::<PyReadonlyArrayDyn<'_, f64>>() {
            let values = a.as_array().iter().map(|&v| v as f32).collect();
            (values, a.as_array().shape().to_vec())
        } else {
            return Err(invalid(if ids {
                "x: a numpy array of token ids: int64 or int32 (or whole float32, float64)"
            } else {
                "x: a numpy array of float32, float64 or uint8 (an image or a batch of them)"
            }));
        };
        let sample = self.model.sample_shape();
        let Some(batch) = inputs_in(&shape, sample) else {
            return Err(invalid(format!(
                "x has shape {shape:?}; the model takes inputs of shape {sample:?} (axes of 1 \
                 aside, or flattened), one or a batch of them on a leading axis"
            )));
        };
        if let Some(at) = values.iter().position(|v| !v.is_finite()) {
            return Err(invalid(format!("x: value {at} is {}", values[at])));
        }
        Ok((values, batch))
    }

    /// `rows` of `width` values as a 1-D array for one input, else 2-D.
    pub(crate) fn shaped<'py>(
        py: Python<'py>,
        values: Vec<f32>,
        rows: usize,
    ) -> PyResult<Bound<'py, PyAny>> {
        if rows == 1 {
            return Ok(PyArray1::from_vec(py, values).into_any());
        }
        let width = values.len() / rows.max(1);
        let array = PyArray1::from_vec(py, values);
        Ok(array.reshape([rows, width])?.into_any())
    }
}

/// How many inputs an array of `shape` holds for a model whose input is `sample`: one if it
/// is the sample's shape (axes of 1 aside) or the sample flattened, N for N of those stacked
/// on a leading axis; `None` for any other shape (the same number of values in other axes
/// is refused: what it would compute is not what was meant).
fn inputs_in(shape: &[usize], sample: &[usize]) -> Option<usize> {
    let squeezed = |s: &[usize]| s.iter().copied().filter(|&d| d != 1).collect::<Vec<_>>();
    let per: usize = sample.iter().product();
    let one = |s: &[usize]| squeezed(s) == squeezed(sample) || s == [per];
    if one(shape) {
        return Some(1);
    }
    let (&n, rest) = shape.split_first()?;
    (n > 0 && one(rest)).then_some(n)
}

#[pymethods]
impl Model {
    /// Loads an ONNX model from a path, from its bytes, or from an `onnx.ModelProto`.
    #[staticmethod]
    fn from_onnx(source: &Bound<'_, PyAny>) -> PyResult<Model> {
        let (bytes, name) = if let Ok(b) = source.cast::<PyBytes>() {
            (b.as_bytes().to_vec(), "<bytes>".to_owned())
        } else if source.hasattr("SerializeToString")? {
            let b = source.call_method0("SerializeToString")?;
            let b = b
                .cast::<PyBytes>()
                .map_err(|_| invalid("the model's SerializeToString gave no bytes"))?;
            (b.as_bytes().to_vec(), "<onnx.ModelProto>".to_owned())
        } else {
            let path: std::path::PathBuf = source.extract().map_err(|_| {
                invalid("from_onnx takes a path, the model's bytes or an onnx.ModelProto")
            })?;
            let bytes = tessera_net::read_capped(&path, tessera_nn::import::MAX_FILE_BYTES)
                .map_err(|e| errors::raise(&e))?;
            (bytes, path.display().to_string())
        };
        let model =
            tessera_nn::import::from_bytes(&bytes, &name).map_err(|e| errors::raise_nn(&e))?;
        Ok(Model::new(model, bytes, name))
    }

    /// The layers (name and operator), the input's and output's sizes, and each protocol's
    /// estimated setup bytes, online bytes and online rounds at ℓ = `bits`, f = `frac`.
    #[pyo3(signature = (bits = 32, frac = 10))]
    fn info<'py>(&self, py: Python<'py>, bits: u32, frac: u32) -> PyResult<Bound<'py, PyDict>> {
        let fixed = Numbers::new(bits, frac)?.fixed;
        let info = PyDict::new(py);
        let layers = PyList::empty(py);
        for node in &self.model.nodes {
            let layer = PyDict::new(py);
            layer.set_item("name", &node.name)?;
            layer.set_item("op", node.op.kind())?;
            layers.append(layer)?;
        }
        info.set_item("layers", layers)?;
        info.set_item(
            "input_shape",
            self.model.shapes.first().cloned().unwrap_or_default(),
        )?;
        info.set_item("input_len", self.model.input_len())?;
        info.set_item("output_len", self.model.output_len())?;
        info.set_item("has_weights", self.model.has_weights)?;
        let estimates = PyDict::new(py);
        for p in Protocol::ALL {
            let e = PyDict::new(py);
            // A protocol the network does not fit: its reason instead of the figures.
            match secure::estimate(&self.model, fixed, Options::new(p)) {
                Ok(estimate) => {
                    let total = estimate.total();
                    e.set_item("setup_bytes", total.setup_bytes)?;
                    e.set_item("online_bytes", total.online_bytes)?;
                    e.set_item("online_rounds", total.online_rounds)?;
                    e.set_item("truncation", estimate.truncation.name())?;
                    e.set_item("nonlinear", estimate.nonlinear.name())?;
                    e.set_item("truncated", estimate.truncated)?;
                }
                Err(why) => e.set_item("error", why.to_string())?,
            }
            estimates.set_item(p.name(), e)?;
        }
        info.set_item("estimates", estimates)?;
        Ok(info)
    }

    /// The architecture without its weights: what a client holds.
    fn strip(&self) -> PyResult<Model> {
        let bytes =
            tessera_nn::strip::strip(&self.bytes, &self.name).map_err(|e| errors::raise_nn(&e))?;
        let name = format!("{} (stripped)", self.name);
        let model =
            tessera_nn::import::from_bytes(&bytes, &name).map_err(|e| errors::raise_nn(&e))?;
        Ok(Model::new(model, bytes, name))
    }

    /// The plaintext outputs of `x`: in fixed point (what the secure protocols compute
    /// exactly) or in float.
    #[pyo3(signature = (x, fixed = true, bits = 32, frac = 10, normalise = None))]
    fn plaintext<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        fixed: bool,
        bits: u32,
        frac: u32,
        normalise: Option<&str>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let number = Numbers::new(bits, frac)?.fixed;
        let (values, batch) = self.inputs(x, normalise)?;
        let per = self.model.input_len();
        let nn = |e: tessera_nn::Error| errors::raise_nn(&e);
        let mut out = Vec::new();
        for item in values.chunks(per) {
            if fixed {
                let logits = Plain::new(&self.model, number)
                    .map_err(nn)?
                    .run(item)
                    .map_err(nn)?;
                out.extend(logits.iter().map(|&v| number.decode(v)));
            } else {
                out.extend(
                    Plain::new(&self.model, Float)
                        .map_err(nn)?
                        .run(item)
                        .map_err(nn)?,
                );
            }
        }
        Model::shaped(py, out, batch)
    }

    /// Private inference of `x` with the server (the weights) and the client (`x`) in this
    /// process, each on its own thread; returns the client's output (the logits, or the
    /// class for `reveal="class"`) and a report of times, bytes and rounds. `progress`: the
    /// client's, to a callable `progress(phase, done, total)`, to a bar (`True`; `None`, the
    /// default: when standard error is a terminal) or nowhere (`False`). `ot`: the setup's
    /// OT ("softspoken" or "ferret"); `threads`: each party's (0: as many as the machine has);
    /// `truncation`: "auto", "local" or "exact" (`secure::Truncation`); `linear`: "auto", "he"
    /// or "ot" (`secure::LinearChoice`); `nonlinear`: "auto", "millionaire" or "circuit"
    /// (`secure::NonlinearChoice`).
    #[pyo3(signature = (x, protocol = "a+b", bits = 32, frac = 10, reveal = "logits", normalise = None, progress = None, ot = "softspoken", threads = 0, truncation = "auto", linear = "auto", nonlinear = "auto"))]
    #[allow(clippy::too_many_arguments)]
    fn simulate<'py>(
        &self,
        py: Python<'py>,
        x: &Bound<'py, PyAny>,
        protocol: &str,
        bits: u32,
        frac: u32,
        reveal: &str,
        normalise: Option<&str>,
        progress: Option<&Bound<'py, PyAny>>,
        ot: &str,
        threads: usize,
        truncation: &str,
        linear: &str,
        nonlinear: &str,
    ) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyDict>)> {
        let watch = Watch::of(progress)?;
        let fixed = Numbers::new(bits, frac)?.fixed;
        let (values, batch) = self.inputs(x, normalise)?;
        let chosen = Chosen {
            protocol,
            reveal,
            batch,
            ot,
            threads,
            truncation,
            linear,
            nonlinear,
        };
        let options = chosen.options()?;
        let mut kept = py.detach(|| self.parties(fixed, options))?;
        let stoppers = kept.stoppers.clone();
        let raised = Raised::default();
        let observer = watch.observer(kept.local.compiled(), &stoppers, &raised);
        kept.local.observe(observer);
        let run = interruptible(py, &stoppers, || kept.local.infer(&values))?;
        kept.local.observe(None);
        if let Some(e) = raised.take() {
            return Err(e);
        }
        let (revealed, server, client) = run.map_err(|e| errors::raise(&e))?;
        if let Ok(mut slot) = self.local.lock() {
            *slot = Some(kept);
        }
        let out = decoded(fixed, options.output, &revealed);
        Ok((
            Model::shaped(py, out, batch)?,
            report(py, &[&server, &client])?,
        ))
    }
}

/// What the client learned, as floats: the logits decoded, or the class.
pub(crate) fn decoded(fixed: Fixed, output: Output, revealed: &[u64]) -> Vec<f32> {
    match output {
        Output::Logits => revealed.iter().map(|&v| fixed.decode(v)).collect(),
        Output::Class => revealed.iter().map(|&v| v as f32).collect(),
    }
}

/// The report of one inference from the parties' reports (the client's last): the longest
/// setup, the client's online time and rounds, the bytes all of them sent, per layer too.
pub(crate) fn report<'py>(py: Python<'py>, parties: &[&Report]) -> PyResult<Bound<'py, PyDict>> {
    let Some(last) = parties.last() else {
        return Err(invalid("a report of no party"));
    };
    let sent = |f: &dyn Fn(&Report) -> u64| parties.iter().map(|r| f(r)).sum::<u64>();
    let r = PyDict::new(py);
    let setup_ms = parties.iter().fold(0.0f64, |m, p| m.max(p.setup_ms));
    r.set_item("setup_ms", setup_ms)?;
    r.set_item("online_ms", last.online_ms())?;
    r.set_item("setup_bytes", sent(&|p| p.setup.bytes_sent))?;
    r.set_item("online_bytes", sent(&|p| p.online().bytes_sent))?;
    r.set_item("online_rounds", last.online_rounds())?;
    let layers = PyList::empty(py);
    for (k, c) in last.layers.iter().enumerate() {
        let each = |f: &dyn Fn(&tessera_nn::infer::LayerReport) -> u64| {
            parties
                .iter()
                .filter_map(|p| p.layers.get(k))
                .map(f)
                .sum::<u64>()
        };
        let l = PyDict::new(py);
        l.set_item("name", &c.name)?;
        l.set_item("op", c.op)?;
        l.set_item("online_ms", c.ms)?;
        l.set_item("online_bytes", each(&|l| l.traffic.bytes_sent))?;
        l.set_item("online_rounds", c.rounds)?;
        l.set_item("setup_ms", c.setup_ms)?;
        l.set_item("setup_bytes", each(&|l| l.setup.bytes_sent))?;
        layers.append(l)?;
    }
    r.set_item("layers", layers)?;
    // VASA Table 7's rows: the online phase and the layers' own setup by operator class.
    let operators = PyList::empty(py);
    for (k, c) in last.classes.iter().enumerate() {
        let each = |f: &dyn Fn(&tessera_nn::infer::ClassReport) -> u64| {
            parties
                .iter()
                .filter_map(|p| p.classes.get(k))
                .map(f)
                .sum::<u64>()
        };
        let o = PyDict::new(py);
        o.set_item("class", c.class)?;
        o.set_item("online_ms", c.ms)?;
        o.set_item("online_bytes", each(&|k| k.traffic.bytes_sent))?;
        o.set_item("online_rounds", c.rounds)?;
        o.set_item("setup_ms", c.setup_ms)?;
        o.set_item("setup_bytes", each(&|k| k.setup.bytes_sent))?;
        o.set_item("shared_setup_ms", c.shared_ms)?;
        o.set_item("shared_setup_bytes", each(&|k| k.shared.bytes_sent))?;
        operators.append(o)?;
    }
    r.set_item("operators", operators)?;
    Ok(r)
}
