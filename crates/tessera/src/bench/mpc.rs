//! `tessera bench mpc`: a Boolean circuit in Yao (Y), GMW (B) and ABY2.0 (β) between two
//! threads over loopback TCP, SIMD over several copies, with the output revealed to both and
//! checked against plaintext. Reports the median setup and online times, bytes and rounds per
//! phase, and the online time against the circuit's AND-depth times the round trip measured in
//! the same run (the bound of B and β, one round per AND layer).
//!
//! Y runs as a hybrid program of the circuit: its setup draws the correlated OTs of the
//! evaluator's input bits and garbles the copies side by side, the tables sent there (the base
//! OTs are set up once per session, in the warm-up); online, the input labels and the
//! evaluation. B's and β's setup draws the triples by OT.

use super::{BENCH, Exchange, NetCondition, SampleStats, Wire, cpu_model, emit, loopback, median};
use crate::CliError;
use crate::circuit::load;
use serde_json::json;
use std::thread;
use std::time::Instant;
use tessera_circuit::Circuit;
use tessera_circuit::analysis::and_depth;
use tessera_circuit::eval::evaluate;
use tessera_core::{Backend, Prg};
use tessera_net::{Channel, Kind, Stats};
use tessera_protocols::boolean::{BoolCircuit, BoolSharing, Outputs, Reveal};
use tessera_protocols::hybrid::{Plain, Program, Sharing};
use tessera_protocols::{Session, SessionConfig};

const SYNC: Kind = Kind::new(0x73, "bench sync");

/// A protocol `tessera bench mpc` runs a Boolean circuit in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpcProtocol {
    /// Yao's garbled circuits (the half-gates "PRP" scheme).
    Yao,
    /// A secret sharing.
    Shared(BoolSharing),
}

impl MpcProtocol {
    /// The names, for help texts.
    pub const NAMES: &'static str = "y, b, beta";

    fn name(self) -> &'static str {
        match self {
            MpcProtocol::Yao => "y",
            MpcProtocol::Shared(s) => s.name(),
        }
    }

    fn parse(name: &str) -> Result<MpcProtocol, String> {
        match name {
            "y" => Ok(MpcProtocol::Yao),
            _ => BoolSharing::from_name(name)
                .map(MpcProtocol::Shared)
                .ok_or_else(|| format!("{name}: not one of {}", Self::NAMES)),
        }
    }
}

/// Options of `tessera bench mpc`.
#[derive(clap::Args)]
pub struct MpcArgs {
    /// A built-in circuit or a Bristol file with two input values.
    #[arg(long, default_value = "aes128")]
    circuit: String,
    /// Protocols, comma-separated: y (Yao), b (GMW), beta (ABY2.0).
    #[arg(long, value_delimiter = ',', default_value = "y,b,beta", value_parser = MpcProtocol::parse)]
    protocol: Vec<MpcProtocol>,
    /// SIMD widths (copies of the circuit evaluated at once), comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "1",
          value_parser = clap::value_parser!(u32).range(1..=4096))]
    simd: Vec<u32>,
    /// Timed executions after one warm-up; medians are reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    samples: u32,
    /// Threads per party for the local work of AND layers of at least 4096 words (B and β);
    /// 1 runs everything on the party's own thread.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    threads: u32,
    /// One JSON object per line instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    net: NetCondition,
}

/// One timed execution at party 0.
#[derive(Clone, Copy, Default)]
struct Sample {
    setup_ms: f64,
    online_ms: f64,
    setup: Stats,
    online: Stats,
}

/// Both parties' inputs for `simd` copies: per side, per copy, the values it owns.
type Inputs = [Vec<Vec<Vec<bool>>>; 2];

fn random_inputs(c: &Circuit, simd: usize, prg: &mut Prg) -> Inputs {
    let mut side = |s: usize| -> Vec<Vec<Vec<bool>>> {
        (0..simd)
            .map(|_| {
                (0..c.inputs.len())
                    .filter(|v| v % 2 == s)
                    .map(|v| (0..c.inputs[v]).map(|_| prg.random_block().lsb()).collect())
                    .collect()
            })
            .collect()
    };
    [side(0), side(1)]
}

fn plaintext(c: &Circuit, x: &Inputs) -> Result<Outputs, CliError> {
    x[0].iter()
        .zip(&x[1])
        .map(|(a, b)| {
            let (mut a, mut b) = (a.iter(), b.iter());
            let all: Vec<Vec<bool>> = (0..c.inputs.len())
                .filter_map(|v| if v % 2 == 0 { a.next() } else { b.next() }.cloned())
                .collect();
            Ok(evaluate(c, &all)?)
        })
        .collect()
}

/// Both parties wait for each other.
fn sync(s: &mut Session, peer: usize) -> Result<(), CliError> {
    let mut ch = s.channel(peer);
    ch.send(BENCH.tag(SYNC), &[])?;
    ch.flush()?;
    ch.recv_bounded(BENCH.tag(SYNC), 0)?;
    Ok(())
}

/// One execution of `c` on `simd` copies between the two sides.
fn execute(
    s: &mut Session,
    peer: usize,
    side: usize,
    protocol: MpcProtocol,
    c: &Circuit,
    simd: usize,
    x: &[Vec<Vec<bool>>],
) -> Result<(Sample, Option<Outputs>), CliError> {
    sync(s, peer)?;
    let (t, before) = (Instant::now(), s.network().stats());
    let mut sample = Sample::default();
    let outputs = match protocol {
        MpcProtocol::Shared(sharing) => {
            let bc = BoolCircuit::new(c.clone(), sharing, simd)?;
            let prepared = bc.setup(s, peer, Reveal::Both)?;
            sample.setup_ms = t.elapsed().as_secs_f64() * 1e3;
            sample.setup = s.network().stats().since(&before);
            sync(s, peer)?;
            let (t, before) = (Instant::now(), s.network().stats());
            let out = bc.online(s, peer, prepared, x, Reveal::Both)?;
            sample.online_ms = t.elapsed().as_secs_f64() * 1e3;
            sample.online = s.network().stats().since(&before);
            out
        }
        MpcProtocol::Yao => {
            // Garbled by party 0 in the setup (its tables sent there), the copies side by side.
            let (p, inputs) = Program::of_circuit(c, Sharing::Y, simd, Reveal::Both)?;
            let prepared = p.setup(s, peer)?;
            sample.setup_ms = t.elapsed().as_secs_f64() * 1e3;
            sample.setup = s.network().stats().since(&before);
            sync(s, peer)?;
            let mine = Plain::Bits(x.iter().map(|copy| copy[0].clone()).collect());
            let (t, before) = (Instant::now(), s.network().stats());
            let out = p.online(s, peer, prepared, &[(inputs[side], mine)])?;
            sample.online_ms = t.elapsed().as_secs_f64() * 1e3;
            sample.online = s.network().stats().since(&before);
            per_copy(out, simd)
        }
    };
    Ok((sample, outputs))
}

/// A program's outputs (each value's `simd` copies) per copy; `None` unless every value is.
fn per_copy(values: Vec<Option<Plain>>, simd: usize) -> Option<Outputs> {
    let values: Vec<Vec<Vec<bool>>> = values
        .into_iter()
        .map(|v| match v {
            Some(Plain::Bits(copies)) => Some(copies),
            _ => None,
        })
        .collect::<Option<_>>()?;
    Some(
        (0..simd)
            .map(|k| values.iter().map(|v| v[k].clone()).collect())
            .collect(),
    )
}

/// One party's whole run: the round trips, then the executions, each checked (the first is
/// the warm-up, which sets up the base OTs).
fn party(
    net: tessera_net::Network,
    protocol: MpcProtocol,
    c: Circuit,
    simd: usize,
    runs: Vec<(Inputs, Outputs)>,
) -> Result<Vec<Sample>, CliError> {
    let side = net.id();
    let peer = 1 - side;
    let mut s = Session::new(net, SessionConfig::default())?;
    let mut samples = Vec::with_capacity(runs.len());
    for (k, (x, expect)) in runs.iter().enumerate() {
        let (sample, out) = execute(&mut s, peer, side, protocol, &c, simd, &x[side])?;
        if out.as_ref() != Some(expect) {
            return Err(CliError::Usage(format!(
                "{} execution {k}: the output differs from plaintext",
                protocol.name()
            )));
        }
        samples.push(sample);
    }
    Ok(samples)
}

/// Runs `f` on a rayon pool of `threads` threads (the party's local work of wide layers).
fn in_pool<T: Send>(
    threads: usize,
    f: impl FnOnce() -> Result<T, CliError> + Send,
) -> Result<T, CliError> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| CliError::Usage(format!("a pool of {threads} threads: {e}")))?
        .install(f)
}

/// Runs `tessera bench mpc`.
pub fn run(args: &MpcArgs) -> Result<(), CliError> {
    let (circuit, _) = load(&args.circuit)?;
    if circuit.inputs.len() != 2 {
        return Err(CliError::Usage(format!(
            "{}: a two-party circuit needs two input values",
            args.circuit
        )));
    }
    let depth = and_depth(&circuit) as f64;
    let mut prg = Prg::from_os()?;
    for &protocol in &args.protocol {
        for &simd in &args.simd {
            let simd = simd as usize;
            let runs = (0..=args.samples)
                .map(|_| {
                    let x = random_inputs(&circuit, simd, &mut prg);
                    let expect = plaintext(&circuit, &x)?;
                    Ok((x, expect))
                })
                .collect::<Result<Vec<_>, CliError>>()?;
            let ((n0, n1), wire) = loopback(args.net)?;
            let (c1, runs1) = (circuit.clone(), runs.clone());
            let threads = args.threads as usize;
            let other =
                thread::spawn(move || in_pool(threads, || party(n1, protocol, c1, simd, runs1)));
            let mine = in_pool(threads, || party(n0, protocol, circuit.clone(), simd, runs));
            let theirs = other
                .join()
                .map_err(|_| CliError::Usage("party 1 panicked".into()))?;
            let samples = mine?;
            let their_samples = theirs?;
            report(
                args,
                protocol,
                simd,
                depth,
                &wire,
                [&samples, &their_samples],
            );
        }
    }
    Ok(())
}

fn report(
    args: &MpcArgs,
    protocol: MpcProtocol,
    simd: usize,
    depth: f64,
    wire: &Wire,
    [samples, theirs]: [&[Sample]; 2],
) {
    let rtt = wire.rtt_ms();
    // Each sample's exchanges, both parties' counts together.
    let exchange = |f: fn(&Sample) -> Stats| {
        let x: Vec<Exchange> = samples[1..]
            .iter()
            .zip(&theirs[1..])
            .map(|(a, b)| Exchange::of_pair(&f(a), &f(b)))
            .collect();
        Exchange {
            rounds: median(x.iter().map(|e| e.rounds).collect()),
            busier_bytes: median(x.iter().map(|e| e.busier_bytes).collect()),
        }
    };
    let (setup_exchange, online_exchange) = (exchange(|s| s.setup), exchange(|s| s.online));
    let (first, samples) = (samples[0], &samples[1..]);
    let pick = |f: fn(&Sample) -> f64| median(samples.iter().map(f).collect());
    let stats = |f: fn(&Sample) -> f64| SampleStats::of(samples.iter().map(f));
    let (setup_stats, online_stats) = (stats(|s| s.setup_ms), stats(|s| s.online_ms));
    let (setup_ms, online_ms) = (setup_stats.median, online_stats.median);
    let (setup_bytes, online_bytes) = (
        pick(|s| (s.setup.bytes_sent + s.setup.bytes_received) as f64),
        pick(|s| (s.online.bytes_sent + s.online.bytes_received) as f64),
    );
    let (setup_rounds, online_rounds) = (
        pick(|s| s.setup.rounds as f64),
        pick(|s| s.online.rounds as f64),
    );
    let bound = depth * rtt;
    let mut v = json!({
        "circuit": args.circuit,
        "protocol": protocol.name(),
        "simd": simd,
        "threads": args.threads,
        "samples": samples.len(),
        "first_setup_ms": first.setup_ms,
        "setup_ms": setup_ms,
        "online_ms": online_ms,
        "setup_ms_stats": setup_stats,
        "online_ms_stats": online_stats,
        "setup_bytes": setup_bytes,
        "online_bytes": online_bytes,
        "setup_rounds": setup_rounds,
        "online_rounds": online_rounds,
        "and_depth": depth,
        "depth_round_trips_ms": bound,
        "online_over_depth_round_trips": online_ms / bound.max(1e-9),
        "outputs_checked": true,
        "backend": Backend::active().name(),
        "cpu": cpu_model(),
    });
    wire.describe(&mut v);
    let judged = wire.judge(&mut v, "setup", setup_ms, setup_exchange)
        + &wire.judge(&mut v, "online", online_ms, online_exchange);
    if args.json {
        emit(v);
    } else {
        println!(
            "{} {:>4} simd {simd:>4}: first setup (base OTs) {:8.2} ms, setup {setup_ms:8.2} ms {:>10} B {setup_rounds:>4} rounds | online {online_ms:8.3} ms {:>10} B {online_rounds:>5} rounds | depth {depth} x rtt {rtt:.4} ms = {bound:.3} ms, online/that {:.2}{judged}",
            args.circuit,
            protocol.name(),
            first.setup_ms,
            setup_bytes,
            online_bytes,
            online_ms / bound.max(1e-9)
        );
    }
}
