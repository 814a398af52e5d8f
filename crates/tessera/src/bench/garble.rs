//! `tessera bench garble`: half-gates garbling and evaluation speed in AND gates per second,
//! with `garble_efficiency` and `eval_efficiency`: the rate over the in-run AES roofline
//! (blocks/s of the active backend) divided by 4, resp. 2, the AES calls an AND gate costs.

use super::{CommonArgs, cpu_model, measure};
use crate::CliError;
use crate::circuit::load;
use clap::{Args, ValueEnum};
use serde_json::json;
use std::hint::black_box;
use tessera_circuit::Circuit;
use tessera_circuit::builder::Builder;
use tessera_core::{Backend, Block, FixedKeyHash, Prg};
use tessera_garble::{Batching, Evaluator, Garbler, HalfGates, InputEncoding, Plan, TableReader};

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
    /// Batching strategy; `all` measures each, `default` the one the engine picks.
    #[arg(long, value_enum, default_value_t = BatchingArg::All)]
    batching: BatchingArg,
}

/// `--batching`.
#[derive(Clone, Copy, ValueEnum)]
enum BatchingArg {
    All,
    Default,
    Dynamic,
    Layered,
}

/// A wide circuit of `n` independent AND gates: out[k] = a[k] ∧ b[k].
fn random_and(n: u32) -> Result<Circuit, CliError> {
    let mut g = Builder::new();
    let (a, b) = (g.input(n), g.input(n));
    let out = g.and_bits(&a, &b);
    Ok(g.finish(&[out])?)
}

/// The process's peak resident set (VmHWM), in bytes.
fn peak_rss_bytes() -> Option<u64> {
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

/// Runs the benchmark.
pub fn run(args: &GarbleArgs) -> Result<(), CliError> {
    let c = &args.common;
    let circuit = if args.circuit == "random-and" {
        random_and(args.gates)?
    } else {
        load(&args.circuit)?.0
    };
    let strategies = match args.batching {
        BatchingArg::All => vec![Batching::DYNAMIC, Batching::Layered],
        BatchingArg::Default => vec![Batching::default_for(&circuit)],
        BatchingArg::Dynamic => vec![Batching::DYNAMIC],
        BatchingArg::Layered => vec![Batching::Layered],
    };
    let backend = Backend::active();
    let (per_call, _) = backend.roofline(1 << 12)?;
    let roofline = measure(c, per_call as f64, || {
        black_box(
            backend
                .roofline(1 << 12)
                .map(|(_, b)| b)
                .unwrap_or_default(),
        );
    });
    let default = Batching::default_for(&circuit);
    for batching in strategies {
        let plan = Plan::new(&circuit, batching);
        let stats = plan.stats();
        let mut prg = Prg::from_seed_block(Block::new(0x6a2b1e));
        let enc = InputEncoding::random(&mut prg, plan.num_inputs());
        let bits: Vec<bool> = (0..plan.num_inputs()).map(|i| i % 3 == 0).collect();
        let active = enc.encode(0, &bits);
        let mut garbler = Garbler::new(HalfGates::new(FixedKeyHash::default()));
        let mut evaluator = Evaluator::new(HalfGates::new(FixedKeyHash::default()));
        let mut tables: Vec<Block> = Vec::new();
        garbler.garble(&plan, enc.delta, &enc.zero_labels, &mut tables)?;
        let and = stats.and_gates as f64;
        let mut failure = None;
        let timing = |op: &mut dyn FnMut()| match args.repeat {
            Some(r) => {
                let t = std::time::Instant::now();
                for _ in 0..r {
                    op();
                }
                and * r as f64 / t.elapsed().as_secs_f64()
            }
            None => measure(c, and, op),
        };
        let garble_rate = timing(&mut || {
            tables.clear();
            if let Err(e) = garbler.garble(&plan, enc.delta, &enc.zero_labels, &mut tables) {
                failure = Some(e);
            }
        });
        let eval_rate = timing(&mut || {
            if let Err(e) = evaluator.evaluate(&plan, &active, &mut TableReader::new(&tables)) {
                failure = Some(e);
            }
        });
        if let Some(e) = failure {
            return Err(e.into());
        }
        let line = json!({
            "bench": "garble",
            "circuit": args.circuit,
            "scheme": "prp",
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
            "roofline_blocks_per_sec": roofline.round(),
            "garble_efficiency": garble_rate / (roofline / 4.0),
            "eval_efficiency": eval_rate / (roofline / 2.0),
            "peak_rss_bytes": peak_rss_bytes(),
            "cpu": cpu_model(),
        });
        if c.json {
            println!("{line}");
        } else {
            println!(
                "{:<12} {:<8} {:>8} AND  garble {:>7.1} M AND/s ({:.3})  evaluate {:>7.1} M AND/s ({:.3})  mean batch {:.1}  slots {}",
                args.circuit,
                batching.name(),
                stats.and_gates,
                garble_rate / 1e6,
                garble_rate / (roofline / 4.0),
                eval_rate / 1e6,
                eval_rate / (roofline / 2.0),
                stats.mean_batch(),
                stats.slots
            );
        }
    }
    Ok(())
}
