//! Private inference between two processes or machines, interoperable with `tessera nn run`:
//! the server (the model's owner) listens, the client (the input's owner) connects and alone
//! learns the result; TCP, or TLS with each side pinning the other's certificate (`tessera
//! keygen`), with the command line's timeouts and deadline.

use crate::errors::{self, invalid};
use crate::interrupt::{Stoppers, interruptible};
use crate::model::{Chosen, Model, Numbers, decoded, report};
use crate::progress::{Raised, Watch};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::net::TcpListener;
use std::path::PathBuf;
use std::time::Duration;
use tessera_net::tcp;
use tessera_net::tls::TlsConfig;
use tessera_net::{NetConfig, Network, Stopper};
use tessera_nn::infer as inference;
use tessera_nn::secure::{self, Compiled};
use tessera_protocols::Session;

/// This party's TLS: the directory of its key.pem and cert.pem, and the peer's certificate
/// (or, among several parties, every party's in party order, this party's own ignored).
#[pyclass(module = "tessera._tessera", frozen)]
pub struct Tls {
    dir: PathBuf,
    peer_certs: Vec<PathBuf>,
}

#[pymethods]
impl Tls {
    #[new]
    fn new(dir: PathBuf, peer_cert: &Bound<'_, PyAny>) -> PyResult<Self> {
        let peer_certs = match peer_cert.extract::<PathBuf>() {
            Ok(one) => vec![one],
            Err(_) => peer_cert.extract::<Vec<PathBuf>>().map_err(|_| {
                invalid("peer_cert: a path, or a list of every party's certificate path")
            })?,
        };
        Ok(Tls { dir, peer_certs })
    }

    fn __repr__(&self) -> String {
        match &self.peer_certs[..] {
            [one] => format!("Tls({:?}, {one:?})", self.dir),
            all => format!("Tls({:?}, {all:?})", self.dir),
        }
    }
}

impl Tls {
    /// The configuration of party `me` of `parties`: one certificate is the peer's (two
    /// parties), a list has every party's.
    fn config(&self, me: usize, parties: usize) -> PyResult<TlsConfig> {
        let peers: Vec<(usize, &std::path::Path)> = match &self.peer_certs[..] {
            [one] if parties == 2 => vec![(1 - me, one.as_path())],
            all if all.len() == parties => (0..parties)
                .filter(|&j| j != me)
                .map(|j| (j, all[j].as_path()))
                .collect(),
            all => {
                return Err(invalid(format!(
                    "tls: {} peer certificates for {parties} parties (one for two parties, or \
                     every party's in party order)",
                    all.len()
                )));
            }
        };
        TlsConfig::load(&self.dir, &peers).map_err(|e| errors::raise(&e))
    }
}

/// The settings every party takes: the network's waits and this party's TLS.
pub(crate) struct Link {
    me: usize,
    config: NetConfig,
    tls: Option<TlsConfig>,
}

impl Link {
    /// Party `me`'s settings among `parties`.
    pub(crate) fn new(
        tls: Option<&Tls>,
        (me, parties): (usize, usize),
        timeout: f64,
        deadline: f64,
    ) -> PyResult<Self> {
        let usable =
            timeout > 0.0 && timeout.is_finite() && deadline >= 0.0 && deadline.is_finite();
        if !usable {
            return Err(invalid(format!(
                "timeout={timeout}, deadline={deadline}: a positive timeout and a deadline of 0 (none) or more"
            )));
        }
        let tls = tls.map(|t| t.config(me, parties)).transpose()?;
        let config = NetConfig {
            timeout: Duration::from_secs_f64(timeout),
            deadline: (deadline > 0.0).then(|| Duration::from_secs_f64(deadline)),
        };
        Ok(Link { me, config, tls })
    }

    /// The network of party 0 (accepting on `listener`) or 1 (dialling `connect`), which
    /// `stoppers` stop from the start (a server waiting for its client too).
    pub(crate) fn open(
        &self,
        listener: Option<&TcpListener>,
        connect: &[String],
        stoppers: &Stoppers,
    ) -> Result<Network, tessera_net::Error> {
        let stopper = Stopper::new();
        stoppers.add(stopper.clone());
        tcp::two_party(listener, connect, self.tls.as_ref(), self.config, &stopper)
    }

    /// This party's network of a mesh of every party at `addresses` (in party order): it
    /// listens on its own address (unless it is the last) and dials the lower ones, as
    /// `tessera ag run --parties` does.
    pub(crate) fn open_mesh(
        &self,
        listener: Option<&TcpListener>,
        addresses: &[String],
        stoppers: &Stoppers,
    ) -> Result<Network, tessera_net::Error> {
        let stopper = Stopper::new();
        stoppers.add(stopper.clone());
        let m = tcp::Mesh {
            me: self.me,
            parties: addresses.len(),
            listener,
            lower: &addresses[..self.me.min(addresses.len())],
            tls: self.tls.as_ref(),
            setup: self.config.timeout,
        };
        tcp::mesh_with(m, self.config, &stopper)
    }
}

/// A server listening for clients, one private inference each: its `address` is known as soon
/// as it is made (listen on port 0 to let the system pick one).
#[pyclass(module = "tessera._tessera", frozen)]
pub struct Server {
    listener: TcpListener,
    compiled: Compiled,
    link: Link,
}

#[pymethods]
impl Server {
    #[new]
    #[pyo3(signature = (model, listen, protocol = "a+b", bits = 32, frac = 10, reveal = "logits",
                        batch = 1, tls = None, timeout = 30.0, deadline = 3600.0,
                        ot = "softspoken", threads = 0, truncation = "auto", linear = "auto", nonlinear = "auto"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        model: &Model,
        listen: &str,
        protocol: &str,
        bits: u32,
        frac: u32,
        reveal: &str,
        batch: usize,
        tls: Option<PyRef<'_, Tls>>,
        timeout: f64,
        deadline: f64,
        ot: &str,
        threads: usize,
        truncation: &str,
        linear: &str,
        nonlinear: &str,
    ) -> PyResult<Server> {
        if !model.model.has_weights {
            return Err(invalid(
                "an architecture without weights: the server needs the model",
            ));
        }
        let fixed = Numbers::new(bits, frac)?.fixed;
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
        let compiled = secure::compile(&model.model, fixed, chosen.options()?)
            .map_err(|e| errors::raise_nn(&e))?;
        let link = Link::new(tls.as_deref(), (0, 2), timeout, deadline)?;
        let listener = tcp::listen(listen).map_err(|e| errors::raise(&e))?;
        Ok(Server {
            listener,
            compiled,
            link,
        })
    }

    /// The address it listens on.
    #[getter]
    fn address(&self) -> PyResult<String> {
        Ok(self.listener.local_addr()?.to_string())
    }

    /// Waits for one client and runs one private inference with it; the server's report.
    /// `progress` as `Model.simulate` takes it.
    #[pyo3(signature = (progress = None))]
    fn serve<'py>(
        &self,
        py: Python<'py>,
        progress: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let stoppers = Stoppers::default();
        let raised = Raised::default();
        let observer = Watch::of(progress)?.observer(&self.compiled, &stoppers, &raised);
        let r = interruptible(py, &stoppers, || -> PyResult<inference::Report> {
            let net = self
                .link
                .open(Some(&self.listener), &[], &stoppers)
                .map_err(|e| errors::raise(&e))?;
            let mut session =
                Session::new(net, self.compiled.session_config()).map_err(|e| errors::raise(&e))?;
            session.observe(observer);
            inference::server(&mut session, &self.compiled).map_err(|e| errors::raise(&e))
        })?;
        let r = raised.take().map_or(r, Err)?;
        report(py, &[&r])
    }
}

/// The client's side: connects to the server at `connect` and runs one private inference of
/// `x`; the result (logits or class) and the client's report. `progress` as `Model.simulate`
/// takes it.
#[pyfunction]
#[pyo3(signature = (model, x, connect, protocol = "a+b", bits = 32, frac = 10, reveal = "logits",
                    normalise = None, tls = None, timeout = 30.0, deadline = 3600.0,
                    progress = None, ot = "softspoken", threads = 0, truncation = "auto", linear = "auto", nonlinear = "auto"))]
#[allow(clippy::too_many_arguments)]
pub fn infer<'py>(
    py: Python<'py>,
    model: &Model,
    x: &Bound<'py, PyAny>,
    connect: &str,
    protocol: &str,
    bits: u32,
    frac: u32,
    reveal: &str,
    normalise: Option<&str>,
    tls: Option<PyRef<'_, Tls>>,
    timeout: f64,
    deadline: f64,
    progress: Option<&Bound<'py, PyAny>>,
    ot: &str,
    threads: usize,
    truncation: &str,
    linear: &str,
    nonlinear: &str,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyDict>)> {
    let fixed = Numbers::new(bits, frac)?.fixed;
    let (values, batch) = model.inputs(x, normalise)?;
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
    let link = Link::new(tls.as_deref(), (1, 2), timeout, deadline)?;
    let arch = &model.model;
    let connect = [connect.to_owned()];
    let stoppers = Stoppers::default();
    let (watch, raised) = (Watch::of(progress)?, Raised::default());
    let run = interruptible(
        py,
        &stoppers,
        || -> PyResult<(Vec<u64>, inference::Report)> {
            let compiled =
                secure::compile(arch, fixed, options).map_err(|e| errors::raise_nn(&e))?;
            let net = link
                .open(None, &connect, &stoppers)
                .map_err(|e| errors::raise(&e))?;
            let mut session =
                Session::new(net, compiled.session_config()).map_err(|e| errors::raise(&e))?;
            session.observe(watch.observer(&compiled, &stoppers, &raised));
            inference::client(&mut session, &compiled, &values).map_err(|e| errors::raise(&e))
        },
    )?;
    let (revealed, r) = raised.take().map_or(run, Err)?;
    let out = decoded(fixed, options.output, &revealed);
    Ok((Model::shaped(py, out, batch)?, report(py, &[&r])?))
}
