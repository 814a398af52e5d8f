//! `tessera bench ag`: actively secure computation by authenticated garbling between two
//! (KRRW18) or among n (WRK17b) threads over loopback TCP (or through the link emulator): setup,
//! function-independent,
//! function-dependent and online time, bytes per AND gate per phase, AND gates per second and
//! the process's peak RSS, against semi-honest garbling plus evaluation of the same circuit in
//! one thread (measured in the same run) and, with `--net`, against the link's bound.

use super::yao::LocalMs;
use super::{
    Exchange, NetCondition, SampleStats, Wire, cpu_model, emit, loopback_mesh, median,
    peak_rss_bytes,
};
use crate::CliError;
use crate::ag::{CotArg, in_threads, in_threads_with, in_windows_by_default};
use crate::circuit::load;
use clap::Args;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::time::Instant;
use tessera_ag::Job;
use tessera_ag::twopc::{self, Outputs, Program};
use tessera_circuit::Circuit;
use tessera_circuit::bristol::stream::{DEFAULT_WINDOW, Streamed};
use tessera_circuit::eval::evaluate;
use tessera_core::{Backend, Prg};
use tessera_garble::SchemeKind;
use tessera_net::Phase;

/// The phases of a run, in order.
const PHASES: [&str; 4] = [
    "setup",
    "function-independent",
    "function-dependent",
    "online",
];

/// Options of `tessera bench ag`.
#[derive(Args)]
pub struct AgArgs {
    /// Party counts: 2 runs KRRW18's two-party protocol, more WRK17b's (party 0 evaluating).
    #[arg(long, value_delimiter = ',', default_value = "2")]
    parties: Vec<usize>,
    /// Built-in circuits or Bristol files (input value i from party i).
    #[arg(long, value_delimiter = ',', default_value = "aes128,sha256")]
    circuit: Vec<String>,
    /// The correlated OT behind the authenticated bits.
    #[arg(long, value_enum, default_value_t = CotArg::Softspoken)]
    cot: CotArg,
    /// Runs per circuit; the medians are reported.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    samples: u32,
    /// One JSON object per line instead of a table.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    net: NetCondition,
    /// Instead of the circuits: SHA-256 of a random message long enough for this many AND
    /// gates, as a chain of compression functions with the state carried, between this
    /// process and a second one it starts; reports time, AND gates per second and both peak
    /// RSS.
    #[arg(long, conflicts_with_all = ["circuit", "net", "samples"])]
    chain_ands: Option<u64>,
    /// Evaluate the chain, connecting to the garbler at this address (the benchmark starts
    /// this second process itself).
    #[arg(long, hide = true, requires = "chain_ands")]
    evaluator_of: Option<String>,
}

/// One run: each party's phases, and the outputs checked.
struct Sample {
    phases: Vec<Vec<Phase>>,
    total_ms: f64,
    /// The link the run went over.
    wire: Wire,
    /// The circuit's AND gates.
    ands: usize,
}

/// Runs `tessera bench ag`.
pub fn run(args: &AgArgs) -> Result<(), CliError> {
    if let Some(ands) = args.chain_ands {
        return super::ag_chain::run(ands, args.cot, args.json, args.evaluator_of.as_deref());
    }
    if let Some(&n) = args.parties.iter().find(|&&n| n < 2) {
        return Err(CliError::Usage(format!("--parties {n}: at least 2")));
    }
    for &n in &args.parties {
        for name in &args.circuit {
            let bench = Bench::load(name, n)?;
            let samples = (0..args.samples)
                .map(|_| bench.sample(n, args))
                .collect::<Result<Vec<_>, _>>()?;
            report(args, name, &bench, &samples)?;
        }
    }
    Ok(())
}

/// What `bench ag` runs of one circuit: the circuit read whole (between two parties compiled
/// as one program), or, between two parties, a file of more gates than a window, read in
/// windows by each party (`twopc::run_file`), as `ag run` reads it.
enum Bench {
    Whole {
        circuit: Box<Circuit>,
        program: Option<Box<Program>>,
    },
    Streamed(PathBuf),
}

impl Bench {
    /// The circuit `name` for `n` parties.
    fn load(name: &str, n: usize) -> Result<Bench, CliError> {
        if in_windows_by_default(name, n)? {
            return Ok(Bench::Streamed(PathBuf::from(name)));
        }
        let (circuit, _) = load(name)?;
        let program = if n == 2 {
            Some(Box::new(Program::new(&circuit)?))
        } else {
            None
        };
        Ok(Bench::Whole {
            circuit: Box::new(circuit),
            program,
        })
    }

    /// Semi-honest garbling plus evaluation of the circuit in one thread, in ms (for a circuit
    /// read whole).
    fn local_ms(&self) -> Result<Option<f64>, CliError> {
        match self {
            Bench::Whole { circuit, .. } => Ok(Some(SchemeKind::Prp.visit(LocalMs(circuit))?)),
            Bench::Streamed(_) => Ok(None),
        }
    }

    /// One run among `n` threads on fresh random inputs, outputs checked against plaintext
    /// (read in windows for a file read in windows). A file is opened by each party in its
    /// thread, its liveness pass timed with the run.
    fn sample(&self, n: usize, args: &AgArgs) -> Result<Sample, CliError> {
        let mut prg = Prg::from_os()?;
        let mut random = |widths: &[u32]| -> Vec<Vec<bool>> {
            (widths.iter())
                .map(|&w| (0..w).map(|_| prg.random_block().lsb()).collect())
                .collect()
        };
        let (values, expect, ands) = match self {
            Bench::Whole { circuit, program } => {
                let values = random(&circuit.inputs);
                let expect = evaluate(circuit, &values)?;
                (values, expect, job(circuit, program).ands())
            }
            Bench::Streamed(path) => {
                let plain = Streamed::open(path, DEFAULT_WINDOW)?;
                let (values, ands) = (random(plain.inputs()), plain.and_gates() as usize);
                let expect = plain.evaluate(&values)?;
                (values, expect, ands)
            }
        };
        let expect = expect.concat();
        let ot = args.cot.choice()?;
        let (nets, wire) = loopback_mesh(n, None, args.net)?;
        let start = Instant::now();
        let runs = match self {
            Bench::Whole { circuit, program } => {
                in_threads(nets, ot, job(circuit, program), &values)?
            }
            Bench::Streamed(path) => in_threads_with(nets, ot, &values, |s, input| {
                let mut file = Streamed::open(path, DEFAULT_WINDOW)?;
                Ok(twopc::run_file(s, &mut file, input, Outputs::All)?)
            })?,
        };
        let total_ms = start.elapsed().as_secs_f64() * 1e3;
        let mut phases = vec![Vec::new(); n];
        for (p, r) in runs.into_iter().enumerate() {
            if r.output.as_deref() != Some(&expect[..]) {
                return Err(CliError::Usage(format!(
                    "party {p}'s output differs from plaintext"
                )));
            }
            phases[p] = r.phases;
        }
        Ok(Sample {
            phases,
            total_ms,
            wire,
            ands,
        })
    }
}

/// The job of a circuit read whole: the two-party program if compiled, else the n-party
/// circuit.
fn job<'a>(circuit: &'a Circuit, program: &'a Option<Box<Program>>) -> Job<'a> {
    program.as_deref().map_or(Job::Many(circuit), Job::Two)
}

/// Phase `name` of one party's run: its time (the entries of that name added, as many as its
/// steps left unfolded) and the bytes it sent.
fn party_phase(phases: &[Phase], name: &str) -> (f64, u64) {
    let named = phases.iter().filter(|p| p.name == name);
    named.fold((0.0, 0), |(ms, bytes), p| {
        (ms + p.ms, bytes + p.traffic.bytes_sent)
    })
}

/// Phase `name` of a run at party 0 (the evaluator, whose times EMP's drivers print).
fn evaluator_ms(s: &Sample, name: &str) -> f64 {
    s.phases.first().map_or(0.0, |p| party_phase(p, name).0)
}

/// Phase `name` of a run: the latest party's time, every party's bytes.
fn phase(s: &Sample, name: &str) -> (f64, u64) {
    let each = s.phases.iter().map(|p| party_phase(p, name));
    each.fold((0.0, 0), |(ms, bytes), (m, b)| (f64::max(ms, m), bytes + b))
}

fn report(args: &AgArgs, name: &str, bench: &Bench, samples: &[Sample]) -> Result<(), CliError> {
    let ands = samples[0].ands.max(1) as f64;
    let n = samples[0].phases.len();
    let local_ms = bench.local_ms()?;
    let mut phases = serde_json::Map::new();
    let mut text = Vec::new();
    let mut total_bytes = 0.0;
    for name in PHASES {
        let ms_stats = SampleStats::of(samples.iter().map(|s| phase(s, name).0));
        let ms = ms_stats.median;
        let bytes = median(samples.iter().map(|s| phase(s, name).1 as f64).collect());
        let at_0 = median(samples.iter().map(|s| evaluator_ms(s, name)).collect());
        total_bytes += bytes;
        phases.insert(
            name.to_owned(),
            json!({"ms": ms, "ms_stats": ms_stats, "evaluator_ms": at_0, "bytes": bytes,
                "bytes_per_and": bytes / ands}),
        );
        text.push(format!("{name} {ms:.1} ms"));
    }
    let total_stats = SampleStats::of(samples.iter().map(|s| s.total_ms));
    let total_ms = total_stats.median;
    let mut v = json!({
        "circuit": name,
        "parties": n,
        "cot": args.cot.choice()?.name(),
        "and_gates": samples[0].ands,
        "samples": samples.len(),
        "phases": Value::Object(phases),
        "total_ms": total_ms,
        "total_ms_stats": total_stats,
        "bytes_per_and": total_bytes / ands,
        "and_per_sec": ands / (total_ms / 1e3),
        "semi_honest_local_ms": local_ms,
        "total_over_semi_honest_local": local_ms.map(|l| total_ms / l),
        "window": matches!(bench, Bench::Streamed(_)).then_some(DEFAULT_WINDOW),
        "peak_rss_bytes": peak_rss_bytes(),
        "outputs_checked": true,
        "backend": Backend::active().name(),
        "cpu": cpu_model(),
    });
    let last = &samples[samples.len() - 1];
    last.wire.describe(&mut v);
    let judged = if n == 2 {
        online_bound(samples, &mut v)
    } else {
        String::new()
    };
    let bound = match local_ms {
        Some(l) => format!("semi-honest garble+evaluate alone {l:.2} ms"),
        None => format!("read in windows of {DEFAULT_WINDOW} gates by each party"),
    };
    if args.json {
        emit(v);
    } else {
        println!(
            "{name}, {n} parties, {}: {} AND gates, {}; total {total_ms:.1} ms, {:.0} bytes per AND gate, {:.3} M AND/s ({bound}){judged}",
            args.cot.choice()?.name(),
            samples[0].ands,
            text.join(", "),
            total_bytes / ands,
            ands / (total_ms / 1e3) / 1e6,
        );
    }
    Ok(())
}

/// The online phase against the link's bound (rounds × round trip + bytes / rate).
fn online_bound(samples: &[Sample], v: &mut Value) -> String {
    let last = &samples[samples.len() - 1];
    let online = |p: usize| {
        last.phases[p]
            .iter()
            .find(|ph| ph.name == "online")
            .map(|ph| ph.traffic)
            .unwrap_or_default()
    };
    let ms = median(samples.iter().map(|s| phase(s, "online").0).collect());
    last.wire
        .judge(v, "online", ms, Exchange::of_pair(&online(0), &online(1)))
}
