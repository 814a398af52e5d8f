//! `tessera nn info|strip|run|accuracy|bench`: private inference of ONNX networks between a
//! model owner (the server, which listens) and a client (which connects, holds the input and
//! alone learns the logits), MOTION2NX's A+B protocol (`tessera_nn::secure`).

use crate::CliError;
use crate::bench::{
    Exchange, NetCondition, SampleStats, Wire, cpu_model, emit, loopback, loopback_bandwidth,
    median, peak_rss_bytes,
};
use crate::twoparty::{LinkArgs, open};
use clap::{Args, Subcommand, ValueEnum};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use tessera_net::Network;
use tessera_net::escape;
use tessera_nn::data::{Idx, Normalise};
use tessera_nn::eval::{Plain, argmax, max_difference};
use tessera_nn::fixed::{Arith, Fixed};
use tessera_nn::import::shown;
use tessera_nn::infer::{self, Local, Report};
use tessera_nn::model::Model;
use tessera_nn::secure::{
    self, Compiled, LinearChoice, NonlinearChoice, Options, Output, Protocol, Truncation,
};
use tessera_nn::{import, input, strip, zoo};
use tessera_protocols::Session;

/// `tessera nn ...`.
#[derive(Subcommand)]
pub enum NnCommand {
    /// Layers, shapes, multiplications, ReLUs and maxima of a model, and the secure
    /// protocol's estimated bytes and rounds per layer.
    Info(InfoArgs),
    /// Writes the model's architecture without its weights: all the client needs.
    Strip(StripArgs),
    /// One party of a private inference over TCP or TLS: the server (model owner) listens,
    /// the client (input owner, who learns the logits) connects.
    Run(Box<RunArgs>),
    /// Private inferences of MNIST digits in one process: the secure argmax against the
    /// plaintext fixed-point argmax, the float argmax and the labels.
    Accuracy(AccuracyArgs),
    /// Private inference between two threads over loopback TCP: setup and online time per
    /// layer, bytes and rounds, medians of the samples.
    Bench(BenchArgs),
    /// The built-in networks: list them, or write one as an ONNX file.
    #[command(subcommand)]
    Zoo(ZooCommand),
}

/// `tessera nn zoo ...`.
#[derive(Subcommand)]
pub enum ZooCommand {
    /// The built-in networks and what each is (the deep ones also come as NAME-small).
    List,
    /// Writes a built-in network, its seeded weights inside, as an ONNX file (opset 13) that
    /// other tools read.
    Write(ZooWriteArgs),
}

/// Options of `tessera nn zoo write`.
#[derive(Args)]
pub struct ZooWriteArgs {
    /// The network (`nn zoo list`).
    name: String,
    /// Where to write it (not over an existing file).
    #[arg(short, long)]
    out: PathBuf,
    /// The seed of its weights (and of the inputs its BatchNormalization statistics come from).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The default ring: Z_2^32.
const DEFAULT_BITS: u32 = 32;
/// The default fractional bits at ℓ = 32: the middle of the range that agrees with float.
const DEFAULT_FRAC: u32 = 10;

/// What both parties of a private inference name alike besides the protocol: the number
/// system of the secure layers and the OT of their setup.
#[derive(Args, Clone, Copy)]
pub struct NumberArgs {
    /// The ring Z_2^ℓ: ℓ = 32 or 64 (32: a quarter of the setup's bytes, with exact
    /// truncation; 64: room for larger values).
    #[arg(long, default_value_t = DEFAULT_BITS)]
    bits: u32,
    /// Fractional bits, below ℓ/2 (at ℓ = 32, 9 to 11 agree with float on the first 1000
    /// MNIST digits for every model here, f ≥ 12 overflows; at ℓ = 64, 10 to 20).
    #[arg(long, default_value_t = DEFAULT_FRAC)]
    frac: u32,
    /// The OT of the setup's triples and products: softspoken (SoftSpoken, k = 3: 5.3 bytes
    /// per OT) or ferret (Ferret: about a fifteenth of that, at more computation: Boolean
    /// triples 2.8 times slower on loopback here).
    #[arg(long, value_enum, default_value_t = OtArg::Softspoken)]
    ot: OtArg,
    /// Threads of each party's local work (the setup's hashing and products, the linear maps,
    /// the Boolean layers); 0 for as many as the machine has.
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// How products are truncated: exact (one round and one bit product per element, never
    /// wrong), local (SecureML's: free, wrong by 2^(ℓ−f) with probability |x|/2^(ℓ−1) per
    /// element; ℓ = 64 only), or auto (exact at ℓ = 32, and at ℓ = 64 where local would fail
    /// more than once in 2^10 inferences for values below 16).
    #[arg(long, default_value_t = Truncation::Auto)]
    truncation: Truncation,
    /// How the linear layers' products with the client's mask are made in the setup: he
    /// (Cheetah's homomorphic convolutions and dense layers under RLWE: one round trip and
    /// about a hundredth of ot's bytes for a convolution), ot (Gilboa's products on
    /// correlated OT), or auto (per layer, whichever sends fewer bytes).
    #[arg(long, default_value_t = LinearChoice::Auto)]
    linear: LinearChoice,
    /// How the signs of ReLU, max pooling and the smooth functions' ranges and their
    /// selections are computed: millionaire (a millionaires' protocol on random OT, as
    /// CrypTFlow2 and Cheetah: fewer than half the bytes of GMW's circuit on ImageNet-sized
    /// layers; with Ferret, more on a few thousand ReLUs), circuit (the protocol's Boolean
    /// circuit: GMW, ABY2.0 or garbled), or auto (millionaire for a+b, circuit for the
    /// others).
    #[arg(long, default_value_t = NonlinearChoice::Auto)]
    nonlinear: NonlinearChoice,
}

/// `--ot`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OtArg {
    Softspoken,
    Ferret,
}

impl NumberArgs {
    /// The compile options of `protocol` on one input with these parties' OT.
    fn options(&self, protocol: Protocol) -> Options {
        let ot = match self.ot {
            OtArg::Softspoken => infer::default_ot(),
            OtArg::Ferret => infer::ferret_ot(),
        };
        Options {
            ot,
            threads: self.threads,
            truncation: self.truncation,
            linear: self.linear,
            nonlinear: self.nonlinear,
            ..Options::new(protocol)
        }
    }

    fn fixed(&self) -> Result<Fixed, CliError> {
        Fixed::new(self.bits, self.frac).ok_or_else(|| {
            CliError::Usage(format!(
                "--bits {} --frac {}: ℓ must be 32 or 64 and the fractional bits below ℓ/2",
                self.bits, self.frac
            ))
        })
    }
}

/// `--protocol`: one of MOTION2NX's combinations of sharings (`secure::Protocol`).
fn parse_protocol(s: &str) -> Result<Protocol, String> {
    Protocol::ALL
        .into_iter()
        .find(|p| p.name() == s)
        .ok_or_else(|| {
            let names: Vec<&str> = Protocol::ALL.iter().map(|p| p.name()).collect();
            format!("one of {}", names.join(", "))
        })
}

/// The protocol `nn run`, `accuracy` and `demo nn` use unless told: the fastest in total
/// (setup and online) on MiniONN-MNIST in `nn bench` on this project's 2-core machines.
const DEFAULT_PROTOCOL: &str = "a+b";

/// The normalisation of pixels: `mnist`, `half`, `unit` or `MEAN,STD` (after dividing by 255).
fn parse_normalise(s: &str) -> Result<Normalise, String> {
    Normalise::parse(s).ok_or_else(|| "mnist, half, unit, or MEAN,STD with STD non-zero".to_owned())
}

/// Options of `tessera nn info`.
#[derive(Args)]
pub struct InfoArgs {
    /// An ONNX file, or a built-in network (cryptonets, minionn-mnist, minionn-cifar).
    model: String,
    #[command(flatten)]
    number: NumberArgs,
    /// Protocols to estimate, comma-separated: a+b, a+y, alpha+beta, alpha+y.
    #[arg(long, value_delimiter = ',', default_value = "a+b,a+y,alpha+beta,alpha+y", value_parser = parse_protocol)]
    protocol: Vec<Protocol>,
    /// One JSON object per layer, then one for the totals.
    #[arg(long)]
    json: bool,
}

/// Options of `tessera nn strip`.
#[derive(Args)]
pub struct StripArgs {
    /// The ONNX file.
    model: PathBuf,
    /// Where to write the architecture (not over an existing file).
    #[arg(short, long)]
    out: PathBuf,
}

/// `--role`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Role {
    /// The model's owner: listens, learns nothing.
    Server,
    /// The input's owner: connects, learns the logits.
    Client,
}

/// `--reveal`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum RevealArg {
    /// The logits.
    Logits,
    /// Only the index of the largest logit.
    Class,
}

/// Where the client's input comes from.
#[derive(Args)]
pub struct InputArgs {
    /// An MNIST IDX file of images, a PNG image or a NumPy .npy array (u1 pixels, f4 or f8
    /// values taken as they are).
    #[arg(long)]
    input: Option<PathBuf>,
    /// The item of an IDX file or of a .npy array with a leading item axis.
    #[arg(long, default_value_t = 0)]
    index: usize,
    /// Pixels to inputs: mnist ((p/255 − 0.1307)/0.3081), half ((p/255 − 0.5)/0.5), unit
    /// (p/255) or MEAN,STD ((p/255 − MEAN)/STD); default: the model's `tessera.normalise`
    /// metadata entry, else mnist.
    #[arg(long, value_parser = parse_normalise)]
    normalise: Option<Normalise>,
    /// Clip input values beyond the fixed-point range (2^(ℓ−1−2f)) to its edge, with a
    /// warning; without it such an input is refused with the largest value named.
    #[arg(long)]
    clip: bool,
}

/// Options of `tessera nn run`.
#[derive(Args)]
pub struct RunArgs {
    /// This party's role; the server listens, the client connects.
    #[arg(long, value_enum)]
    role: Role,
    /// The ONNX file: the whole model at the server; at the client its architecture (from
    /// `nn strip`) or the whole model (its weights are not used).
    #[arg(long)]
    model: PathBuf,
    #[command(flatten)]
    input: InputArgs,
    #[command(flatten)]
    number: NumberArgs,
    /// The protocol: a+b, a+y, alpha+beta or alpha+y (MOTION2NX's combinations: the
    /// arithmetic sharing of activations, A or α, and the Boolean sharing of ReLU's sign, B,
    /// β or Y); both parties must name the same.
    #[arg(long, default_value = DEFAULT_PROTOCOL, value_parser = parse_protocol)]
    protocol: Protocol,
    /// What the client learns: the logits, or only the class (a secure argmax); both
    /// parties must name the same.
    #[arg(long, value_enum, default_value_t = RevealArg::Logits)]
    reveal: RevealArg,
    /// Inputs per inference: the client's items `--index` to `--index` + N − 1 of its file,
    /// run as one (SIMD copies of every operation, the rounds shared); both parties must name
    /// the same.
    #[command(flatten)]
    batch: BatchArg,
    #[command(flatten)]
    link: LinkArgs,
    /// One JSON object, with setup and online time, bytes and rounds per layer.
    #[arg(long)]
    json: bool,
}

/// Options of `tessera nn accuracy`.
#[derive(Args)]
pub struct AccuracyArgs {
    /// The ONNX file.
    #[arg(long)]
    model: PathBuf,
    /// An MNIST IDX file of images.
    #[arg(long)]
    images: PathBuf,
    /// An MNIST IDX file of labels.
    #[arg(long)]
    labels: PathBuf,
    /// How many images (at least one).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    count: u64,
    /// The first image.
    #[arg(long, default_value_t = 0)]
    start: usize,
    /// Pixels to inputs (as for `nn run`).
    #[arg(long, default_value = "mnist", value_parser = parse_normalise)]
    normalise: Normalise,
    #[command(flatten)]
    number: NumberArgs,
    /// The protocol (as for `nn run`).
    #[arg(long, default_value = DEFAULT_PROTOCOL, value_parser = parse_protocol)]
    protocol: Protocol,
    #[command(flatten)]
    batch: BatchArg,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// `--batch`.
#[derive(Args)]
pub struct BatchArg {
    /// Inputs per inference: N inputs run as one (SIMD copies of every operation, the rounds
    /// shared); times are reported per input.
    #[arg(long = "batch", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=4096))]
    n: u32,
}

/// Options of `tessera nn bench`.
#[derive(Args)]
pub struct BenchArgs {
    /// ONNX files or built-in networks (cryptonets, minionn-mnist, minionn-cifar, ...: their
    /// architectures with seeded random weights; op-gelu, op-softmax, ...: one operator),
    /// comma-separated.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "cryptonets,minionn-mnist"
    )]
    model: Vec<String>,
    /// Protocols, comma-separated: a+b, a+y, alpha+beta, alpha+y.
    #[arg(long, value_delimiter = ',', default_value = "a+b,a+y,alpha+beta,alpha+y", value_parser = parse_protocol)]
    protocol: Vec<Protocol>,
    #[command(flatten)]
    number: NumberArgs,
    /// Timed inferences per model (after one warm-up); medians are reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    samples: u32,
    #[command(flatten)]
    batch: BatchArg,
    /// One JSON object per model and protocol, with the layers.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    net: NetCondition,
}

/// Runs `tessera nn ...`.
pub fn run(cmd: NnCommand) -> Result<(), CliError> {
    match cmd {
        NnCommand::Info(args) => info(&args),
        NnCommand::Strip(args) => strip_file(&args),
        NnCommand::Run(args) => run_party(&args),
        NnCommand::Accuracy(args) => accuracy(&args),
        NnCommand::Bench(args) => bench(&args),
        NnCommand::Zoo(ZooCommand::List) => {
            for (name, what) in zoo::NETWORKS.iter().chain(zoo::operators::OPERATORS) {
                println!("{name:16} {what}");
            }
            Ok(())
        }
        NnCommand::Zoo(ZooCommand::Write(args)) => zoo_write(&args),
    }
}

/// A model file, or a built-in network with weights from seed 1.
fn load_model(spec: &str) -> Result<Model, CliError> {
    if let Some(m) = zoo::network(spec, 1) {
        return Ok(m);
    }
    let path = Path::new(spec);
    if !path.exists() {
        let names: Vec<&str> = zoo::NETWORKS
            .iter()
            .chain(zoo::operators::OPERATORS)
            .map(|(n, _)| *n)
            .collect();
        return Err(CliError::Usage(format!(
            "{}: neither a built-in network ({}) nor a file",
            escape(spec.as_bytes(), 200),
            names.join(", ")
        )));
    }
    Ok(import::load(path)?)
}

fn info(args: &InfoArgs) -> Result<(), CliError> {
    let model = load_model(&args.model)?;
    let fixed = args.number.fixed()?;
    // A protocol the network does not fit (a Y protocol on an ImageNet network) is left out
    // with its reason; the others are shown.
    let mut estimates: Vec<(Protocol, secure::Estimate)> = Vec::new();
    let mut refused = None;
    for &p in &args.protocol {
        match secure::estimate(&model, fixed, args.number.options(p)) {
            Ok(e) => estimates.push((p, e)),
            Err(e) => {
                eprintln!("tessera: {} left out: {e}", p.name());
                refused.get_or_insert(e);
            }
        }
    }
    if let (true, Some(e)) = (estimates.is_empty(), refused) {
        return Err(e.into());
    }
    if !args.json {
        let columns: String = estimates
            .iter()
            .map(|(p, _)| format!(" {:>22}", format!("{} kB/rounds", p.name())))
            .collect();
        println!(
            "{:<24} {:<18} {:>14} {:>10} {:>7} {:>7}{columns}",
            "layer", "op", "output", "mults", "relus", "maxima"
        );
    }
    for (i, node) in model.nodes.iter().enumerate() {
        let cost = model.cost(node);
        if args.json {
            let protocols: serde_json::Map<String, Value> = estimates
                .iter()
                .map(|(p, e)| {
                    let l = e.layers[i];
                    (
                        p.name().to_owned(),
                        json!({"setup_bytes": l.setup_bytes, "online_bytes": l.online_bytes,
                               "online_rounds": l.online_rounds}),
                    )
                })
                .collect();
            println!(
                "{}",
                json!({
                    "layer": shown(&node.name), "op": node.op.kind(),
                    "output": model.shapes[node.output],
                    "multiplications": cost.multiplications, "products": cost.products,
                    "relus": cost.relus, "maxima": cost.maxima, "divisions": cost.divisions,
                    "protocols": protocols,
                })
            );
        } else {
            let cells: String = estimates
                .iter()
                .map(|(_, e)| {
                    let l = e.layers[i];
                    format!(
                        " {:>22}",
                        format!("{:.1}/{}", l.online_bytes as f64 / 1e3, l.online_rounds)
                    )
                })
                .collect();
            println!(
                "{:<24} {:<18} {:>14} {:>10} {:>7} {:>7}{cells}",
                shown(&node.name),
                node.op.kind(),
                format!("{:?}", model.shapes[node.output]),
                cost.multiplications,
                cost.relus,
                cost.maxima,
            );
        }
    }
    let (mults, relus) = model.nodes.iter().fold((0, 0), |(m, r), n| {
        let c = model.cost(n);
        (m + c.multiplications, r + c.relus)
    });
    let totals: serde_json::Map<String, Value> = estimates
        .iter()
        .map(|(p, e)| {
            let t = e.total();
            (
                p.name().to_owned(),
                json!({"setup_bytes": t.setup_bytes, "online_bytes": t.online_bytes,
                       "online_rounds": t.online_rounds, "truncation": e.truncation.name(),
                       "truncated": e.truncated, "nonlinear": e.nonlinear.name()}),
            )
        })
        .collect();
    if args.json {
        println!(
            "{}",
            json!({
                "total": true, "input": model.shapes[model.input], "output": model.shapes[model.output],
                "client_side": model.client_side, "has_weights": model.has_weights,
                "bits": fixed.bits(), "frac": fixed.frac(), "multiplications": mults, "relus": relus,
                "protocols": totals,
            })
        );
        return Ok(());
    }
    println!(
        "input {:?}, output {:?}{}; {mults} multiplications, {relus} ReLUs; ℓ = {}, f = {}",
        model.shapes[model.input],
        model.shapes[model.output],
        if model.client_side.is_empty() {
            String::new()
        } else {
            format!(" (then {} at the client)", model.client_side.join(", "))
        },
        fixed.bits(),
        fixed.frac(),
    );
    for (p, e) in &estimates {
        let t = e.total();
        println!(
            "{:<11} about {:.1} MB setup, {:.1} kB online, {} online rounds (both parties' bytes); \
             {} truncation of {} elements",
            p.name(),
            t.setup_bytes as f64 / 1e6,
            t.online_bytes as f64 / 1e3,
            t.online_rounds,
            e.truncation,
            e.truncated
        );
    }
    if !model.has_weights {
        println!("an architecture without weights (written by nn strip)");
    }
    Ok(())
}

/// The bytes of the ONNX file `path` (a regular file of bounded size).
fn read_model(path: &Path) -> Result<Vec<u8>, CliError> {
    tessera_core::files::read(path, import::MAX_FILE_BYTES)
        .map_err(|e| CliError::Usage(format!("{}: {e}", path.display())))
}

fn zoo_write(args: &ZooWriteArgs) -> Result<(), CliError> {
    let model = zoo::network(&args.name, args.seed).ok_or_else(|| {
        let names: Vec<&str> = zoo::NETWORKS.iter().map(|(n, _)| *n).collect();
        CliError::Usage(format!(
            "{}: not a built-in network ({})",
            escape(args.name.as_bytes(), 200),
            names.join(", ")
        ))
    })?;
    let bytes = tessera_nn::export::to_onnx(&model)?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&args.out)
        .map_err(|e| CliError::Usage(format!("{}: {e}", args.out.display())))?;
    std::io::Write::write_all(&mut file, &bytes)?;
    eprintln!(
        "tessera: wrote {} ({}, {} layers, {} bytes)",
        args.out.display(),
        args.name,
        model.nodes.len(),
        bytes.len()
    );
    Ok(())
}

fn strip_file(args: &StripArgs) -> Result<(), CliError> {
    let bytes = read_model(&args.model)?;
    let out = strip::strip(&bytes, &args.model.display().to_string())?;
    // The architecture must import as the model does: same shapes, same layers.
    let (full, arch) = (
        import::from_bytes(&bytes, "model")?,
        import::from_bytes(&out, "architecture")?,
    );
    if full.shapes != arch.shapes || full.nodes.len() != arch.nodes.len() {
        return Err(CliError::Usage(
            "the stripped architecture does not import with the model's shapes".to_owned(),
        ));
    }
    let mut file = tessera_core::files::create_secret(&args.out)
        .map_err(|e| CliError::Usage(format!("{}: {e}", args.out.display())))?;
    std::io::Write::write_all(&mut file, &out)?;
    eprintln!(
        "tessera: wrote {} ({} bytes; the model has {})",
        args.out.display(),
        out.len(),
        bytes.len()
    );
    Ok(())
}

/// The logits as numbers.
fn decode(fixed: Fixed, logits: &[u64]) -> Vec<f32> {
    logits.iter().map(|&v| fixed.decode(v)).collect()
}

/// A report as JSON: setup and online totals, and the online phase per layer.
fn report_json(r: &Report) -> Value {
    let online = r.online();
    json!({
        "setup_ms": r.setup_ms,
        "setup_bytes_sent": r.setup.bytes_sent,
        "setup_bytes_received": r.setup.bytes_received,
        "setup_rounds": r.setup.rounds,
        "online_ms": r.online_ms(),
        "online_bytes_sent": online.bytes_sent,
        "online_bytes_received": online.bytes_received,
        "online_rounds": r.online_rounds(),
        "layers": r.layers.iter().map(|l| json!({
            "layer": shown(&l.name), "op": l.op, "online_ms": l.ms,
            "bytes_sent": l.traffic.bytes_sent, "bytes_received": l.traffic.bytes_received,
            "rounds": l.rounds, "setup_ms": l.setup_ms,
            "setup_bytes_sent": l.setup.bytes_sent, "setup_bytes_received": l.setup.bytes_received,
        })).collect::<Vec<_>>(),
        "operators": r.classes.iter().map(|k| json!({
            "class": k.class, "online_ms": k.ms, "bytes_sent": k.traffic.bytes_sent,
            "bytes_received": k.traffic.bytes_received, "rounds": k.rounds, "setup_ms": k.setup_ms,
            "setup_bytes_sent": k.setup.bytes_sent, "setup_bytes_received": k.setup.bytes_received,
            "shared_setup_ms": k.shared_ms, "shared_setup_bytes_sent": k.shared.bytes_sent,
            "shared_setup_bytes_received": k.shared.bytes_received,
        })).collect::<Vec<_>>(),
        "shared_setup": r.shared_setup.iter().map(|(name, ms, t)| json!({
            "part": name, "ms": ms, "bytes_sent": t.bytes_sent, "bytes_received": t.bytes_received,
        })).collect::<Vec<_>>(),
    })
}

fn run_party(args: &RunArgs) -> Result<(), CliError> {
    let listens = args.link.listens();
    match (args.role, listens) {
        (Role::Server, false) | (Role::Client, true) => {
            return Err(CliError::Usage(
                "the server listens (--listen) and the client connects (--connect)".to_owned(),
            ));
        }
        _ => {}
    }
    let fixed = args.number.fixed()?;
    let what = args.model.display().to_string();
    let bytes = read_model(&args.model)?;
    let model = import::from_bytes(&bytes, &what)?;
    if args.role == Role::Server && !model.has_weights {
        return Err(CliError::Usage(format!(
            "{}: an architecture without weights; the server needs the model",
            args.model.display()
        )));
    }
    let output = match args.reveal {
        RevealArg::Logits => Output::Logits,
        RevealArg::Class => Output::Class,
    };
    let options = Options {
        output,
        batch: args.batch.n as usize,
        ..args.number.options(args.protocol)
    };
    let compiled = secure::compile(&model, fixed, options)?;
    let x = match (args.role, &args.input.input) {
        (Role::Client, Some(path)) => Some(client_inputs(args, path, &model, &bytes, fixed)?),
        (Role::Client, None) => {
            return Err(CliError::Usage("the client needs --input".to_owned()));
        }
        (Role::Server, Some(_)) => {
            return Err(CliError::Usage(
                "the server has no input (--input is the client's)".to_owned(),
            ));
        }
        (Role::Server, None) => None,
    };
    let network = open(&args.link)?;
    let mut session = Session::new(network, compiled.session_config())?;
    if !args.json {
        session.observe(Some(tessera_nn::progress::bar(&compiled)));
    }
    match x {
        None => {
            let report = infer::server(&mut session, &compiled)?;
            if args.json {
                let mut v = report_json(&report);
                v["role"] = json!("server");
                println!("{v}");
            } else {
                eprintln!(
                    "tessera: done in {:.1} ms setup + {:.1} ms online; the client learns the result",
                    report.setup_ms,
                    report.online_ms()
                );
            }
        }
        Some(x) => {
            let (revealed, report) = infer::client(&mut session, &compiled, &x)?;
            print_client(args, &model, &compiled, &revealed, &report);
        }
    }
    Ok(())
}

/// The client's inputs: `--batch` items of its file from `--index`, each normalised, clipped
/// if asked and checked against the fixed-point range, one after another.
fn client_inputs(
    args: &RunArgs,
    path: &Path,
    model: &Model,
    bytes: &[u8],
    fixed: Fixed,
) -> Result<Vec<f32>, CliError> {
    let what = args.model.display().to_string();
    let normalise = match args.input.normalise {
        Some(n) => n,
        None => Normalise::from_model(bytes, &what)?.unwrap_or(Normalise::MNIST),
    };
    let shape = model.sample_shape();
    let mut all = Vec::new();
    for index in args.input.index..args.input.index + args.batch.n as usize {
        // Token ids (a .npy of integers) are looked up where the model starts with the
        // client's embedding table.
        let mut x = model.embed(&input::load(path, index, shape, normalise)?)?;
        if args.input.clip {
            let clipped = fixed.clip(&mut x)?;
            if clipped > 0 {
                eprintln!(
                    "tessera: warning: {clipped} input values of item {index} clipped to ±{} (the fixed-point range)",
                    fixed.max_product()
                );
            }
        }
        fixed.check_input(&x)?;
        all.extend(x);
    }
    Ok(all)
}

/// The client's result: per input its class and (revealing the logits) its logits.
fn print_client(args: &RunArgs, model: &Model, c: &Compiled, revealed: &[u64], report: &Report) {
    let fixed = c.fixed;
    let per = match c.output {
        Output::Logits => model.output_len(),
        Output::Class => 1,
    };
    let results: Vec<(usize, Option<Vec<f32>>)> = revealed
        .chunks(per)
        .map(|r| match c.output {
            Output::Logits => (argmax(&fixed, r), Some(decode(fixed, r))),
            Output::Class => (r.first().copied().unwrap_or(0) as usize, None),
        })
        .collect();
    if args.json {
        let mut v = report_json(report);
        v["role"] = json!("client");
        if let [(class, values)] = &results[..] {
            v["class"] = json!(class);
            v["logits"] = json!(values);
        } else {
            v["classes"] = json!(results.iter().map(|r| r.0).collect::<Vec<_>>());
            v["logits"] = json!(results.iter().map(|r| &r.1).collect::<Vec<_>>());
        }
        v["client_side"] = json!(model.client_side);
        println!("{v}");
        return;
    }
    for (k, (class, values)) in results.iter().enumerate() {
        let at = if results.len() > 1 {
            format!("input {}: ", args.input.index + k)
        } else {
            String::new()
        };
        println!("{at}class {class}");
        if let Some(values) = values {
            let shown: Vec<String> = values.iter().map(|v| format!("{v:.3}")).collect();
            println!("{at}logits {}", shown.join(" "));
        }
    }
    eprintln!(
        "tessera: {:.1} ms setup + {:.1} ms online",
        report.setup_ms,
        report.online_ms()
    );
}

/// Both parties in this process over `networks` (the server's first), `model` compiled once.
fn local_pair(
    networks: (Network, Network),
    model: &Model,
    fixed: Fixed,
    options: Options,
) -> Result<Local, CliError> {
    let compiled = secure::compile(model, fixed, options)?;
    Ok(Local::new(networks, compiled)?)
}

fn accuracy(args: &AccuracyArgs) -> Result<(), CliError> {
    let fixed = args.number.fixed()?;
    let model = import::load(&args.model)?;
    let images = Idx::load(&args.images)?;
    let labels = Idx::load(&args.labels)?;
    if labels.dims.len() != 1 || labels.count() != images.count() {
        return Err(CliError::Usage(format!(
            "{}: labels of shape {:?} for {} images; one label per image is needed",
            args.labels.display(),
            labels.dims,
            images.count()
        )));
    }
    let count = usize::try_from(args.count).unwrap_or(usize::MAX);
    let end = args.start.saturating_add(count);
    if end > images.count() || end > labels.count() {
        return Err(CliError::Usage(format!(
            "images {}..{end}: the files hold {} images and {} labels",
            args.start,
            images.count(),
            labels.count()
        )));
    }
    let plain = Plain::new(&model, fixed)?;
    let float = Plain::new(&model, tessera_nn::fixed::Float)?;
    let batch = args.batch.n as usize;
    let pair_of = |batch: usize| -> Result<Local, CliError> {
        let options = Options {
            batch,
            ..args.number.options(args.protocol)
        };
        local_pair(tessera_net::memory::pair()?, &model, fixed, options)
    };
    let mut pair = pair_of(batch.min(count))?;
    let bar = ProgressBar::new(args.count);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {msg} [{elapsed} < {eta}]")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let (mut same, mut secure_right, mut fixed_right, mut float_right) = (0, 0, 0, 0);
    let (mut max_diff, mut setup, mut online) = (0f32, Vec::new(), Vec::new());
    for first in (args.start..end).step_by(batch) {
        let last = (first + batch).min(end);
        if last - first != pair.compiled().batch {
            // The last few images: a program for as many.
            pair = pair_of(last - first)?;
        }
        let xs: Vec<Vec<f32>> = (first..last)
            .map(|i| Ok(args.normalise.apply(images.item(i)?)))
            .collect::<Result<_, CliError>>()?;
        let (got, _, report) = pair.infer(&xs.concat())?;
        for (i, (x, got)) in (first..).zip(xs.iter().zip(got.chunks_exact(model.output_len()))) {
            let label = usize::from(labels.item(i)?.first().copied().unwrap_or(u8::MAX));
            let want = plain.run(x)?;
            max_diff = max_diff.max(max_difference(&fixed, &want, got));
            let (s, f) = (argmax(&fixed, got), argmax(&fixed, &want));
            let fl = argmax(&tessera_nn::fixed::Float, &float.run(x)?);
            same += usize::from(s == f);
            secure_right += usize::from(s == label);
            fixed_right += usize::from(f == label);
            float_right += usize::from(fl == label);
            let per = (last - first) as f64;
            setup.push(report.setup_ms / per);
            online.push(report.online_ms() / per);
            bar.inc(1);
        }
        bar.set_message(format!("agree {same}, correct {secure_right}"));
    }
    bar.finish_and_clear();
    let n = count as f64;
    let pct = |k: usize| 100.0 * k as f64 / n;
    let (setup, online) = (SampleStats::of(setup), SampleStats::of(online));
    if args.json {
        emit(json!({
            "model": args.model.display().to_string(), "count": args.count, "start": args.start,
            "bits": fixed.bits(), "frac": fixed.frac(), "protocol": args.protocol.name(),
            "secure_equals_fixed": same, "secure_correct": secure_right,
            "fixed_correct": fixed_right, "float_correct": float_right,
            "secure_accuracy": pct(secure_right), "fixed_accuracy": pct(fixed_right),
            "float_accuracy": pct(float_right), "max_logit_difference": max_diff,
            "batch": args.batch.n, "setup_ms_median": setup.median,
            "online_ms_median": online.median, "setup_ms_stats": setup,
            "online_ms_stats": online, "cpu": cpu_model(),
        }));
    } else {
        println!(
            "{} images from {}: secure argmax = fixed-point argmax on {same} ({:.1} %); accuracy \
             secure {:.1} %, fixed point {:.1} %, float {:.1} %; largest logit difference from \
             fixed point {max_diff:.4}; median {:.1} ms setup + {:.2} ms online per image",
            args.count,
            args.start,
            pct(same),
            pct(secure_right),
            pct(fixed_right),
            pct(float_right),
            setup.median,
            online.median
        );
    }
    Ok(())
}

fn bench(args: &BenchArgs) -> Result<(), CliError> {
    let fixed = args.number.fixed()?;
    let bandwidth = loopback_bandwidth()?;
    for spec in &args.model {
        let model = load_model(spec)?;
        let plain = Plain::new(&model, fixed)?;
        for &protocol in &args.protocol {
            let (nets, wire) = loopback(args.net)?;
            let batch = args.batch.n as usize;
            let options = Options {
                batch,
                ..args.number.options(protocol)
            };
            let mut pair = local_pair(nets, &model, fixed, options)?;
            if !args.json {
                pair.observe(Some(tessera_nn::progress::bar(pair.compiled())));
            }
            // Inputs: fixed-seed values of the input's normal range, another per input.
            let len = model.input_len();
            let x: Vec<f32> = (0..len * batch)
                .map(|i| ((i * 7919 % 255) as f32 / 255.0 - 0.5) * 2.0)
                .collect();
            let want: Vec<Vec<u64>> = x
                .chunks_exact(len)
                .map(|x| plain.run(x))
                .collect::<Result<_, _>>()?;
            let mut runs: Vec<(Report, Report)> = Vec::new();
            for sample in 0..=args.samples {
                let (got, server, client) = pair.infer(&x)?;
                let each = got.chunks_exact(model.output_len());
                for (got, want) in each.zip(&want) {
                    check_against_fixed_point(spec, fixed, got, want)?;
                }
                if sample > 0 {
                    runs.push((server, client));
                }
            }
            let links = BenchLinks {
                loopback_bytes_per_s: bandwidth,
                wire: &wire,
            };
            let truncation = pair.compiled().truncation;
            print_bench(args, spec, protocol, &runs, (fixed, truncation), &links);
        }
    }
    Ok(())
}

/// An error unless the private logits `got` give fixed point's class (where it is not a tie)
/// and lie within 5 % of 1 + the largest logit's magnitude of fixed point's `want`: truncations round differently
/// in the last place (exact ones up or down, the reference down), and a deep network carries
/// that to its logits (ResNet-50 at ℓ = 32, f = 10: 0.17 where the largest logit is 7.3),
/// while a wrong truncation is off by 2^(ℓ−2f) or more.
fn check_against_fixed_point(
    spec: &str,
    fixed: Fixed,
    got: &[u64],
    want: &[u64],
) -> Result<(), CliError> {
    let diff = max_difference(&fixed, want, got);
    let largest = want
        .iter()
        .map(|&v| fixed.decode(v).abs())
        .fold(0.0, f32::max);
    let bound = 0.05 * (1.0 + largest);
    // The class is fixed point's unless its two largest are within twice the difference (a
    // tie at the protocol's precision: one operator's output, for one).
    let (first, second) = want.iter().map(|&v| fixed.decode(v)).fold(
        (f32::NEG_INFINITY, f32::NEG_INFINITY),
        |(a, b), v| {
            if v > a { (v, a) } else { (a, b.max(v)) }
        },
    );
    let tie = first - second <= 2.0 * diff;
    if (argmax(&fixed, got) != argmax(&fixed, want) && !tie) || diff > bound {
        return Err(CliError::Usage(format!(
            "{spec}: the private logits differ from fixed point by {diff} (at most {bound}), \
             class {} against {}",
            argmax(&fixed, got),
            argmax(&fixed, want)
        )));
    }
    Ok(())
}

/// What `nn bench` judges its times against: the loopback bandwidth measured in the same run,
/// and the link the parties ran over.
struct BenchLinks<'a> {
    loopback_bytes_per_s: f64,
    wire: &'a Wire,
}

fn print_bench(
    args: &BenchArgs,
    spec: &str,
    protocol: Protocol,
    runs: &[(Report, Report)],
    (fixed, truncation): (Fixed, Truncation),
    links: &BenchLinks<'_>,
) {
    let bandwidth = links.loopback_bytes_per_s;
    let med = |f: &dyn Fn(&(Report, Report)) -> f64| median(runs.iter().map(f).collect());
    let (s, c) = &runs[0];
    let setup_bytes = s.setup.bytes_sent + c.setup.bytes_sent;
    let online_bytes = s.online().bytes_sent + c.online().bytes_sent;
    let stats = |f: &dyn Fn(&(Report, Report)) -> f64| SampleStats::of(runs.iter().map(f));
    let setup_stats = stats(&|(s, c)| s.setup_ms.max(c.setup_ms));
    let online_stats = stats(&|(_, c)| c.online_ms());
    let (setup_ms, online_ms) = (setup_stats.median, online_stats.median);
    let layers: Vec<Value> = c
        .layers
        .iter()
        .enumerate()
        .map(|(i, l)| {
            json!({
                "layer": shown(&l.name), "op": l.op,
                "online_ms": med(&|(_, c)| c.layers[i].ms),
                "bytes": l.traffic.bytes_sent + s.layers[i].traffic.bytes_sent,
                "rounds": l.rounds,
                "setup_ms": med(&|(s, c)| s.layers[i].setup_ms.max(c.layers[i].setup_ms)),
                "setup_bytes": l.setup.bytes_sent + s.layers[i].setup.bytes_sent,
            })
        })
        .collect();
    // VASA Table 7's rows: the online phase and the layers' own setup by operator class.
    let operators: Vec<Value> = c
        .classes
        .iter()
        .enumerate()
        .map(|(i, k)| {
            json!({
                "class": k.class,
                "online_ms": med(&|(_, c)| c.classes[i].ms),
                "bytes": k.traffic.bytes_sent + s.classes[i].traffic.bytes_sent,
                "rounds": k.rounds,
                "setup_ms": med(&|(s, c)| s.classes[i].setup_ms.max(c.classes[i].setup_ms)),
                "setup_bytes": k.setup.bytes_sent + s.classes[i].setup.bytes_sent,
                "shared_setup_ms": med(&|(s, c)| s.classes[i].shared_ms.max(c.classes[i].shared_ms)),
                "shared_setup_bytes": k.shared.bytes_sent + s.classes[i].shared.bytes_sent,
            })
        })
        .collect();
    // The setup's parts made for all layers together.
    let shared: Vec<Value> = c
        .shared_setup
        .iter()
        .enumerate()
        .map(|(i, (name, _, t))| {
            json!({
                "part": name,
                "ms": med(&|(s, c)| s.shared_setup[i].1.max(c.shared_setup[i].1)),
                "bytes": t.bytes_sent + s.shared_setup[i].2.bytes_sent,
            })
        })
        .collect();
    // The setup's bytes at the loopback bandwidth measured in this run: its transfer bound.
    let transfer_ms = setup_bytes as f64 / bandwidth * 1e3;
    let batch = f64::from(args.batch.n);
    let mut v = json!({
        "model": spec, "protocol": protocol.name(), "bits": fixed.bits(), "frac": fixed.frac(),
        "truncation": truncation.name(),
        "samples": runs.len(), "setup_ms": setup_ms, "online_ms": online_ms,
        "setup_ms_stats": setup_stats, "online_ms_stats": online_stats,
        "batch": args.batch.n, "setup_ms_per_input": setup_ms / batch,
        "online_ms_per_input": online_ms / batch,
        "setup_bytes": setup_bytes, "online_bytes": online_bytes,
        "setup_rounds": c.setup.rounds, "online_rounds": c.online_rounds(),
        "setup_transfer_ms": transfer_ms, "setup_over_transfer": setup_ms / transfer_ms,
        "loopback_bytes_per_s": bandwidth, "cpu": cpu_model(), "layers": layers,
        "operators": operators, "shared_setup": shared,
        // Both parties run in this process: its high-water mark bounds each party's.
        "peak_rss_bytes": peak_rss_bytes(),
    });
    let wire = links.wire;
    wire.describe(&mut v);
    let online = Exchange {
        rounds: s.online_rounds().max(c.online_rounds()) as f64,
        ..Exchange::of_pair(&s.online(), &c.online())
    };
    let judged = wire.judge(
        &mut v,
        "setup",
        setup_ms,
        Exchange::of_pair(&s.setup, &c.setup),
    ) + &wire.judge(&mut v, "online", online_ms, online);
    if args.json {
        emit(v);
    } else {
        println!(
            "{spec} ({}, ℓ = {}, f = {}, {truncation} truncation): setup {setup_ms:.1} ms ({:.1} MB, {:.1}× its transfer \
             time at loopback bandwidth), online {online_ms:.2} ms ({:.1} kB, {} rounds){}; median of {}; \
             peak RSS of both parties so far {:.0} MiB{judged}",
            protocol.name(),
            fixed.bits(),
            fixed.frac(),
            setup_bytes as f64 / 1e6,
            setup_ms / transfer_ms,
            online_bytes as f64 / 1e3,
            c.online_rounds(),
            if args.batch.n > 1 {
                format!(
                    " for {} inputs: {:.1} ms setup and {:.2} ms online per input",
                    args.batch.n,
                    setup_ms / batch,
                    online_ms / batch
                )
            } else {
                String::new()
            },
            runs.len(),
            peak_rss_bytes().unwrap_or(0) as f64 / f64::from(1 << 20)
        );
        println!(
            "  {:<24} {:<18} {:>12} {:>12} {:>7} {:>12} {:>12}",
            "layer", "op", "online_ms", "online_B", "rounds", "setup_ms", "setup_B"
        );
        for l in &layers {
            println!(
                "  {:<24} {:<18} {:>12.3} {:>12} {:>7} {:>12.1} {:>12}",
                l["layer"].as_str().unwrap_or(""),
                l["op"].as_str().unwrap_or(""),
                l["online_ms"].as_f64().unwrap_or(0.0),
                l["bytes"].as_u64().unwrap_or(0),
                l["rounds"].as_u64().unwrap_or(0),
                l["setup_ms"].as_f64().unwrap_or(0.0),
                l["setup_bytes"].as_u64().unwrap_or(0)
            );
        }
        for p in &shared {
            println!(
                "  {:<43} {:>46.1} {:>12}",
                format!("setup: {}", p["part"].as_str().unwrap_or("")),
                p["ms"].as_f64().unwrap_or(0.0),
                p["bytes"].as_u64().unwrap_or(0)
            );
        }
    }
}

/// The demo's model and digits, compiled in (see `data/nn/SOURCE.txt`).
const DEMO_MODEL: &[u8] = include_bytes!("../../../data/nn/minionn-mnist-b.onnx");
const DEMO_IMAGES: &[u8] = include_bytes!("../../../data/nn/mnist-t10k-16-images.idx3-ubyte");
const DEMO_LABELS: &[u8] = include_bytes!("../../../data/nn/mnist-t10k-16-labels.idx1-ubyte");

/// Options of `tessera demo nn`.
#[derive(Args)]
pub struct DemoArgs {
    /// Which of the 16 bundled MNIST test digits (0 to 15).
    #[arg(long, default_value_t = 0)]
    index: usize,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// One private inference of a bundled MNIST digit on the bundled MiniONN-MNIST-shaped
/// network, both parties in one process over the in-memory network, printed beside the
/// plaintext fixed-point and float results.
pub fn demo(args: &DemoArgs) -> Result<(), CliError> {
    let model = import::from_bytes(DEMO_MODEL, "minionn-mnist-b.onnx")?;
    let images = Idx::parse(DEMO_IMAGES, "mnist-t10k-16-images")?;
    let labels = Idx::parse(DEMO_LABELS, "mnist-t10k-16-labels")?;
    let pixels = images.item(args.index)?;
    let label = labels.item(args.index)?.first().copied().unwrap_or(u8::MAX);
    let x = Normalise::MNIST.apply(pixels);
    let fixed = Fixed::new(DEFAULT_BITS, DEFAULT_FRAC)
        .ok_or_else(|| CliError::Usage("the default number system is valid".into()))?;
    let want = Plain::new(&model, fixed)?.run(&x)?;
    let float = Plain::new(&model, tessera_nn::fixed::Float)?.run(&x)?;
    let protocol = parse_protocol(DEFAULT_PROTOCOL).map_err(CliError::Usage)?;
    let mut pair = local_pair(
        tessera_net::memory::pair()?,
        &model,
        fixed,
        Options::new(protocol),
    )?;
    let (got, server, client) = pair.infer(&x)?;
    let secure = decode(fixed, &got);
    let classes = (
        argmax(&fixed, &got),
        argmax(&fixed, &want),
        argmax(&tessera_nn::fixed::Float, &float),
    );
    let bytes = |f: &dyn Fn(&Report) -> u64| f(&server) + f(&client);
    let setup_bytes = bytes(&|r| r.setup.bytes_sent);
    let online_bytes = bytes(&|r| r.online().bytes_sent);
    if args.json {
        println!(
            "{}",
            json!({
                "model": "minionn-mnist-b.onnx", "digit": args.index, "label": label,
                "secure_class": classes.0, "fixed_class": classes.1, "float_class": classes.2,
                "secure_logits": secure, "fixed_logits": decode(fixed, &want), "float_logits": float,
                "setup_ms": client.setup_ms.max(server.setup_ms), "online_ms": client.online_ms(),
                "setup_bytes": setup_bytes, "online_bytes": online_bytes,
                "online_rounds": client.online_rounds(),
            })
        );
        return Ok(());
    }
    // The digit, two pixel rows per line.
    for rows in pixels.chunks(56) {
        let line: String = (0..28)
            .map(|c| {
                let v = u16::from(rows[c]) + u16::from(rows.get(28 + c).copied().unwrap_or(0));
                [' ', '.', ':', '#'][usize::from(v.min(511) / 128)]
            })
            .collect();
        println!("    {line}");
    }
    println!(
        "MNIST test digit {} (label {label}), MiniONN-MNIST-shaped network (CrypTen's network B)",
        args.index
    );
    println!(
        "          {}",
        (0..10).map(|d| format!("{d:>7}")).collect::<String>()
    );
    let row = |name: &str, v: &[f32], class: usize| {
        let cells: String = v.iter().map(|x| format!("{x:>7.2}")).collect();
        println!("{name:<9} {cells}   class {class}");
    };
    row("private", &secure, classes.0);
    row("fixed", &decode(fixed, &want), classes.1);
    row("float", &float, classes.2);
    println!(
        "private inference ({}, ℓ = {}, f = {}; the client alone learns the logits): setup {:.0} ms \
         ({:.1} MB), online {:.1} ms ({:.0} kB, {} rounds); both parties in this process",
        protocol.name(),
        fixed.bits(),
        fixed.frac(),
        client.setup_ms.max(server.setup_ms),
        setup_bytes as f64 / 1e6,
        client.online_ms(),
        online_bytes as f64 / 1e3,
        client.online_rounds()
    );
    if classes.0 != classes.1 {
        return Err(CliError::Usage(
            "the private result differs from plaintext fixed point".to_owned(),
        ));
    }
    Ok(())
}
