//! `tessera bench stream`: streamed Yao of SHA-256 over a long random message (10^9 gates and
//! more: one compression function per 64-byte block, the chaining value carried) between two
//! processes over loopback TCP. This process garbles and starts a second one that evaluates.
//! A short stream of the same kind runs first on the same connection; the long one is reported
//! against it (rates over the stream itself, the plan's compilation and the hello apart) and
//! against one step garbled and evaluated in one thread without a network, with both
//! processes' peak resident memory. Both parties' digests are checked against RustCrypto's.

use super::yao::LocalMs;
use super::{SampleStats, cpu_model, emit, peak_rss_bytes};
use crate::CliError;
use crate::twoparty::phases_json;
use clap::Args;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::time::Instant;
use tessera_circuit::Circuit;
use tessera_circuit::eval::{bits_from_bytes, bits_to_hex};
use tessera_circuit::library::{SHA256_IV, builtin, sha256_final_blocks};
use tessera_core::{Backend, Prg};
use tessera_garble::SchemeKind;
use tessera_net::Network;
use tessera_protocols::yao::chain::{self as stream, StreamOutcome};
use tessera_protocols::{Session, SessionConfig};

/// Options of `tessera bench stream`.
#[derive(Args)]
pub struct StreamArgs {
    /// Billions of gates (all kinds) in the long stream; the message is as long as that takes.
    #[arg(long, default_value_t = 1.0)]
    gigagates: f64,
    /// Gates of the short reference stream, as a fraction of the long one's.
    #[arg(long, default_value_t = 0.01)]
    short: f64,
    /// The step circuit: SHA-256's compression function with ripple-carry or low-depth adders.
    #[arg(long, default_value = "sha256", value_parser = ["sha256", "sha256-lowdepth"])]
    circuit: String,
    /// Garbling scheme.
    #[arg(long, default_value = "prp", value_parser = crate::schemes::one())]
    scheme: SchemeKind,
    /// One JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Evaluate, connecting to the garbler at this address (the benchmark starts this second
    /// process itself).
    #[arg(long, hide = true)]
    evaluator_of: Option<String>,
}

/// A random message of `steps` blocks less 9 bytes (so its padding fills the last block), drawn
/// block by block as the garbler asks for it and hashed as it goes: neither the message nor
/// its bits are ever held whole.
pub(super) struct Message {
    steps: u64,
    prg: Prg,
    hasher: Sha256,
}

impl Message {
    /// A message of `steps` blocks, drawn from `prg`.
    pub(super) fn new(steps: u64, prg: Prg) -> Self {
        Message {
            steps,
            prg,
            hasher: Sha256::new(),
        }
    }

    /// The SHA-256 digest of the blocks drawn so far (of the whole message once the last is).
    pub(super) fn digest(&self) -> [u8; 32] {
        self.hasher.clone().finalize().into()
    }

    fn len(&self) -> u64 {
        64 * self.steps - 9
    }

    /// Step `k`'s 512 input bits: the message's block k, the last one padded.
    pub(super) fn fill(&mut self, k: u64, out: &mut [bool]) {
        let mut block = [0u8; 64];
        for chunk in block.chunks_exact_mut(16) {
            chunk.copy_from_slice(&self.prg.random_block().to_bytes());
        }
        if k + 1 < self.steps {
            self.hasher.update(block);
        } else {
            let tail = &block[..55];
            self.hasher.update(tail);
            let last = sha256_final_blocks(tail, self.len());
            block = last.first().copied().unwrap_or(block);
        }
        out.copy_from_slice(&bits_from_bytes(&block));
    }
}

/// Steps of the short and the long stream.
fn steps(args: &StreamArgs, step: &Circuit) -> Result<(u64, u64), CliError> {
    let per_step = step.gates.len() as f64;
    let within = |x: f64, max: f64| x > 0.0 && x <= max;
    if !within(args.gigagates, 1e6) || !within(args.short, 1.0) {
        return Err(CliError::Usage(
            "--gigagates must be in (0, 10^6] and --short in (0, 1]".into(),
        ));
    }
    let long = (args.gigagates * 1e9 / per_step).ceil() as u64;
    let short = ((long as f64 * args.short).ceil() as u64).max(1);
    Ok((short, long.max(1)))
}

/// Runs `tessera bench stream`.
pub fn run(args: &StreamArgs) -> Result<(), CliError> {
    let step = builtin(&args.circuit)
        .ok_or_else(|| CliError::Usage(format!("no circuit {}", args.circuit)))??;
    if let Some(addr) = &args.evaluator_of {
        return evaluator(args, &step, addr);
    }
    let (short, long) = steps(args, &step)?;
    let gigagates = args.gigagates.to_string();
    let short_share = args.short.to_string();
    let (child, net) = super::second_process(&[
        "bench",
        "stream",
        "--circuit",
        &args.circuit,
        "--scheme",
        args.scheme.name(),
        "--gigagates",
        &gigagates,
        "--short",
        &short_share,
    ])?;
    let garbled = garble_both(net, args.scheme, &step, [short, long]);
    let out = child.wait_with_output()?;
    let runs = garbled?;
    let theirs = super::second_report(&out)?;
    // The same step garbled and evaluated in one thread, no network: both parties' work on
    // one core.
    let local_ms = args.scheme.visit(LocalMs(&step))?;
    for (k, run) in runs.iter().enumerate() {
        if theirs["digests"][k] != json!(run.digest) {
            return Err(CliError::Usage(format!(
                "stream {k}: the evaluator's digest {} is not SHA-256 of the message, {}",
                theirs["digests"][k], run.digest
            )));
        }
    }
    let local = step.gates.len() as f64 / (local_ms / 1e3);
    report(args, &runs, &theirs, local)
}

/// One garbled stream.
struct Run {
    steps: u64,
    gates: u64,
    and_gates: u64,
    seconds: f64,
    setup_seconds: f64,
    digest: String,
    bytes_sent: u64,
    bytes_received: u64,
    phases: Value,
}

/// Garbles the two streams; checks the garbler's output against the message's digest.
fn garble_both(
    net: Network,
    scheme: SchemeKind,
    step: &Circuit,
    lengths: [u64; 2],
) -> Result<Vec<Run>, CliError> {
    let mut s = Session::new(net, SessionConfig::default())?;
    let and_per_step = tessera_circuit::analysis::gate_counts(step).and as u64;
    let mut runs = Vec::new();
    for steps in lengths {
        let mut message = Message::new(steps, Prg::from_os()?);
        let before = s.network().stats();
        let t = Instant::now();
        let fresh = |k: u64, out: &mut [bool]| message.fill(k, out);
        let o: StreamOutcome = stream::garble(
            &mut s,
            1,
            (step, scheme),
            &bits_from_bytes(&SHA256_IV),
            (steps, fresh),
        )?;
        let wall = t.elapsed().as_secs_f64();
        // The stream itself: the garble phase, without the plan's compilation and the hello.
        let garble = o.phases.iter().find(|p| p.name == "garble");
        let seconds = garble.map_or(wall, |p| p.ms / 1e3);
        let traffic = s.network().stats().since(&before);
        let digest = bits_to_hex(&bits_from_bytes(&message.digest()));
        if bits_to_hex(&o.output) != digest {
            return Err(CliError::Usage(format!(
                "{steps} steps: the garbler's output {} is not SHA-256 of the message, {digest}",
                bits_to_hex(&o.output)
            )));
        }
        runs.push(Run {
            steps,
            gates: o.gates,
            and_gates: steps * and_per_step,
            seconds,
            setup_seconds: wall - seconds,
            digest,
            bytes_sent: traffic.bytes_sent,
            bytes_received: traffic.bytes_received,
            phases: phases_json(&o.phases),
        });
    }
    Ok(runs)
}

/// The second process: evaluates both streams, prints its digests and peak memory as JSON.
fn evaluator(args: &StreamArgs, step: &Circuit, addr: &str) -> Result<(), CliError> {
    let net = super::first_process(addr)?;
    let mut s = Session::new(net, SessionConfig::default())?;
    let mut digests = Vec::new();
    let mut seconds = Vec::new();
    for _ in 0..2 {
        let t = Instant::now();
        let o = stream::evaluate(&mut s, 0, (step, args.scheme))?;
        seconds.push(t.elapsed().as_secs_f64());
        digests.push(bits_to_hex(&o.output));
    }
    println!(
        "{}",
        json!({
            "digests": digests,
            "seconds": seconds,
            "peak_rss_bytes": peak_rss_bytes(),
        })
    );
    Ok(())
}

fn report(args: &StreamArgs, runs: &[Run], evaluator: &Value, local: f64) -> Result<(), CliError> {
    let rate = |r: &Run| r.gates as f64 / r.seconds;
    let [short, long] = runs else {
        return Err(CliError::Usage("two streams expected".into()));
    };
    let run_json = |r: &Run| {
        json!({
            "steps": r.steps,
            "message_bytes": 64 * r.steps - 9,
            "gates": r.gates,
            "and_gates": r.and_gates,
            "seconds": r.seconds,
            "seconds_stats": SampleStats::of([r.seconds]),
            "setup_seconds": r.setup_seconds,
            "gates_per_sec": rate(r),
            "and_gates_per_sec": r.and_gates as f64 / r.seconds,
            "bytes_sent": r.bytes_sent,
            "bytes_received": r.bytes_received,
            "digest": r.digest,
            "phases": r.phases,
        })
    };
    let garbler_rss = peak_rss_bytes();
    let v = json!({
        "circuit": args.circuit,
        "scheme": args.scheme.name(),
        "short": run_json(short),
        "long": run_json(long),
        "long_over_short": rate(long) / rate(short),
        "local_gates_per_sec": local,
        "long_over_local": rate(long) / local,
        "garbler_peak_rss_bytes": garbler_rss,
        "evaluator_peak_rss_bytes": evaluator["peak_rss_bytes"],
        "digests_checked": true,
        "transport": "tcp loopback, two processes",
        "backend": Backend::active().name(),
        "cpu": cpu_model(),
    });
    if args.json {
        emit(v);
    } else {
        let mib = |b: Option<u64>| b.map_or(f64::NAN, |b| b as f64 / (1 << 20) as f64);
        println!(
            "{} ({}) streamed between two processes: {:.3e} gates in {:.2} s = {:.1} M gates/s ({:.1} M AND/s), {:.2} of the short stream's {:.1} M gates/s, {:.2} of one thread garbling and evaluating in memory; peak RSS garbler {:.0} MiB, evaluator {:.0} MiB; digests checked",
            args.circuit,
            args.scheme,
            long.gates as f64,
            long.seconds,
            rate(long) / 1e6,
            long.and_gates as f64 / long.seconds / 1e6,
            rate(long) / rate(short),
            rate(short) / 1e6,
            rate(long) / local,
            mib(garbler_rss),
            mib(evaluator["peak_rss_bytes"].as_u64()),
        );
    }
    Ok(())
}
