//! One private inference on a session: the server's side and the client's, each the setup and
//! online phase streamed (each segment of layers set up just before it runs:
//! [`tessera_protocols::hybrid::Program::run_streamed`]), with both phases' time, traffic and
//! rounds layer by layer. The thin driver over [`crate::secure`]'s compiled program.

use crate::fixed::{Arith, Fixed};
use crate::secure::{CLIENT, Compiled, SERVER};
use tessera_net::{Network, Stats};
use tessera_ot::{OtChoice, Protocol, Security};
use tessera_protocols::hybrid::{Plain, SetupStep, Step, Value};
use tessera_protocols::{Error, Session, SessionConfig};

/// The default OT of private inference: random correlated OT by semi-honest SoftSpoken with
/// its default k (3: 43 bits per OT instead of IKNP's 128, and as fast on this project's
/// machines), for the triples and the linear maps' products. Ferret sends a fifteenth of its
/// bytes per OT but makes Boolean triples 2.8 times slower here ([`crate::secure::Options::ot`]).
pub fn default_ot() -> OtChoice {
    Protocol::softspoken(Protocol::DEFAULT_K, Security::SemiHonest)
        .map_or(OtChoice::Extension(Protocol::IKNP), OtChoice::Extension)
}

/// Ferret as private inference's OT: semi-honest, EMP-OT's current `ferret_b12` parameters.
/// Private inference is bound by its bytes, and b12 sends 0.10 bytes per random correlated OT
/// where b10 (what `tessera bench ot` takes by default, the faster per OT) sends 0.36:
/// `tessera bench triples --kind bool --protocol ferret --lpn emp-b12|emp-b10 --count 20000000`
/// gave 0.272 and 0.743 bytes per Boolean triple, at 9.6 and 13.4 M triples/s (medians of 3
/// alternating runs, 2-core Zen 3).
pub fn ferret_ot() -> OtChoice {
    OtChoice::Ferret(tessera_ot::ferret::Params::EMP_B12, Security::SemiHonest)
}

/// The session private inference runs on with the [`default_ot`]. Both parties must use the
/// same OT: a compiled program's is [`Compiled::session_config`].
pub fn session_config() -> SessionConfig {
    SessionConfig::with_ot(default_ot())
}

/// A layer's part of the online phase, at one party.
#[derive(Clone, Debug)]
pub struct LayerReport {
    /// The node's name ("input" and "output" for the client's input and the logits' opening).
    pub name: String,
    /// Its operator.
    pub op: &'static str,
    /// Online milliseconds.
    pub ms: f64,
    /// This party's online traffic.
    pub traffic: Stats,
    /// Messages this party waited for online: rounds, where both parties send at once.
    pub rounds: usize,
    /// The setup's milliseconds for this layer's own material (a linear layer's map; the
    /// triples and masks of all layers are made together, in [`Report::shared_setup`]).
    pub setup_ms: f64,
    /// This party's traffic in that part of the setup.
    pub setup: Stats,
}

/// The operator classes of VASA's per-operator table (seed 000, Table 7), in its order, then
/// a transformer's (issue 60): products of two computed matrices, Softmax, GELU, LayerNorm and
/// the other smooth functions; "other" last.
pub const CLASSES: [&str; 12] = [
    "Conv",
    "Trunc",
    "ReLU",
    "MatMul",
    "BN",
    "MaxPool",
    "MatMul (secret)",
    "Softmax",
    "GELU",
    "LayerNorm",
    "Smooth",
    "other",
];

/// The program operations that are truncations, wherever a layer makes them.
const TRUNCATIONS: [&str; 2] = ["truncate", "top bits of the shares"];

/// One operator class's part of an inference at one party (VASA Table 7's rows).
#[derive(Clone, Debug, Default)]
pub struct ClassReport {
    /// The class ([`CLASSES`]).
    pub class: &'static str,
    /// Online milliseconds.
    pub ms: f64,
    /// This party's online traffic.
    pub traffic: Stats,
    /// Messages this party waited for online.
    pub rounds: usize,
    /// The setup's milliseconds of the class's own material (linear maps); the triples and
    /// masks made for all layers together are in [`Report::shared_setup`].
    pub setup_ms: f64,
    /// This party's traffic in that part of the setup.
    pub setup: Stats,
    /// The class's share of [`Report::shared_setup`]'s milliseconds: in proportion to the
    /// cost model's setup bytes of its operations without a setup of their own
    /// ([`tessera_protocols::hybrid::Program::costs`]; an attribution, not a measurement).
    pub shared_ms: f64,
    /// Its share of the shared setup's traffic, in the same proportion.
    pub shared: Stats,
}

/// One party's measurements of one inference.
#[derive(Clone, Debug)]
pub struct Report {
    /// The setup's milliseconds.
    pub setup_ms: f64,
    /// The setup's traffic at this party (the hello, triples, OTs, the linear maps).
    pub setup: Stats,
    /// The online phase, layer by layer.
    pub layers: Vec<LayerReport>,
    /// The parts of the setup made for all layers together: what they did, milliseconds,
    /// this party's traffic.
    pub shared_setup: Vec<(&'static str, f64, Stats)>,
    /// The online phase and the layers' own setup by operator class, as VASA's Table 7: a
    /// truncation counts as Trunc in whatever layer makes it.
    pub classes: Vec<ClassReport>,
}

impl Report {
    /// The online phase's milliseconds (the layers' sum).
    pub fn online_ms(&self) -> f64 {
        self.layers.iter().fold(0.0, |t, l| t + l.ms)
    }

    /// The online phase's traffic at this party.
    pub fn online(&self) -> Stats {
        self.layers.iter().map(|l| l.traffic).sum()
    }

    /// The online phase's rounds.
    pub fn online_rounds(&self) -> usize {
        self.layers.iter().map(|l| l.rounds).sum()
    }
}

/// The setup's measurements: the whole phase's time and traffic, and its parts.
struct Setup {
    ms: f64,
    traffic: Stats,
    steps: Vec<SetupStep>,
}

/// A streamed run with `peer` ([`tessera_protocols::hybrid::Program::run_streamed`]) on this party's `inputs`: the
/// server gives the model's weights, the client none (whatever its model holds: it owns no
/// linear map). The outputs and this party's report.
fn streamed(
    session: &mut Session,
    c: &Compiled,
    peer: usize,
    inputs: &[(Value, Plain)],
) -> Result<(Vec<Option<Plain>>, Report), Error> {
    let weights = if peer == CLIENT { &c.weights[..] } else { &[] };
    let run = on_threads(c.threads, || {
        c.program.run_streamed(session, peer, weights, inputs)
    })?;
    let setup = Setup {
        ms: run.setup.iter().fold(0.0, |t, s| t + s.ms),
        traffic: run.setup.iter().map(|s| s.traffic).sum(),
        steps: run.setup,
    };
    Ok((run.outputs, report(c, &setup, &run.steps)))
}

/// `f` on a rayon pool of `threads` threads of its own (0: as many as the machine has), where
/// the kernels of a party's local work spread their loops ([`tessera_ot::spread`]).
fn on_threads<T: Send>(
    threads: usize,
    f: impl FnOnce() -> Result<T, Error> + Send,
) -> Result<T, Error> {
    let threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| Error::Input(format!("a pool of {threads} threads: {e}")))?;
    pool.install(f)
}

fn report(c: &Compiled, setup: &Setup, steps: &[Step]) -> Report {
    let layers = c
        .layers
        .iter()
        .map(|l| {
            let own: Vec<&SetupStep> = setup
                .steps
                .iter()
                .filter(|s| s.op.is_some_and(|op| l.ops.contains(&op)))
                .collect();
            let steps = &steps[l.ops.clone()];
            LayerReport {
                name: l.name.clone(),
                op: l.op,
                ms: steps.iter().fold(0.0, |t, s| t + s.ms),
                traffic: steps.iter().map(|s| s.traffic).sum(),
                rounds: steps.iter().map(|s| s.waits).sum(),
                setup_ms: own.iter().fold(0.0, |t, s| t + s.ms),
                setup: own.iter().map(|s| s.traffic).sum(),
            }
        })
        .collect();
    Report {
        setup_ms: setup.ms,
        setup: setup.traffic,
        classes: classes(c, setup, steps),
        layers,
        shared_setup: setup
            .steps
            .iter()
            .filter(|s| s.op.is_none())
            .map(|s| (s.name, s.ms, s.traffic))
            .collect(),
    }
}

/// The online steps and the layers' own setup steps summed by operator class.
fn classes(c: &Compiled, setup: &Setup, steps: &[Step]) -> Vec<ClassReport> {
    let mut rows: Vec<ClassReport> = CLASSES
        .iter()
        .map(|&class| ClassReport {
            class,
            ..ClassReport::default()
        })
        .collect();
    let row = |class: &str| {
        CLASSES
            .iter()
            .position(|&k| k == class)
            .unwrap_or(CLASSES.len() - 1)
    };
    // Each operation's row, where its setup is made with every other's.
    let mut sharing = Vec::new();
    for layer in &c.layers {
        for (index, step) in steps
            .iter()
            .enumerate()
            .take(layer.ops.end)
            .skip(layer.ops.start)
        {
            let class = if TRUNCATIONS.contains(&step.op) {
                "Trunc"
            } else {
                layer.class
            };
            let at = row(class);
            let r = &mut rows[at];
            r.ms += step.ms;
            r.traffic = [r.traffic, step.traffic].into_iter().sum();
            r.rounds += step.waits;
            let mut own = setup
                .steps
                .iter()
                .filter(|s| s.op == Some(index))
                .peekable();
            if own.peek().is_none() {
                sharing.push((index, at));
            }
            for s in own {
                r.setup_ms += s.ms;
                r.setup = [r.setup, s.traffic].into_iter().sum();
            }
        }
    }
    attribute_shared(c, setup, &sharing, &mut rows);
    rows
}

/// Gives each row its share of the setup's shared parts ([`ClassReport::shared_ms`]): the
/// operations in `sharing` (index, row) weighed by their estimated setup bytes.
fn attribute_shared(
    c: &Compiled,
    setup: &Setup,
    sharing: &[(usize, usize)],
    rows: &mut [ClassReport],
) {
    let bytes = c.setup_bytes();
    let mut weight = vec![0u64; rows.len()];
    for &(op, row) in sharing {
        weight[row] += bytes.get(op).copied().unwrap_or(0);
    }
    let total: u64 = weight.iter().sum();
    let shared = setup.steps.iter().filter(|s| s.op.is_none());
    let ms: f64 = shared.clone().map(|s| s.ms).sum();
    let traffic: Stats = shared.map(|s| s.traffic).sum();
    for (r, w) in rows.iter_mut().zip(weight) {
        let part = if total == 0 {
            0.0
        } else {
            w as f64 / total as f64
        };
        let scaled = |x: u64| (x as f64 * part).round() as u64;
        r.shared_ms = ms * part;
        r.shared = Stats {
            bytes_sent: scaled(traffic.bytes_sent),
            bytes_received: scaled(traffic.bytes_received),
            messages_sent: scaled(traffic.messages_sent),
            messages_received: scaled(traffic.messages_received),
            rounds: scaled(traffic.rounds),
        };
    }
}

/// The server's side: the model owner, whose weights `c` holds; it learns nothing.
pub fn server(session: &mut Session, c: &Compiled) -> Result<Report, Error> {
    let constants: Vec<_> = c
        .constants
        .iter()
        .map(|(v, k)| (*v, Plain::Ring(k.clone())))
        .collect();
    let (out, report) = streamed(session, c, CLIENT, &constants)?;
    debug_assert!(out.iter().all(Option::is_none));
    Ok(report)
}

/// The client's side on `input` (the network's input, encoded in `c.fixed`): the logits,
/// encoded, and the report. `c` may come from the stripped architecture.
pub fn client(
    session: &mut Session,
    c: &Compiled,
    input: &[f32],
) -> Result<(Vec<u64>, Report), Error> {
    let expected = c.program.type_of(c.input).map_or(0, |t| t.n);
    if input.len() != expected {
        return Err(Error::Input(format!(
            "an input of {} values; the model takes {expected}",
            input.len()
        )));
    }
    c.fixed
        .check_input(input)
        .map_err(|e| Error::Input(e.to_string()))?;
    let encoded = encode(c.fixed, input);
    let inputs = [(c.input, Plain::Ring(encoded))];
    let (out, report) = streamed(session, c, SERVER, &inputs)?;
    match out.into_iter().next() {
        Some(Some(Plain::Ring(revealed))) => Ok((c.logits(revealed), report)),
        _ => Err(Error::Input(
            "the program revealed no logits to the client".to_owned(),
        )),
    }
}

fn encode(fixed: Fixed, input: &[f32]) -> Vec<u64> {
    input.iter().map(|&v| fixed.encode(v)).collect()
}

/// Both parties of private inferences in one process, each on its own thread and session over
/// memory (a simulation: the client's copy of the weights goes unused). The server's thread
/// runs one inference for each [`Local::infer`].
pub struct Local {
    server: std::sync::mpsc::Sender<Option<()>>,
    done: std::sync::mpsc::Receiver<Result<Report, Error>>,
    thread: Option<std::thread::JoinHandle<()>>,
    client: Session,
    compiled: Compiled,
}

impl Local {
    /// Both parties over `networks` (the server's first) running `compiled`.
    pub fn new(networks: (Network, Network), compiled: Compiled) -> Result<Self, Error> {
        let (n0, n1) = networks;
        let server_compiled = compiled.clone();
        let (go, wait) = std::sync::mpsc::channel::<Option<()>>();
        let (tell, done) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let mut session = match Session::new(n0, server_compiled.session_config()) {
                Ok(s) => s,
                Err(e) => {
                    let _ = tell.send(Err(e));
                    return;
                }
            };
            while let Ok(Some(())) = wait.recv() {
                let r = server(&mut session, &server_compiled);
                let failed = r.is_err();
                if tell.send(r).is_err() || failed {
                    return;
                }
            }
        });
        Ok(Local {
            server: go,
            done,
            thread: Some(thread),
            client: Session::new(n1, compiled.session_config())?,
            compiled,
        })
    }

    /// Reports the client's setup and online progress to `observer` (or to nobody) from the
    /// next inference on ([`Session::observe`]).
    pub fn observe(&mut self, observer: Option<tessera_protocols::Observer>) {
        self.client.observe(observer);
    }

    /// The program both parties run.
    pub fn compiled(&self) -> &Compiled {
        &self.compiled
    }

    /// One inference of `x`: the client's logits (encoded) and both reports, the server's
    /// first.
    pub fn infer(&mut self, x: &[f32]) -> Result<(Vec<u64>, Report, Report), Error> {
        let stopped = || Error::Input("the server's thread stopped".to_owned());
        self.server.send(Some(())).map_err(|_| stopped())?;
        let client = client(&mut self.client, &self.compiled, x);
        let server = self.done.recv().map_err(|_| stopped())?;
        let (logits, c) = client?;
        Ok((logits, server?, c))
    }
}

impl Drop for Local {
    fn drop(&mut self) {
        let _ = self.server.send(None);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
