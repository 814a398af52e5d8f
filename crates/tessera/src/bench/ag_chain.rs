//! `tessera bench ag --chain-ands N`: actively secure SHA-256 over a random message long enough
//! for N AND gates, one compression function per block with the chaining value carried in
//! labels and masks (`tessera_ag::twopc::run_chain`), between this process (the garbler) and a
//! second one it starts (the evaluator) over loopback TCP. Reports the time, AND gates per
//! second, bytes per AND gate, the time in each phase and both processes' peak resident memory;
//! both parties' digests are checked against RustCrypto's SHA-256 of the message.

use super::stream::Message;
use super::{SampleStats, cpu_model, emit, peak_rss_bytes};
use crate::CliError;
use crate::ag::CotArg;
use crate::twoparty::phases_json;
use clap::ValueEnum;
use serde_json::{Value, json};
use std::time::Instant;
use tessera_ag::twopc::{self, Outputs};
use tessera_circuit::analysis::gate_counts;
use tessera_circuit::eval::{bits_from_bytes, bits_to_hex};
use tessera_circuit::library::{SHA256_IV, sha256_compress};
use tessera_core::{Backend, Prg};
use tessera_garble::{Batching, Chain, Plan};
use tessera_net::Network;
use tessera_protocols::{Session, SessionConfig};

/// The chain of SHA-256 compression functions and its AND gates per step.
fn sha256_chain() -> Result<(Chain, u64), CliError> {
    let step = sha256_compress()?;
    let ands = gate_counts(&step).and as u64;
    let chain = Chain::new(&step, |c| Plan::new(c, Batching::default_for(c)))?;
    Ok((chain, ands))
}

/// Runs the chain benchmark for at least `ands` AND gates; with `evaluator_of`, as the
/// evaluator the garbler at that address started.
pub fn run(
    ands: u64,
    cot: CotArg,
    json_out: bool,
    evaluator_of: Option<&str>,
) -> Result<(), CliError> {
    let (chain, per_step) = sha256_chain()?;
    let steps = ands.div_ceil(per_step).max(1);
    let ot = cot.choice()?;
    if let Some(addr) = evaluator_of {
        return evaluate(&chain, steps, ot, addr);
    }
    let cot_value = cot.to_possible_value().ok_or_else(|| {
        CliError::Usage("this --cot choice cannot be passed to a second process".into())
    })?;
    let (ands_arg, cot_arg) = (ands.to_string(), cot_value.get_name().to_string());
    let (child, net) =
        super::second_process(&["bench", "ag", "--chain-ands", &ands_arg, "--cot", &cot_arg])?;
    let garbled = garble(net, &chain, steps, ot);
    let out = child.wait_with_output()?;
    let (mine, digest) = garbled?;
    let theirs = super::second_report(&out)?;
    if theirs["digest"] != json!(digest) {
        return Err(CliError::Usage(format!(
            "the evaluator's digest {} is not SHA-256 of the message, {digest}",
            theirs["digest"]
        )));
    }
    report(mine, &theirs, (steps, per_step, ot.name()), json_out);
    Ok(())
}

/// The garbler's side: the message drawn block by block and hashed as it goes; returns the
/// run's report and the digest, checked against the garbler's own output.
fn garble(
    net: Network,
    chain: &Chain,
    steps: u64,
    ot: tessera_ot::OtChoice,
) -> Result<(Value, String), CliError> {
    let mut s = Session::new(net, SessionConfig::with_ot(ot))?;
    let mut message = Message::new(steps, Prg::from_os()?);
    let t = Instant::now();
    let fresh = |k: u64| {
        let mut bits = vec![false; 512];
        message.fill(k, &mut bits);
        bits
    };
    let initial = bits_from_bytes(&SHA256_IV);
    let out = twopc::run_chain(&mut s, chain, (steps, &initial), fresh, Outputs::All)?;
    let seconds = t.elapsed().as_secs_f64();
    let digest = bits_to_hex(&bits_from_bytes(&message.digest()));
    let got = out.map(|b| bits_to_hex(&b)).unwrap_or_default();
    if got != digest {
        return Err(CliError::Usage(format!(
            "the garbler's output {got} is not SHA-256 of the message, {digest}"
        )));
    }
    let stats = s.network().stats();
    let report = json!({
        "seconds": seconds,
        "bytes_sent": stats.bytes_sent,
        "bytes_received": stats.bytes_received,
        "phases": phases_json(&s.take_phases()),
        "peak_rss_bytes": peak_rss_bytes(),
    });
    Ok((report, digest))
}

/// The second process: evaluates, prints its digest and peak memory as JSON.
fn evaluate(
    chain: &Chain,
    steps: u64,
    ot: tessera_ot::OtChoice,
    addr: &str,
) -> Result<(), CliError> {
    let mut s = Session::new(super::first_process(addr)?, SessionConfig::with_ot(ot))?;
    let out = twopc::run_chain(&mut s, chain, (steps, &[]), |_| Vec::new(), Outputs::All)?;
    let digest = out.map(|b| bits_to_hex(&b)).unwrap_or_default();
    println!(
        "{}",
        json!({"digest": digest, "peak_rss_bytes": peak_rss_bytes()})
    );
    Ok(())
}

fn report(
    garbler: Value,
    evaluator: &Value,
    (steps, per_step, cot): (u64, u64, String),
    json_out: bool,
) {
    let ands = steps * per_step;
    let seconds = garbler["seconds"].as_f64().unwrap_or(f64::NAN);
    let bytes = garbler["bytes_sent"].as_u64().unwrap_or(0)
        + garbler["bytes_received"].as_u64().unwrap_or(0);
    let v = json!({
        "circuit": "sha256 chain",
        "steps": steps,
        "message_bytes": 64 * steps - 9,
        "and_gates": ands,
        "cot": cot,
        "seconds": seconds,
        "seconds_stats": SampleStats::of([seconds]),
        "and_per_sec": ands as f64 / seconds,
        "bytes_per_and": bytes as f64 / ands as f64,
        "garbler_phases": garbler["phases"],
        "garbler_peak_rss_bytes": garbler["peak_rss_bytes"],
        "evaluator_peak_rss_bytes": evaluator["peak_rss_bytes"],
        "digests_checked": true,
        "transport": "tcp loopback, two processes",
        "backend": Backend::active().name(),
        "cpu": cpu_model(),
    });
    if json_out {
        emit(v);
    } else {
        let mib = |v: &Value| v.as_u64().map_or(f64::NAN, |b| b as f64 / (1 << 20) as f64);
        println!(
            "SHA-256 chain, {steps} steps, {ands} AND gates, {cot}, two processes: {seconds:.2} s, {:.3} M AND/s, {:.0} bytes per AND gate; peak RSS garbler {:.0} MiB, evaluator {:.0} MiB; digests checked",
            ands as f64 / seconds / 1e6,
            bytes as f64 / ands as f64,
            mib(&garbler["peak_rss_bytes"]),
            mib(&evaluator["peak_rss_bytes"]),
        );
    }
}
