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
use crate::ag::{CotArg, in_threads};
use crate::circuit::load;
use clap::Args;
use serde_json::{Value, json};
use std::time::Instant;
use tessera_ag::Job;
use tessera_ag::twopc::Program;
use tessera_circuit::Circuit;
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
            let (circuit, _) = load(name)?;
            let program = if n == 2 {
                Some(Program::new(&circuit)?)
            } else {
                None
            };
            let job = program.as_ref().map_or(Job::Many(&circuit), Job::Two);
            let samples = (0..args.samples)
                .map(|_| sample(&circuit, job, n, args))
                .collect::<Result<Vec<_>, _>>()?;
            report(args, name, &circuit, job, &samples)?;
        }
    }
    Ok(())
}

/// One run among `n` threads on fresh random inputs, outputs checked against plaintext.
fn sample(circuit: &Circuit, job: Job<'_>, n: usize, args: &AgArgs) -> Result<Sample, CliError> {
    let mut prg = Prg::from_os()?;
    let values: Vec<Vec<bool>> = circuit
        .inputs
        .iter()
        .map(|&w| (0..w).map(|_| prg.random_block().lsb()).collect())
        .collect();
    let expect = evaluate(circuit, &values)?.concat();
    let ot = args.cot.choice()?;
    let (nets, wire) = loopback_mesh(n, None, args.net)?;
    let start = Instant::now();
    let runs = in_threads(nets, ot, job, &values)?;
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
    })
}

/// Phase `name` of a run: the latest party's time, every party's bytes.
fn phase(s: &Sample, name: &str) -> (f64, u64) {
    let mut ms: f64 = 0.0;
    let mut bytes = 0;
    for ph in s.phases.iter().flatten().filter(|p| p.name == name) {
        ms = ms.max(ph.ms);
        bytes += ph.traffic.bytes_sent;
    }
    (ms, bytes)
}

fn report(
    args: &AgArgs,
    name: &str,
    circuit: &Circuit,
    job: Job<'_>,
    samples: &[Sample],
) -> Result<(), CliError> {
    let ands = job.ands().max(1) as f64;
    let n = samples[0].phases.len();
    let local_ms = SchemeKind::Prp.visit(LocalMs(circuit))?;
    let mut phases = serde_json::Map::new();
    let mut text = Vec::new();
    let mut total_bytes = 0.0;
    for name in PHASES {
        let ms_stats = SampleStats::of(samples.iter().map(|s| phase(s, name).0));
        let ms = ms_stats.median;
        let bytes = median(samples.iter().map(|s| phase(s, name).1 as f64).collect());
        total_bytes += bytes;
        phases.insert(
            name.to_owned(),
            json!({"ms": ms, "ms_stats": ms_stats, "bytes": bytes, "bytes_per_and": bytes / ands}),
        );
        text.push(format!("{name} {ms:.1} ms"));
    }
    let total_stats = SampleStats::of(samples.iter().map(|s| s.total_ms));
    let total_ms = total_stats.median;
    let mut v = json!({
        "circuit": name,
        "parties": n,
        "cot": args.cot.choice()?.name(),
        "and_gates": job.ands(),
        "samples": samples.len(),
        "phases": Value::Object(phases),
        "total_ms": total_ms,
        "total_ms_stats": total_stats,
        "bytes_per_and": total_bytes / ands,
        "and_per_sec": ands / (total_ms / 1e3),
        "semi_honest_local_ms": local_ms,
        "total_over_semi_honest_local": total_ms / local_ms,
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
    if args.json {
        emit(v);
    } else {
        println!(
            "{name}, {n} parties, {}: {} AND gates, {}; total {total_ms:.1} ms, {:.0} bytes per AND gate, {:.3} M AND/s (semi-honest garble+evaluate alone {local_ms:.2} ms){judged}",
            args.cot.choice()?.name(),
            job.ands(),
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
