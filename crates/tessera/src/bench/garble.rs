//! `tessera bench garble`: garbling and evaluation speed in AND gates per second, per scheme,
//! with `garble_efficiency` and `eval_efficiency`: the time the scheme's AES work
//! ([`tessera_garble::SchemeKind::cost`]) takes at the in-run AES roofline (blocks/s of the
//! active backend, one core) over the time measured. With several thread counts, each line
//! also gives its speed-up over the first count and the parallel efficiency (speed-up per
//! thread, UltraSFE Figure 5): the thread counts are timed in turns, one sample of each per
//! round, and the speed-up is the median over the rounds of the ratio within a round, so a
//! change in the machine's load falls on both sides of it. The memory traffic per AND gate,
//! counted from the plan, times the garbling rate is set beside the bandwidth of a plain copy
//! measured in the same run. One engine's runs are timed with the input labels already in its
//! slots (placed before the timer starts, as EMP's driver has its inputs in place);
//! partitioned runs are timed whole.

use super::local::{LocalCgp, LocalRun};
use super::{
    CommonArgs, SampleStats, Turns, copy_bandwidth, core_round_trip_ns, cpu_model, emit,
    measure_turns, peak_rss_bytes, roofline_rate,
};
use crate::CliError;
use crate::circuit::load;
use clap::{Args, ValueEnum};
use serde_json::json;
use std::time::{Duration, Instant};
use tessera_circuit::Circuit;
use tessera_circuit::builder::Builder;
use tessera_core::Backend;
use tessera_garble::{Batching, PlanStats, Scheme, SchemeKind, SchemeVisitor, XorGates};
use tessera_protocols::yao::threads as yao_threads;

/// Options of `tessera bench garble`.
#[derive(Args)]
pub struct GarbleArgs {
    #[command(flatten)]
    common: CommonArgs,
    /// `random-and` (independent AND gates, like a raw garbling loop), a built-in circuit
    /// (aes128, sha256, sha1, mul64, ...) or a Bristol file.
    #[arg(long, default_value = "aes128")]
    circuit: String,
    /// Garblings per timed sample (default: as many as fill --sample-ms).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    repeat: Option<u64>,
    /// AND gates of `random-and`.
    #[arg(long, default_value_t = 1 << 14)]
    gates: u32,
    #[arg(long, default_value = "prp", value_parser = crate::schemes::list, help = crate::schemes::list_help())]
    scheme: std::vec::Vec<SchemeKind>,
    /// Batching strategy; `all` measures each, `default` the one the engine picks, `none` one
    /// gate at a time (the unbatched reference).
    #[arg(long, value_enum, default_value_t = BatchingArg::All)]
    batching: BatchingArg,
    /// Thread counts to garble and evaluate with, comma-separated (fine-grained parallel
    /// garbling: each batch shared among the threads).
    #[arg(long, value_delimiter = ',', default_value = "1", value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: Vec<u32>,
    /// Parallel garbling: `fgp` shares each batch among the threads, `cgp` has them garble
    /// independent partitions of the circuit (found by the compiler) and then the tail, `ipp`
    /// runs inter-party parallel Yao between two threads over loopback TCP (each party garbles
    /// some partitions and evaluates the others) against one garbler's time; `auto` picks cgp
    /// when the circuit's independent partitions hold at least half its AND gates, else fgp.
    #[arg(long, value_enum, default_value_t = Strategy::Auto)]
    strategy: Strategy,
}

/// `--strategy`.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum Strategy {
    Auto,
    Fgp,
    Cgp,
    Ipp,
}

/// `--batching`.
#[derive(Clone, Copy, ValueEnum)]
enum BatchingArg {
    All,
    Default,
    Dynamic,
    Layered,
    None,
}

/// A wide circuit of `n` independent AND gates: out[k] = a[k] ∧ b[k].
fn random_and(n: u32) -> Result<Circuit, CliError> {
    let mut g = Builder::new();
    let (a, b) = (g.input(n), g.input(n));
    let out = g.and_bits(&a, &b);
    Ok(g.finish(&[out])?)
}

/// Runs the benchmark.
pub fn run(args: &GarbleArgs) -> Result<(), CliError> {
    let c = &args.common;
    let circuit = if args.circuit == "random-and" {
        random_and(args.gates)?
    } else {
        load(&args.circuit)?.0
    };
    let strategies = match args.batching {
        BatchingArg::All => vec![Batching::NONE, Batching::DYNAMIC, Batching::Layered],
        BatchingArg::Default => vec![Batching::default_for(&circuit)],
        BatchingArg::Dynamic => vec![Batching::DYNAMIC],
        BatchingArg::Layered => vec![Batching::Layered],
        BatchingArg::None => vec![Batching::NONE],
    };
    let strategy = match args.strategy {
        Strategy::Auto => match yao_threads::Strategy::for_circuit(&circuit) {
            yao_threads::Strategy::Fgp => Strategy::Fgp,
            yao_threads::Strategy::Cgp => Strategy::Cgp,
        },
        chosen => chosen,
    };
    let backend = Backend::active();
    let roofline = roofline_rate(c, backend)?;
    let copy = copy_bandwidth(c);
    // Only runs on several threads hand work between cores.
    let round_trip = (args.threads.iter().any(|&t| t > 1)).then(|| core_round_trip_ns(c));
    let default = Batching::default_for(&circuit);
    if strategy == Strategy::Ipp {
        return args
            .scheme
            .iter()
            .try_for_each(|&scheme| ipp_line(args, &circuit, scheme));
    }
    for &scheme in &args.scheme {
        for &batching in &strategies {
            let lines = scheme.visit(MeasureScheme {
                common: &args.common,
                repeat: args.repeat,
                circuit: &circuit,
                batching,
                backend,
                threads: &args.threads,
                strategy,
            })?;
            let t0 = args.threads[0];
            for (line, &threads) in lines.iter().zip(&args.threads) {
                let stats = line.stats;
                let (garble_rate, eval_rate) = (line.garble_rate, line.eval_rate);
                let (garble_eff, eval_eff) = line.efficiency(scheme, roofline);
                let [garble_speedup, eval_speedup] = line.speedup;
                let per_thread = f64::from(threads) / f64::from(t0);
                let json = json!({
                    "bench": "garble",
                    "circuit": args.circuit,
                    "scheme": scheme.name(),
                    "backend": backend.name(),
                    "batching": batching.name(),
                    "default_batching": batching == default,
                    "and_gates": stats.and_gates,
                    "xor_gates": stats.xor_gates,
                    "batches": stats.batches,
                    "mean_batch": stats.mean_batch(),
                    "label_slots": stats.slots,
                    "wires": circuit.num_wires,
                    "garble_and_per_sec": garble_rate.round(),
                    "eval_and_per_sec": eval_rate.round(),
                    "garble_and_per_sec_stats": line.rate_stats[0],
                    "eval_and_per_sec_stats": line.rate_stats[1],
                    "roofline_blocks_per_sec": roofline.round(),
                    "garble_efficiency": garble_eff,
                    "memory_bytes_per_and": line.bytes_per_and,
                    "garble_input_placing_share": line.placing[0],
                    "eval_input_placing_share": line.placing[1],
                    "garble_memory_bytes_per_sec": line.bytes_per_and * garble_rate,
                    "copy_bytes_per_sec": copy,
                    "garble_memory_over_copy": line.bytes_per_and * garble_rate / copy,
                    "eval_efficiency": eval_eff,
                    "threads": threads,
                    "strategy": strategy.to_possible_value().map(|v| v.get_name().to_owned()),
                    "partitions": line.partitions,
                    "tail_and_share": line.tail_share,
                    "speedup_base_threads": t0,
                    "garble_speedup": garble_speedup,
                    "eval_speedup": eval_speedup,
                    "garble_parallel_efficiency": garble_speedup / per_thread,
                    "eval_parallel_efficiency": eval_speedup / per_thread,
                    "core_round_trip_ns": round_trip,
                    "compile_ms": line.compile_s * 1e3,
                    "compile_over_garbling": line.compile_s * garble_rate / stats.and_gates.max(1) as f64,
                    "peak_rss_bytes": peak_rss_bytes(),
                    "cpu": cpu_model(),
                });
                if c.json {
                    emit(json);
                } else {
                    println!(
                        "{:<12} {:<5} {:<8} {:>2}T {:>8} AND  garble {:>7.1} M AND/s ({:.3}, ×{:.2})  evaluate {:>7.1} M AND/s ({:.3}, ×{:.2})  mean batch {:.1}  slots {}  compile {:.1} ms{}",
                        args.circuit,
                        scheme.name(),
                        batching.name(),
                        threads,
                        stats.and_gates,
                        garble_rate / 1e6,
                        garble_eff,
                        garble_speedup,
                        eval_rate / 1e6,
                        eval_eff,
                        eval_speedup,
                        stats.mean_batch(),
                        stats.slots,
                        line.compile_s * 1e3,
                        round_trip
                            .map_or(String::new(), |ns| format!("  core round trip {ns:.0} ns")),
                    );
                }
            }
        }
    }
    Ok(())
}

/// Inter-party parallel Yao between two threads over loopback TCP, one thread per party: the
/// median over the samples of party A's time without the hello and the partitioning,
/// against the time one garbler alone takes for the whole circuit (AND gates over its
/// single-thread garbling rate, measured in the same run), which bounds Yao with the
/// evaluation pipelined behind the garbling.
fn ipp_line(args: &GarbleArgs, circuit: &Circuit, scheme: SchemeKind) -> Result<(), CliError> {
    use tessera_protocols::yao::ipp;
    use tessera_protocols::{Session, SessionConfig};
    if circuit.inputs.len() != 2 {
        return Err(CliError::Usage(format!(
            "{}: inter-party parallel garbling needs two input values",
            args.circuit
        )));
    }
    let yao = scheme
        .visit(MeasureScheme {
            common: &args.common,
            repeat: args.repeat,
            circuit,
            batching: Batching::default_for(circuit),
            backend: Backend::active(),
            threads: &[1],
            strategy: Strategy::Fgp,
        })?
        .swap_remove(0);
    let and = yao.stats.and_gates as f64;
    let (x, y): (Vec<bool>, Vec<bool>) = (
        (0..circuit.inputs[0]).map(|i| i % 3 == 0).collect(),
        (0..circuit.inputs[1]).map(|i| i % 5 == 1).collect(),
    );
    let expect = tessera_circuit::eval::evaluate(circuit, &[x.clone(), y.clone()])?.concat();
    let ((na, nb), _wire) = super::loopback(super::NetCondition::default())?;
    let runs = args.common.samples as usize + 1;
    let (c, y2) = (circuit.clone(), y.clone());
    let b = std::thread::spawn(move || -> Result<(), CliError> {
        let mut s = Session::new(nb, SessionConfig::default())?;
        for _ in 0..runs {
            ipp::run(&mut s, 0, &c, scheme, &y2)?;
        }
        Ok(())
    });
    let mut s = Session::new(na, SessionConfig::default())?;
    let mut times = Vec::new();
    let mut last = None;
    for k in 0..runs {
        let o = ipp::run(&mut s, 1, circuit, scheme, &x)?;
        if o.output != expect {
            return Err(CliError::Usage(
                "inter-party parallel garbling: the output differs from plaintext".into(),
            ));
        }
        let work: f64 = o
            .phases
            .iter()
            .filter(|p| p.name != "hello" && p.name != "partition")
            .map(|p| p.ms)
            .sum();
        // The first run also sets up the OT.
        if k > 0 {
            times.push(work);
        }
        last = Some(o);
    }
    b.join()
        .map_err(|_| CliError::Usage("party B panicked".into()))??;
    let ipp_stats = SampleStats::of(times);
    let ipp_ms = ipp_stats.median;
    let yao_ms = and / yao.garble_rate * 1e3;
    let o = last.ok_or_else(|| CliError::Usage("no run".into()))?;
    let json = json!({
        "bench": "garble",
        "strategy": "ipp",
        "circuit": args.circuit,
        "scheme": scheme.name(),
        "and_gates": yao.stats.and_gates,
        "a_garbled_and": o.garbled_and,
        "b_garbled_and": o.evaluated_and,
        "ipp_ms": ipp_ms,
        "ipp_ms_stats": ipp_stats,
        "ipp_and_per_sec": and / ipp_ms * 1e3,
        "one_garbler_ms": yao_ms,
        "ipp_speedup": yao_ms / ipp_ms,
        "phases": crate::twoparty::phases_json(&o.phases),
        "backend": Backend::active().name(),
        "cpu": cpu_model(),
    });
    if args.common.json {
        emit(json);
    } else {
        println!(
            "{:<12} {:<5} ipp  {:>8} AND  A garbles {} B garbles {}: {:.2} ms ({:.1} M AND/s) against one garbler's {:.2} ms: ×{:.2}",
            args.circuit,
            scheme.name(),
            yao.stats.and_gates,
            o.garbled_and,
            o.evaluated_and,
            ipp_ms,
            and / ipp_ms / 1e3,
            yao_ms,
            yao_ms / ipp_ms
        );
    }
    Ok(())
}

/// Rates of one scheme on one plan at one thread count.
pub(super) struct Rates {
    pub(super) stats: tessera_garble::PlanStats,
    pub(super) garble_rate: f64,
    eval_rate: f64,
    /// Garbling and evaluation: the statistics of the rates' samples.
    pub(super) rate_stats: [SampleStats; 2],
    /// Garbling and evaluation: the rate over the first thread count's, the median over the
    /// rounds of [`measure_turns`].
    pub(super) speedup: [f64; 2],
    /// The bytes garbling moves per AND gate, by the plan's count (see [`traffic_per_and`]).
    bytes_per_and: f64,
    /// Garbling and evaluation: the time spent placing the input labels over the time
    /// measured (not part of it).
    placing: [f64; 2],
    /// CGP: the partitions besides the tail, and the tail's share of the AND gates.
    partitions: Option<usize>,
    tail_share: Option<f64>,
    /// Seconds compiling the plan (or partitions) took, once.
    compile_s: f64,
}

impl Rates {
    /// Time of the scheme's AES work at the roofline over the time measured, for garbling and
    /// for evaluation.
    fn efficiency(&self, scheme: SchemeKind, roofline: f64) -> (f64, f64) {
        let and = self.stats.and_gates as f64;
        let (g, e) = scheme
            .cost()
            .circuit(self.stats.and_gates, self.stats.xor_gates);
        // Measured seconds per circuit: and / rate.
        (
            (g / roofline) / (and / self.garble_rate),
            (e / roofline) / (and / self.eval_rate),
        )
    }
}

/// Garbling and evaluation rates of one scheme on one plan, at each of `threads`.
pub(super) struct MeasureScheme<'a> {
    pub(super) common: &'a CommonArgs,
    /// Garblings per timed sample (`None`: calibrated to the sample length).
    pub(super) repeat: Option<u64>,
    pub(super) circuit: &'a Circuit,
    pub(super) batching: Batching,
    pub(super) backend: Backend,
    pub(super) threads: &'a [u32],
    pub(super) strategy: Strategy,
}

impl SchemeVisitor for MeasureScheme<'_> {
    type Output = Result<Vec<Rates>, CliError>;
    fn visit<S: Scheme>(self) -> Result<Vec<Rates>, CliError> {
        measure_scheme::<S>(self)
    }
}

/// One engine (or partitioned team) per thread count, garbling timed in turns among them,
/// then evaluation ([`measure_turns`]).
fn measure_scheme<S: Scheme>(m: MeasureScheme<'_>) -> Result<Vec<Rates>, CliError> {
    let MeasureScheme {
        common,
        repeat,
        circuit,
        batching,
        backend,
        threads,
        strategy,
    } = m;
    let bits: Vec<bool> = (0..circuit.num_input_wires()).map(|i| i % 3 == 0).collect();
    let mut locals = threads
        .iter()
        .map(|&t| -> Result<Box<dyn Local>, CliError> {
            let t = t as usize;
            Ok(match strategy {
                Strategy::Auto | Strategy::Fgp | Strategy::Ipp => Box::new(
                    LocalRun::<S>::with_threads(circuit, batching, backend, &bits, t)?,
                ),
                Strategy::Cgp => {
                    Box::new(LocalCgp::<S>::new(circuit, batching, (backend, t), &bits)?)
                }
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let (stats, partitions, tail_share) = locals[0].stats();
    let compiles: Vec<f64> = locals
        .iter()
        .map(|l| l.compile_time().as_secs_f64())
        .collect();
    let and = stats.and_gates as f64;
    // Per engine, the rate and speed-up of its runs and the placements' time over the runs';
    // the first failure.
    let mut timing = |evaluate: bool| {
        let mut times = vec![[Duration::ZERO; 2]; locals.len()];
        let mut failures: Vec<Option<CliError>> = locals.iter().map(|_| None).collect();
        let mut runs: Vec<_> = locals
            .iter_mut()
            .zip(times.iter_mut().zip(&mut failures))
            .map(|(local, (times, failure))| {
                move |reps: u64| {
                    let mut total = Duration::ZERO;
                    for _ in 0..reps {
                        let op = if evaluate {
                            local.evaluate()
                        } else {
                            local.garble()
                        };
                        match op {
                            Ok([placed, ran]) => {
                                total += ran;
                                times[0] += placed;
                                times[1] += ran;
                            }
                            Err(e) => *failure = Some(e),
                        }
                    }
                    total
                }
            })
            .collect();
        let rates = measure_turns(common, repeat, and, &mut runs);
        drop(runs);
        if let Some(e) = failures.into_iter().flatten().next() {
            return Err(e);
        }
        let placing = times
            .iter()
            .map(|t| t[0].as_secs_f64() / t[1].as_secs_f64().max(1e-12));
        Ok(rates.into_iter().zip(placing).collect::<Vec<_>>())
    };
    let garbling = timing(false)?;
    let evaluation = timing(true)?;
    Ok(garbling
        .into_iter()
        .zip(evaluation)
        .zip(compiles)
        .map(|(((g, gp), (e, ep)), compile_s)| {
            let (g, e): (&Turns, &Turns) = (&g, &e);
            Rates {
                stats,
                garble_rate: g.rates.median(),
                eval_rate: e.rates.median(),
                rate_stats: [g.rates.stats(), e.rates.stats()],
                speedup: [g.speedups.median(), e.speedups.median()],
                bytes_per_and: traffic_per_and::<S>(&stats),
                placing: [gp, ep],
                partitions,
                tail_share,
                compile_s,
            }
        })
        .collect())
}

/// The memory traffic of garbling per AND gate, counted from the plan (no counters can measure
/// it on these machines): each batched gate reads two 16-byte labels and four 4-byte indices
/// (inputs, output, gate index), writes its label and its table; each free gate reads two
/// labels and three indices and writes a label (for schemes without free XOR, XOR gates are
/// batched gates).
fn traffic_per_and<S: Scheme>(stats: &PlanStats) -> f64 {
    const GATES: usize = 128;
    let batched = |blocks: usize| 3.0 * 16.0 + 4.0 * 4.0 + 16.0 * blocks as f64 / GATES as f64;
    let xor = if S::XOR_GATES == XorGates::Free {
        3.0 * 16.0 + 3.0 * 4.0
    } else {
        batched(S::xor_table_blocks(GATES))
    };
    let and = stats.and_gates.max(1) as f64;
    (and * batched(S::and_table_blocks(GATES)) + stats.xor_gates as f64 * xor) / and
}

/// A local garbler and evaluator of either strategy, each run returning the time it took to
/// place the input labels and the time measured.
trait Local {
    fn garble(&mut self) -> Result<[Duration; 2], CliError>;
    fn evaluate(&mut self) -> Result<[Duration; 2], CliError>;
    /// The plans' sizes (summed over partitions; slots of the largest), and for CGP the partitions besides the tail
    /// and the tail's share of the AND gates.
    fn stats(&self) -> (PlanStats, Option<usize>, Option<f64>);
    /// How long compiling took.
    fn compile_time(&self) -> Duration;
}

/// One engine: the input labels placed in its slots before the timer starts, as EMP's driver
/// has them in place.
impl<S: Scheme> Local for LocalRun<S> {
    fn garble(&mut self) -> Result<[Duration; 2], CliError> {
        self.garble_placed()
    }
    fn evaluate(&mut self) -> Result<[Duration; 2], CliError> {
        self.evaluate_placed()
    }
    fn stats(&self) -> (PlanStats, Option<usize>, Option<f64>) {
        (self.plan().stats(), None, None)
    }
    fn compile_time(&self) -> Duration {
        LocalRun::compile_time(self)
    }
}

/// Partitions: timed whole, gathering each partition's inputs included.
impl<S: Scheme> Local for LocalCgp<S> {
    fn garble(&mut self) -> Result<[Duration; 2], CliError> {
        let t = Instant::now();
        LocalCgp::garble(self)?;
        Ok([Duration::ZERO, t.elapsed()])
    }
    fn evaluate(&mut self) -> Result<[Duration; 2], CliError> {
        let t = Instant::now();
        LocalCgp::evaluate(self)?;
        Ok([Duration::ZERO, t.elapsed()])
    }
    fn stats(&self) -> (PlanStats, Option<usize>, Option<f64>) {
        let parts = self.parts();
        let sum = parts.plans().map(|p| p.stats()).fold(
            PlanStats {
                and_gates: 0,
                xor_gates: 0,
                batches: 0,
                slots: 0,
            },
            |a, b| PlanStats {
                and_gates: a.and_gates + b.and_gates,
                xor_gates: a.xor_gates + b.xor_gates,
                batches: a.batches + b.batches,
                // Each thread's slot array holds the largest partition it ran.
                slots: a.slots.max(b.slots),
            },
        );
        let and = parts.and_gates();
        let tail = and.last().copied().unwrap_or(0) as f64 / sum.and_gates.max(1) as f64;
        (sum, Some(parts.len() - 1), Some(tail))
    }
    fn compile_time(&self) -> Duration {
        LocalCgp::compile_time(self)
    }
}
