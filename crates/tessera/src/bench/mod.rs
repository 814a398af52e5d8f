//! `tessera bench ...`: benchmarks that print a readable table or, with `--json`, one JSON
//! object per line. Every figure is the median of several timed samples, and every line carries
//! a ratio to a bound measured in the same run.

mod aes;
mod ag;
mod ag_chain;
mod convert;
mod garble;
mod local;
mod mpc;
mod net;
mod ot;
mod ot_select;
mod paper;
mod stats;
mod stream;
mod triples;
mod wire;
mod yao;

pub use stats::{SampleStats, emit, median, with_host};
pub use wire::{Exchange, NetCondition, Wire, loopback, loopback_mesh};

use crate::CliError;
use clap::{Args, Subcommand};
use std::time::{Duration, Instant};

/// What to benchmark.
#[derive(Subcommand)]
pub enum BenchCommand {
    /// Actively secure two-party computation by authenticated garbling over loopback TCP:
    /// setup, function-independent, function-dependent and online time, bytes per AND gate,
    /// AND gates per second and peak RSS.
    Ag(ag::AgArgs),
    /// Batched AES, hashes, PRG and transposition on every backend this CPU has.
    Aes(aes::AesArgs),
    /// Every conversion among Y, B, A, β and α (and MUL in A and α) on many values between two
    /// parties over loopback TCP: online and setup time, bytes and rounds.
    Convert(convert::ConvertArgs),
    /// Garbling and evaluation in AND gates per second per scheme, against the AES roofline.
    Garble(garble::GarbleArgs),
    /// All parties of a loopback TCP or TLS mesh sending to all others at once: aggregate
    /// throughput against one loopback stream's bandwidth.
    Net(net::NetArgs),
    /// A Boolean circuit in Yao, GMW and ABY2.0 between two parties over loopback TCP: setup
    /// and online time, bytes and rounds, against AND-depth round trips.
    Mpc(mpc::MpcArgs),
    /// OT extension (IKNP, KOS, SoftSpoken) and Ferret silent OT in OTs per second over
    /// loopback TCP.
    Ot(ot::OtArgs),
    /// Streamed Yao of SHA-256 over a long message (10^9 gates by default) between two
    /// processes over loopback TCP: throughput against a short stream, and both peak RSS.
    Stream(stream::StreamArgs),
    /// Multiplication triples (Boolean, arithmetic over Z_2^ℓ, matrix) per second between two
    /// parties over loopback TCP.
    Triples(triples::TriplesArgs),
    /// A source paper's tables on the work the paper ran, beside its published figures.
    #[command(subcommand)]
    Paper(paper::PaperCommand),
    /// Yao AES-128 (or another circuit) between two threads over loopback TCP: setup, first
    /// execution and amortised time per execution.
    Yao(yao::YaoArgs),
}

/// Options every benchmark takes.
#[derive(Args, Clone, Copy)]
pub struct CommonArgs {
    /// One JSON object per line instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Timed samples per measurement; the median is reported, with the mean, median, standard
    /// deviation and count in the JSON.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..))]
    pub samples: u32,
    /// Target duration of one sample in milliseconds.
    #[arg(long, default_value_t = 30)]
    pub sample_ms: u64,
}

/// Runs a benchmark subcommand.
pub fn run(cmd: BenchCommand) -> Result<(), CliError> {
    match cmd {
        BenchCommand::Aes(args) => aes::run(&args),
        BenchCommand::Ag(args) => ag::run(&args),
        BenchCommand::Convert(args) => convert::run(&args),
        BenchCommand::Garble(args) => garble::run(&args),
        BenchCommand::Net(args) => net::run(&args),
        BenchCommand::Mpc(args) => mpc::run(&args),
        BenchCommand::Ot(args) => ot::run(&args),
        BenchCommand::Stream(args) => stream::run(&args),
        BenchCommand::Triples(args) => triples::run(&args),
        BenchCommand::Paper(cmd) => paper::run(cmd),
        BenchCommand::Yao(args) => yao::run(&args),
    }
}

/// Adds to a two-party measurement `v` (its `bytes_sent` and `bytes_received` are per sample of
/// `units`, done at `rate` units per second) the bytes per unit both ways, the fraction of the
/// loopback `bandwidth` that traffic uses, the bandwidth, the AES backend and the CPU. Returns
/// the bytes per unit and the fraction.
pub fn annotate_link(
    v: &mut serde_json::Value,
    units: f64,
    rate: f64,
    bandwidth: f64,
) -> (f64, f64) {
    let wire =
        (v["bytes_sent"].as_u64().unwrap_or(0) + v["bytes_received"].as_u64().unwrap_or(0)) as f64;
    let per_unit = wire / units;
    let link = per_unit * rate / bandwidth;
    v["bytes_per_unit"] = serde_json::json!(per_unit);
    v["loopback_bytes_per_sec"] = serde_json::json!(bandwidth);
    v["link_utilisation"] = serde_json::json!(link);
    v["backend"] = serde_json::json!(tessera_core::Backend::active().name());
    v["cpu"] = serde_json::json!(cpu_model());
    (per_unit, link)
}

/// The rates (units per second) of a measurement's timed samples, one per sample.
#[derive(Clone, Debug, Default)]
pub struct Samples(pub Vec<f64>);

impl Samples {
    /// The statistics of the rates.
    pub fn stats(&self) -> SampleStats {
        SampleStats::of(self.0.iter().copied())
    }

    /// The median rate, the figure the tables report.
    pub fn median(&self) -> f64 {
        self.stats().median
    }

    /// The statistics of `f` of each rate (each sample's time per unit, say).
    pub fn stats_of(&self, f: impl Fn(f64) -> f64) -> SampleStats {
        SampleStats::of(self.0.iter().map(|&r| f(r)))
    }
}

/// Times `op` (which does `units` units of work per call): calibrates a repetition count to
/// about `sample_ms`, then returns the rates in units per second of `samples` samples.
pub fn measure(common: &CommonArgs, units: f64, mut op: impl FnMut()) -> Samples {
    measure_timed(common, units, |reps| {
        let t = Instant::now();
        for _ in 0..reps {
            op();
        }
        t.elapsed()
    })
}

/// As [`measure`], for work with an untimed preparation per call: `run(reps)` does `reps`
/// calls and returns the time their timed parts took.
pub fn measure_timed(common: &CommonArgs, units: f64, run: impl FnMut(u64) -> Duration) -> Samples {
    let mut turns = measure_turns(common, None, units, &mut [run]);
    turns.swap_remove(0).rates
}

/// One variant's samples from [`measure_turns`].
#[derive(Clone, Debug, Default)]
pub struct Turns {
    /// The variant's rate in each round.
    pub rates: Samples,
    /// Its rate over the first variant's in each round (the speed-up, paired round by round).
    pub speedups: Samples,
}

/// As [`measure_timed`] for several variants of one piece of work (the same circuit on 1, 2,
/// ... threads), timed in turns so that a change in the machine's load during the run falls on
/// all of them alike: each variant's repetition count is calibrated to about `sample_ms` (or
/// is `repeat`), then each of `samples` rounds times every variant once. Returns per variant
/// its rates and its rates over the first variant's in the same round.
pub fn measure_turns(
    common: &CommonArgs,
    repeat: Option<u64>,
    units: f64,
    runs: &mut [impl FnMut(u64) -> Duration],
) -> Vec<Turns> {
    let target = Duration::from_millis(common.sample_ms.max(1));
    let reps: Vec<u64> = runs
        .iter_mut()
        .map(|run| {
            repeat.unwrap_or_else(|| {
                let mut reps = 1u64;
                loop {
                    let e = run(reps);
                    if e >= target / 4 || reps >= 1 << 40 {
                        let scale = target.as_secs_f64() / e.as_secs_f64().max(1e-9);
                        break ((reps as f64 * scale).ceil() as u64).max(1);
                    }
                    reps *= 4;
                }
            })
        })
        .collect();
    let mut turns = vec![Turns::default(); runs.len()];
    for _ in 0..common.samples.max(1) {
        let round: Vec<f64> = runs
            .iter_mut()
            .zip(&reps)
            .map(|(run, &r)| units * r as f64 / run(r).as_secs_f64().max(1e-12))
            .collect();
        for (turn, &rate) in turns.iter_mut().zip(&round) {
            turn.rates.0.push(rate);
            turn.speedups.0.push(rate / round[0]);
        }
    }
    turns
}

/// The backend's AES roofline in blocks per second ([`tessera_core::Backend::roofline`]), the
/// median of `common`'s samples.
pub fn roofline_rate(common: &CommonArgs, backend: tessera_core::Backend) -> Result<f64, CliError> {
    let (per_call, _) = backend.roofline(1 << 12)?;
    Ok(measure(common, per_call as f64, || {
        std::hint::black_box(
            backend
                .roofline(1 << 12)
                .map(|(_, b)| b)
                .unwrap_or_default(),
        );
    })
    .median())
}

/// The bandwidth of a plain copy of 256 MiB (bytes read plus bytes written per second, the
/// median of `common`'s samples): what the garbling of circuits far larger than the caches is
/// judged against.
pub fn copy_bandwidth(common: &CommonArgs) -> f64 {
    const BYTES: usize = 256 << 20;
    let src = vec![0x5au8; BYTES];
    let mut dst = vec![0u8; BYTES];
    let times: Vec<f64> = (0..common.samples.max(1))
        .map(|_| {
            let t = Instant::now();
            dst.copy_from_slice(std::hint::black_box(&src));
            std::hint::black_box(&mut dst);
            t.elapsed().as_secs_f64()
        })
        .collect();
    2.0 * BYTES as f64 / median(times)
}

/// How long one thread takes to hand a flag to another and see its answer, in nanoseconds
/// (the median of `common`'s samples of 2^16 round trips): the floor under every handing out
/// of a batch to fine-grained threads and its collection, so their speed-ups can be judged
/// against it. It depends on where the two threads run: about 50-100 ns between the cores
/// of one AMD EPYC Zen 5 guest at one time and 500 ns at another (the host placing them
/// farther apart).
pub fn core_round_trip_ns(common: &CommonArgs) -> f64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    const TRIPS: u64 = 1 << 16;
    let (ping, pong) = (AtomicU64::new(0), AtomicU64::new(0));
    let samples = common.samples.max(1);
    let mut times = Vec::new();
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 1..=TRIPS * u64::from(samples) {
                while ping.load(Ordering::Acquire) != i {
                    std::hint::spin_loop();
                }
                pong.store(i, Ordering::Release);
            }
        });
        let mut i = 0;
        for _ in 0..samples {
            let t = Instant::now();
            for _ in 0..TRIPS {
                i += 1;
                ping.store(i, Ordering::Release);
                while pong.load(Ordering::Acquire) != i {
                    std::hint::spin_loop();
                }
            }
            times.push(t.elapsed().as_secs_f64() * 1e9 / TRIPS as f64);
        }
    });
    median(times)
}

/// The CPU's model name, for reports.
pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}

/// How long a benchmark's second process may take to connect.
const SECOND_PROCESS_SETUP: std::time::Duration = std::time::Duration::from_secs(60);

/// Starts a second process of this binary with `args` and `--evaluator-of ADDR`, and connects
/// to it as party 0 of a two-party mesh over loopback TCP: the benchmarks that run their
/// parties as two processes (`bench stream`, `bench ag --chain-ands`).
pub fn second_process(
    args: &[&str],
) -> Result<(std::process::Child, tessera_net::Network), CliError> {
    let listener = tessera_net::tcp::listen("127.0.0.1:0")?;
    let addr = listener.local_addr()?.to_string();
    let child = std::process::Command::new(std::env::current_exe()?)
        .args(args)
        .args(["--evaluator-of", &addr])
        .stdout(std::process::Stdio::piped())
        .spawn()?;
    let m = tessera_net::tcp::Mesh {
        me: 0,
        parties: 2,
        listener: Some(&listener),
        lower: &[],
        tls: None,
        setup: SECOND_PROCESS_SETUP,
    };
    Ok((
        child,
        tessera_net::tcp::mesh(m, tessera_net::NetConfig::default())?,
    ))
}

/// In the second process of [`second_process`]: party 1's mesh, connected to `addr`.
pub fn first_process(addr: &str) -> Result<tessera_net::Network, CliError> {
    let m = tessera_net::tcp::Mesh {
        me: 1,
        parties: 2,
        listener: None,
        lower: &[addr.to_owned()],
        tls: None,
        setup: SECOND_PROCESS_SETUP,
    };
    Ok(tessera_net::tcp::mesh(
        m,
        tessera_net::NetConfig::default(),
    )?)
}

/// The JSON report a second process printed on its standard output.
pub fn second_report(out: &std::process::Output) -> Result<serde_json::Value, CliError> {
    std::str::from_utf8(&out.stdout)
        .ok()
        .and_then(|s| s.lines().find_map(|l| serde_json::from_str(l).ok()))
        .ok_or_else(|| {
            CliError::Usage(format!(
                "the evaluator process ({}) printed no report",
                out.status
            ))
        })
}

/// The process's peak resident set (VmHWM), in bytes.
pub fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse::<u64>()
        .ok()?;
    Some(kb * 1024)
}

/// The benchmarks' own messages, in a space of their own.
pub const BENCH: tessera_net::Space = tessera_net::Space::new(1000);
const GO: tessera_net::Kind = tessera_net::Kind::new(0x70, "bench start");
const DONE: tessera_net::Kind = tessera_net::Kind::new(0x71, "bench done");
const PING: tessera_net::Kind = tessera_net::Kind::new(0x74, "bench ping");

/// Bytes per second one framed TCP stream carries over loopback, one way: the bound for
/// protocols whose cost is what crosses the wire.
pub fn loopback_bandwidth() -> Result<f64, CliError> {
    use tessera_net::Channel;
    let ((mut a, mut b), _wire) = loopback(NetCondition::default())?;
    let message = vec![0x5au8; 1 << 20];
    let rounds = 256;
    let reader = std::thread::spawn(move || -> Result<(), tessera_net::Error> {
        let mut buf = vec![0u8; 1 << 20];
        for _ in 0..rounds {
            b.recv_into(0, BENCH.tag(GO), &mut buf)?;
        }
        b.send(0, BENCH.tag(DONE), &[])?;
        b.flush()
    });
    let t = Instant::now();
    for _ in 0..rounds {
        a.send(1, BENCH.tag(GO), &message)?;
    }
    a.flush()?;
    a.peer(1).recv_bounded(BENCH.tag(DONE), 0)?;
    let rate = (rounds << 20) as f64 / t.elapsed().as_secs_f64();
    reader
        .join()
        .map_err(|_| CliError::Usage("reader panicked".into()))??;
    Ok(rate)
}
