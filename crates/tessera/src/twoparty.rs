//! `tessera demo`, `tessera run` and `tessera keygen`: two-party computation from the command
//! line, with semi-honest Yao over memory (demo), TCP or TLS (run).

use crate::CliError;
use crate::circuit::load;
use clap::{Args, ValueEnum};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tessera_circuit::bristol::stream::Streamed;
use tessera_circuit::eval::{bits_from_hex, bits_to_hex};
use tessera_circuit::library::builtin;
use tessera_core::{FixedKeyAes, Prg};
use tessera_garble::SchemeKind;
use tessera_net::{Kind, NetConfig, Network, Phase, memory, tcp, tls};
use tessera_protocols::yao::file as yao_file;
use tessera_protocols::yao::{OutputTo, Parallel, Strategy, Yao, YaoRole};
use tessera_protocols::{Error as ProtocolError, Session, SessionConfig};

/// Options of `tessera demo`.
#[derive(Args)]
pub struct DemoArgs {
    /// Garbling scheme.
    #[arg(long, default_value = "prp", value_parser = crate::schemes::one())]
    scheme: SchemeKind,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Phases as JSON.
pub fn phases_json(phases: &[Phase]) -> Value {
    serde_json::to_value(phases).unwrap_or(Value::Null)
}

/// AES-128 as a 2PC in one process over the in-memory channel: the garbler holds a random
/// key, the evaluator a random plaintext; the evaluator learns the ciphertext, which is
/// checked against plain AES.
pub fn demo(args: &DemoArgs) -> Result<(), CliError> {
    let circuit = builtin("aes128")
        .ok_or_else(|| CliError::Usage("aes128 is missing from the library".into()))??;
    let mut prg = Prg::from_os()?;
    let (key, plain) = (prg.random_block(), prg.random_block());
    let (key_hex, plain_hex) = (key.to_string(), plain.to_string());
    let key_bits = bits_from_hex(&key_hex, 128)?;
    let plain_bits = bits_from_hex(&plain_hex, 128)?;
    let (g_net, e_net) = memory::pair()?;
    let scheme = args.scheme;
    let start = Instant::now();
    let g_circuit = circuit.clone();
    let garbler = std::thread::spawn(move || -> Result<_, CliError> {
        let mut s = Session::new(g_net, SessionConfig::default())?;
        let mut g = Yao::setup(
            &mut s,
            1,
            YaoRole::Garbler,
            g_circuit,
            scheme,
            OutputTo::Evaluator,
        )?;
        let run = g.run(&mut s, &key_bits)?;
        Ok((g.setup_phases().to_vec(), run.phases, s.network().stats()))
    });
    let mut e_session = Session::new(e_net, SessionConfig::default())?;
    let mut e = Yao::setup(
        &mut e_session,
        0,
        YaoRole::Evaluator,
        circuit,
        scheme,
        OutputTo::Evaluator,
    )?;
    let setup_ms = start.elapsed().as_secs_f64() * 1e3;
    let run_start = Instant::now();
    let outcome = e.run(&mut e_session, &plain_bits)?;
    let run_ms = run_start.elapsed().as_secs_f64() * 1e3;
    let (g_setup, g_run, g_stats) = garbler
        .join()
        .map_err(|_| CliError::Usage("the garbler thread panicked".into()))??;
    let output = outcome
        .output
        .ok_or_else(|| CliError::Usage("the evaluator learned no output".into()))?;
    let cipher = bits_to_hex(&output[0]);
    let expected = FixedKeyAes::new(key).encrypt_block(plain).to_string();
    let correct = cipher == expected;
    let e_stats = e_session.network().stats();
    if args.json {
        println!(
            "{}",
            json!({
                "scheme": scheme.name(),
                "circuit": "aes128",
                "key": key_hex,
                "plaintext": plain_hex,
                "ciphertext": cipher,
                "plain_aes": expected,
                "correct": correct,
                "setup_ms": setup_ms,
                "run_ms": run_ms,
                "total_ms": setup_ms + run_ms,
                "garbler": {"bytes_sent": g_stats.bytes_sent, "bytes_received": g_stats.bytes_received,
                            "messages_sent": g_stats.messages_sent, "rounds": g_stats.rounds,
                            "setup_phases": phases_json(&g_setup), "phases": phases_json(&g_run)},
                "evaluator": {"bytes_sent": e_stats.bytes_sent, "bytes_received": e_stats.bytes_received,
                              "messages_sent": e_stats.messages_sent, "rounds": e_stats.rounds,
                              "setup_phases": phases_json(e.setup_phases()), "phases": phases_json(&outcome.phases)},
            })
        );
    } else {
        println!(
            "AES-128 as two-party computation (semi-honest Yao, {scheme} garbling, IKNP OT), in one process"
        );
        println!("garbler's key          {key_hex}");
        println!("evaluator's plaintext  {plain_hex}");
        println!("ciphertext (2PC)       {cipher}");
        println!(
            "ciphertext (plain AES) {expected}  {}",
            if correct { "match" } else { "MISMATCH" }
        );
        println!("setup {setup_ms:.2} ms (fingerprint, 128 base OTs), execution {run_ms:.2} ms");
        println!(
            "garbler sent {} bytes, evaluator sent {} bytes, {} + {} rounds",
            g_stats.bytes_sent, e_stats.bytes_sent, g_stats.rounds, e_stats.rounds
        );
    }
    if correct {
        Ok(())
    } else {
        Err(CliError::Usage(format!(
            "2PC gave {cipher}, plain AES {expected}"
        )))
    }
}

/// `--role`.
#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
pub enum Role {
    /// Holds the circuit's first input value; garbles.
    Garbler,
    /// Holds the second input value; evaluates.
    Evaluator,
}

/// `--output`.
#[derive(Clone, Copy, ValueEnum)]
pub enum OutputArg {
    /// Only the evaluator learns the output.
    Evaluator,
    /// Only the garbler.
    Garbler,
    /// Both.
    Both,
}

/// `--strategy`.
#[derive(Clone, Copy, ValueEnum)]
pub enum StrategyArg {
    /// Cgp when the circuit's independent partitions hold at least half its AND gates
    /// (MVMul, BioMatch), else fgp; both parties pick the same from the circuit.
    Auto,
    /// Fine-grained: each wide batch shared among the threads.
    Fgp,
    /// Coarse-grained: independent partitions on separate threads.
    Cgp,
}

/// Options of `tessera run`.
#[derive(Args)]
pub struct RunArgs {
    /// This party's role.
    #[arg(long, value_enum)]
    role: Role,
    #[command(flatten)]
    link: LinkArgs,
    /// A built-in circuit (aes128, add32, ...) or a Bristol file with two input values.
    #[arg(long)]
    circuit: String,
    /// This party's input value in hex (bit k is bit k mod 8 of byte k div 8; for aes128 the
    /// key or the plaintext in FIPS-197 byte order; `@FILE`: the hex in FILE, for values too
    /// long for a command line).
    #[arg(long)]
    input: String,
    /// Garbling scheme; both parties must name the same.
    #[arg(long, default_value = "prp", value_parser = crate::schemes::one())]
    scheme: SchemeKind,
    /// Who learns the output.
    #[arg(long, value_enum, default_value_t = OutputArg::Evaluator)]
    output: OutputArg,
    /// Stream the circuit file: read it in two passes (liveness, then windows of this many
    /// gates) and garble and evaluate it window by window, in memory that follows its live
    /// wires whatever its size (no limit on the file's size); both parties must give the
    /// same number.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1 << 24), conflicts_with_all = ["threads", "strategy"])]
    stream_window: Option<u32>,
    /// This party's threads (each party picks its own): the garbler shares each wide batch
    /// among them (fgp) or garbles independent partitions on them (cgp); an evaluator on more
    /// than one thread, or under cgp, takes every table first, then evaluates on its threads.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: u32,
    /// Parallel garbling: `fgp` shares the gates of each wide batch among the threads, `cgp`
    /// garbles the independent partitions the compiler finds on separate threads, then the
    /// rest fine-grained, `auto` the faster of the two for the circuit (cgp when its
    /// independent partitions hold at least half its AND gates); both parties must name the
    /// same.
    #[arg(long, value_enum, default_value_t = StrategyArg::Auto)]
    strategy: StrategyArg,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// How a party reaches its peer: `tessera run` and `tessera mpc run`.
#[derive(Args)]
pub struct LinkArgs {
    /// Wait for the peer on this address (`127.0.0.1:0` picks a port, printed on stderr).
    #[arg(long, conflicts_with = "connect", required_unless_present = "connect")]
    listen: Option<String>,
    /// Connect to the peer at this address.
    #[arg(long)]
    connect: Option<String>,
    /// Directory with this party's key.pem and cert.pem (from `tessera keygen`): use TLS.
    #[arg(long, requires = "peer_cert")]
    tls_dir: Option<PathBuf>,
    /// The peer's certificate, pinned.
    #[arg(long, requires = "tls_dir")]
    peer_cert: Option<PathBuf>,
    /// Seconds to wait for the peer: to connect, and for each message or for it to take
    /// this party's data (values too large for the clock wait forever).
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// Seconds the whole run may take, set-up included, however the peer trickles its data
    /// (0: no bound).
    #[arg(long, default_value_t = DEFAULT_DEADLINE_S)]
    deadline: u64,
}

/// The default bound on a whole run, in seconds: an hour.
pub const DEFAULT_DEADLINE_S: u64 = 3600;

/// The network settings of `--timeout` and `--deadline` (0: none), in seconds.
pub fn net_config(timeout: u64, deadline: u64) -> NetConfig {
    NetConfig {
        timeout: Duration::from_secs(timeout.max(1)),
        deadline: (deadline > 0).then(|| Duration::from_secs(deadline)),
    }
}

impl LinkArgs {
    /// Whether this party listens (and is party 0).
    pub fn listens(&self) -> bool {
        self.listen.is_some()
    }
}

/// The network `args` describes: the listening party is party 0, the connecting one party 1.
pub fn open(args: &LinkArgs) -> Result<Network, CliError> {
    let config = net_config(args.timeout, args.deadline);
    let me = usize::from(args.listen.is_none());
    let tls = match (&args.tls_dir, &args.peer_cert) {
        (Some(dir), Some(peer)) => Some(tls::TlsConfig::load(dir, &[(1 - me, peer.as_path())])?),
        _ => None,
    };
    let listener = match &args.listen {
        Some(addr) => {
            let l = tcp::listen(addr)?;
            eprintln!("tessera: listening on {}", l.local_addr()?);
            Some(l)
        }
        None => None,
    };
    let lower: Vec<String> = args.connect.iter().cloned().collect();
    Ok(tcp::two_party(
        listener.as_ref(),
        &lower,
        tls.as_ref(),
        config,
        &tessera_net::Stopper::new(),
    )?)
}

/// What `tessera run` computes: a circuit held whole, or a file streamed window by window.
enum Body {
    Whole(tessera_circuit::Circuit),
    File(Box<Streamed>),
}

/// The evaluator's word, when only it learns the output, that it has it.
const FINISHED: Kind = Kind::new(1, "finished");

/// When only the evaluator learns the output, the garbler waits (within its timeout and
/// deadline) for the evaluator's word that it finished, so it never reports success for a run
/// that failed there: a failed evaluator's abort arrives instead.
fn finished(s: &mut Session, peer: usize, role: YaoRole) -> Result<(), ProtocolError> {
    let tag = s.space(peer)?.tag(FINISHED);
    match role {
        YaoRole::Evaluator => {
            s.network().send(peer, tag, &[])?;
            s.network().flush()?;
        }
        YaoRole::Garbler => s.network().recv_into(peer, tag, &mut [])?,
    }
    Ok(())
}

/// One party of a Yao run.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let opened = Instant::now();
    let body = match args.stream_window {
        Some(window) => {
            let file = Streamed::open(Path::new(&args.circuit), window as usize)?;
            Body::File(Box::new(file))
        }
        None => Body::Whole(load(&args.circuit)?.0),
    };
    let liveness_ms = matches!(body, Body::File(_)).then(|| opened.elapsed().as_secs_f64() * 1e3);
    let inputs = match &body {
        Body::File(f) => f.inputs().to_vec(),
        Body::Whole(c) => c.inputs.clone(),
    };
    if inputs.len() != 2 {
        return Err(CliError::Usage(format!(
            "{}: a two-party circuit needs two input values, this one has {}",
            args.circuit,
            inputs.len()
        )));
    }
    let value = usize::from(args.role == Role::Evaluator);
    let bits = crate::circuit::hex_value(&args.input, inputs[value])?;
    let outputs = match args.output {
        OutputArg::Evaluator => OutputTo::Evaluator,
        OutputArg::Garbler => OutputTo::Garbler,
        OutputArg::Both => OutputTo::Both,
    };
    let network = open(&args.link)?;
    let peer = 1 - network.id();
    let mut session = Session::new(network, SessionConfig::default())?;
    let start = Instant::now();
    let role = match args.role {
        Role::Garbler => YaoRole::Garbler,
        Role::Evaluator => YaoRole::Evaluator,
    };
    let parallel = Parallel {
        strategy: match (args.strategy, &body) {
            (StrategyArg::Auto, Body::Whole(c)) => Strategy::for_circuit(c),
            (StrategyArg::Auto | StrategyArg::Fgp, _) => Strategy::Fgp,
            (StrategyArg::Cgp, _) => Strategy::Cgp,
        },
        threads: args.threads as usize,
    };
    let (output, setup, phases) = match body {
        Body::File(file) => {
            let modes = (args.scheme, outputs);
            let outcome = yao_file::run(&mut session, (peer, role), *file, modes, &bits)?;
            (outcome.output, Vec::new(), outcome.phases)
        }
        Body::Whole(circuit) => {
            let modes = (args.scheme, outputs, parallel);
            let mut yao = Yao::setup_parallel(&mut session, (peer, role), circuit, modes)?;
            let outcome = yao.run(&mut session, &bits)?;
            (outcome.output, yao.setup_phases().to_vec(), outcome.phases)
        }
    };
    if matches!(outputs, OutputTo::Evaluator) {
        session.run(|s| finished(s, peer, role))?;
    }
    let total_ms = start.elapsed().as_secs_f64() * 1e3;
    let output: Option<Vec<String>> =
        output.map(|values| values.iter().map(|v| bits_to_hex(v)).collect());
    let stats = session.network().stats();
    if args.json {
        println!(
            "{}",
            json!({
                "role": if value == 0 { "garbler" } else { "evaluator" },
                "circuit": args.circuit,
                "threads": parallel.threads,
                "strategy": parallel.strategy.name(),
                "output": output,
                "total_ms": total_ms,
                "bytes_sent": stats.bytes_sent,
                "bytes_received": stats.bytes_received,
                "messages_sent": stats.messages_sent,
                "messages_received": stats.messages_received,
                "rounds": stats.rounds,
                "setup_phases": phases_json(&setup),
                "phases": phases_json(&phases),
                "peak_rss_bytes": crate::bench::peak_rss_bytes(),
                "liveness_ms": liveness_ms,
            })
        );
    } else {
        match output {
            Some(values) => values.iter().for_each(|v| println!("{v}")),
            None => eprintln!("tessera: done; the evaluator has the output"),
        }
    }
    Ok(())
}

/// Options of `tessera keygen`.
#[derive(Args)]
pub struct KeygenArgs {
    /// Directory to write key.pem (mode 0600) and cert.pem to (created if missing).
    #[arg(long)]
    out: PathBuf,
    /// Replace existing key.pem and cert.pem (a link there is removed, not followed).
    #[arg(long)]
    force: bool,
}

/// Writes a key and self-signed certificate for TLS runs.
pub fn keygen(args: &KeygenArgs) -> Result<(), CliError> {
    let cert = tls::keygen(&args.out, args.force)?;
    println!("{}", cert.display());
    Ok(())
}
